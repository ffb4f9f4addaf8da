/**
 * The real opencode (pinned in scripts/agents/pins.json) driven by magi,
 * against a local stand-in for an OpenAI-compatible chat completions API
 * that scripts the conversation. Nothing leaves 127.0.0.1: the stand-in is
 * opencode's only provider, its model list, update check, sharing and
 * default plugins are switched off, and the plugin install it starts for
 * its config folder finds that folder already installed.
 *
 * Each test has its own temp home, XDG folders, repo and stand-in port.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer } from "effect"
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import type { AgentSpec } from "../../src/agents/AgentRoster.js"
import { Agents, newSeat, type CallInput } from "../../src/agents/Agents.js"
import { MagiHome } from "../../src/platform/MagiHome.js"
import { MODEL, opencodeEnv, VERSION } from "./opencodeWorld.js"
import { tempDirSync, until } from "../support.js"
import { runMagi, startMagi } from "./processes.js"
import { type ChatRequest, contentText, type OpenAiChatStandIn, type Script, startOpenAiChat, toolResults, userTexts } from "./standins/openai-chat.js"

const BIN = process.env.MAGI_COMPAT_OPENCODE ?? ""
/** A generous bound for one real opencode turn on a loaded 2-core machine. */
const TURN_MS = 120_000

const requireBin = () => {
  if (BIN === "")
    throw new Error(process.env.MAGI_COMPAT_OPENCODE_ERROR ?? "MAGI_COMPAT_OPENCODE is not set: run through vitest (test/compat/installAgents.ts)")
}

// ---------------------------------------------------------------------------
// A private opencode installation per test: home, XDG folders, config.

/** A git repo on branch `trunk` whose only agent is the real opencode. */
const repoWithOpencode = (dir: string, extra = "") => {
  const repo = NodePath.join(dir, "repo")
  NodeFs.mkdirSync(repo)
  const git = (...args: string[]) => execFileSync("git", args, { cwd: repo, stdio: "pipe" })
  git("init", "-q", "-b", "trunk")
  NodeFs.writeFileSync(NodePath.join(repo, "README.md"), "# scratch\n")
  NodeFs.writeFileSync(
    NodePath.join(repo, "magi.toml"),
    // The shell form (`magi ask` in opencode's bash tool): magi mcp has its own suite.
    `[agents.oc]\nkind = "opencode"\ncommand = ${JSON.stringify([BIN])}\nmodel = "${MODEL}"\nmcp = false\nwait = "poll"\n${extra}`
  )
  git("add", "-A")
  git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "-m", "init")
  return repo
}

/** The built magi, run to its end within `ms`. */
const magiWithin = (ms: number) => (cwd: string, env: Record<string, string>, ...args: string[]) => runMagi(args, { cwd, env, deadline: ms })

const magi = magiWithin(TURN_MS * 2)

const readJson = (file: string) => JSON.parse(NodeFs.readFileSync(file, "utf8"))

/** The one run in `home`: its id, record and file. */
const onlyRun = (home: string) => {
  const [id] = NodeFs.readdirSync(NodePath.join(home, "runs"))
  const file = NodePath.join(home, "runs", id!, "run.json")
  return { id: id!, file, record: () => readJson(file) }
}

const standIns: OpenAiChatStandIn[] = []
const stand = async (script: Script) => {
  const s = await startOpenAiChat(script)
  standIns.push(s)
  return s
}
afterEach(async () => {
  const escaped = standIns.flatMap((s) => s.escapes)
  for (const s of standIns.splice(0)) await s.close()
  // Nothing past 127.0.0.1, in any test.
  expect(escaped).toEqual([])
})

const lastMessage = (r: ChatRequest) => r.messages.at(-1)!

// ---------------------------------------------------------------------------

describe(`opencode ${VERSION}, for real`, () => {
  it("asks through its bash tool, hands back --wait before the tool's limit, and is resumed in the same session with the owner's answer", async () => {
    requireBin()
    const dir = tempDirSync()
    const home = NodePath.join(dir, "magi-home")
    const ASK = `magi ask --summary "Which storage backend should the cache use?" --choice SQLite --choice Redis`
    const s = await stand((req) => {
      // A resumed session: the earlier turn is in the request; carry on.
      if (userTexts(req).length > 1) return { text: "Going with SQLite, as the owner chose." }
      if (lastMessage(req).role === "tool") return { text: "I asked the owner; magi brings their answer back to this session." }
      return { tool: "bash", args: { command: ASK, description: "Ask the owner which backend to use" } }
    })
    // A slice of 3 s, so the ask hands back `pending` well inside the test.
    const repo = repoWithOpencode(dir, "wait_slice = 3\n")
    const seatEnv = opencodeEnv(dir, "seat", s.baseUrl)
    const env = { MAGI_HOME: home, XDG_CONFIG_HOME: seatEnv.XDG_CONFIG_HOME! }

    // 1. The run: opencode's bash tool runs `magi ask`, which hands back.
    const started = await magi(repo, { ...seatEnv, ...env }, "run", "Add a cache; ask the owner which backend.")
    expect(started.stderr).toContain("is waiting on the owner")
    expect(started.code).toBe(0)
    const run = onlyRun(home)
    expect(run.record()).toMatchObject({ status: "waiting", seats: [{ key: "impl", agent: "oc", turns: 1 }] })
    const session: string = run.record().seats[0].session
    expect(session).toMatch(/^ses_/)

    const asked = s.requests.filter((r) => toolResults(r).length > 0)
    expect(asked).toHaveLength(1)
    const handedBack = toolResults(asked[0]!)[0]!
    const [qfile] = NodeFs.readdirSync(NodePath.join(home, "questions")).filter((f) => f.endsWith(".json"))
    const qid = qfile!.slice(0, -5)
    // The slice ended with the hint, not with opencode killing the command.
    expect(handedBack).toContain(`magi ask --wait ${qid}`)
    expect(handedBack).not.toContain("terminated command after exceeding timeout")
    expect(readJson(NodePath.join(home, "questions", qfile!))).toMatchObject({ status: "open", run: run.id, seat: "impl" })

    // 2. The owner answers; nobody is reading.
    const answered = await magi(repo, env, "answer", qid, "--reply", "SQLite")
    expect(answered.code).toBe(0)
    const lease = NodePath.join(home, "questions", "leases", `${qid}.lease`)
    if (NodeFs.existsSync(lease)) NodeFs.writeFileSync(lease, JSON.stringify({ ...readJson(lease), beat_at: "2000-01-01T00:00:00Z" }))

    // 3. The daemon, started with another HOME and other XDG folders, still
    //    resumes the seat's own session: the seat recorded where it lives.
    const elsewhere = opencodeEnv(dir, "daemon", "http://127.0.0.1:9/v1")
    const daemon = startMagi(["serve", "--home", home], { cwd: repo, env: { ...elsewhere, MAGI_HOME: home }, deadline: TURN_MS * 3 })
    try {
      await until("the run to finish", () => ["done", "failed", "stalled"].includes(run.record().status), TURN_MS * 2).catch((e) => {
        throw new Error(`${e.message}; magi serve said:\n${daemon.stderr()}`)
      })
    } finally {
      daemon.child.kill("SIGTERM")
      await daemon.done
    }
    expect(run.record(), daemon.stderr()).toMatchObject({
      status: "done",
      summary: "Going with SQLite, as the owner chose.",
      seats: [{ key: "impl", turns: 2, session }]
    })

    // The resumed request carries the whole earlier conversation, then the answer.
    const resumed = s.requests.filter((r) => r.tools !== undefined && userTexts(r).length > 1)
    expect(resumed).toHaveLength(1)
    const msgs = resumed[0]!.messages
    const callAt = msgs.findIndex((m) => m.tool_calls?.some((c) => JSON.parse(c.function.arguments).command === ASK))
    const resultAt = msgs.findIndex((m) => m.role === "tool" && contentText(m).includes(`magi ask --wait ${qid}`))
    const saidAt = msgs.findIndex((m) => m.role === "assistant" && contentText(m).includes("magi brings their answer back"))
    expect(userTexts(resumed[0]!)[0]).toContain("Add a cache; ask the owner which backend.")
    expect([callAt > 0, resultAt > callAt, saidAt > resultAt]).toEqual([true, true, true])
    const answer = contentText(msgs.at(-1)!)
    expect(msgs.at(-1)!.role).toBe("user")
    expect(answer).toContain(`## The owner's answer\n\nSQLite`)
    // The same session answered both turns.
    const turn2 = NodeFs.readdirSync(NodePath.join(home, "runs", run.id, "artifacts")).find((f) => f.endsWith("-2.out"))
    expect(turn2).toBeDefined()
    expect(NodeFs.readFileSync(NodePath.join(home, "runs", run.id, "artifacts", turn2!), "utf8")).toContain(`"sessionID":"${session}"`)
  }, 6 * TURN_MS)

  it("a 200 KB prompt with quotes arrives byte for byte", async () => {
    requireBin()
    const dir = tempDirSync()
    const home = NodePath.join(dir, "magi-home")
    const s = await stand(() => ({ text: "Read every line." }))
    const repo = repoWithOpencode(dir)
    let task = `Keep these exactly: "double", 'single', \`back\`, $HOME, \\n, ünïcödé.\n`
    while (Buffer.byteLength(task) < 200 * 1024) task += `line ${task.length}: say "hi" and 'bye' \\ $PATH\n`
    const file = NodePath.join(dir, "task.md")
    NodeFs.writeFileSync(file, task)
    const ran = await magi(repo, { ...opencodeEnv(dir, "seat", s.baseUrl), MAGI_HOME: home }, "run", "--file", file)
    expect(ran.code, ran.stderr).toBe(0)
    const run = onlyRun(home)
    expect(run.record()).toMatchObject({ status: "done", summary: "Read every line." })
    const prompt = NodeFs.readFileSync(NodePath.join(home, "runs", run.id, "artifacts", "impl-1.prompt.md"), "utf8")
    const sent = userTexts(s.requests.find((r) => r.tools !== undefined)!)
    expect(sent).toHaveLength(1)
    expect(sent[0]).toContain(task)
    expect(sent[0]).toBe(prompt)
  }, 3 * TURN_MS)

  it("an API error fails the run with the API's message, not JSON", async () => {
    requireBin()
    const dir = tempDirSync()
    const home = NodePath.join(dir, "magi-home")
    const s = await stand(() => ({
      status: 400,
      body: { error: { message: "The model `scripted` does not exist or you do not have access to it.", type: "invalid_request_error" } }
    }))
    const repo = repoWithOpencode(dir)
    const ran = await magi(repo, { ...opencodeEnv(dir, "seat", s.baseUrl), MAGI_HOME: home }, "run", "Do something")
    const record = onlyRun(home).record()
    expect(record.status, ran.stderr).toBe("failed")
    expect(record.reason).toContain("The model `scripted` does not exist or you do not have access to it.")
    expect(record.reason).not.toMatch(/[{}\u001b]/)
    // The reason says why, in one line; a failed turn's output is no summary of work done.
    expect(record.reason.split("\n")).toHaveLength(1)
    expect(record.summary).toBe("")
  }, 3 * TURN_MS)

  it("a usage limit stalls the run with when it resets", async () => {
    requireBin()
    const dir = tempDirSync()
    const home = NodePath.join(dir, "magi-home")
    const s = await stand(() => ({
      status: 429,
      // retry-after-ms keeps opencode's own five retries quick; retry-after
      // is when the limit lifts.
      headers: { "retry-after-ms": "10", "retry-after": "7500" },
      body: {
        error: {
          message: "You exceeded your current quota, please check your plan and billing details.",
          type: "insufficient_quota",
          code: "insufficient_quota"
        }
      }
    }))
    const repo = repoWithOpencode(dir)
    const ran = await magi(repo, { ...opencodeEnv(dir, "seat", s.baseUrl), MAGI_HOME: home }, "run", "Do something")
    const record = onlyRun(home).record()
    expect(record.status, ran.stderr).toBe("stalled")
    expect(record.reason).toContain("resets in 2 hours 5 minutes")
    expect(ran.stderr).toContain("stalled")
  }, 3 * TURN_MS)
})

// ---------------------------------------------------------------------------
// Through Agents.call: seats `magi run` does not start (read-only), and a
// resume of a session opencode does not have.

const agentSpec = (env: Record<string, string>): AgentSpec => ({ id: "oc", kind: "opencode", command: [BIN], model: MODEL, args: [], env })

const call = (home: string, input: CallInput) =>
  Effect.runPromise(
    Effect.gen(function* () {
      return yield* (yield* Agents).call(input)
    }).pipe(Effect.provide(Agents.layer.pipe(Layer.provide(MagiHome.at(home)), Layer.provideMerge(NodeContext.layer))))
  )

const callInput = (dir: string, agent: AgentSpec, over: Partial<CallInput>): CallInput => ({
  agent,
  seat: newSeat("conductor", agent.id),
  prompt: "Look around.",
  cwd: dir,
  allowWrite: false,
  timeout: Duration.millis(TURN_MS),
  artifactsDir: NodePath.join(NodePath.dirname(dir), "artifacts"),
  stem: "conductor-1",
  run: "R1",
  node: "conduct",
  ...over
})

describe(`opencode ${VERSION} with the owner's OPENCODE_CONFIG_CONTENT, for real`, () => {
  it("runs on the provider the owner's OPENCODE_CONFIG_CONTENT names, with magi's MCP server registered beside it", async () => {
    requireBin()
    const dir = tempDirSync()
    const home = NodePath.join(dir, "magi-home")
    const s = await stand((req) => {
      const tools = (req.tools ?? []).map((t) => t.function.name)
      return { text: tools.some((t) => /magi.*ask$/.test(t)) ? "Done: magi's tools were offered." : `no magi tool in: ${tools.join(", ")}` }
    })
    const repo = NodePath.join(dir, "repo")
    NodeFs.mkdirSync(repo)
    const git = (...args: string[]) => execFileSync("git", args, { cwd: repo, stdio: "pipe" })
    git("init", "-q", "-b", "trunk")
    NodeFs.writeFileSync(NodePath.join(repo, "magi.toml"), `[agents.oc]\nkind = "opencode"\ncommand = ${JSON.stringify([BIN])}\nmodel = "${MODEL}"\n`)
    git("add", "-A")
    git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "-m", "init")
    // The config file's provider leads nowhere (a closed local port); the
    // owner's environment moves it to the stand-in, as an owner sets theirs.
    const seatEnv = opencodeEnv(dir, "seat", "http://127.0.0.1:9/v1")
    const proxy = new URL(s.baseUrl).origin
    const env = {
      ...seatEnv,
      HTTPS_PROXY: proxy,
      HTTP_PROXY: proxy,
      OPENCODE_CONFIG_CONTENT: JSON.stringify({ provider: { standin: { options: { baseURL: s.baseUrl } } } }),
      MAGI_HOME: home
    }
    const ran = await magi(repo, env, "run", "Say whether magi's tools are there.")
    expect(ran.code, ran.stderr).toBe(0)
    expect(onlyRun(home).record()).toMatchObject({ status: "done", summary: "Done: magi's tools were offered." })
  }, 3 * TURN_MS)
})

describe(`opencode ${VERSION} seats, for real`, () => {
  it("a read-only seat cannot change the worktree, by edit tools or by shell, but can still run magi", async () => {
    requireBin()
    const dir = tempDirSync()
    const work = NodePath.join(dir, "work")
    NodeFs.mkdirSync(work)
    NodeFs.writeFileSync(NodePath.join(work, "README.md"), "# untouched\n")
    const attempts: Array<{ tool: string; args: Record<string, unknown> }> = [
      { tool: "write", args: { filePath: NodePath.join(work, "written.txt"), content: "by the write tool\n" } },
      { tool: "edit", args: { filePath: NodePath.join(work, "README.md"), oldString: "untouched", newString: "edited" } },
      { tool: "bash", args: { command: "echo shell >> README.md && touch by-shell.txt", description: "write by shell" } },
      { tool: "bash", args: { command: "git init -q . && git config user.name x", description: "change git" } },
      // magi cannot carry another command in with it.
      { tool: "bash", args: { command: "magi --version && touch by-chain.txt", description: "chain" } },
      // magi's own command still runs in a read-only seat (it must ask).
      { tool: "bash", args: { command: "magi --help", description: "magi runs" } },
      // …by its absolute path too, as the prompt names it.
      { tool: "bash", args: { command: `${NodePath.resolve("dist/bin/magi")} --version`, description: "magi by path" } }
    ]
    const s = await stand((req, i) => (i < attempts.length ? attempts[i]! : { text: `tried ${toolResults(req).length} changes` }))
    const magiBin = NodePath.resolve("dist/bin")
    const env = { ...opencodeEnv(dir, "seat", s.baseUrl), PATH: `${magiBin}${NodePath.delimiter}${process.env.PATH}` }
    const r = await call(NodePath.join(dir, "magi-home"), callInput(work, agentSpec(env), {}))
    expect(r.text).toBe(`tried ${attempts.length} changes`)
    expect(NodeFs.readdirSync(work).sort()).toEqual(["README.md"])
    expect(NodeFs.readFileSync(NodePath.join(work, "README.md"), "utf8")).toBe("# untouched\n")
    const results = toolResults(s.requests.at(-1)!)
    expect(results).toHaveLength(attempts.length)
    // The edit tools are not even offered; the shell refuses by rule.
    for (const r of s.requests.filter((q) => q.tools !== undefined))
      expect(r.tools!.map((t) => t.function.name).filter((t) => ["write", "edit", "apply_patch", "patch"].includes(t))).toEqual([])
    expect(results[0]).toContain("unavailable tool 'write'")
    expect(results[1]).toContain("unavailable tool 'edit'")
    for (const refused of results.slice(2, 5)) expect(refused).toContain("a rule which prevents you from using this specific tool call")
    expect(results[5]).toContain("magi ask")
    expect(results[6]).toContain("0.1.0")
  }, 3 * TURN_MS)

  it("the same attempts in a seat that may write do change the worktree (the test above can fail)", async () => {
    requireBin()
    const dir = tempDirSync()
    const work = NodePath.join(dir, "work")
    NodeFs.mkdirSync(work)
    const s = await stand((_req, i) =>
      i === 0
        ? { tool: "write", args: { filePath: NodePath.join(work, "written.txt"), content: "by the write tool\n" } }
        : i === 1
        ? { tool: "bash", args: { command: "touch by-shell.txt", description: "write by shell" } }
        : { text: "changed" }
    )
    const r = await call(NodePath.join(dir, "magi-home"), callInput(work, agentSpec(opencodeEnv(dir, "seat", s.baseUrl)), { allowWrite: true }))
    expect(r.text).toBe("changed")
    expect(NodeFs.readdirSync(work).sort()).toEqual(["by-shell.txt", "written.txt"])
  }, 3 * TURN_MS)

  it("every command its bash tool runs is told the opencode wait slice, 100 s", async () => {
    requireBin()
    const dir = tempDirSync()
    const work = NodePath.join(dir, "work")
    NodeFs.mkdirSync(work)
    const s = await stand((req, i) =>
      i === 0 ? { tool: "bash", args: { command: "echo slice=$MAGI_WAIT_SLICE", description: "show the slice" } } : { text: toolResults(req)[0]!.trim() }
    )
    const r = await call(NodePath.join(dir, "magi-home"), callInput(work, agentSpec(opencodeEnv(dir, "seat", s.baseUrl)), { allowWrite: true }))
    expect(r.text).toBe("slice=100")
  }, 3 * TURN_MS)

  /**
   * One turn: `magi ask` under opencode's bash tool with the slice magi
   * gives opencode, then a `sleep` that outlasts the tool; how long each
   * took, request to request, and what the tool said of each.
   */
  const sliceAgainstLimit = async (limitMs: number | undefined) => {
    requireBin()
    const dir = tempDirSync()
    const home = NodePath.join(dir, "magi-home")
    const at: number[] = []
    const s = await stand((_req, i) => {
      at.push(Date.now())
      if (i === 0) return { tool: "bash", args: { command: `magi ask --summary "Slow?" --choice yes --choice no`, description: "ask" } }
      if (i === 1) return { tool: "bash", args: { command: "sleep 400; echo finished", description: "outlast the tool" } }
      return { text: "measured" }
    })
    const repo = repoWithOpencode(dir)
    const limit = limitMs === undefined ? {} : { OPENCODE_EXPERIMENTAL_BASH_DEFAULT_TIMEOUT_MS: String(limitMs) }
    const ran = await magiWithin(8 * TURN_MS)(repo, { ...opencodeEnv(dir, "seat", s.baseUrl), ...limit, MAGI_HOME: home }, "run", "Ask, then sleep.")
    expect(ran.code, ran.stderr).toBe(0)
    const [asked, slept] = toolResults(s.requests.at(-1)!)
    const secs = (from: number, to: number) => Math.round((at[to]! - at[from]!) / 100) / 10
    return { asked: asked!, slept: slept!, askSecs: secs(0, 1), sleepSecs: secs(1, 2) }
  }

  it("with its bash limit set to 30 s, magi ask hands back with --wait before opencode kills it", async () => {
    const r = await sliceAgainstLimit(30_000)
    expect(r.asked).toMatch(/magi ask --wait \S+/)
    expect(r.asked).not.toContain("terminated command")
    expect(r.slept).toContain("shell tool terminated command after exceeding timeout 30000 ms")
    expect(r.askSecs).toBeLessThan(r.sleepSecs)
  }, 6 * TURN_MS)

  // Slow (about four minutes, mostly waiting out opencode's own limit), so
  // only on demand: MAGI_COMPAT_SLOW=1 npm run test:agents.
  it.runIf(process.env.MAGI_COMPAT_SLOW === "1")(
    "measured: opencode's bash tool kills a command at 120 s, and magi ask's default slice hands back with --wait before that",
    async () => {
      const r = await sliceAgainstLimit(undefined)
      console.log(`opencode: magi ask handed back after ${r.askSecs} s; sleep killed after ${r.sleepSecs} s`)
      expect(r.asked).toMatch(/magi ask --wait \S+/)
      expect(r.slept).toContain("shell tool terminated command after exceeding timeout 120000 ms")
      expect(r.askSecs).toBeLessThan(r.sleepSecs)
    },
    10 * TURN_MS
  )

  it("resuming a session opencode does not have reads as its message, without colours", async () => {
    requireBin()
    const dir = tempDirSync()
    const work = NodePath.join(dir, "work")
    NodeFs.mkdirSync(work)
    const s = await stand(() => ({ text: "never asked" }))
    const r = await call(
      NodePath.join(dir, "magi-home"),
      callInput(work, agentSpec(opencodeEnv(dir, "seat", s.baseUrl)), {
        seat: { key: "impl", agent: "oc", turns: 1, session: "ses_0000000000000000000000gone" },
        allowWrite: true
      })
    )
    expect(r.usable).toBe(false)
    expect(r.exitCode).toBe(1)
    expect(r.text).toBe("Session not found")
    expect(r.problem).toContain("Session not found")
    expect(r.problem).not.toMatch(/\u001b|Error:/)
    expect(s.requests).toHaveLength(0)
  }, 3 * TURN_MS)
})
