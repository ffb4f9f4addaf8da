// Resume latency: from the owner's answer landing on disk (the rename) to the
// resumed agent's process starting, when the agent's `magi ask` is gone: it
// handed back `pending` and exited, and its turn ended (the common real case).
// A `command` agent (test/fixtures/pending-agent.mjs) under `magi run`, with
// `magi serve` running; each resumed turn asks the next round's question.
// The agent notes `performance.timeOrigin` first thing, so node's own start-up
// of the agent script is included. 10 rounds; median and max.
//
// Before magi ask let go of its lease on exit, the waiter waited out the
// lease's 90 s ttl: 91.5 s measured with the real CLIs.
import { execFileSync, spawn } from "node:child_process"
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { MAGI, isolatedEnv, median, ms } from "./lib.mjs"

const ROUNDS = Number(process.argv[2] ?? 10)
const AGENT = resolve("test/fixtures/pending-agent.mjs")
const sleep = (n) => new Promise((r) => setTimeout(r, n))
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
const daemon = spawn(process.execPath, [MAGI, "serve", "--home", home], { cwd: repo, env: benchEnv, stdio: "ignore" })
await until("the daemon", () => existsSync(join(home, "daemon.json")))
const qdir = join(home, "questions")
const seatLock = join(home, "runs", readdirSync(join(home, "runs"))[0], "leases", "seat-impl.lease")
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
    const answered = { ...open, status: "answered", answer: { choice: "Redis" }, answered_at: new Date().toISOString().replace(/\.\d+Z$/, "Z") }
    const tmp = join(qdir, `${open.id}.json.bench.tmp`)
    writeFileSync(tmp, JSON.stringify(answered, null, 2) + "\n")
    const t0 = performance.timeOrigin + performance.now()
    renameSync(tmp, join(qdir, `${open.id}.json`))
    await until("the resumed turn", () => turns().length >= round + 1)
    samples.push(turns()[round].at - t0)
  }
} finally {
  daemon.kill("SIGTERM")
}
console.log(
  `resume latency (answer renamed → resumed agent process started, asker gone) over ${ROUNDS} rounds: median ${ms(median(samples))}, max ${ms(Math.max(...samples))}`
)
