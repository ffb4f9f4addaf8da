// Cold start: `magi --help` against a bare `node -e 0`, 20 runs each
// (MAGI_BENCH_RUNS), medians.
import { MAGI, median, ms, run, size } from "./lib.mjs"

const RUNS = size("RUNS", 20)
const time = async (args) => {
  const xs = []
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now()
    await run(process.execPath, args)
    xs.push(performance.now() - t0)
  }
  return median(xs)
}
await run(process.execPath, [MAGI, "--help"]) // the code cache exists after the first run
const bare = await time(["-e", "0"])
const magi = await time([MAGI, "--help"])
console.log(`cold start: node -e 0 ${ms(bare)}, magi --help ${ms(magi)} (${(magi / bare).toFixed(2)}x)`)
