// Resume latency: from the owner's answer landing on disk (the rename) to the
// resumed agent's process starting, when the agent's `magi ask` is gone: it
// handed back `pending` and exited, and its turn ended (the common real case).
// A `command` agent (test/fixtures/pending-agent.mjs) under `magi run`, with
// `magi serve` running; each resumed turn asks the next round's question.
// The agent notes `performance.timeOrigin` first thing, so node's own start-up
// of the agent script is included. 10 rounds (MAGI_BENCH_ROUNDS, or the first
// argument); median and max, overall and per way the answer lands.
//
// The answer lands each of three ways in turn (MAGI_BENCH_VIA picks some,
// comma-separated): `rename`, another process's atomic rename, timed from
// the rename itself; `answer`, `magi answer --reply`; `page`, a POST to a
// `magi web --no-loop` beside the daemon, as the phone's page sends it. The
// last two are timed from the moment a watch of the questions folder here
// hears the question's file replaced.
//
// Before magi ask let go of its lease on exit, the waiter waited out the
// lease's 90 s ttl: 91.5 s measured with the real CLIs. Before the daemon's
// beat followed the waiter's wake-ups, every round waited for the next
// five-second beat: median 3.2 s.
import { execFileSync, spawn } from "node:child_process"
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, watch, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { MAGI, isolatedEnv, median, ms, size, startWeb, track } from "./lib.mjs"

const ROUNDS = Number(process.argv[2] ?? size("ROUNDS", 10))
const VIA = (process.env.MAGI_BENCH_VIA ?? "rename,answer,page").split(",").filter((v) => v !== "")
for (const via of VIA) if (!["rename", "answer", "page"].includes(via)) throw new Error(`MAGI_BENCH_VIA: unknown way ${via}`)
const AGENT = resolve("test/fixtures/pending-agent.mjs")
const sleep = (n) => new Promise((r) => setTimeout(r, n))
const now = () => performance.timeOrigin + performance.now()
const until = async (what, ok, limit = 60_000) => {
  for (const end = Date.now() + limit; !ok(); await sleep(5)) if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
}

const { top, env, home } = isolatedEnv()
const repo = join(top, "repo")
mkdirSync(repo)
const git = (...args) => execFileSync("git", args, { cwd: repo, stdio: "pipe" })
git("init", "-q", "-b", "trunk")
git("-c", "user.email=b@b", "-c", "user.name=b", "commit", "-q", "--allow-empty", "-m", "init")
writeFileSync(join(repo, "magi.toml"), `[agents.bench]\nkind = "command"\ncommand = ${JSON.stringify(["node", AGENT])}\n`)
const log = join(top, "agent.jsonl")
const benchEnv = { ...env, FAKE_AGENT_LOG: log, PENDING_AGENT_ROUNDS: String(ROUNDS) }
const turns = () => (existsSync(log) ? readFileSync(log, "utf8").trim().split("\n").map((l) => JSON.parse(l)) : [])

// Turn 1: the agent asks round 1; the slice hands back pending; the turn ends.
execFileSync(process.execPath, [MAGI, "run", "Pick a storage backend"], { cwd: repo, env: benchEnv, stdio: "pipe" })
// Its own process group, so a bench that fails half-way takes the agents'
// turns it started down with it (lib.mjs, at exit).
const daemon = track(spawn(process.execPath, [MAGI, "serve", "--home", home], { cwd: repo, env: benchEnv, stdio: "ignore", detached: true }), {
  group: true
})
const daemonExited = new Promise((r) => daemon.once("exit", r))
const page = VIA.includes("page") ? await startWeb(home, { cwd: repo }) : undefined
await until("the daemon", () => existsSync(join(home, "daemon.json")))
const qdir = join(home, "questions")
const seatLock = join(home, "runs", readdirSync(join(home, "runs"))[0], "leases", "seat-impl.lease")

/** When the file of the question `id` was last replaced, as a watch here heard it. */
const landed = new Map()
const watcher = watch(qdir, (_, name) => {
  if (typeof name === "string" && name.endsWith(".json")) landed.set(name.slice(0, -".json".length), now())
})

const answerBy = {
  rename: async (open) => {
    const answered = { ...open, status: "answered", answer: { choice: "Redis" }, answered_at: new Date().toISOString().replace(/\.\d+Z$/, "Z") }
    const tmp = join(qdir, `${open.id}.json.bench.tmp`)
    writeFileSync(tmp, JSON.stringify(answered, null, 2) + "\n")
    const t0 = now()
    renameSync(tmp, join(qdir, `${open.id}.json`))
    return t0
  },
  answer: async (open) => {
    landed.delete(open.id)
    const answered = track(spawn(process.execPath, [MAGI, "answer", open.id, "--reply", "Redis"], { cwd: repo, env: benchEnv, stdio: "ignore" }))
    const code = await new Promise((r) => answered.once("exit", r))
    if (code !== 0) throw new Error(`magi answer exited with ${code}`)
    await until("the answer's rename to be heard", () => landed.has(open.id), 10_000)
    return landed.get(open.id)
  },
  page: async (open) => {
    landed.delete(open.id)
    const res = await fetch(`${page.url}/api/questions/${open.id}/answer`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: page.url },
      body: JSON.stringify({ choice: "Redis" })
    })
    if (!res.ok) throw new Error(`the page's answer was refused: ${res.status} ${await res.text()}`)
    await until("the answer's rename to be heard", () => landed.has(open.id), 10_000)
    return landed.get(open.id)
  }
}

const samples = []
try {
  for (let round = 1; round <= ROUNDS; round++) {
    // The turn that asked this round has ended (its seat lock is gone): nobody waits on the question.
    const openOne = () =>
      readdirSync(qdir)
        .filter((n) => n.endsWith(".json"))
        .map((n) => JSON.parse(readFileSync(join(qdir, n), "utf8")))
        .find((q) => q.status === "open" && q.summary.startsWith(`Round ${round}:`))
    await until("the turn to end", () => openOne() !== undefined && !existsSync(seatLock))
    const open = openOne()
    // As an owner on a phone would: a moment after the agent moved on.
    await sleep(500)
    const via = VIA[(round - 1) % VIA.length]
    const t0 = await answerBy[via](open)
    await until("the resumed turn", () => turns().length >= round + 1)
    samples.push({ via, ms: turns()[round].at - t0 })
  }
} finally {
  watcher.close()
  if (daemon.exitCode === null && daemon.signalCode === null) daemon.kill("SIGTERM")
  await daemonExited
  await page?.stop()
}
const all = samples.map((s) => s.ms)
const byWay = VIA.map((via) => {
  const xs = samples.filter((s) => s.via === via).map((s) => s.ms)
  return xs.length === 0 ? "" : `${via} ${ms(median(xs))} (max ${ms(Math.max(...xs))}, ${xs.length})`
}).filter((s) => s !== "")
console.log(
  `resume latency (answer landed → resumed agent process started, asker gone) over ${ROUNDS} rounds: median ${ms(median(all))}, max ${ms(Math.max(...all))}; ` +
    `by way: ${byWay.join("; ")}; rounds ${all.map((x) => x.toFixed(0)).join(", ")} ms`
)
