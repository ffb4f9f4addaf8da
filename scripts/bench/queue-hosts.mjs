// The queue across hosts: MAGI_BENCH_TASKS fast tasks (default 1,000) for
// the repository named `app`, drained once by one host and once by
// MAGI_BENCH_HOSTS hosts (default 3), each a `magi serve` of its own (its
// home, its clone, `[host] name`, `[daemon] max_concurrent_runs =
// MAGI_BENCH_RUNS`, default 2), all on one PostgreSQL database (a server this
// bench starts itself on 127.0.0.1, scripts/pg/server.mjs; a database per
// drain). The agent is a `command` agent of one shell line that logs its run.
//
// Measured: from the loops' start to the last task done, tasks per second,
// and the speed-up of the hosts over one. Checked: zero duplicates (a task
// with more than one run, a run with more than one turn) and zero lost (a
// task not done, a task never run).
import { execFileSync } from "node:child_process"
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import Pg from "pg"
import { benchHost, benchPostgres, pageOf, size, sleep, startMagi, tempDir, until } from "./lib.mjs"

const TASKS = size("TASKS", 1000)
const HOSTS = size("HOSTS", 3)
const RUNS = size("RUNS", 2)
/** One line per turn: its run and the task's first line. Shell, not node: the agent should cost next to nothing. */
const AGENT = ["sh", "-c", `printf '%s\\t%s\\t%s\\n' "$MAGI_RUN" "$(head -n1 "$MAGI_PROMPT_FILE")" "$PWD" >> "$FAKE_AGENT_LOG"; echo done`]
/** Checks that read the database, every 50 ms rather than lib's 5: not to load the drain being measured. */
const EVERY = 50

const pg = await benchPostgres()

/** A host: its home, its clone of `origin` (in its folder, named in its config as `app`). */
const host = (name, origin, url, log) => {
  const h = benchHost(
    name,
    url,
    (top) => `max_turns = ${RUNS + 2}\n\n[daemon]\nmax_concurrent_runs = ${RUNS}\n\n[repos]\napp = ${JSON.stringify(join(realpathSync(top), "src", "app"))}\n`
  )
  const clone = join(h.top, "src", "app")
  execFileSync("git", ["clone", "-q", origin, clone], { stdio: "pipe" })
  writeFileSync(join(clone, "magi.toml"), `[agents.fake]\nkind = "command"\ncommand = ${JSON.stringify(AGENT)}\n`)
  return { name, top: realpathSync(h.top), clone, env: { ...h.env, FAKE_AGENT_LOG: log } }
}

/** File `TASKS` tasks, start `hosts` loops, wait for the last to be done; the figures. */
const drain = async (label, hosts) => {
  const db = `magi_bench_qhosts_${label}`
  const url = await pg.database(db)
  const dir = tempDir("magi-bench-qhosts-")
  const origin = join(dir, "origin")
  mkdirSync(origin)
  execFileSync("git", ["init", "-q", "-b", "trunk"], { cwd: origin })
  execFileSync("git", ["-c", "user.email=b@b", "-c", "user.name=b", "commit", "-q", "--allow-empty", "-m", "init"], { cwd: origin })
  const log = join(dir, "agent.tsv")
  const all = Array.from({ length: hosts }, (_, i) => host(`h${i + 1}`, origin, url, log))
  // Filed through one page (the first host's, no loop of its own).
  const filer = startMagi(all[0].env, ["web", "--no-loop", "--bind", "127.0.0.1", "--port", "0"], all[0].clone)
  const page = await pageOf(filer, "the filing page")
  for (let i = 1; i <= TASKS; i++) {
    const r = await fetch(`${page}/api/queue`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ instruction: `Task ${i}`, repo: "app" })
    })
    if (r.status !== 201) throw new Error(`filing refused: ${r.status} ${await r.text()}`)
  }
  await filer.stop()
  const turns = () => (existsSync(log) ? readFileSync(log, "utf8").split("\n").filter((l) => l !== "") : [])
  const t0 = performance.now()
  const loops = all.map((h) => startMagi(h.env, ["serve"], h.clone))
  const client = new Pg.Client({ connectionString: url })
  await client.connect()
  const tasks = async () => (await client.query("SELECT body FROM magi_records WHERE kind = 'queue'")).rows.map((r) => JSON.parse(r.body))
  await until(`${label}: every task done`, async () => turns().length >= TASKS && (await tasks()).every((t) => t.status === "done"), {
    limit: 3_600_000,
    every: EVERY
  })
  const seconds = (performance.now() - t0) / 1000
  // A few seconds more: nothing may run twice after the end.
  await sleep(3000)
  await Promise.all(loops.map((l) => l.stop()))
  const stored = await tasks()
  await client.end()
  const lines = turns().map((l) => l.split("\t"))
  const runsSeen = new Map()
  for (const [run] of lines) runsSeen.set(run, (runsSeen.get(run) ?? 0) + 1)
  const duplicates = stored.filter((t) => t.runs.length > 1).length + [...runsSeen.values()].filter((n) => n > 1).length
  const titles = new Set(lines.map((l) => l[1]))
  const lost = stored.filter((t) => t.status !== "done").length + stored.filter((t) => !titles.has(t.title)).length + (TASKS - stored.length)
  // Which host ran each turn: the worktree it ran in is under that host's folder.
  const byHost = all.map((h) => `${h.name} ${lines.filter((l) => (l[2] ?? "").startsWith(h.top + "/")).length}`)
  return { seconds, rate: TASKS / seconds, duplicates, lost, byHost }
}

try {
  const one = await drain("one", 1)
  console.log(
    `queue-hosts: 1 host drained ${TASKS} tasks in ${one.seconds.toFixed(1)} s (${one.rate.toFixed(2)} tasks/s); duplicates ${one.duplicates}, lost ${one.lost}`
  )
  const many = await drain("many", HOSTS)
  console.log(
    `queue-hosts: ${HOSTS} hosts drained ${TASKS} tasks in ${many.seconds.toFixed(1)} s (${many.rate.toFixed(2)} tasks/s, ${
      (many.rate / one.rate).toFixed(2)
    }x one host); duplicates ${many.duplicates}, lost ${many.lost}; done by ${many.byHost.join(", ")}`
  )
  if (one.duplicates + one.lost + many.duplicates + many.lost > 0) process.exitCode = 1
} finally {
  await pg.stop()
}
