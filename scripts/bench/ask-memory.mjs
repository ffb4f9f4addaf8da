// Peak memory of a waiting `magi ask`: its high-water RSS after 5 s of waiting
// (MAGI_BENCH_WAIT_MS).
import { spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { MAGI, isolatedEnv, size, track } from "./lib.mjs"

const { cwd, env } = isolatedEnv()
const ask = track(spawn(process.execPath, [MAGI, "ask", "--summary", "bench", "--timeout", "60"], { cwd, env, stdio: "ignore" }))
await new Promise((r) => setTimeout(r, size("WAIT_MS", 5000)))
const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${ask.pid}/status`, "utf8"))[1]
ask.kill()
// Gone before its home is removed at exit, so it cannot write into it again.
await new Promise((r) => (ask.exitCode === null && ask.signalCode === null ? ask.once("exit", r) : r()))
console.log(`peak memory of a waiting magi ask: ${(Number(hwm) / 1024).toFixed(1)} MB`)
