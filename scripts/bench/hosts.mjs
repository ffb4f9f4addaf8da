// Two hosts on one PostgreSQL store (a server this bench starts itself on
// 127.0.0.1, scripts/pg/server.mjs): host alpha runs `magi serve`, host
// beta serves the page (`magi web`, with its own loop). Each round, a run on
// alpha asks (the fake `command` agent of test/fixtures/ask-agent.mjs) and its
// `magi ask` is killed; the owner answers on beta's page; alpha's waiter
// resumes the seat. Measured: the answer's POST on beta → the resumed turn
// starting on alpha (the agent's own log line), MAGI_BENCH_ROUNDS rounds.
// Also checked: beta never starts a turn of alpha's run.
//
// Also measured, MAGI_BENCH_ROUNDS rounds each:
// - a page on beta sees a change made on gamma: a page's live stream
//   (`/api/events`, read here as a browser's EventSource reads it) open on
//   beta's `magi web`; the owner's word posted on gamma's own `magi web`
//   (--no-loop) → the change event on beta's stream.
// - answer on beta → asker on alpha prints: a `magi ask` waiting on alpha,
//   its answer posted on beta's page → the answer on the asker's stdout.
//
// 3 hosts draining N tasks against one: queue-hosts.mjs.
import { execFileSync } from "node:child_process"
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { MAGI, benchHost, benchPostgres, median, ms, pageOf, run, size, sleep, startMagi, tempDir, until } from "./lib.mjs"

const ROUNDS = size("ROUNDS", 10)
// The asker's figure has a goal of its own (median under 100 ms): it can be
// taken over more rounds than the others (MAGI_BENCH_ASKER_ROUNDS).
const ASKER_ROUNDS = size("ASKER_ROUNDS", ROUNDS)
const ASK_AGENT = resolve("test/fixtures/ask-agent.mjs")

// MAGI_BENCH_PROFILE=<dir>: where the time goes. alpha's `magi serve` and
// beta's `magi web` write V8 CPU profiles there (`--cpu-prof`), and the
// database logs every statement (`log_statement = all`), copied there as
// pg.log with a `bench_mark` line where each phase starts.
const PROFILE = process.env.MAGI_BENCH_PROFILE ?? ""
const pg = await benchPostgres()
const url = await pg.database("magi_bench_hosts")
const copyPgLog = PROFILE === "" ? undefined : await pg.logStatements()
const host = (name) => benchHost(name, url)
const start = (h, args, cwd, extra = {}, nodeArgs = []) => startMagi({ ...h.env, ...extra }, args, cwd, nodeArgs)
const profiled = (label) => (PROFILE === "" ? [] : ["--cpu-prof", `--cpu-prof-dir=${join(resolve(PROFILE), label)}`])

/** A page's live stream, read as a browser's EventSource reads it: each change event, with when it arrived. */
const follow = async (url) => {
  const controller = new AbortController()
  const response = await fetch(`${url}/api/events`, { signal: controller.signal })
  const reader = response.body.getReader()
  const decoder = new TextDecoder()
  const events = []
  let buffered = ""
  ;(async () => {
    for (;;) {
      const { done, value } = await reader.read().catch(() => ({ done: true }))
      if (done) return
      const at = performance.now()
      buffered += decoder.decode(value, { stream: true })
      let end
      while ((end = buffered.indexOf("\n\n")) !== -1) {
        const event = buffered.slice(0, end)
        buffered = buffered.slice(end + 2)
        const data = event.split("\n").find((l) => l.startsWith("data: "))
        if (event.includes("event: change") && data !== undefined) events.push({ ...JSON.parse(data.slice(6)), at })
      }
    }
  })()
  return { events, close: () => controller.abort() }
}

try {
  const alpha = host("alpha")
  const beta = host("beta")
  const log = join(tempDir("magi-bench-log-"), "agent.jsonl")
  const repo = join(alpha.top, "repo")
  mkdirSync(repo)
  const git = (...args) => execFileSync("git", args, { cwd: repo, stdio: "pipe" })
  git("init", "-q", "-b", "trunk")
  git("-c", "user.email=b@b", "-c", "user.name=b", "commit", "-q", "--allow-empty", "-m", "init")
  writeFileSync(join(repo, "magi.toml"), `[agents.fake]\nkind = "command"\ncommand = ${JSON.stringify(["node", ASK_AGENT])}\n`)
  const agentEnv = { FAKE_AGENT_LOG: log }
  // The first command migrates the schema.
  await run(process.execPath, [MAGI, "answer", "--list"], { cwd: repo, env: alpha.env })
  const serve = start(alpha, ["serve"], repo, agentEnv, profiled("alpha-serve"))
  const web = start(beta, ["web", "--bind", "127.0.0.1", "--port", "0"], beta.cwd, agentEnv, profiled("beta-web"))
  const page = await pageOf(web, "beta's page")
  const turns = () => (existsSync(log) ? readFileSync(log, "utf8").trim().split("\n").filter((l) => l !== "").length : 0)
  const samples = []
  for (let round = 0; round < ROUNDS; round++) {
    const asked = await run(process.execPath, [MAGI, "run", `Round ${round}: pick a backend`], { cwd: repo, env: { ...alpha.env, ...agentEnv } })
    if (asked.code !== 0) throw new Error(`magi run failed in round ${round}`)
    // The killed asker's lease (on alpha's disk) is aged, as a dead asker's is after its ttl.
    const leases = join(alpha.home, "questions", "leases")
    for (const f of existsSync(leases) ? readdirSync(leases) : []) {
      const file = join(leases, f)
      writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, "utf8")), beat_at: "2000-01-01T00:00:00Z" }))
    }
    const open = (await (await fetch(`${page}/api/questions`)).json()).open
    const q = open.find((x) => x.summary === "Which backend?")
    const before = turns()
    const t0 = performance.now()
    const answered = await fetch(`${page}/api/questions/${q.id}/answer`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ choice: "SQLite" })
    })
    if (answered.status !== 200) throw new Error(`answer refused: ${answered.status}`)
    await until("alpha to resume the seat", () => turns() > before)
    samples.push(performance.now() - t0)
  }
  const calls = readFileSync(log, "utf8").trim().split("\n").map((l) => JSON.parse(l))
  // beta's loop says each delivery it makes: it must make none of alpha's.
  const onBeta = (web.err().match(/delivered the owner's/g) ?? []).length
  console.log(`hosts: answer on beta → seat resumed on alpha, over ${ROUNDS} rounds: median ${ms(median(samples))}, max ${ms(Math.max(...samples))}`)
  console.log(`hosts: turns started by beta for alpha's runs: ${onBeta}; resumed turns: ${calls.filter((c) => c.turn === 2).length} of ${ROUNDS}`)

  // -- a page on beta sees a change made on gamma ------------------------------
  const gamma = host("gamma")
  const gammaWeb = start(gamma, ["web", "--bind", "127.0.0.1", "--port", "0", "--no-loop"], gamma.cwd)
  const gammaPage = await pageOf(gammaWeb, "gamma's page")
  const stream = await follow(page)
  await until("the page's first event", () => stream.events.length > 0)
  // One question stays open for the owner's words: each word is a change to it.
  start(gamma, ["ask", "--summary", "Standing question for the page bench", "--choice", "a", "--choice", "b"], gamma.cwd)
  let standing
  await until("the standing question on beta's page", async () => {
    standing = (await (await fetch(`${page}/api/questions`)).json()).open.find((x) => x.summary === "Standing question for the page bench")
    return standing !== undefined
  })
  const seen = []
  for (let round = 0; round < ROUNDS; round++) {
    // Quiet first: the events of the last round (and the asker leaving) are not this one's.
    await sleep(300)
    const before = stream.events.length
    const t0 = performance.now()
    const said = await fetch(`${gammaPage}/api/questions/${standing.id}/say`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: gammaPage },
      body: JSON.stringify({ body: `word ${round}` })
    })
    if (said.status !== 200 && said.status !== 202) throw new Error(`say refused on gamma: ${said.status} ${await said.text()}`)
    await until(
      "beta's page to hear of it",
      () => stream.events.slice(before).some((e) => e.revisions?.questions !== stream.events[before - 1]?.revisions?.questions)
    )
    seen.push(stream.events.slice(before).find((e) => e.revisions?.questions !== stream.events[before - 1]?.revisions?.questions).at - t0)
  }
  stream.close()
  console.log(`hosts: a page on beta sees a change made on gamma, over ${ROUNDS} rounds: median ${ms(median(seen))}, max ${ms(Math.max(...seen))}`)

  // -- answer on beta → asker on alpha prints -----------------------------------
  const printed = []
  const acknowledged = []
  await pg.mark("asker phase")
  for (let round = 0; round < ASKER_ROUNDS; round++) {
    const summary = `Asker bench ${round}`
    const asker = start(alpha, ["ask", "--summary", summary, "--choice", "left", "--choice", "right"], alpha.cwd)
    let q
    await until("the asker's question on beta's page", async () => {
      q = (await (await fetch(`${page}/api/questions`)).json()).open.find((x) => x.summary === summary)
      return q !== undefined
    })
    // The asker is waiting (its lease beats) before the answer goes.
    await sleep(300)
    const t0 = performance.now()
    const answered = await fetch(`${page}/api/questions/${q.id}/answer`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ choice: "right" })
    })
    if (answered.status !== 200) throw new Error(`answer refused: ${answered.status}`)
    acknowledged.push(performance.now() - t0)
    await until("the asker on alpha to print the answer", () => asker.out().includes("right"))
    printed.push(performance.now() - t0)
  }
  console.log(`hosts: answer on beta → asker on alpha prints, over ${ASKER_ROUNDS} rounds: median ${ms(median(printed))}, max ${ms(Math.max(...printed))}`)
  // Where the time goes: the answer's write on beta (its POST answered), and the rest on alpha.
  console.log(`hosts: of which beta's page acknowledging the answer: median ${ms(median(acknowledged))}, max ${ms(Math.max(...acknowledged))}`)
  if (PROFILE !== "") {
    await pg.mark("asker phase ends")
    // Ended in order, so each writes its profile.
    await Promise.all([serve.stop(), web.stop()])
    copyPgLog(join(resolve(PROFILE), "pg.log"))
    console.log(`hosts: profiles and the database's statements in ${resolve(PROFILE)}`)
  }
} finally {
  await pg.stop()
}
