// Cold start: a bare `node -e 0`, `magi --help`, `magi --version`, and
// `magi answer --list` and `magi runs` on an empty home, 21 rounds each
// (MAGI_BENCH_RUNS), the commands alternated within a round so load hits
// them alike; medians of wall time and of CPU time (user + system).
//
// MAGI_BENCH_BEFORE=path/to/other/magi.js runs that build too, alternated
// with this one in every round, for a before/after under the same load.
import { readFileSync } from "node:fs"
import { isolatedEnv, MAGI, median, ms, run, size } from "./lib.mjs"

const RUNS = size("RUNS", 21)
const BEFORE = process.env.MAGI_BENCH_BEFORE

/**
 * CPU time this process's waited-for children have used so far, in ms, from
 * /proc/self/stat (cutime + cstime, in clock ticks of 10 ms): the CPU of a
 * child is the difference across its run. Undefined where there is no /proc.
 */
const childrenCpu = () => {
  try {
    const stat = readFileSync("/proc/self/stat", "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    // Fields 16 and 17 of proc(5) (cutime, cstime), counted from field 3 here.
    return (Number(fields[13]) + Number(fields[14])) * 10
  } catch {
    return undefined
  }
}

const { env } = isolatedEnv()
const childEnv = { ...process.env, ...env }

const measure = async (args) => {
  const cpu0 = childrenCpu()
  const t0 = performance.now()
  const { code } = await run(process.execPath, args, { env: childEnv })
  const wall = performance.now() - t0
  const cpu1 = childrenCpu()
  if (code !== 0) throw new Error(`node ${args.join(" ")} exited with ${code}`)
  return { wall, cpu: cpu0 === undefined || cpu1 === undefined ? undefined : cpu1 - cpu0 }
}

const builds = BEFORE === undefined ? [["", MAGI]] : [["before ", BEFORE], ["", MAGI]]
const cases = [
  ["node -e 0", () => ["-e", "0"]],
  ...builds.flatMap(([label, magi]) => [
    [`${label}magi --help`, () => [magi, "--help"]],
    [`${label}magi --version`, () => [magi, "--version"]],
    [`${label}magi answer --list (empty home)`, () => [magi, "answer", "--list"]],
    [`${label}magi runs (empty home)`, () => [magi, "runs"]]
  ])
]

// The code cache exists after the first run of each build.
for (const [, magi] of builds) await run(process.execPath, [magi, "--help"])
const samples = new Map(cases.map(([name]) => [name, []]))
for (let round = 0; round < RUNS; round++) {
  for (const [name, args] of cases) samples.get(name).push(await measure(args()))
}
const wall = (name) => median(samples.get(name).map((s) => s.wall))
const cpu = (name) => {
  const xs = samples.get(name).map((s) => s.cpu)
  return xs.includes(undefined) ? "n/a" : ms(median(xs))
}

const bare = wall("node -e 0")
const help = wall("magi --help")
console.log(`cold start: node -e 0 ${ms(bare)}, magi --help ${ms(help)} (${(help / bare).toFixed(2)}x)`)
for (const [name] of cases) console.log(`${name}: median ${ms(wall(name))} wall, ${cpu(name)} CPU (user + system)`)
