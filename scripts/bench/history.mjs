// magi at 100,000 questions (issue 11, "Scale"): 10,000 settled per month
// over ten months and 100 open, written straight to the hot folder as an
// older magi would have left them. Then, against the built `magi web`:
// the migration (the mover, at start), `GET /api/questions` (bytes, gzipped,
// latency), what one change event costs a page, a history page, a search,
// `magi answer` (open list), `--list --all --json` (first byte and total),
// and the page interactive in Chromium at 390×844 under 4× CPU throttling.
//
//   node scripts/bench/history.mjs            (MAGI_BENCH_SETTLED=N for a smaller run)
//
// MAGI_BENCH_PAGE_RUNS page loads (9; 0 skips Chromium), MAGI_BENCH_CLI_RUNS
// `magi answer` processes (7); the home is removed at the end unless
// MAGI_BENCH_KEEP=1, which keeps it for MAGI_BENCH_HOME or page-ab.mjs.
//
// Goals (issue 11): page interactive < 1 s at 4×; < 50 KB per change;
// `magi answer` < 300 ms; `--list --all --json` streams.
import { spawn } from "node:child_process"
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs"
import { request } from "node:http"
import { join } from "node:path"
import { gunzipSync } from "node:zlib"
import { CHROMIUM, MAGI, isolatedEnv, launchChromium, loadPage, median, ms, size, startWeb, track } from "./lib.mjs"
import { questionIdAt as idAt, questionRecord } from "./questions.mjs"

const MONTHS = 10
const PER_MONTH = size("SETTLED", 100_000) / MONTHS
const OPEN = 100
/** Page loads measured; the page figure is their median (a 2-core machine is noisy). */
const RUNS = size("PAGE_RUNS", 9)
/** `magi answer` processes timed, each beside a `magi --version`. */
const CLI_RUNS = size("CLI_RUNS", 7)

const question = (at, n, open) => questionRecord(at, n, { open, ...(n === 4242 ? { summary: "Should the cache evict zeppelins first?" } : {}) })

// MAGI_BENCH_HOME=<dir> measures a home an earlier run built and migrated (it prints its path) instead of building one.
const isolated = isolatedEnv()
const { cwd } = isolated
const home = process.env.MAGI_BENCH_HOME ?? isolated.home
const env = { ...isolated.env, MAGI_HOME: home }
const hot = join(home, "questions")
mkdirSync(hot, { recursive: true })
let t0 = performance.now()
let n = 0
const reuse = process.env.MAGI_BENCH_HOME !== undefined
if (reuse) console.log(`measuring the home at ${home}`)
for (let m = 0; m < MONTHS && !reuse; m++) {
  const start = new Date(2026, m, 1, 8).getTime()
  // Spread over the month's first 27 days, so every id stays in its month.
  const step = Math.floor((27 * 24 * 3600 * 1000) / PER_MONTH)
  for (let i = 0; i < PER_MONTH; i++, n++) {
    const q = question(new Date(start + i * step), n, false)
    writeFileSync(join(hot, `${q.id}.json`), JSON.stringify(q, null, 2) + "\n")
  }
}
const openIds = []
for (let i = 0; i < OPEN && !reuse; i++, n++) {
  const q = question(new Date(2026, 10, 20, 9, 0, i), n, true)
  openIds.push(q.id)
  writeFileSync(join(hot, `${q.id}.json`), JSON.stringify(q, null, 2) + "\n")
}
if (!reuse)
  console.log(`home ${home}: wrote ${n} questions (${MONTHS * PER_MONTH} settled over ${MONTHS} months, ${OPEN} open) in ${ms(performance.now() - t0)}`)

const hotCount = () => readdirSync(hot).filter((f) => f.endsWith(".json")).length
const sleep = (t) => new Promise((r) => setTimeout(r, t))

const get = (base, path, headers = {}) =>
  new Promise((done, fail) => {
    const started = performance.now()
    const { hostname, port } = new URL(base)
    const req = request({ hostname, port, path, headers, agent: false }, (res) => {
      const chunks = []
      res.on("data", (c) => chunks.push(c))
      res.on("end", () => done({ status: res.statusCode, body: Buffer.concat(chunks), ms: performance.now() - started, headers: res.headers }))
    })
    req.on("error", fail)
    req.end()
  })
const timed = async (base, path, runs = 15, headers = { "accept-encoding": "gzip" }) => {
  const first = await get(base, path, headers)
  const rest = []
  for (let i = 0; i < runs; i++) rest.push((await get(base, path, headers)).ms)
  return { first, median: median(rest) }
}
const decoded = (r) => JSON.parse((r.headers["content-encoding"] === "gzip" ? gunzipSync(r.body) : r.body).toString("utf8"))

// -- the migration: `magi web` moves the settled questions at start --------------
t0 = performance.now()
const web = await startWeb(home)
const started = performance.now()
for (;;) {
  const indexed = existsSync(join(hot, "history")) && readdirSync(join(hot, "history")).filter((f) => f.endsWith(".index.json")).length
  if (hotCount() === OPEN && indexed === MONTHS) break
  await sleep(200)
}
const migration = performance.now() - started
console.log(
  `migration (moved ${MONTHS * PER_MONTH} to ten month shelves and indexed them): ${(migration / 1000).toFixed(1)} s after the server was up (start ${
    ms(started - t0)
  })`
)

try {
  // -- GET /api/questions -----------------------------------------------------------
  const plain = await get(web.url, "/api/questions")
  const list = await timed(web.url, "/api/questions")
  const body = decoded(list.first)
  if (body.open.length !== OPEN || body.history.length !== 30) throw new Error(`unexpected list: ${body.open.length} open, ${body.history.length} history`)
  console.log(
    `GET /api/questions: ${(plain.body.length / 1024).toFixed(1)} KiB raw, ${(list.first.body.length / 1024).toFixed(1)} KiB gzipped; ` +
      `first ${ms(list.first.ms)}, then median ${ms(list.median)}`
  )
  // A change event makes a page refetch with the tag of the list it drew: a
  // change that moved the list costs the list; any other (a run, the queue,
  // the first event on connecting) an empty 304.
  const unchanged = await get(web.url, "/api/questions", { "accept-encoding": "gzip", "if-none-match": list.first.headers.etag })
  if (unchanged.status !== 304) throw new Error(`a refetch with the list's own tag was answered ${unchanged.status}`)
  const headerBytes = (r) => Object.entries(r.headers).reduce((n, [k, v]) => n + k.length + String(v).length + 4, 0)
  console.log(
    `per change event: a refetch of GET /api/questions, ${(list.first.body.length / 1024).toFixed(1)} KiB gzipped when the list changed, ` +
      `an empty 304 (~${headerBytes(unchanged)} B of headers) when it did not (SSE frame itself ~100 B)`
  )

  // -- a history page: the second, and one deep in the archive --------------------
  const second = await timed(web.url, `/api/questions/history?before=${body.next}&limit=30`)
  const deepCursor = idAt(new Date(2026, 2, 15, 12), 0)
  const deep = await timed(web.url, `/api/questions/history?before=${deepCursor}&limit=30`)
  console.log(
    `history page (30): after the first page ${ms(second.median)} median (first ${ms(second.first.ms)}); in March ${ms(deep.median)} median (first ${
      ms(deep.first.ms)
    })`
  )

  // -- search: a word in one question of the oldest month (every index read) -------
  const search = await timed(web.url, `/api/questions/history?q=zeppelins`)
  const hits = decoded(search.first).history.length
  const common = await timed(web.url, `/api/questions/history?q=${encodeURIComponent("storage backend")}`)
  console.log(
    `search, one hit in the oldest month (${hits} found): first ${ms(search.first.ms)}, then median ${
      ms(search.median)
    }; a common phrase (a page of hits): median ${ms(common.median)}`
  )

  // -- one question by id, from the archive -----------------------------------------
  const one = await timed(web.url, `/api/questions/${idAt(new Date(2026, 0, 1, 8), 0)}`)
  console.log(`GET /api/questions/ID (archived): median ${ms(one.median)}`)

  // -- magi answer, the open list -----------------------------------------------------
  // Under /usr/bin/time when there is one, for the process's own CPU time: on a
  // shared machine the wall time is mostly waiting for a core.
  const TIME = existsSync("/usr/bin/time") ? "/usr/bin/time" : undefined
  const cpuOf = (stderr) => {
    const m = /CPU (\d+\.\d+) (\d+\.\d+)\s*$/.exec(stderr)
    return m ? (Number(m[1]) + Number(m[2])) * 1000 : NaN
  }
  const cli = (args) =>
    new Promise((done) => {
      const t = performance.now()
      let firstByte
      let bytes = 0
      let stderr = ""
      const chunks = []
      const argv = TIME ? [TIME, "-f", "CPU %U %S", process.execPath, MAGI, ...args] : [process.execPath, MAGI, ...args]
      const child = track(spawn(argv[0], argv.slice(1), { cwd, env, stdio: ["ignore", "pipe", "pipe"] }))
      child.stderr.on("data", (c) => (stderr += c))
      child.stdout.on("data", (c) => {
        firstByte ??= performance.now() - t
        bytes += c.length
        if (args.includes("--json")) chunks.push(c)
      })
      child.on(
        "close",
        (code) => done({ code, wall: performance.now() - t, cpu: cpuOf(stderr), firstByte, bytes, text: Buffer.concat(chunks).toString("utf8") })
      )
    })
  const listed = []
  const bare = []
  for (let i = 0; i < CLI_RUNS; i++) {
    listed.push(await cli(["answer"]))
    // The same process doing nothing but start: what a listing adds is the difference.
    bare.push(await cli(["--version"]))
  }
  console.log(
    `magi answer (open list of ${OPEN}): median ${ms(median(listed.map((r) => r.wall)))} wall, ${
      ms(median(listed.map((r) => r.cpu)))
    } CPU over ${CLI_RUNS} runs (min wall ${ms(Math.min(...listed.map((r) => r.wall)))}); ` +
      `magi --version alongside: median ${ms(median(bare.map((r) => r.wall)))} wall, ${ms(median(bare.map((r) => r.cpu)))} CPU`
  )

  const all = await cli(["answer", "--list", "--all", "--json"])
  const parsed = JSON.parse(all.text)
  console.log(
    `magi answer --list --all --json: ${parsed.length} questions, ${(all.bytes / 1024 / 1024).toFixed(1)} MiB; first byte ${ms(all.firstByte)}, total ${
      (all.wall / 1000).toFixed(2)
    } s wall, ${(all.cpu / 1000).toFixed(2)} s CPU`
  )

  // -- the page, interactive at 4× CPU throttling ---------------------------------------
  if (RUNS === 0) console.log("page interactive: skipped, MAGI_BENCH_PAGE_RUNS=0")
  else if (existsSync(CHROMIUM)) {
    const browser = await launchChromium()
    const runs = []
    try {
      for (let i = 0; i < RUNS; i++) runs.push(await loadPage(browser, web.url, { cards: OPEN }))
    } finally {
      await browser.close()
    }
    const of = (key) => median(runs.map((r) => r[key]))
    console.log(
      `page at 4× CPU (390×844, ${OPEN} open cards + 30 history, ${runs.at(-1).nodes} DOM nodes), medians of ${RUNS} cold loads from navigation: ` +
        `first screen drawn ${ms(of("drawn"))}; interactive (drawn, and responding after the next frame) ${ms(of("responding"))}, runs ${
          runs.map((r) => r.responding.toFixed(0)).join(", ")
        } ms; ` +
        `all ${OPEN} open cards built ${ms(of("allCards"))}`
    )
  } else console.log(`page interactive: skipped, no ${CHROMIUM}`)
} finally {
  await web.stop()
}
