// `magi web` with 1,000 undelivered questions: answered, never read by their
// agents (whose `magi ask` died), each with the stale lease its asker left.
// Every one of them "may be held", which used to cost a lease read per
// question per request (issue 12: /api/health p50 202 ms, 2.4 s at 20
// connections). 20 keep-alive connections for 10 s per route, after a 1 s
// warm-up; a stand-in asker beats 5 of the leases every 3 s throughout, as
// live askers do, so the index is re-read as it would be. Target: /api/health
// p99 < 50 ms. Also prints the server's CPU time per request (Linux), which a
// shared machine's load disturbs less than the latencies.
//
//   node scripts/bench/web-leases.mjs [questions=1000] [seconds=10]
//
// (or MAGI_BENCH_QUESTIONS, MAGI_BENCH_SECONDS; MAGI_BENCH_WARMUP, 3 s.)
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { loadTest, size, startWeb, tempDir } from "./lib.mjs"

const QUESTIONS = Number(process.argv[2] ?? size("QUESTIONS", 1000))
const SECONDS = Number(process.argv[3] ?? size("SECONDS", 10))
const WARMUP = size("WARMUP", 3)
const home = tempDir("magi-bench-leases-")
const dir = join(home, "questions")
const leases = join(dir, "leases")
mkdirSync(leases, { recursive: true })
const pad = (n, w = 2) => String(n).padStart(w, "0")
const base = Date.UTC(2026, 0, 1)
const stamp = (d) => d.toISOString().replace(/\.\d+Z$/, "Z")
const ids = []
for (let i = 0; i < QUESTIONS; i++) {
  const at = new Date(base + i * 60_000)
  const id = `${at.getUTCFullYear()}${pad(at.getUTCMonth() + 1)}${pad(at.getUTCDate())}-${pad(at.getUTCHours())}${pad(at.getUTCMinutes())}${
    pad(at.getUTCSeconds())
  }-${pad(i.toString(16), 4)}`
  ids.push(id)
  const q = {
    schema: 4,
    id,
    run: "20260101-000000-beef",
    node: "implement",
    seat: "impl",
    summary: `Question ${i}: which of the two approaches should the cache layer take?`,
    detail: "Both are already dependencies. ".repeat(20),
    choices: ["SQLite", "Redis"],
    panel: false,
    assets: [],
    status: "answered",
    asked_at: stamp(at),
    answered_at: stamp(at),
    answer: { choice: "SQLite" },
    thread: [],
    answer_timeout: 86400,
    cwd: "/gone/worktree",
    delivered_turns: 0,
    answer_delivered: false,
    waiter: null
  }
  writeFileSync(join(dir, `${id}.json`), JSON.stringify(q, null, 2) + "\n")
  writeFileSync(join(leases, `${id}.lease`), JSON.stringify({ kind: "asker", pid: 1, beat_at: stamp(at) }) + "\n")
}

const beat = () => {
  for (const id of ids.slice(0, 5)) {
    const tmp = join(leases, `${id}.lease.bench.tmp`)
    writeFileSync(tmp, JSON.stringify({ kind: "asker", pid: 1, beat_at: stamp(new Date()) }) + "\n")
    renameSync(tmp, join(leases, `${id}.lease`))
  }
}
const beater = setInterval(beat, Number(process.env.BEAT_MS ?? 3000))

/**
 * The server's CPU time so far in ms (Linux: utime + stime from /proc), or
 * NaN elsewhere. Per request it is steadier than the latencies on a shared
 * machine, whose load stretches every tail.
 */
const cpuMs = (pid) => {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ")
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100
  } catch {
    return NaN
  }
}

const web = await startWeb(home)
const results = []
try {
  for (const [path, headers] of [["/api/health", {}], ["/api/questions", { "accept-encoding": "gzip" }]]) {
    // Warm-up, not counted: until the first listing is read, then three
    // seconds more, past the shelf pass \`magi web\` makes as it starts (it reads
    // every hot question once, and moves none of these: they await an agent).
    await loadTest(web, path, { seconds: 0.001, connections: 1, headers })
    await loadTest(web, path, { seconds: WARMUP, headers })
    const cpuBefore = cpuMs(web.pid)
    const result = await loadTest(web, path, { seconds: SECONDS, headers })
    const cpuPerRequest = +((cpuMs(web.pid) - cpuBefore) / result.requests).toFixed(3)
    results.push({ ...result, gzip: headers["accept-encoding"] === "gzip", cpuMsPerReq: cpuPerRequest })
  }
} finally {
  clearInterval(beater)
  await web.stop()
}
console.log(`${QUESTIONS} undelivered questions with leases, 20 connections, ${SECONDS} s per route:`)
console.table(results)
