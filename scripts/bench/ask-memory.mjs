// Peak memory of a waiting `magi ask`: its high-water RSS after 5 s of waiting.
import { spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { MAGI, isolatedEnv } from "./lib.mjs"

const { cwd, env } = isolatedEnv()
const ask = spawn(process.execPath, [MAGI, "ask", "--summary", "bench", "--timeout", "60"], { cwd, env, stdio: "ignore" })
await new Promise((r) => setTimeout(r, 5000))
const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${ask.pid}/status`, "utf8"))[1]
ask.kill()
console.log(`peak memory of a waiting magi ask: ${(Number(hwm) / 1024).toFixed(1)} MB`)
