// Cost that grows with the work done: a home after months of a worked queue,
// 20,000 finished runs (each a folder with its run.json and artifacts) and
// 20,000 done tasks, none yet on a month shelf (an upgraded home). Reports
// `magi runs` before the move, the first `/api/runs` of a `magi web` started
// on it, how long that `magi web` takes to move them to the shelves, then,
// on the moved home: `magi web`'s idle CPU over 10 s (beside the same on an
// empty home), `/api/runs` latency, and `magi runs` and `magi show`.
//
//   node scripts/bench/runs-history.mjs [runs=20000] [tasks=runs]
//
// (or MAGI_BENCH_RUNS / MAGI_BENCH_TASKS; MAGI_BENCH_IDLE_SECONDS, 10 by
// default; MAGI_BENCH_BUNDLE measures another build.)
// Goal at 20,000 + 20,000: idle CPU within 2 points of the empty home,
// `magi runs` under 300 ms, `/api/runs` under 50 ms.
import { spawnSync } from "node:child_process"
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs"
import { get } from "node:http"
import { join } from "node:path"
import { MAGI, median, ms, size, startWeb, tempDir } from "./lib.mjs"

const RUNS = Number(process.argv[2] ?? size("RUNS", 20000))
const TASKS = Number(process.argv[3] ?? size("TASKS", RUNS))
const IDLE_SECONDS = size("IDLE_SECONDS", 10)
const sleep = (n) => new Promise((r) => setTimeout(r, n))
const pad = (n, w = 2) => String(n).padStart(w, "0")

/** An id of the shape magi draws, spread over twelve months of 2025. */
const idAt = (i, salt) => {
  const month = 1 + (i % 12)
  const day = 1 + (Math.floor(i / 12) % 28)
  const sec = Math.floor(i / 336)
  return `2025${pad(month)}${pad(day)}-${pad(Math.floor(sec / 3600) % 24)}${pad(Math.floor(sec / 60) % 60)}${pad(sec % 60)}-${
    (salt + i).toString(16).slice(-4).padStart(4, "0")
  }`
}

const seed = (home) => {
  const runs = join(home, "runs")
  const queue = join(home, "queue")
  mkdirSync(runs, { recursive: true })
  mkdirSync(queue, { recursive: true })
  const at = "2025-06-01T00:00:00Z"
  const runIds = []
  for (let i = 0; i < RUNS; i++) {
    const id = idAt(i, 0x1000)
    runIds.push(id)
    mkdirSync(join(runs, id, "artifacts"), { recursive: true })
    writeFileSync(join(runs, id, "artifacts", "001-impl.stdout.txt"), "did the work\n")
    const run = {
      schema: 1,
      id,
      status: i % 10 === 0 ? "failed" : "done",
      instruction: `work item ${i}: add a cache in front of the API`,
      repo: "/r",
      base: "main",
      base_commit: "0".repeat(40),
      worktree: `/w/${id}`,
      branch: `magi/${id.slice(-4)}`,
      seats: [{ key: "impl", agent: "fake", turns: 1, session: "s", write: true }],
      created_at: at,
      updated_at: at,
      summary: "done",
      reason: ""
    }
    writeFileSync(join(runs, id, "run.json"), JSON.stringify(run, null, 2) + "\n")
  }
  for (let i = 0; i < TASKS; i++) {
    const id = idAt(i, 0x8000)
    const task = {
      schema: 1,
      id,
      title: `work item ${i}`,
      instruction: `work item ${i}: add a cache in front of the API`,
      repo: "/r",
      source: { kind: "human" },
      priority: 0,
      status: "done",
      attempts: 1,
      runs: i < RUNS ? [runIds[i]] : [],
      blocked_by: [],
      created_at: at,
      updated_at: at
    }
    writeFileSync(join(queue, `${id}.json`), JSON.stringify(task) + "\n")
  }
}

const magi = (home, ...args) => {
  const t0 = performance.now()
  const r = spawnSync(process.execPath, [MAGI, ...args], {
    env: { ...process.env, MAGI_HOME: home, XDG_CONFIG_HOME: join(home, "config") },
    encoding: "utf8",
    maxBuffer: 1 << 28
  })
  if (r.status !== 0) throw new Error(`magi ${args.join(" ")} exited ${r.status}: ${r.stderr}`)
  return { ms: performance.now() - t0, out: r.stdout }
}

const request = (web, path) =>
  new Promise((done, fail) => {
    const t0 = performance.now()
    get({ host: web.hostname, port: web.port, path, agent: false }, (res) => {
      let body = ""
      res.on("data", (c) => (body += c))
      res.on("end", () => done({ status: res.statusCode, ms: performance.now() - t0, body }))
    }).on("error", fail)
  })

/** CPU seconds (user + system) the process `pid` has used so far. */
const cpuSeconds = (pid) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ")
  return (Number(fields[11]) + Number(fields[12])) / 100
}

const idleCpu = async (web) => {
  await sleep(1500)
  const c0 = cpuSeconds(web.pid)
  const t0 = performance.now()
  await sleep(IDLE_SECONDS * 1000)
  return ((cpuSeconds(web.pid) - c0) / ((performance.now() - t0) / 1000)) * 100
}

// -- the empty home's idle CPU, the baseline --------------------------------------
const empty = await startWeb(tempDir("magi-bench-rh-empty-"))
const emptyCpu = await idleCpu(empty)
await empty.stop()

// -- a worked home, before the move -----------------------------------------------
const home = tempDir("magi-bench-rh-")
const s0 = performance.now()
seed(home)
console.log(`seeded ${RUNS} finished runs and ${TASKS} done tasks in ${((performance.now() - s0) / 1000).toFixed(1)} s`)
const web = await startWeb(home)
const firstApi = await request(web, "/api/runs")
if (firstApi.status !== 200) throw new Error(`/api/runs said ${firstApi.status}`)
// The move: until the hot folders hold no settled record.
const movedAt = performance.now()
const hotTasks = () => readdirSync(join(home, "queue")).filter((n) => n.endsWith(".json")).length
const hotRuns = () =>
  readdirSync(join(home, "runs")).filter((n) => n !== "history").filter((id) => {
    try {
      readFileSync(join(home, "runs", id, "run.json"))
      return true
    } catch {
      return false
    }
  }).length
// A build that does not move them (the one before) is measured as it is, once the count stops moving.
let last = -1
let still = 0
for (;;) {
  const hot = hotTasks() + hotRuns()
  if (hot === 0) break
  still = hot === last ? still + 1 : 0
  last = hot
  if (still >= 10) break
  if (performance.now() - movedAt > 900_000) throw new Error("the move did not end within 15 minutes")
  await sleep(500)
}
const moveSeconds = (performance.now() - movedAt) / 1000
const leftHot = hotTasks() + hotRuns()
await web.stop()

// A magi web started on the worked home, as after any restart: idle is what its poll costs.
const web2 = await startWeb(home)
const workedCpu = await idleCpu(web2)
const apiTimes = []
let listed = 0
for (let i = 0; i < 20; i++) {
  const r = await request(web2, "/api/runs")
  apiTimes.push(r.ms)
  listed = JSON.parse(r.body).length
}
const older = JSON.parse((await request(web2, `/api/runs?before=${idAt(RUNS - 1, 0x1000)}&limit=50`)).body).length
await web2.stop()

const runsTimes = []
for (let i = 0; i < 3; i++) runsTimes.push(magi(home, "runs").ms)
const showTimes = []
for (let i = 0; i < 3; i++) showTimes.push(magi(home, "show").ms)

// An upgraded home once more, and a command that lists on it before any magi web ran (it does the move, once).
const second = tempDir("magi-bench-rh2-")
seed(second)
const firstRuns = magi(second, "runs")
console.log(`before the move: first /api/runs of magi web ${ms(firstApi.ms)}; the first magi runs on an upgraded home (its move included) ${ms(firstRuns.ms)}`)
console.log(`the move of ${RUNS} runs and ${TASKS} tasks to month shelves by magi web: ${moveSeconds.toFixed(1)} s (${leftHot} records left hot)`)
console.log(
  `idle magi web over ${IDLE_SECONDS} s: ${workedCpu.toFixed(1)}% of a core at ${RUNS} runs + ${TASKS} tasks, ${emptyCpu.toFixed(1)}% on an empty home (${
    (workedCpu - emptyCpu).toFixed(1)
  } points)`
)
console.log(`/api/runs (${listed} runs): median ${ms(median(apiTimes))}, max ${ms(Math.max(...apiTimes))}; a page of older ones: ${older} runs`)
console.log(`magi runs: median ${ms(median(runsTimes))}; magi show: median ${ms(median(showTimes))}`)
