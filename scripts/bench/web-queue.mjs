#!/usr/bin/env node
// Benchmark of `magi web`'s queue and runs routes (run `npm run build` first;
// the built bundle is what is measured), on a home of 1,000 tasks, 1,000
// questions and 200 runs:
//
//   20 concurrent keep-alive connections for 10 s on GET /api/queue (plain,
//   then gzipped as a browser asks), then again while another process
//   rewrites a task every second (--write-every MS), then GET /api/runs
//   (50 newest) and GET /api/runs/{id}: requests per second, latency
//   percentiles, errors. Target: /api/queue p99 under
//   200 ms, zero errors. Each write makes the store re-read every task file,
//   so `--write-every 250` shows what a burst of writes costs.
//
// Everything listens on and connects to 127.0.0.1 only.
//
//   node scripts/bench/web-queue.mjs [--tasks 1000] [--questions 1000] [--runs 200] [--seconds 10] [--connections 20] [--write-every 1000] [--warmup 1]
//
// (or MAGI_BENCH_TASKS, _QUESTIONS, _RUNS, _SECONDS, _CONNECTIONS, _WRITE_EVERY, _WARMUP).
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { parseArgs } from "node:util"
import { loadTest, size, startWeb, tempDir } from "./lib.mjs"

const { values: args } = parseArgs({
  options: {
    tasks: { type: "string", default: String(size("TASKS", 1000)) },
    questions: { type: "string", default: String(size("QUESTIONS", 1000)) },
    runs: { type: "string", default: String(size("RUNS", 200)) },
    seconds: { type: "string", default: String(size("SECONDS", 10)) },
    connections: { type: "string", default: String(size("CONNECTIONS", 20)) },
    "write-every": { type: "string", default: String(size("WRITE_EVERY", 1000)) },
    warmup: { type: "string", default: String(size("WARMUP", 1)) }
  }
})
const TASKS = Number(args.tasks)
const QUESTIONS = Number(args.questions)
const RUNS = Number(args.runs)
const SECONDS = Number(args.seconds)
const CONNECTIONS = Number(args.connections)
const WRITE_EVERY = Number(args["write-every"])
const WARMUP = Number(args.warmup)
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

// -- the home ---------------------------------------------------------------------

const home = tempDir("magi-bench-queue-")
const pad = (n, w = 2) => String(n).padStart(w, "0")
const base = Date.UTC(2026, 0, 1)
const idAt = (i, salt) => {
  const at = new Date(base + i * 60_000)
  return `${at.getUTCFullYear()}${pad(at.getUTCMonth() + 1)}${pad(at.getUTCDate())}-${pad(at.getUTCHours())}${pad(at.getUTCMinutes())}${
    pad(at.getUTCSeconds())
  }-${pad((salt + i).toString(16), 4)}`
}
const stamp = (i) => new Date(base + i * 60_000).toISOString().replace(/\.\d+Z$/, "Z")

const runIds = []
for (let i = 0; i < RUNS; i++) {
  const id = idAt(i, 0x8000)
  runIds.push(id)
  const dir = join(home, "runs", id)
  mkdirSync(join(dir, "artifacts"), { recursive: true })
  writeFileSync(join(dir, "artifacts", "impl-1.out"), "Did the work.\n".repeat(200))
  writeFileSync(
    join(dir, "run.json"),
    JSON.stringify({
      schema: 1,
      id,
      status: i % 10 === 0 ? "waiting" : "done",
      instruction: `Task ${i}: make the cache layer faster without changing its interface`,
      repo: "/home/owner/src/project",
      base: "main",
      base_commit: "0".repeat(40),
      worktree: `/home/owner/.local/share/magi/worktrees/${id}`,
      branch: `magi/${id.slice(-4)}`,
      seats: [{ key: "impl", agent: "claude", turns: 1, session: "s", write: true }],
      created_at: stamp(i),
      updated_at: stamp(i),
      summary: "Added the cache and its tests. ".repeat(5),
      reason: ""
    })
  )
}

mkdirSync(join(home, "questions"), { recursive: true })
for (let i = 0; i < QUESTIONS; i++) {
  const id = idAt(i, 0x4000)
  const open = i % 20 === 0
  writeFileSync(
    join(home, "questions", `${id}.json`),
    JSON.stringify({
      schema: 3,
      id,
      run: runIds[i % Math.max(1, RUNS)] ?? "",
      node: "implement",
      seat: "impl",
      summary: `Question ${i}: which of the two approaches should the cache layer take?`,
      detail: "Both are already dependencies. ".repeat(20),
      choices: ["SQLite", "Redis"],
      panel: false,
      assets: [],
      status: open ? "open" : "answered",
      asked_at: stamp(i),
      answered_at: open ? null : stamp(i),
      answer: open ? null : { choice: "SQLite" },
      thread: [],
      answer_timeout: 86400
    })
  )
}

const statuses = ["queued", "queued", "queued", "done", "done", "done", "done", "failed", "held", "blocked"]
const taskIds = []
const task = (i, over = {}) => {
  const id = idAt(i, 0)
  const status = statuses[i % statuses.length]
  return {
    schema: 1,
    id,
    title: `Task ${i}: make the cache layer faster`,
    instruction: `# Task ${i}: make the cache layer faster\n\n${"Keep the interface as it is. ".repeat(10)}`,
    repo: "/home/owner/src/project",
    source: { kind: "human" },
    priority: i % 5,
    status,
    attempts: status === "failed" ? 1 : 0,
    runs: status === "done" || status === "failed" ? [runIds[i % Math.max(1, RUNS)]] : [],
    last_error: status === "failed" ? "the agent's turn failed (exit 1)" : null,
    hold_reason: status === "held" ? "not this week" : null,
    hold_source: status === "held" ? "manual" : null,
    blocked_by: status === "blocked" ? [idAt(i - 1, 0)] : [],
    block_reason: status === "blocked" ? "after the one before" : null,
    blocked_from: status === "blocked" ? "queued" : null,
    answers: [],
    review_branch: null,
    fresh_start: false,
    created_at: stamp(i),
    updated_at: stamp(i),
    ...over
  }
}
mkdirSync(join(home, "queue"), { recursive: true })
for (let i = 0; i < TASKS; i++) {
  const t = task(i)
  taskIds.push(t.id)
  writeFileSync(join(home, "queue", `${t.id}.json`), JSON.stringify(t, null, 2) + "\n")
}

// -- the server -----------------------------------------------------------------

const server = await startWeb(home, { cwd: home })

/** Another process's `magi task hold`: rewrite one task (temp + rename) every `everyMs` while `body` runs. */
const whileWriting = async (everyMs, body) => {
  let writes = 0
  let stop = false
  const writer = (async () => {
    while (!stop) {
      const i = (writes * 7) % TASKS
      const path = join(home, "queue", `${taskIds[i]}.json`)
      writeFileSync(
        `${path}.tmp`,
        JSON.stringify(task(i, { priority: writes % 9, updated_at: new Date().toISOString().replace(/\.\d+Z$/, "Z") }), null, 2) + "\n"
      )
      renameSync(`${path}.tmp`, path)
      writes++
      await sleep(everyMs)
    }
  })()
  const result = await body()
  stop = true
  await writer
  return { ...result, writes }
}

const cases = [
  ["GET /api/queue (plain)", () => loadTest(server, "/api/queue", { seconds: SECONDS, connections: CONNECTIONS })],
  [
    "GET /api/queue (gzip, as a browser asks)",
    () => loadTest(server, "/api/queue", { seconds: SECONDS, connections: CONNECTIONS, headers: { "accept-encoding": "gzip" } })
  ],
  [
    `GET /api/queue (gzip) while a task is rewritten every ${WRITE_EVERY} ms`,
    () =>
      whileWriting(WRITE_EVERY, () => loadTest(server, "/api/queue", { seconds: SECONDS, connections: CONNECTIONS, headers: { "accept-encoding": "gzip" } }))
  ],
  ["GET /api/runs (50 newest)", () => loadTest(server, "/api/runs", { seconds: SECONDS, connections: CONNECTIONS })],
  [`GET /api/runs/{id}`, () => loadTest(server, `/api/runs/${runIds[0] ?? "none"}`, { seconds: SECONDS, connections: CONNECTIONS })]
]
/**
 * The server's CPU time so far (user + system, ms), from /proc: on a shared
 * machine wall-clock latency measures the neighbours as much as magi, and CPU
 * per request is the figure that does not move with them.
 */
const cpuMs = () => {
  try {
    const fields = readFileSync(`/proc/${server.pid}/stat`, "utf8").split(") ")[1].split(" ")
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100
  } catch {
    return NaN
  }
}

const results = []
try {
  // Warm-up (JIT and the caches), not counted.
  for (const path of ["/api/queue", "/api/runs", `/api/runs/${runIds[0] ?? "none"}`])
    await loadTest(server, path, { seconds: WARMUP, connections: CONNECTIONS })
  for (const [name, run] of cases) {
    const before = cpuMs()
    const result = await run()
    results.push({ name, ...result, cpu: (cpuMs() - before) / result.requests })
  }
} finally {
  await server.stop()
}

console.log(`magi web, ${TASKS} tasks, ${QUESTIONS} questions, ${RUNS} runs, ${CONNECTIONS} connections × ${SECONDS} s each`)
console.log(`load average at the end: ${(await import("node:os")).loadavg().map((l) => l.toFixed(1)).join(", ")}`)
console.log("| route | req/s | p50 | p99 | max | errors | body | server CPU per request | target |")
console.log("|---|---:|---:|---:|---:|---:|---:|---:|---|")
for (const r of results)
  console.log(
    `| ${r.name}${r.writes === undefined ? "" : ` (${r.writes} writes)`} | ${
      r.rps.toLocaleString("en")
    } | ${r.p50} ms | ${r.p99} ms | ${r.max} ms | ${r.errors} | ${r.bodyKiB} KiB | ${r.cpu.toFixed(2)} ms | ${
      r.name.includes("/api/queue") ? "p99 < 200 ms" : ""
    } |`
  )
