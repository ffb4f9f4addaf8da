import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Fiber, Layer, Option, TestClock } from "effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { discovered, fromTable, load, type AgentSpec } from "../../src/agents/AgentRoster.js"
import { Agents, hasSession, newSeat, parse, plan, type CallInput } from "../../src/agents/Agents.js"
import { MagiHome } from "../../src/platform/MagiHome.js"
import { realPause } from "../support.js"

const BIN = new URL("../fixtures/bin", import.meta.url).pathname
/** Running, as opposed to gone or a zombie nobody reaped yet (a container's pid 1 may never reap). */
const alive = (pid: number): boolean => {
  try {
    return !/^\d+ \(.*\) Z/.test(NodeFs.readFileSync(`/proc/${pid}/stat`, "utf8"))
  } catch {
    return false
  }
}
const tempDir = () => NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "magi-agents-"))
const spec = (kind: AgentSpec["kind"], over: Partial<AgentSpec> = {}): AgentSpec => ({
  id: kind,
  kind,
  command: [NodePath.join(BIN, kind)],
  model: null,
  args: [],
  env: {},
  ...over
})
const planInput = {
  cwd: "/w",
  promptFile: "/a/impl-1.prompt.md",
  prompt: "do it",
  label: "impl",
  resume: null,
  newSession: null,
  allowWrite: true,
  timeout: Duration.minutes(15),
  questionsDir: "/h/questions"
}

describe("adapters build each CLI's headless call", () => {
  it("claude: a new session is created under the minted id, a resume names it, read-only denies every change but magi ask", () => {
    const fresh = plan(spec("claude", { command: ["claude"], model: "opus" }), { ...planInput, newSession: "u-1" })
    expect(fresh.argv).toEqual([
      "claude",
      "-p",
      "--output-format",
      "stream-json",
      "--verbose",
      "--permission-mode",
      "bypassPermissions",
      "--model",
      "opus",
      "--session-id",
      "u-1"
    ])
    expect(fresh.stdin).toBe("do it")
    const resumed = plan(spec("claude", { command: ["claude"] }), { ...planInput, resume: "u-1", allowWrite: false, magi: "/opt/magi/bin/magi" })
    expect(resumed.argv).toEqual([
      "claude",
      "-p",
      "--output-format",
      "stream-json",
      "--verbose",
      "--permission-mode",
      "dontAsk",
      "--allowed-tools",
      "Bash(magi ask:*),Bash(/opt/magi/bin/magi ask:*)",
      "--disallowed-tools",
      "Edit,Write,MultiEdit,NotebookEdit",
      "--resume",
      "u-1"
    ])
  })

  it("claude: a writing seat whose tool calls the owner approves puts them to magi's approve tool instead of bypassing permissions", () => {
    const mcp = { command: "/opt/magi/bin/magi", args: ["mcp"], env: {} }
    const approved = plan(spec("claude", { command: ["claude"] }), { ...planInput, newSession: "u-1", mcp, approve: true }).argv
    expect(approved).not.toContain("bypassPermissions")
    expect(approved.join(" ")).toContain("--permission-mode acceptEdits --permission-prompt-tool mcp__magi__approve --allowed-tools mcp__magi,Bash(magi ask:*)")
    // Without magi's MCP server there is no approve tool to name: the seat keeps its old way.
    expect(plan(spec("claude", { command: ["claude"] }), { ...planInput, newSession: "u-1", approve: true }).argv).toContain("bypassPermissions")
    // A read-only seat needs no approvals: it may change nothing.
    expect(plan(spec("claude", { command: ["claude"] }), { ...planInput, allowWrite: false, mcp, approve: true }).argv).not.toContain(
      "--permission-prompt-tool"
    )
  })

  it("opencode: prompt on stdin, session by -s; agy: prompt by file, mode by write access", () => {
    const o = plan(spec("opencode", { command: ["opencode"] }), { ...planInput, resume: "ses_1" })
    expect(o.argv).toEqual(["opencode", "run", "--format", "json", "--dir", "/w", "--auto", "-s", "ses_1"])
    expect(o.stdin).toBe("do it")
    const a = plan(spec("agy", { command: ["agy"] }), { ...planInput, allowWrite: false, resume: "c-1" })
    expect(a.argv).toEqual([
      "agy",
      "--output-format",
      "json",
      "--print-timeout",
      "900s",
      "--mode",
      "plan",
      "--conversation",
      "c-1",
      "-p",
      "@/a/impl-1.prompt.md"
    ])
  })

  it("command: placeholders are filled once, and an unknown one is kept", () => {
    const p = plan(spec("command", { command: ["run-it", "{prompt_file}", "--in={cwd}", "{label}:{session}", "{other}"] }), {
      ...planInput,
      resume: "{cwd}"
    })
    expect(p.argv).toEqual(["run-it", "/a/impl-1.prompt.md", "--in=/w", "impl:{cwd}", "{other}"])
  })
})

describe("replies are read the way each CLI prints them", () => {
  it("claude's result and session; a session limit is quota with the reset time kept", () => {
    const ok = parse("claude", '{"type":"result","is_error":false,"result":"All set.","session_id":"s1"}', "", 0, false)
    expect(ok).toEqual({ text: "All set.", session: "s1", usable: true, quota: null })
    const limited = parse(
      "claude",
      '{"is_error":true,"result":"Claude AI usage limit reached: 5-hour session limit · resets 3pm (UTC)","session_id":"s1"}',
      "",
      1,
      false
    )
    expect(limited.usable).toBe(false)
    expect(limited.quota).toBe("3pm (UTC)")
  })

  it("claude's usage limits in each of its wordings are a stall, with the reset time when given", () => {
    const limited = (result: string) => parse("claude", JSON.stringify({ type: "result", is_error: true, result, session_id: "s1" }), "", 1, false)
    expect(limited("You've hit your 5-hour limit · resets 3pm (UTC)").quota).toBe("3pm (UTC)")
    expect(limited("Weekly limit reached ∙ resets Oct 7, 9am").quota).toBe("Oct 7, 9am")
    expect(limited("Claude usage limit reached. Your limit will reset at 5pm.").quota).toBe("5pm")
    expect(limited("Opus limit reached, now using Sonnet").quota).toBe("")
    expect(limited("API Error: 500 Internal server error").quota).toBeNull()
  })

  it("claude refusing bypassPermissions as root says exactly what to do", () => {
    const r = parse("claude", "", "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons", 1, false)
    expect(r.usable).toBe(false)
    expect(r.problem).toContain('IS_SANDBOX = "1"')
    expect(r.problem).toContain("non-root user")
  })

  it("codex keeps the last agent message and the thread id", () => {
    const out = [
      '{"type":"thread.started","thread_id":"t1"}',
      '{"type":"item.completed","item":{"type":"agent_message","text":"first"}}',
      '{"type":"item.completed","item":{"type":"agent_message","text":"last"}}'
    ].join("\n")
    expect(parse("codex", out, "", 0, false)).toEqual({ text: "last", session: "t1", usable: true, quota: null })
  })

  it("an empty answer falls back to stdout, then stderr, and is not usable", () => {
    expect(parse("agy", '{"response":"","conversation_id":"c"}', "", 0, false)).toMatchObject({
      text: '{"response":"","conversation_id":"c"}',
      usable: false
    })
    expect(parse("command", "", "boom\n", 0, false)).toMatchObject({ text: "boom", usable: false })
  })

  it("a timeout or a non-zero exit is never usable, whatever was printed", () => {
    expect(parse("command", "fine", "", 0, true).usable).toBe(false)
    expect(parse("command", "fine", "", 2, false).usable).toBe(false)
    expect(parse("command", "fine", "", 0, false).usable).toBe(true)
  })
})

describe("seats", () => {
  it("only a command agent can be resumed before any turn ran", () => {
    expect(hasSession("command", newSeat("impl", "x"))).toBe(true)
    expect(hasSession("claude", { ...newSeat("impl", "c"), session: "u" })).toBe(false)
    expect(hasSession("claude", { key: "impl", agent: "c", turns: 1, session: "u" })).toBe(true)
    expect(hasSession("codex", { key: "impl", agent: "c", turns: 1, session: null })).toBe(false)
  })
})

const callLayer = (home: string) => Agents.layer.pipe(Layer.provide(MagiHome.at(home)), Layer.provideMerge(NodeContext.layer))

const readLog = (file: string) =>
  NodeFs.readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l))

const callOf = (dir: string, agent: AgentSpec, over: Partial<CallInput> = {}): CallInput => ({
  agent,
  seat: newSeat("impl", agent.id),
  prompt: "Implement the thing.",
  cwd: dir,
  allowWrite: true,
  timeout: Duration.seconds(20),
  artifactsDir: NodePath.join(dir, "artifacts"),
  stem: "impl-1",
  run: "R1",
  node: "impl",
  ...over
})

describe("Agents.call runs a real process", () => {
  it.live("a claude seat is created under a minted id, then resumed by it, with the agent's environment", () => {
    const dir = tempDir()
    const log = NodePath.join(dir, "log.jsonl")
    const agent = spec("claude", { env: { FAKE_AGENT_LOG: log, FAKE_EXTRA: "yes", CLAUDE_CONFIG_DIR: NodePath.join(dir, "claude") } })
    return Effect.gen(function* () {
      const agents = yield* Agents
      const first = yield* agents.call(callOf(dir, agent))
      expect(first.usable).toBe(true)
      expect(first.seat.turns).toBe(1)
      expect(first.seat.session).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
      const second = yield* agents.call(callOf(dir, agent, { seat: first.seat, stem: "impl-2", allowWrite: false }))
      expect(second.seat).toEqual({ ...first.seat, turns: 2 })
      expect(first.seat.env).toMatchObject({ CLAUDE_CONFIG_DIR: NodePath.join(dir, "claude") })

      const [a, b] = readLog(log)
      expect(a.argv).toContain("--session-id")
      expect(a.argv[a.argv.indexOf("--session-id") + 1]).toBe(first.seat.session)
      expect(b.argv[b.argv.indexOf("--resume") + 1]).toBe(first.seat.session)
      expect(a.stdin).toBe("Implement the thing.")
      expect(a.cwd).toBe(NodeFs.realpathSync(dir))
      expect(a.env).toEqual({
        MAGI_RUN: "R1",
        MAGI_NODE: "impl",
        MAGI_SEAT: "impl",
        MAGI_AGENT: "claude",
        MAGI_REPO: NodeFs.realpathSync(dir),
        MAGI_TURN: "1",
        MAGI_PROMPT_FILE: NodePath.join(dir, "artifacts", "impl-1.prompt.md"),
        MAGI_ALLOW_WRITE: "1",
        MAGI_WAIT_SLICE: "100",
        // A run's claude seat ends its turn on pending (the waiter resumes it).
        MAGI_WAIT: "end-turn",
        MAGI_NODEJS: process.execPath,
        GIT_TERMINAL_PROMPT: "0",
        MAGI_HOME: NodePath.join(dir, "home"),
        FAKE_EXTRA: "yes",
        CLAUDE_CONFIG_DIR: NodePath.join(dir, "claude"),
        ...(process.env.IS_SANDBOX === undefined ? {} : { IS_SANDBOX: process.env.IS_SANDBOX })
      })
      expect(b.env.MAGI_ALLOW_WRITE).toBe("0")
      expect(b.env.MAGI_TURN).toBe("2")
      const files = NodeFs.readdirSync(NodePath.join(dir, "artifacts")).sort()
      expect(files).toEqual(["impl-1.err", "impl-1.out", "impl-1.prompt.md", "impl-2.err", "impl-2.out", "impl-2.prompt.md", "impl.live.jsonl"])
      // The seat's live log: both turns, each closed by its end.
      const live = NodeFs.readFileSync(NodePath.join(dir, "artifacts", "impl.live.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l))
      expect(live.filter((e) => e.kind === "end").map((e) => e.turn)).toEqual([1, 2])
      expect(live.map((e) => e.seq)).toEqual(live.map((_, i) => i + 1))
      expect(NodeFs.readFileSync(NodePath.join(dir, "artifacts", "impl-1.err"), "utf8")).toBe("fake agent log line\n")
    }).pipe(Effect.provide(callLayer(NodePath.join(dir, "home"))))
  })

  it.live("a claude seat whose first turn was cut short starts its session if claude never created it, and resumes it if claude did", () => {
    const dir = tempDir()
    const log = NodePath.join(dir, "log.jsonl")
    const config = NodePath.join(dir, "claude")
    const agent = spec("claude", { env: { FAKE_AGENT_LOG: log, CLAUDE_CONFIG_DIR: config } })
    // As an interrupted first turn leaves it: a session named, a turn counted.
    const cut = { ...newSeat("impl", "claude"), session: "6f1c0c8e-2f7a-4b7e-9d43-0d6d2f9c1a55", turns: 1 }
    return Effect.gen(function* () {
      const agents = yield* Agents
      const created = yield* agents.call(callOf(dir, agent, { seat: cut, stem: "impl-2" }))
      expect(created.usable).toBe(true)
      // claude has it now; the next turn after another cut resumes it.
      const resumed = yield* agents.call(callOf(dir, agent, { seat: cut, stem: "impl-3" }))
      expect(resumed.usable).toBe(true)
      const [a, b] = readLog(log)
      expect(a.argv).toContain("--session-id")
      expect(a.argv).not.toContain("--resume")
      expect(b.argv[b.argv.indexOf("--resume") + 1]).toBe(cut.session)
    }).pipe(Effect.provide(callLayer(NodePath.join(dir, "home"))))
  })

  it.live("a resume runs with the environment the seat recorded, not this process's, and every agent gets its wait slice", () => {
    const dir = tempDir()
    const log = NodePath.join(dir, "log.jsonl")
    const recordedConfig = NodePath.join(dir, "seat-claude")
    const agent = spec("claude", { env: { FAKE_AGENT_LOG: log }, waitSliceSecs: 42 })
    return Effect.gen(function* () {
      const agents = yield* Agents
      // The seat started where CLAUDE_CONFIG_DIR was `recordedConfig`.
      const first = yield* agents.call(
        callOf(dir, agent, { seat: { ...newSeat("impl", "claude"), env: { CLAUDE_CONFIG_DIR: recordedConfig } } })
      )
      expect(first.seat.env).toEqual({ CLAUDE_CONFIG_DIR: recordedConfig })
      const second = yield* agents.call(callOf(dir, agent, { seat: first.seat, stem: "impl-2" }))
      expect(second.usable).toBe(true)
      const [a, b] = readLog(log)
      expect(a.env.CLAUDE_CONFIG_DIR).toBe(recordedConfig)
      expect(b.env.CLAUDE_CONFIG_DIR).toBe(recordedConfig)
      expect(b.argv).toContain("--resume")
      expect(a.env.MAGI_WAIT_SLICE).toBe("42")
    }).pipe(Effect.provide(callLayer(NodePath.join(dir, "home"))))
  })

  it.live("codex, opencode and agy capture the session their CLI reports and resume with it", () => {
    const dir = tempDir()
    return Effect.gen(function* () {
      const agents = yield* Agents
      for (
        const [kind, id] of [
          ["codex", "0199a213-81c0-7800-8aa1-bbab2a035a53"],
          ["opencode", "ses_5f1c2b3a4ffeABCDEF"],
          ["agy", "conv-7781"]
        ] as const
      ) {
        const first = yield* agents.call(callOf(dir, spec(kind), { stem: `${kind}-1` }))
        expect(first).toMatchObject({ usable: true, session: id, seat: { turns: 1, session: id } })
        expect(hasSession(kind, first.seat)).toBe(true)
        const again = yield* agents.call(callOf(dir, spec(kind), { seat: first.seat, stem: `${kind}-2` }))
        expect(again.seat.session).toBe(id)
      }
    }).pipe(Effect.provide(callLayer(NodePath.join(dir, "home"))))
  })

  it.live("a failing agent is not usable and its exit code is kept", () => {
    const dir = tempDir()
    return Effect.gen(function* () {
      const agents = yield* Agents
      const r = yield* agents.call(callOf(dir, spec("command", { env: { FAKE_AGENT_MODE: "fail" } })))
      expect(r).toMatchObject({ usable: false, exitCode: 3, timedOut: false })
    }).pipe(Effect.provide(callLayer(NodePath.join(dir, "home"))))
  })

  it.live("at the timeout the whole process tree is killed", () => {
    const dir = tempDir()
    const pids = NodePath.join(dir, "child.pid")
    return Effect.gen(function* () {
      const agents = yield* Agents
      const r = yield* agents.call(
        callOf(dir, spec("command", { env: { FAKE_AGENT_MODE: "hang", FAKE_AGENT_CHILD_PID: pids } }), {
          timeout: Duration.seconds(1)
        })
      )
      expect(r).toMatchObject({ usable: false, timedOut: true, exitCode: null })
      const child = Number(NodeFs.readFileSync(pids, "utf8").trim())
      yield* Effect.sleep(Duration.millis(200))
      expect(alive(child)).toBe(false)
    }).pipe(Effect.provide(callLayer(NodePath.join(dir, "home"))), Effect.timeout(Duration.seconds(15)))
  })

  it.live("a child left holding stdout does not keep the turn open", () => {
    const dir = tempDir()
    return Effect.gen(function* () {
      const agents = yield* Agents
      const started = Date.now()
      const r = yield* agents.call(callOf(dir, spec("command", { env: { FAKE_AGENT_MODE: "orphan" } })))
      expect(r.usable).toBe(true)
      expect(Date.now() - started).toBeLessThan(10_000)
    }).pipe(Effect.provide(callLayer(NodePath.join(dir, "home"))))
  })

  /** A `command` agent running `script` under sh; it writes the pids it wants killed to `pids`. */
  const shAgent = (script: string) => spec("command", { command: ["sh", "-c", script] })
  /** Whatever a test left running dies with it, even when the test fails. */
  const killLeftovers = (pids: string) =>
    Effect.sync(() => {
      const listed = NodeFs.existsSync(pids) ? NodeFs.readFileSync(pids, "utf8").split(/\s+/).filter((p) => p !== "") : []
      for (const pid of listed.map(Number)) {
        try {
          process.kill(pid, "SIGKILL")
        } catch {
          // Already gone: what the test wanted.
        }
      }
    })
  const pidsIn = (file: string) => NodeFs.readFileSync(file, "utf8").split(/\s+/).filter((p) => p !== "").map(Number)

  it.live("an agent that exits 0 leaves nothing it started running", () => {
    const dir = tempDir()
    const pids = NodePath.join(dir, "pids")
    return Effect.gen(function* () {
      const agents = yield* Agents
      const r = yield* agents.call(callOf(dir, shAgent(`sleep 377 >/dev/null 2>&1 & echo $! > ${pids}; echo done`)))
      expect(r).toMatchObject({ usable: true, text: "done", exitCode: 0 })
      yield* Effect.sleep(Duration.millis(200))
      expect(pidsIn(pids).filter(alive)).toEqual([])
    }).pipe(
      Effect.ensuring(killLeftovers(pids)),
      Effect.provide(callLayer(NodePath.join(dir, "home"))),
      Effect.timeout(Duration.seconds(20))
    )
  })

  it.live("a child that ignores SIGTERM and holds stdout is killed, and the turn keeps what was printed", () => {
    const dir = tempDir()
    const pids = NodePath.join(dir, "pids")
    return Effect.gen(function* () {
      const agents = yield* Agents
      const started = Date.now()
      const r = yield* agents.call(callOf(dir, shAgent(`trap '' TERM; sleep 377 & echo $! > ${pids}; echo done`)))
      expect(r).toMatchObject({ usable: true, text: "done", exitCode: 0, timedOut: false })
      expect(Date.now() - started).toBeLessThan(10_000)
      yield* Effect.sleep(Duration.millis(200))
      expect(pidsIn(pids).filter(alive)).toEqual([])
    }).pipe(
      Effect.ensuring(killLeftovers(pids)),
      Effect.provide(callLayer(NodePath.join(dir, "home"))),
      Effect.timeout(Duration.seconds(20))
    )
  })

  it.effect("a turn interrupted while its agent ignores SIGTERM still ends, killing the agent after the grace", () => {
    const dir = tempDir()
    const pids = NodePath.join(dir, "pids")
    return Effect.gen(function* () {
      const agents = yield* Agents
      const call = yield* Effect.fork(agents.call(callOf(dir, shAgent(`trap '' TERM; sleep 377 & echo $$ $! > ${pids}; wait`))))
      for (let i = 0; i < 500 && (!NodeFs.existsSync(pids) || pidsIn(pids).length < 2); i++) yield* realPause(10)
      expect(pidsIn(pids).filter(alive)).toHaveLength(2)
      yield* Fiber.interruptFork(call)
      // Virtual time stands in for the grace the agent gets to exit on its own.
      for (let i = 0; i < 40 && call.unsafePoll() === null; i++) {
        yield* TestClock.adjust(Duration.seconds(1))
        yield* realPause(25)
      }
      expect(call.unsafePoll()).not.toBeNull()
      yield* realPause(100)
      expect(pidsIn(pids).filter(alive)).toEqual([])
    }).pipe(Effect.ensuring(killLeftovers(pids)), Effect.provide(callLayer(NodePath.join(dir, "home"))))
  })

  it.live("a program that does not exist is a start failure naming it", () => {
    const dir = tempDir()
    return Effect.gen(function* () {
      const agents = yield* Agents
      const e = yield* Effect.flip(agents.call(callOf(dir, spec("codex", { command: [NodePath.join(dir, "nope")] }))))
      expect(e.message).toContain("could not be started")
    }).pipe(Effect.provide(callLayer(NodePath.join(dir, "home"))))
  })
})

describe("roster", () => {
  it.effect("configured agents come in config order with defaults filled in", () =>
    Effect.gen(function* () {
      const agents = yield* fromTable(
        { agents: { fast: { kind: "claude", model: "sonnet" }, mine: { kind: "command", command: ["x", "{prompt_file}"] }, codex: {} } },
        ["magi.toml"]
      )
      expect(agents.map((a) => [a.id, a.kind, a.command, a.model])).toEqual([
        ["fast", "claude", ["claude"], "sonnet"],
        ["mine", "command", ["x", "{prompt_file}"], null],
        ["codex", "codex", ["codex"], null]
      ])
    }))

  it.effect("a command agent without its argv is refused, naming the table", () =>
    Effect.gen(function* () {
      const e = yield* Effect.flip(fromTable({ agents: { mine: { kind: "command" } } }, ["magi.toml"]))
      expect(e.message).toContain("[agents.mine]")
    }))

  it.effect("with no config, every agent CLI on PATH is an entry", () => {
    const dir = tempDir()
    // Its own repository, so its magi.toml is the one read whatever the
    // temp folder sits in (a `.git` above it would make that the repository).
    NodeFs.mkdirSync(NodePath.join(dir, ".git"))
    const prev = { PATH: process.env.PATH, XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME }
    return Effect.gen(function* () {
      process.env.PATH = `${dir}:${BIN}`
      process.env.XDG_CONFIG_HOME = dir
      const roster = yield* load(dir)
      expect(roster.agents).toEqual([
        discovered("claude", NodePath.join(BIN, "claude")),
        discovered("codex", NodePath.join(BIN, "codex")),
        discovered("opencode", NodePath.join(BIN, "opencode")),
        discovered("agy", NodePath.join(BIN, "agy"))
      ])
      NodeFs.writeFileSync(NodePath.join(dir, "magi.toml"), '[agents.only]\nkind = "command"\ncommand = ["true"]\n')
      const configured = yield* load(dir)
      expect(configured.agents.map((a) => a.id)).toEqual(["only"])
      expect(Option.isSome(configured.get("only"))).toBe(true)
    }).pipe(
      Effect.ensuring(
        Effect.sync(() => {
          process.env.PATH = prev.PATH
          if (prev.XDG_CONFIG_HOME === undefined) delete process.env.XDG_CONFIG_HOME
          else process.env.XDG_CONFIG_HOME = prev.XDG_CONFIG_HOME
        })
      ),
      Effect.provide(NodeContext.layer)
    )
  })
})
