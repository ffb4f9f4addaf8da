// The PostgreSQL backend, against a real server this bench starts itself
// (scripts/pg/server.mjs, 127.0.0.1 only) and stops at the end:
//
// - answer latency: `magi answer --reply` in one process (another home, as
//   another machine) → the waiting `magi ask` printing it, over LISTEN/NOTIFY;
//   also from the answer's commit (a row written directly) to the print.
// - 20 concurrent `magi answer` processes (MAGI_BENCH_RACERS) on one question:
//   exactly one wins, every round (MAGI_BENCH_RACES rounds).
// - `magi answer --list` with N questions in the database (N = MAGI_BENCH_QUESTIONS,
//   default 100,000; open ones few, the rest settled on month shelves).
// - `/api/questions` and a history page under 20 connections: p50/p99.
import { spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import * as Http from "node:http"
import Pg from "pg"
import { MAGI, benchPostgres, isolatedEnv, median, ms, run, size, sleep, track } from "./lib.mjs"

const ROUNDS = size("ROUNDS", 20)
const RACE_ROUNDS = size("RACES", 30)
const RACERS = size("RACERS", 20)
const QUESTIONS = Math.max(100, size("QUESTIONS", 100_000))
// Requests per client in the web measure: 20 × 50 = 1,000 samples, so the
// p99 is the 10th slowest rather than the 4th of 400.
const PER_CLIENT = size("PER_CLIENT", 50)
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]

// However the bench ends (a throw before the try below, Ctrl-C), its server is stopped as the process exits.
const pg = await benchPostgres()
const url = await pg.database("magi_bench")
const db = new Pg.Client({ connectionString: url })
const children = new Set()
const cleanUp = async () => {
  for (const c of children) c.kill("SIGKILL")
  await db.end().catch(() => {})
  await pg.stop()
}

const owner = () => {
  const o = isolatedEnv()
  return { ...o, env: { ...o.env, MAGI_STORE_URL: url } }
}
/** `magi args` as owner `o`; `extra.env` added to its environment, `extra.nodeArgs` given to node. */
const start = (o, args, extra = {}) => {
  const child = track(
    spawn(process.execPath, [...(extra.nodeArgs ?? []), MAGI, ...args], { cwd: o.cwd, env: { ...o.env, ...extra.env }, stdio: ["ignore", "pipe", "pipe"] })
  )
  children.add(child)
  child.on("close", () => children.delete(child))
  return child
}
// The body is the question's JSON as magi writes it (indented): read its field, not its spelling.
const openIds = async () =>
  (await db.query("SELECT id FROM magi_records WHERE kind = 'questions' AND body::jsonb ->> 'status' = 'open' ORDER BY id")).rows.map((r) => r.id)

try {
  // The first command migrates the schema.
  const first = owner()
  await run(process.execPath, [MAGI, "answer", "--list"], { cwd: first.cwd, env: first.env })
  await db.connect()

  // -- answer latency ---------------------------------------------------------
  const viaCli = []
  const viaRow = []
  for (let i = 0; i < ROUNDS; i++) {
    const agent = owner()
    const phone = owner()
    const ask = start(agent, ["ask", "--summary", `bench ${i}`, "--choice", "yes"])
    let id
    while (!id) {
      await sleep(10)
      id = (await openIds())[0]
    }
    // The asker in its wait, as when the owner opens the notification.
    await sleep(300)
    const printed = new Promise((resolve) => ask.stdout.once("data", () => resolve(performance.now())))
    let t0
    if (i % 2 === 0) {
      t0 = performance.now()
      const answered = track(spawn(process.execPath, [MAGI, "answer", id, "--reply", "yes"], { cwd: phone.cwd, env: phone.env, stdio: "ignore" }))
      // From the answer's commit: the answering process exits right after it.
      await new Promise((r) => answered.on("close", r))
      viaCli.push((await printed) - t0)
    } else {
      const { rows } = await db.query("SELECT body FROM magi_records WHERE kind = 'questions' AND id = $1", [id])
      const q = JSON.parse(rows[0].body)
      const body = JSON.stringify({ ...q, status: "answered", answer: { choice: "yes" }, answered_at: new Date().toISOString().replace(/\.\d+Z$/, "Z") })
      await db.query("BEGIN")
      await db.query("UPDATE magi_records SET body = $2 WHERE kind = 'questions' AND id = $1", [id, body])
      await db.query("UPDATE magi_revisions SET revision = revision + 1 WHERE kind = 'questions'")
      await db.query("SELECT pg_notify('magi_changes', $1)", [`questions/${id}`])
      t0 = performance.now()
      await db.query("COMMIT")
      viaRow.push((await printed) - t0)
    }
    await new Promise((r) => ask.on("close", r))
  }
  console.log(`postgres answer → ask prints, over ${viaRow.length} rounds from the commit: median ${ms(median(viaRow))}, max ${ms(Math.max(...viaRow))}`)
  console.log(
    `postgres magi answer started → ask prints (includes the answering process's start), ${viaCli.length} rounds: median ${ms(median(viaCli))}, max ${
      ms(Math.max(...viaCli))
    }`
  )

  // -- one winner among 20 concurrent answers ---------------------------------
  let rounds = 0
  let exactlyOne = 0
  for (let r = 0; r < RACE_ROUNDS; r++) {
    const agent = owner()
    const asked = await run(process.execPath, [MAGI, "ask", "--summary", `race ${r}`, "--choice", "a", "--choice", "b", "--timeout", "60"], {
      cwd: agent.cwd,
      env: { ...agent.env, MAGI_WAIT_SLICE: "1" }
    })
    const id = /--wait (\S+)/.exec(asked.out)?.[1]
    const results = await Promise.all(
      Array.from({ length: RACERS }, (_, k) => run(process.execPath, [MAGI, "answer", id, "--reply", k % 2 ? "a" : "b"], { cwd: agent.cwd, env: owner().env }))
    )
    rounds++
    if (results.filter((x) => x.code === 0).length === 1) exactlyOne++
  }
  console.log(`postgres ${RACERS} concurrent answers to one question: exactly one winner in ${exactlyOne} of ${rounds} rounds`)

  // -- 100,000 questions -------------------------------------------------------
  const t = Date.parse("2026-01-01T00:00:00Z")
  const batch = 2000
  for (let made = 0; made < QUESTIONS; made += batch) {
    const ids = []
    const bodies = []
    const shelves = []
    for (let k = made; k < Math.min(QUESTIONS, made + batch); k++) {
      const at = new Date(t + k * 60_000)
      const stamp = at.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15)
      const id = `${stamp}-${randomBytes(2).toString("hex")}`
      const open = k >= QUESTIONS - 100
      const asked = at.toISOString().replace(/\.\d+Z$/, "Z")
      ids.push(id)
      shelves.push(open ? null : `${id.slice(0, 4)}-${id.slice(4, 6)}`)
      bodies.push(
        JSON.stringify({
          schema: 4,
          id,
          run: "",
          node: "ask",
          seat: "operator",
          summary: `Question number ${k} about the cache`,
          detail: "Some words of detail.",
          choices: ["yes", "no"],
          panel: false,
          assets: [],
          status: open ? "open" : "answered",
          asked_at: asked,
          // An open one has them null (left out, it is unreadable, and the
          // listing showed none of the 100 open ones).
          answered_at: open ? null : asked,
          answer: open ? null : { choice: "yes" },
          thread: [],
          answer_timeout: 86400 * 400,
          cwd: "/tmp",
          delivered_turns: 0,
          answer_delivered: !open,
          waiter: null
        })
      )
    }
    await db.query(
      "INSERT INTO magi_records (kind, id, body, shelf) SELECT 'questions', * FROM unnest($1::text[], $2::text[], $3::text[]) ON CONFLICT DO NOTHING",
      [ids, bodies, shelves]
    )
  }
  await db.query("UPDATE magi_revisions SET revision = revision + 1 WHERE kind = 'questions'")
  await db.query("ANALYZE magi_records")
  const listing = []
  for (let i = 0; i < 5; i++) {
    const o = owner()
    const t0 = performance.now()
    const got = await run(process.execPath, [MAGI, "answer", "--list"], { cwd: o.cwd, env: o.env })
    listing.push(performance.now() - t0)
    if (got.code !== 0) throw new Error(`magi answer --list failed: ${got.out}`)
    // Each open question is a block of lines starting with its short id.
    const listed = got.out.split("\n").filter((l) => /^[0-9a-f]{4} {2}/.test(l)).length
    if (listed !== 100) throw new Error(`magi answer --list showed ${listed} open questions, not 100: ${got.out.slice(0, 400)}`)
  }
  console.log(`postgres magi answer --list at ${QUESTIONS} questions (100 open): median ${ms(median(listing))} (whole process, 5 runs)`)

  // -- the web API under 20 connections ---------------------------------------
  const web = owner()
  // MAGI_BENCH_CPU_PROF=DIR: a V8 profile of magi web under this load, written there as it stops.
  const profile = process.env.MAGI_BENCH_CPU_PROF
  const server2 = start(web, ["web", "--bind", "127.0.0.1", "--port", "0", "--no-loop"], {
    nodeArgs: profile ? ["--cpu-prof", `--cpu-prof-dir=${profile}`] : []
  })
  // Read, or a full pipe would stall the server; kept to say why it failed.
  let webErr = ""
  server2.stderr.on("data", (d) => (webErr = (webErr + d).slice(-4000)))
  let stopping = false
  server2.once("exit", (code, signal) => {
    if (!stopping) console.error(`magi web exited (${code ?? signal}): ${webErr}`)
  })
  const base = await new Promise((done, fail) => {
    let out = ""
    server2.stdout.on("data", (d) => {
      out += d
      const m = /^(http:\/\/127\.0\.0\.1:\d+)\n/m.exec(out)
      if (m) done(m[1])
    })
    server2.once("exit", (code) => fail(new Error(`magi web exited with ${code}`)))
  })
  // The load comes from node:http with 20 kept-alive sockets, asking for
  // gzip as a phone does and reading the bytes without inflating them, as a
  // load generator does: fetch (undici) spent more of these two cores per
  // request than magi web did, and its cost was counted as the server's.
  // A kept-alive socket the server closes as it is reused fails the request;
  // a browser sends a GET again on a fresh one, and so does this, the time
  // counted from the first try.
  const agent = new Http.Agent({ keepAlive: true, maxSockets: 20 })
  const once = (path) =>
    new Promise((done, fail) => {
      const req = Http.get(`${base}${path}`, { agent, headers: { "accept-encoding": "gzip" } }, (res) => {
        res.on("data", () => {})
        res.on("end", () => (res.statusCode === 200 ? done() : fail(new Error(`${path}: ${res.statusCode}`))))
        res.on("error", fail)
      })
      req.on("error", fail)
    })
  const timed = async (path) => {
    const t0 = performance.now()
    await once(path).catch(() => once(path))
    return performance.now() - t0
  }
  // 20 clients, each sending its next request when the last one returned.
  const load = async (path, perClient) => {
    const samples = []
    await Promise.all(Array.from({ length: 20 }, async () => {
      for (let k = 0; k < perClient; k++) samples.push(await timed(path))
    }))
    return samples
  }
  for (const path of ["/api/questions", "/api/questions/history?limit=30"]) {
    // The first requests after a start run code the JIT has not compiled
    // yet: shown on their own, then the steady state a page lives in.
    const cold = await timed(path)
    const warming = await load(path, 5)
    const samples = await load(path, PER_CLIENT)
    console.log(
      `postgres ${path} at ${QUESTIONS}, 20 connections × ${PER_CLIENT}: p50 ${ms(pct(samples, 50))}, p90 ${ms(pct(samples, 90))}, p99 ${
        ms(pct(samples, 99))
      }, max ${ms(Math.max(...samples))}` +
        ` (first request ${ms(cold)}, first 100 under load: p99 ${ms(pct(warming, 99))})`
    )
  }
  stopping = true
  agent.destroy()
  server2.kill("SIGTERM")
  await new Promise((r) => (server2.exitCode === null && server2.signalCode === null ? server2.once("exit", r) : r()))
} finally {
  await cleanUp()
}
