// The first move of a home written before month shelves (an upgrade), done
// by the first command that lists (`magi answer --list`): its wall time and
// peak RSS, then the same listing again on the moved home. Goal: the move
// under 256 MB RSS at 100,000 settled questions, and the same at 1,000,000;
// the listing after it reads only the hot folder.
//
//   node scripts/bench/first-move.mjs [settled=100000]
//
// (or MAGI_BENCH_SETTLED; 100 open questions beside them.)
import { spawn } from "node:child_process"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { MAGI, isolatedEnv, ms, size, track } from "./lib.mjs"
import { questionRecord } from "./questions.mjs"

const SETTLED = Number(process.argv[2] ?? size("SETTLED", 100_000))
const OPEN = 100
const isolated = isolatedEnv()
const hot = join(isolated.home, "questions")
mkdirSync(hot, { recursive: true })
const t0 = performance.now()
const start = new Date(2026, 0, 1, 8).getTime()
// Spread over ten months, every id in its month.
const step = Math.floor((300 * 24 * 3600 * 1000) / Math.max(1, SETTLED))
for (let i = 0; i < SETTLED; i++) {
  const q = questionRecord(new Date(start + i * step), i)
  writeFileSync(join(hot, `${q.id}.json`), JSON.stringify(q, null, 2) + "\n")
}
for (let i = 0; i < OPEN; i++) {
  const q = questionRecord(new Date(2026, 10, 20, 9, 0, i), SETTLED + i, { open: true })
  writeFileSync(join(hot, `${q.id}.json`), JSON.stringify(q, null, 2) + "\n")
}
console.log(`seeded ${SETTLED} settled and ${OPEN} open questions in a flat home in ${((performance.now() - t0) / 1000).toFixed(1)} s`)

/** `magi answer --list` on the home: wall time and the process's peak RSS (VmHWM, read until it exits). */
const listing = () =>
  new Promise((done, fail) => {
    const began = performance.now()
    const child = track(spawn(process.execPath, [MAGI, "answer", "--list"], { env: isolated.env, stdio: ["ignore", "ignore", "pipe"] }))
    let peak = 0
    let stderr = ""
    child.stderr.on("data", (c) => (stderr += c))
    const look = () => {
      try {
        const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"))
        if (m) peak = Math.max(peak, Number(m[1]) / 1024)
      } catch {
        // Exited between looks.
      }
    }
    const timer = setInterval(look, 20)
    child.once("exit", (code) => {
      clearInterval(timer)
      if (code !== 0) fail(new Error(`magi answer --list exited ${code}: ${stderr}`))
      else done({ ms: performance.now() - began, peak, stderr })
    })
  })

const first = await listing()
const second = await listing()
const goal = first.peak < 256 ? "met" : "NOT met"
console.log(`first magi answer --list (the move of ${SETTLED} included): ${(first.ms / 1000).toFixed(1)} s, peak RSS ${first.peak.toFixed(0)} MiB (goal under 256 MB ${goal})`)
console.log(`magi answer --list after the move: ${ms(second.ms)}, peak RSS ${second.peak.toFixed(0)} MiB`)
