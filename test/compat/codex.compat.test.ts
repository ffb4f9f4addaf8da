/**
 * magi with the real `codex` CLI (pinned in scripts/agents/pins.json), its
 * model API played by a local stand-in (standins/openai-responses.ts) that
 * scripts the conversation: codex's own shell tool runs `magi ask`, the
 * slice hands back with the `--wait` hint, the owner answers, and
 * `magi serve` resumes the *same* codex session with the answer.
 *
 * Everything runs under a temp folder outside /tmp (in the agents' cache):
 * codex's `workspace-write` sandbox lets commands write /tmp, which would
 * hide exactly what these tests prove, that magi opens up the folder an ask
 * needs and nothing else. codex reaches nothing but the stand-in: its proxy
 * variables point there, and the tests assert nothing else was asked for.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer } from "effect"
import { execFileSync, spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { Agents, newSeat, waitSliceSecs } from "../../src/agents/Agents.js"
import type { AgentSpec } from "../../src/agents/AgentRoster.js"
import { MagiHome } from "../../src/platform/MagiHome.js"
import { until } from "../support.js"
import { runMagi, startMagi } from "./processes.js"
import { codexConfig, messages, runningSession, type Script, type StandIn, startResponsesStandIn, toolCalls, toolOutputs } from "./standins/openai-responses.js"

const CODEX = process.env.MAGI_COMPAT_CODEX
const INSTALL_ERROR = process.env.MAGI_COMPAT_CODEX_ERROR

/** A real CLI on a busy two-core machine: deadlines are generous, never tight. */
const DEADLINE = 240_000

const codexAgent = (command: string): AgentSpec => ({ id: "codex", kind: "codex", command: [command], model: null, args: [], env: {} })

// ---------------------------------------------------------------------------
// One test's world: a magi home, codex's home, a user home, a repository.

interface World {
  readonly base: string
  readonly home: string
  readonly codexHome: string
  readonly userHome: string
  readonly repo: string
  readonly standIn: StandIn
  /** The environment every magi process of this test runs with. */
  readonly env: Record<string, string>
}

/** Temp folders live in the agents' cache, outside /tmp (see the file's comment). */
const scratchRoot = () => {
  const root = NodePath.join(
    process.env.MAGI_AGENTS_CACHE ?? NodePath.join(process.env.XDG_CACHE_HOME ?? NodePath.join(NodeOs.homedir(), ".cache"), "magi-agents"),
    "compat-tmp"
  )
  NodeFs.mkdirSync(root, { recursive: true })
  return root
}

const world = async (script: Script): Promise<World> => {
  if (CODEX === undefined) throw new Error(INSTALL_ERROR ?? "MAGI_COMPAT_CODEX is unset: run through vitest, whose global setup installs the pinned codex")
  const base = NodeFs.mkdtempSync(NodePath.join(scratchRoot(), "codex-"))
  const home = NodePath.join(base, "magi-home")
  const codexHome = NodePath.join(base, "codex-home")
  const userHome = NodePath.join(base, "user-home")
  const repo = NodePath.join(base, "repo")
  for (const d of [home, codexHome, userHome, repo]) NodeFs.mkdirSync(d, { recursive: true })
  // A login profile that resets PATH, as /etc/profile does on Debian, to
  // one without node on it, as for anyone whose node comes from nvm (set up
  // in .bashrc, which a login shell does not read): codex runs every command
  // through `bash -lc`, so this is all its shell has. The tools the scripted
  // model uses are there; node and magi are not.
  const tools = NodePath.join(userHome, "tools")
  NodeFs.mkdirSync(tools)
  for (const tool of ["git", "touch", "cat", "ls"]) {
    const found = spawnSync("sh", ["-c", `command -v ${tool}`], { encoding: "utf8" }).stdout.trim()
    if (found !== "") NodeFs.symlinkSync(found, NodePath.join(tools, tool))
  }
  NodeFs.writeFileSync(NodePath.join(userHome, ".bash_profile"), `PATH=${tools}\nexport PATH\n`)
  const git = (...args: string[]) => execFileSync("git", args, { cwd: repo, stdio: "pipe" })
  git("init", "-q", "-b", "trunk")
  git("config", "user.email", "owner@example.com")
  git("config", "user.name", "Owner")
  git("commit", "-q", "--allow-empty", "-m", "init")
  NodeFs.writeFileSync(
    NodePath.join(repo, "magi.toml"),
    `[agents.codex]\nkind = "codex"\ncommand = ${
      JSON.stringify([CODEX])
    }\n# The shell form, polling: magi mcp and ending the turn have their own suites.\nmcp = false\nwait = "poll"\n`
  )
  git("add", "magi.toml")
  git("commit", "-q", "-m", "magi config")
  const standIn = await startResponsesStandIn(script)
  NodeFs.writeFileSync(NodePath.join(codexHome, "config.toml"), codexConfig(standIn))
  // A notification command that needs the network, which codex's sandbox
  // denies: the ask must still file its question and wait.
  const configDir = NodePath.join(base, "config", "magi")
  NodeFs.mkdirSync(configDir, { recursive: true })
  const reach =
    `require("net").connect(${standIn.port}, "127.0.0.1").on("connect", () => process.exit(0)).on("error", (e) => { console.error(e.message); process.exit(1) })`
  NodeFs.writeFileSync(NodePath.join(configDir, "config.toml"), `[notify]\ncommand = ${JSON.stringify([process.execPath, "-e", reach])}\n`)
  const env: Record<string, string> = {
    ...standIn.proxyEnv,
    MAGI_HOME: home,
    HOME: userHome,
    CODEX_HOME: codexHome,
    XDG_CONFIG_HOME: NodePath.join(base, "config")
  }
  return { base, home, codexHome, userHome, repo, standIn, env }
}

const cleanup = async (w: World) => {
  await w.standIn.close()
  NodeFs.rmSync(w.base, { recursive: true, force: true })
}

/** The built magi in the world's repository, run to its end. */
const magi = (w: World, env: Record<string, string>, ...args: string[]) => runMagi(args, { cwd: w.repo, env, deadline: DEADLINE })

const readJson = (file: string) => JSON.parse(NodeFs.readFileSync(file, "utf8"))
const onlyRun = (w: World) => {
  const [id] = NodeFs.readdirSync(NodePath.join(w.home, "runs"))
  return readJson(NodePath.join(w.home, "runs", id!, "run.json"))
}
const questions = (w: World) => {
  const dir = NodePath.join(w.home, "questions")
  return NodeFs.existsSync(dir)
    ? NodeFs.readdirSync(dir)
      .filter((f) => f.endsWith(".json"))
      .map((f) => readJson(NodePath.join(dir, f)))
    : []
}

// ---------------------------------------------------------------------------
// Scripting the model

/**
 * How the prompt tells the agent to run magi: the absolute path it names
 * (codex's login shell resets PATH, so its prompt's commands name magi by
 * path; other agents get a note), else plain `magi`. What a model reading
 * the prompt would type.
 */
const magiIn = (prompt: string): string => {
  const found = /`magi` is (.+?): |name magi by its path, (.+?): /.exec(prompt)
  return found?.[1] ?? found?.[2] ?? "magi"
}

const ask = (prompt: string, summary: string) =>
  `${magiIn(prompt)} ask --summary ${JSON.stringify(summary)} --detail "Both already work here." --choice A --choice B`

const exec = (cmd: string) => ({ kind: "call" as const, name: "exec_command", args: { cmd } })

/** The request answers a tool call (rather than opening a turn with the user's words). */
const afterTool = (body: StandIn["requests"][number]["body"]) => body.input?.at(-1)?.type === "function_call_output"

/**
 * Poll a command codex's exec tool handed back still running, the way a
 * model does (write_stdin with nothing to write), so a slow machine that
 * outlasts the tool's yield still reads the command's end.
 */
const pollIfRunning = (body: StandIn["requests"][number]["body"]) => {
  const last = toolOutputs(body).at(-1)
  const session = afterTool(body) && last !== undefined ? runningSession(last) : undefined
  return session === undefined ? undefined : { kind: "call" as const, name: "write_stdin", args: { session_id: session, chars: "", yield_time_ms: 30_000 } }
}

const ASKED = "Which storage backend should the cache use?"

describe("magi with the real codex CLI", () => {
  it("asks through codex's own shell, hands back with the --wait hint, and the waiter resumes the same codex session with the answer", async () => {
    const w = await world((req) => {
      const body = req.body
      const poll = pollIfRunning(body)
      if (poll) return poll
      const users = messages(body, "user")
      const execs = toolCalls(body).filter((c) => c.name === "exec_command")
      if (!users.some((u) => u.includes("The owner's answer"))) {
        // Turn 1: work, try to commit (the sandbox refuses), ask, keep
        // waiting once exactly as the hint says, then stop.
        if (execs.length === 0) return exec("printf 'cache: pending\\n' > cache.txt && git add cache.txt && git commit -m wip")
        if (execs.length === 1) return exec(ask(users.join("\n"), ASKED))
        const hint = /^\s+(\S.* ask --wait \S+)\s*$/m.exec(toolOutputs(body).join("\n"))?.[1]
        if (execs.length === 2 && hint !== undefined) return exec(hint)
        return { kind: "message", text: "Asked the owner which backend to use; stopping until they answer." }
      }
      // Turn 2, resumed with the answer: act on it, then report.
      const resumedExecs = execs.length - 3
      if (resumedExecs === 0) return exec("printf 'backend: A\\n' > backend.txt")
      return { kind: "message", text: "Recorded the owner's choice A in backend.txt." }
    })
    try {
      // 1. The run: codex asks through its shell; the slice hands back.
      const started = await magi(w, w.env, "run", "Add a cache in front of the store")
      expect(started.stderr).toContain("is waiting on the owner")
      expect(started.code).toBe(0)
      const afterFirst = onlyRun(w)
      expect(afterFirst).toMatchObject({ status: "waiting", seats: [{ key: "impl", agent: "codex", turns: 1 }] })
      const thread = afterFirst.seats[0].session as string
      expect(thread).toMatch(/^[0-9a-f-]{36}$/)

      const [q] = questions(w)
      expect(q).toMatchObject({ status: "open", summary: ASKED, choices: ["A", "B"], run: afterFirst.id, seat: "impl" })

      // codex ran it as `bash -lc` (PATH reset by the profile) and in its
      // sandbox; the ask still filed its question, and within one slice
      // handed back the hint to keep waiting.
      const turn1 = w.standIn.requests.filter((r) => !messages(r.body, "user").some((u) => u.includes("The owner's answer")))
      const outputs = toolOutputs(turn1.at(-1)!.body)
      expect(outputs[0]).toContain("Read-only file system") // .git is the sandbox's: the agent cannot commit
      const askOutput = outputs.slice(1).join("\n")
      expect(askOutput).not.toContain("command not found")
      expect(askOutput).toContain(`waiting up to ${waitSliceSecs(codexAgent(CODEX!))}s`)
      // The hint names magi so that codex's shell finds it: followed to the
      // letter, it waited a second slice on the same question.
      expect(askOutput).toContain(`ask --wait ${q.id}`)
      expect(askOutput.match(/No answer yet/g)).toHaveLength(2)
      expect(questions(w)).toHaveLength(1)

      // 2. The owner answers; nobody is reading.
      const answered = await magi(w, w.env, "answer", q.id, "--reply", "A")
      expect(answered.code).toBe(0)
      // The asker's lease (if an exited asker still leaves one) would hold the
      // waiter off for its ttl; age it rather than wait that out.
      const lease = NodePath.join(w.home, "questions", "leases", `${q.id}.lease`)
      if (NodeFs.existsSync(lease)) NodeFs.writeFileSync(lease, JSON.stringify({ ...readJson(lease), beat_at: "2000-01-01T00:00:00Z" }))

      // 3. The daemon resumes the seat. It runs with another HOME and
      //    CODEX_HOME than the seat started with: the seat's own are recorded.
      const elsewhere = NodePath.join(w.base, "daemon-home")
      NodeFs.mkdirSync(elsewhere)
      const daemon = startMagi(["serve", "--home", w.home], {
        cwd: w.repo,
        env: { ...w.env, HOME: elsewhere, CODEX_HOME: NodePath.join(elsewhere, ".codex") },
        deadline: DEADLINE
      })
      try {
        await until("the run to finish", () => onlyRun(w).status !== "waiting" && onlyRun(w).status !== "running", DEADLINE)
      } finally {
        daemon.child.kill("SIGTERM")
        await daemon.done
      }
      const done = onlyRun(w)
      expect(done, daemon.stderr()).toMatchObject({ status: "done", summary: "Recorded the owner's choice A in backend.txt." })
      expect(done.seats[0]).toMatchObject({ session: thread, turns: 2 })

      // The resumed request is the same codex session, carrying the earlier
      // conversation and then the owner's answer.
      const resumed = w.standIn.requests.find((r) => messages(r.body, "user").some((u) => u.includes("The owner's answer")))!
      const meta = (r: typeof resumed) => JSON.parse(String(r.headers["x-codex-turn-metadata"] ?? "{}"))
      expect(meta(resumed).thread_id).toBe(thread)
      expect(meta(w.standIn.requests[0]!).thread_id).toBe(thread)
      const said = messages(resumed.body, "user")
      expect(said.findIndex((u) => u.includes("Add a cache in front of the store"))).toBeLessThan(
        said.findIndex((u) => u.includes("The owner's answer"))
      )
      expect(said.at(-1)).toContain(ASKED)
      expect(said.at(-1)).toMatch(/The owner's answer\s+A\b/)
      // (A busy machine may have had codex hand the ask back before it ended
      // and the model poll it: write_stdin calls in between are fine.)
      expect(
        toolCalls(resumed.body)
          .filter((c) => c.name === "exec_command")
          .map((c) => String(c.args.cmd))
      ).toEqual([
        expect.stringContaining("git commit -m wip"),
        expect.stringContaining(`ask --summary ${JSON.stringify(ASKED)}`),
        expect.stringMatching(/^\S.* ask --wait /)
      ])
      expect(messages(resumed.body, "assistant")).toContain("Asked the owner which backend to use; stopping until they answer.")
      expect(readJson(NodePath.join(w.home, "questions", `${q.id}.json`))).toMatchObject({ status: "answered", answer_delivered: true })

      // What the sandbox kept the agent from committing was committed for it,
      // turn by turn, under the agent's own words.
      const git = (...args: string[]) => execFileSync("git", args, { cwd: w.repo, encoding: "utf8" }).trim()
      expect(git("log", "--format=%s", `trunk..${done.branch}`).split("\n")).toEqual([
        "Recorded the owner's choice A in backend.txt.",
        "Asked the owner which backend to use; stopping until they answer."
      ])
      expect(git("show", `${done.branch}:backend.txt`)).toBe("backend: A")
      expect(git("show", `${done.branch}:cache.txt`)).toBe("cache: pending")

      // Nothing past 127.0.0.1: no analytics, update check or model list.
      expect(w.standIn.escaped, JSON.stringify(w.standIn.escaped)).toEqual([])
    } finally {
      await cleanup(w)
    }
  }, 2 * DEADLINE + 60_000)

  it("a read-only seat can ask, and change nothing in its worktree", async () => {
    const w = await world((req) => {
      const body = req.body
      const poll = pollIfRunning(body)
      if (poll) return poll
      const execs = toolCalls(body).filter((c) => c.name === "exec_command")
      if (execs.length === 0) return exec(`touch changed.txt; ${ask(messages(body, "user").join("\n"), "May I look at the schema?")}`)
      return { kind: "message", text: "Asked." }
    })
    try {
      const worktree = NodePath.join(w.base, "worktree")
      execFileSync("git", ["worktree", "add", "-q", "-b", "magi/ro", worktree], { cwd: w.repo })
      // As magi names itself in its prompts (the run's own process would).
      const magiBin = NodePath.resolve("dist/bin/magi")
      const prompt = `Review the schema.\n\n\`magi\` is ${magiBin}: run it by that path.\n`
      const result = await Effect.runPromise(
        Effect.gen(function* () {
          const agents = yield* Agents
          return yield* agents.call({
            // The agent runs with this test's homes, as a seat started by magi would.
            agent: { ...codexAgent(CODEX!), env: w.env },
            seat: newSeat("review", "codex"),
            prompt,
            cwd: worktree,
            allowWrite: false,
            timeout: Duration.minutes(3),
            artifactsDir: NodePath.join(w.base, "artifacts"),
            stem: "review-1",
            run: "20260101-000000-ro01",
            node: "review"
          })
        }).pipe(Effect.provide(Agents.layer.pipe(Layer.provide(MagiHome.at(w.home)), Layer.provideMerge(NodeContext.layer))))
      )
      expect(result).toMatchObject({ usable: true, text: "Asked." })
      const [q] = questions(w)
      expect(q).toMatchObject({ status: "open", summary: "May I look at the schema?", seat: "review" })
      const output = toolOutputs(w.standIn.requests.at(-1)!.body).join("\n")
      expect(output).toContain("Read-only file system")
      expect(NodeFs.existsSync(NodePath.join(worktree, "changed.txt"))).toBe(false)
      expect(w.standIn.escaped, JSON.stringify(w.standIn.escaped)).toEqual([])
    } finally {
      await cleanup(w)
    }
  }, DEADLINE)

  it("a 200 KB instruction reaches codex whole", async () => {
    const marker = "END-OF-THE-LONG-INSTRUCTION"
    const w = await world(() => ({ kind: "message", text: "Read it all." }))
    try {
      const big = NodePath.join(w.base, "instruction.md")
      const line = "Keep every line of this instruction in mind while you work on the cache.\n"
      NodeFs.writeFileSync(big, `${line.repeat(Math.ceil(200_000 / line.length))}${marker}\n`)
      const ran = await magi(w, w.env, "run", "--file", big)
      expect(ran.code, ran.stderr).toBe(0)
      expect(onlyRun(w)).toMatchObject({ status: "done", summary: "Read it all." })
      const sent = messages(w.standIn.requests[0]!.body, "user").join("\n")
      expect(sent.length).toBeGreaterThan(200_000)
      expect(sent).toContain(marker)
    } finally {
      await cleanup(w)
    }
  }, DEADLINE)

  it("an API error fails the run with the API's message, not codex's JSON", async () => {
    const message = "The model `gpt-standin` does not exist or you do not have access to it."
    const w = await world(() => ({ kind: "http", status: 400, body: { error: { type: "invalid_request_error", code: "model_not_found", message } } }))
    try {
      const ran = await magi(w, w.env, "run", "Add a cache")
      const run = onlyRun(w)
      expect(run.status, ran.stderr).toBe("failed")
      expect(run.reason).toContain(message)
      expect(run.reason).not.toContain('{"type"')
      expect(run.summary).not.toContain('{"type"')
    } finally {
      await cleanup(w)
    }
  }, DEADLINE)

  it("a usage limit stalls the run with the time codex says it lifts", async () => {
    const resetsAt = Math.floor(Date.now() / 1000) + 2 * 3600
    const w = await world(() => ({
      kind: "http",
      status: 429,
      body: { error: { type: "usage_limit_reached", message: "The usage limit has been reached", plan_type: "plus", resets_at: resetsAt } }
    }))
    try {
      const ran = await magi(w, w.env, "run", "Add a cache")
      const run = onlyRun(w)
      expect(run.status, ran.stderr).toBe("stalled")
      expect(run.reason).toMatch(/usage limit/i)
      // codex words the reset as a local time of day ("try again at 8:30 AM"),
      // with the date in front when it falls on another day (two hours from
      // 23:00 is tomorrow: "try again at Dec 2nd, 2026 1:00 AM").
      expect(run.reason).toMatch(/resets at (?:[A-Z][a-z]{2} \d{1,2}\w*, \d{4} )?\d{1,2}:\d{2}/)
      expect(ran.stderr).toContain("magi run --resume")
    } finally {
      await cleanup(w)
    }
  }, DEADLINE)
})
