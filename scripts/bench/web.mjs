#!/usr/bin/env node
// Benchmark of `magi web` with a store of 1,000 questions (run `npm run build`
// first; the built bundle is what is measured):
//
//   1. 20 concurrent keep-alive connections for 10 s on GET /api/questions
//      (plain, then gzipped as a browser asks), then on GET /api/health: requests per second, latency percentiles,
//      errors. Targets: p99 under 200 ms and under 50 ms, zero errors.
//   2. 50 clients following GET /api/events, and `magi answer` run in a
//      separate process: the time from the answer landing on disk (the
//      question file's ctime, stamped by the rename that publishes it) to the
//      last of the 50 receiving the change event. Target: under 200 ms. Also:
//      until all 50 have refetched the list, as the page does on a change.
//
// Everything listens on and connects to 127.0.0.1 only. The load loop is our
// own (node's http Agent), bounded by time and connection count.
//
//   node scripts/bench/web.mjs [--questions 1000] [--seconds 10] [--connections 20] [--sse 50] [--rounds 10] [--warmup 1]
//
// (or MAGI_BENCH_QUESTIONS, _SECONDS, _CONNECTIONS, _SSE, _ROUNDS, _WARMUP).
import { spawn } from "node:child_process"
import { mkdirSync, statSync, writeFileSync } from "node:fs"
import { Agent, get, request } from "node:http"
import { join } from "node:path"
import { performance } from "node:perf_hooks"
import { parseArgs } from "node:util"
import { gunzipSync } from "node:zlib"
import { MAGI, size, startWeb, tempDir, track } from "./lib.mjs"

const { values: args } = parseArgs({
  options: {
    questions: { type: "string", default: String(size("QUESTIONS", 1000)) },
    seconds: { type: "string", default: String(size("SECONDS", 10)) },
    connections: { type: "string", default: String(size("CONNECTIONS", 20)) },
    sse: { type: "string", default: String(size("SSE", 50)) },
    rounds: { type: "string", default: String(size("ROUNDS", 10)) },
    warmup: { type: "string", default: String(size("WARMUP", 1)) }
  }
})
const QUESTIONS = Number(args.questions)
const SECONDS = Number(args.seconds)
const CONNECTIONS = Number(args.connections)
const SSE_CLIENTS = Number(args.sse)
const ROUNDS = Math.min(Number(args.rounds), Math.ceil(QUESTIONS / 20))
const WARMUP = Number(args.warmup)
const now = () => performance.timeOrigin + performance.now()
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

// -- a store of QUESTIONS questions: 5% open, the rest answered history --------

const home = tempDir("magi-bench-web-")
const dir = join(home, "questions")
mkdirSync(dir, { recursive: true })
const pad = (n, w = 2) => String(n).padStart(w, "0")
const openIds = []
const base = Date.UTC(2026, 0, 1)
for (let i = 0; i < QUESTIONS; i++) {
  const at = new Date(base + i * 60_000)
  const id = `${at.getUTCFullYear()}${pad(at.getUTCMonth() + 1)}${pad(at.getUTCDate())}-${pad(at.getUTCHours())}${pad(at.getUTCMinutes())}${
    pad(at.getUTCSeconds())
  }-${pad(i.toString(16), 4)}`
  const open = i % 20 === 0
  if (open) openIds.push(id)
  const asked = at.toISOString().replace(/\.\d+Z$/, "Z")
  const q = {
    schema: 3,
    id,
    run: "20260101-000000-beef",
    node: "implement",
    seat: "impl-A",
    summary: `Question ${i}: which of the two approaches should the cache layer take?`,
    detail: "Both are already dependencies. ".repeat(20),
    choices: ["SQLite", "Redis"],
    panel: false,
    assets: [],
    status: open ? "open" : "answered",
    asked_at: asked,
    answered_at: open ? null : asked,
    answer: open ? null : { choice: "SQLite" },
    thread: [],
    answer_timeout: 86400
  }
  writeFileSync(join(dir, `${id}.json`), JSON.stringify(q, null, 2) + "\n")
}

// -- the server -----------------------------------------------------------------

// Stopped however the bench ends (lib.mjs), and before the report when it ends well.
const server = await startWeb(home)
const { hostname, port } = server

// -- 1. request load ------------------------------------------------------------

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]

const load = async (path, seconds, headers = {}) => {
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS })
  const latencies = []
  let errors = 0
  let bytes = 0
  const deadline = now() + seconds * 1000
  const one = () =>
    new Promise((resolve) => {
      const started = now()
      const req = request({ hostname, port, path, agent, headers }, (res) => {
        let size = 0
        res.on("data", (c) => (size += c.length))
        res.on("end", () => {
          latencies.push(now() - started)
          bytes += size
          if (res.statusCode !== 200) errors++
          resolve()
        })
        res.on("error", () => {
          errors++
          resolve()
        })
      })
      req.on("error", () => {
        errors++
        resolve()
      })
      req.end()
    })
  const worker = async () => {
    while (now() < deadline) await one()
  }
  const started = now()
  await Promise.all(Array.from({ length: CONNECTIONS }, worker))
  const elapsed = (now() - started) / 1000
  agent.destroy()
  latencies.sort((a, b) => a - b)
  return {
    path,
    gzip: headers["accept-encoding"] === "gzip",
    requests: latencies.length,
    rps: Math.round(latencies.length / elapsed),
    p50: +percentile(latencies, 50).toFixed(1),
    p99: +percentile(latencies, 99).toFixed(1),
    max: +latencies.at(-1).toFixed(1),
    errors,
    bodyKiB: Math.round(bytes / latencies.length / 1024)
  }
}

const results = []
// The list both as a bare client asks for it and as a browser does (gzip).
for (const [path, headers] of [["/api/questions", {}], ["/api/questions", { "accept-encoding": "gzip" }], ["/api/health", {}]]) {
  await load(path, WARMUP, headers) // warm-up: JIT and the list cache, not counted
  results.push(await load(path, SECONDS, headers))
}

// -- 2. change events to 50 pages ---------------------------------------------------

/** One page following /api/events; `next(after)` resolves at the first change received after `after`. */
const follower = () =>
  new Promise((resolve, reject) => {
    const received = []
    const waiting = []
    const req = get({ hostname, port, path: "/api/events", agent: false }, (res) => {
      let buffer = ""
      res.on("data", (chunk) => {
        const at = now()
        buffer += chunk
        let end
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, end)
          buffer = buffer.slice(end + 2)
          if (!block.startsWith("event: change")) continue
          received.push(at)
          if (received.length === 1) resolve(client)
          for (const w of waiting.splice(0))
            if (at > w.after) w.resolve(at)
            else waiting.push(w)
        }
      })
    })
    req.on("error", reject)
    const client = {
      next: (after) =>
        new Promise((resolve) => {
          const seen = received.find((t) => t > after)
          if (seen !== undefined) resolve(seen)
          else waiting.push({ after, resolve })
        }),
      close: () => req.destroy()
    }
  })

/**
 * What a page does on a change: refetch the list (gzip, as a browser asks),
 * on its own keep-alive connection. Resolves when the whole response is in;
 * the first page also checks that the list it got shows the answer.
 */
const refetch = (agent, id, check) =>
  new Promise((resolve, reject) => {
    const req = request({ hostname, port, path: "/api/questions", agent, headers: { "accept-encoding": "gzip" } }, (res) => {
      const chunks = []
      res.on("data", (c) => chunks.push(c))
      res.on("end", () => {
        const at = now()
        if (check) {
          // `{open, history, next}`: the open questions, then the newest page
          // of history, where an answer to an old question need not appear.
          const { open, history } = JSON.parse(gunzipSync(Buffer.concat(chunks)).toString("utf8"))
          const answered = !open.some((q) => q.id === id) && (history.find((q) => q.id === id)?.status ?? "answered") === "answered"
          if (!answered) return reject(new Error(`the list after the change still shows ${id} open`))
        }
        resolve(at)
      })
    })
    req.on("error", reject)
    req.end()
  })

const clients = await Promise.all(Array.from({ length: SSE_CLIENTS }, follower))
for (const c of clients) c.agent = new Agent({ keepAlive: true, maxSockets: 1 })
await sleep(1500) // let the store settle: no change pending from the setup
const rounds = []
for (let i = 0; i < ROUNDS; i++) {
  const id = openIds[i]
  const spawned = now()
  const arrivals = Promise.all(clients.map((c) => c.next(spawned)))
  const refreshed = Promise.all(
    clients.map((c, k) => c.next(spawned).then(() => refetch(c.agent, id, k === 0)))
  )
  const answer = track(
    spawn(process.execPath, [MAGI, "answer", id, "--reply", "Redis"], {
      env: { ...process.env, MAGI_HOME: home, XDG_CONFIG_HOME: join(home, "config") },
      stdio: "ignore"
    })
  )
  const [times, listed, code] = await Promise.all([arrivals, refreshed, new Promise((r) => answer.once("exit", r))])
  if (code !== 0) throw new Error(`magi answer exited with ${code}`)
  const written = statSync(join(dir, `${id}.json`)).ctimeMs
  const last = Math.max(...times)
  rounds.push({
    fromWrite: last - written,
    fromSpawn: last - spawned,
    spread: last - Math.min(...times),
    listedFromWrite: Math.max(...listed) - written
  })
  await sleep(1500) // the lock's removal moves the revision once more; let that event pass
}
for (const c of clients) {
  c.close()
  c.agent.destroy()
}

await server.stop()

// -- report -----------------------------------------------------------------------

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const ms = (x) => `${x.toFixed(1)} ms`
const sse = {
  clients: SSE_CLIENTS,
  rounds: ROUNDS,
  writeToAllMedian: +median(rounds.map((r) => r.fromWrite)).toFixed(1),
  writeToAllMax: +Math.max(...rounds.map((r) => r.fromWrite)).toFixed(1),
  spawnToAllMedian: +median(rounds.map((r) => r.fromSpawn)).toFixed(1),
  spreadMedian: +median(rounds.map((r) => r.spread)).toFixed(1),
  listedMedian: +median(rounds.map((r) => r.listedFromWrite)).toFixed(1),
  listedMax: +Math.max(...rounds.map((r) => r.listedFromWrite)).toFixed(1)
}

console.log(`magi web, ${QUESTIONS} questions in the store, node ${process.version}\n`)
console.log(`| route | connections | duration | requests/s | p50 | p99 | max | errors | body |`)
console.log(`|---|---|---|---|---|---|---|---|---|`)
for (const r of results)
  console.log(
    `| GET ${r.path}${r.gzip ? " (gzip)" : ""} | ${CONNECTIONS} | ${SECONDS} s | ${r.rps} | ${ms(r.p50)} | ${ms(r.p99)} | ${
      ms(r.max)
    } | ${r.errors} | ${r.bodyKiB} KiB |`
  )
console.log(
  `\nchange events, ${sse.clients} clients on /api/events, ${sse.rounds} answers by \`magi answer\`:\n` +
    `  answer on disk -> last client received: median ${ms(sse.writeToAllMedian)}, max ${ms(sse.writeToAllMax)}\n` +
    `  \`magi answer\` spawned -> last client received: median ${ms(sse.spawnToAllMedian)} (includes the CLI's start-up)\n` +
    `  first -> last client: median ${ms(sse.spreadMedian)}\n` +
    `  answer on disk -> every client has refetched the list (gzip): median ${ms(sse.listedMedian)}, max ${ms(sse.listedMax)}`
)
console.log("\n" + JSON.stringify({ results, sse }))
