// `magi store migrate` at scale (issue 17): a home of N questions (N =
// MAGI_BENCH_QUESTIONS, default 100,000), nearly all settled on month
// shelves as the archiver leaves them, a few open and a few settled ones
// still hot, one in a thousand with a panel; copied into a PostgreSQL this
// bench starts itself (scripts/pg/server.mjs, 127.0.0.1 only), then copied
// again (which must copy nothing).
//
//   node scripts/bench/store-migrate.mjs        (MAGI_BENCH_QUESTIONS=N for another size)
//
// Reports the time of each run, the migrating process's peak RSS (from
// /usr/bin/time -v when there is one, else VmHWM polled from /proc), and the
// checksum lines. Goal: 100,000 questions in under 5 minutes on two cores,
// well under 256 MB RSS. Everything it made (the server, its data, the
// home) is removed at the end, failed or not.
import { spawn } from "node:child_process"
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import Pg from "pg"
import { startServer, databaseUrl } from "../pg/server.mjs"
import { MAGI, isolatedEnv } from "./lib.mjs"
import { questionRecord } from "./questions.mjs"

const QUESTIONS = Number(process.env.MAGI_BENCH_QUESTIONS ?? 100_000)
const OPEN = Math.min(100, Math.floor(QUESTIONS / 100))
const HOT_SETTLED = Math.min(200, Math.floor(QUESTIONS / 100))
const SHELVED = QUESTIONS - OPEN - HOT_SETTLED
const MONTHS = 10
/** One question in this many has a panel: the html and a small asset. */
const PANEL_EVERY = 1000

const monthOf = (id) => `${id.slice(0, 4)}-${id.slice(4, 6)}`
const question = (at, n, open, panel) => questionRecord(at, n, { open, panel })

const o = isolatedEnv()
let server
let admin
const children = new Set()
const cleanUp = async () => {
  for (const c of children) c.kill("SIGKILL")
  await admin?.end().catch(() => {})
  server?.stop()
  rmSync(o.top, { recursive: true, force: true })
}
process.on("SIGINT", () => cleanUp().then(() => process.exit(130)))
process.on("SIGTERM", () => cleanUp().then(() => process.exit(143)))

/** Write one question (and its panel) into `dir`. */
const write = (dir, q) => {
  writeFileSync(join(dir, `${q.id}.json`), JSON.stringify(q, null, 2) + "\n")
  if (q.panel) {
    mkdirSync(join(dir, `${q.id}.panel`), { recursive: true })
    writeFileSync(join(dir, `${q.id}.panel`, "index.html"), `<h1>cache ${q.id}</h1><img src="chart.svg">`)
    writeFileSync(join(dir, `${q.id}.panel`, "chart.svg"), `<svg xmlns="http://www.w3.org/2000/svg"><text>${q.id}</text></svg>`)
  }
}

/** `magi` with `args` in the bench's home, timed, its peak RSS measured. */
const magi = (args, env = {}) =>
  new Promise((done) => {
    const TIME = existsSync("/usr/bin/time") ? "/usr/bin/time" : undefined
    const argv = TIME ? [TIME, "-v", process.execPath, MAGI, ...args] : [process.execPath, MAGI, ...args]
    const t0 = performance.now()
    const child = spawn(argv[0], argv.slice(1), { cwd: o.cwd, env: { ...o.env, ...env }, stdio: ["ignore", "pipe", "pipe"] })
    children.add(child)
    let stdout = ""
    let stderr = ""
    let hwm = 0
    child.stdout.on("data", (c) => (stdout += c))
    child.stderr.on("data", (c) => {
      stderr += c
      for (const line of String(c).split("\n")) if (line.startsWith("magi: ")) process.stderr.write(`  ${line}\n`)
    })
    // Without /usr/bin/time: VmHWM (the peak resident set) from /proc, sampled until it exits.
    const poll = TIME
      ? undefined
      : setInterval(() => {
        try {
          const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"))
          if (m) hwm = Math.max(hwm, Number(m[1]))
        } catch {}
      }, 50)
    child.on("close", (code) => {
      children.delete(child)
      if (poll) clearInterval(poll)
      const fromTime = /Maximum resident set size \(kbytes\): (\d+)/.exec(stderr)
      done({ code, stdout, stderr, seconds: (performance.now() - t0) / 1000, peakMiB: (fromTime ? Number(fromTime[1]) : hwm) / 1024 })
    })
  })

try {
  // -- the home ---------------------------------------------------------------
  let t0 = performance.now()
  const hot = join(o.home, "questions")
  mkdirSync(hot, { recursive: true })
  let n = 0
  let panels = 0
  const perMonth = Math.ceil(SHELVED / MONTHS)
  for (let m = 0; m < MONTHS && n < SHELVED; m++) {
    const start = new Date(2025, m, 1, 8).getTime()
    // Spread over the month's first 27 days, so every id stays in its month.
    const step = Math.floor((27 * 24 * 3600 * 1000) / perMonth)
    let shelf
    for (let i = 0; i < perMonth && n < SHELVED; i++, n++) {
      const q = question(new Date(start + i * step), n, false, n % PANEL_EVERY === 0)
      if (q.panel) panels++
      if (shelf === undefined) mkdirSync(shelf = join(hot, "history", monthOf(q.id)), { recursive: true })
      write(shelf, q)
    }
  }
  for (let i = 0; i < HOT_SETTLED; i++, n++) write(hot, question(new Date(2026, 0, 10, 9, 0, i), n, false, i === 0))
  for (let i = 0; i < OPEN; i++, n++) write(hot, question(new Date(2026, 0, 20, 9, 0, i), n, true, false))
  console.log(
    `home: ${n.toLocaleString("en-US")} questions (${
      SHELVED.toLocaleString("en-US")
    } on ${MONTHS} month shelves, ${HOT_SETTLED} settled and ${OPEN} open hot, ${panels + 1} with a panel) written in ${
      ((performance.now() - t0) / 1000).toFixed(1)
    } s`
  )

  // -- the database -------------------------------------------------------------
  server = await startServer()
  admin = new Pg.Client({ connectionString: server.url })
  await admin.connect()
  await admin.query("CREATE DATABASE magi_bench")
  const url = databaseUrl(server.url, "magi_bench")

  const first = await magi(["store", "migrate", "--to", url])
  if (first.code !== 0) throw new Error(`the migration exited ${first.code}:\n${first.stderr}`)
  console.log(`first migration: ${first.seconds.toFixed(1)} s, peak RSS ${first.peakMiB.toFixed(0)} MiB`)
  console.log(first.stdout.trim().replace(/^/gm, "  "))

  const again = await magi(["store", "migrate", "--to", url])
  if (again.code !== 0) throw new Error(`the second migration exited ${again.code}:\n${again.stderr}`)
  console.log(`second migration (nothing to copy): ${again.seconds.toFixed(1)} s, peak RSS ${again.peakMiB.toFixed(0)} MiB`)
  console.log(again.stdout.trim().replace(/^/gm, "  "))

  const { rows } = await admin.query("SELECT 1").then(async () => {
    const db = new Pg.Client({ connectionString: url })
    await db.connect()
    try {
      return await db.query("SELECT count(*)::int AS n, count(shelf)::int AS shelved FROM magi_records WHERE kind = 'questions'")
    } finally {
      await db.end()
    }
  })
  console.log(`in the database: ${rows[0].n.toLocaleString("en-US")} questions, ${rows[0].shelved.toLocaleString("en-US")} on shelves`)
  const fine = first.stdout.includes("0 differences") && again.stdout.includes("0 differences") && /questions: [\d,]+ read, 0 copied/.test(again.stdout)
  console.log(
    `goal: under 5 minutes ${first.seconds < 300 ? "met" : "MISSED"}, under 256 MB RSS ${first.peakMiB * 1.048576 < 256 ? "met" : "MISSED"}, checksums ${
      fine ? "equal and the rerun copied nothing" : "NOT AS EXPECTED"
    }`
  )
  if (!fine) process.exitCode = 1
} catch (e) {
  console.error(e instanceof Error ? e.message : e)
  process.exitCode = 1
} finally {
  await cleanUp()
}
