// Answer latency: from the moment the answer's file lands (the rename) to the
// waiting `magi ask` printing it. 20 runs (MAGI_BENCH_RUNS); median and max.
import { spawn } from "node:child_process"
import { existsSync, readFileSync, readdirSync, renameSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { MAGI, isolatedEnv, median, ms, size, track } from "./lib.mjs"

const RUNS = size("RUNS", 20)
const sleep = (n) => new Promise((r) => setTimeout(r, n))
const samples = []
for (let i = 0; i < RUNS; i++) {
  const { cwd, env, home } = isolatedEnv()
  const dir = join(home, "questions")
  const ask = track(spawn(process.execPath, [MAGI, "ask", "--summary", "bench", "--choice", "yes"], { cwd, env, stdio: ["ignore", "pipe", "ignore"] }))
  let id
  while (!id) {
    await sleep(10)
    id = existsSync(dir) ? readdirSync(dir).find((n) => n.endsWith(".json")) : undefined
  }
  // Give the asker time to be in its wait, as an owner on a phone would.
  await sleep(300)
  const printed = new Promise((resolve) => ask.stdout.once("data", () => resolve(performance.now())))
  const q = JSON.parse(readFileSync(join(dir, id), "utf8"))
  const answered = { ...q, status: "answered", answer: { choice: "yes" }, answered_at: new Date().toISOString().replace(/\.\d+Z$/, "Z") }
  writeFileSync(join(dir, `${id}.bench.tmp`), JSON.stringify(answered, null, 2))
  const t0 = performance.now()
  renameSync(join(dir, `${id}.bench.tmp`), join(dir, id))
  samples.push((await printed) - t0)
  await new Promise((r) => ask.on("close", r))
}
console.log(`answer latency over ${RUNS} runs: median ${ms(median(samples))}, max ${ms(Math.max(...samples))}`)
