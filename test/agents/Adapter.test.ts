/**
 * The readings every adapter shares (issue 7): an error shown as its
 * message, a usage limit told from a failure with its reset time, the wait
 * slice each agent is given, and a failed turn's reason.
 */
import { describe, expect, it } from "@effect/vitest"
import { fromTable, type AgentSpec } from "../../src/agents/AgentRoster.js"
import { mcpServer, parse, plainMessage, sessionEnvOf, usageLimit, waitModeOf, waitSliceSecs } from "../../src/agents/Agents.js"
import { resetTime } from "../../src/agents/adapters/Adapter.js"
import { Effect } from "effect"

const spec = (kind: AgentSpec["kind"], over: Partial<AgentSpec> = {}): AgentSpec => ({
  id: kind,
  kind,
  command: [kind],
  model: null,
  args: [],
  env: {},
  ...over
})

describe("an error is shown as its message", () => {
  it("a JSON error body gives its message, whole or after a prefix", () => {
    expect(plainMessage('{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}')).toBe("Overloaded")
    expect(plainMessage('API Error: 500 {"type":"error","error":{"type":"api_error","message":"Internal server error"}}')).toBe(
      "API Error: 500 Internal server error"
    )
    expect(plainMessage('{"type":"error","message":"stream disconnected before completion"}')).toBe(
      "stream disconnected before completion"
    )
  })

  it("ANSI colours and cursor codes are dropped, blank lines too", () => {
    expect(plainMessage("\u001b[91m\u001b[1mError: \u001b[0mSession not found\n\n")).toBe("Error: Session not found")
    expect(plainMessage("\u001b]0;title\u0007plain")).toBe("plain")
  })

  it("text that is no JSON is kept as it is", () => {
    expect(plainMessage("exit status {weird")).toBe("exit status {weird")
  })
})

describe("a usage limit is a stall with its reset time, in each CLI's words", () => {
  it("the common wording, with or without a reset time", () => {
    expect(usageLimit("You've hit your usage limit. Try again at 4:05 PM.")).toBe("at 4:05 PM")
    expect(usageLimit("usage limit reached")).toBe("")
    expect(usageLimit("Internal server error")).toBeNull()
  })

  it("an adapter's own wordings count too", () => {
    expect(usageLimit("Opus limit reached ∙ resets Mon 9am", [/opus limit/i])).toBe("Mon 9am")
    expect(usageLimit("Opus limit reached", [])).toBeNull()
  })

  it("the reset time reads the usual shapes", () => {
    expect(resetTime("5-hour limit reached · resets 3pm (Europe/London)")).toBe("3pm (Europe/London)")
    expect(resetTime("weekly limit reached | resets Oct 7, 9am")).toBe("Oct 7, 9am")
    expect(resetTime("limit hit; try again in 2 hours")).toBe("in 2 hours")
    expect(resetTime("nothing here")).toBeUndefined()
  })
})

describe("a failed turn says why, plainly", () => {
  it("the reason carries the CLI's message from stderr, without JSON or ANSI", () => {
    const r = parse("command", "", '\u001b[31m{"error":{"message":"model not found"}}\u001b[0m\n', 2, false)
    expect(r.usable).toBe(false)
    expect(r.problem).toBe("the agent's turn failed (exit 2): model not found")
  })

  it("the reason is one line of a long stderr: the last that looks like an error, else the last, capped", () => {
    const debug = Array.from({ length: 200 }, (_, i) => `debug: step ${i}`).join("\n")
    const r = parse("command", "", `${debug}\nError: no API key; set ANTHROPIC_API_KEY\n    at main (agent.js:3:9)\nbye\n`, 1, false)
    expect(r.problem).toBe("the agent's turn failed (exit 1): Error: no API key; set ANTHROPIC_API_KEY")
    expect(parse("command", "", `${debug}\n`, 1, false).problem).toBe("the agent's turn failed (exit 1): debug: step 199")
    const long = parse("command", "", `fatal: ${"x".repeat(1000)}\n`, 1, false).problem!
    expect(long).not.toContain("\n")
    expect(long.length).toBeLessThanOrEqual("the agent's turn failed (exit 1): ".length + 160)
    expect(long.endsWith("…")).toBe(true)
  })

  it("a timed-out turn says so, and a usable one has no problem", () => {
    expect(parse("command", "fine", "", 0, true).problem).toBe("the agent's turn timed out")
    expect(parse("command", "fine", "", 0, false).problem).toBeUndefined()
  })
})

describe("wait slices", () => {
  it("each kind's slice ends before its shell tool gives up (claude: 120 s), and command agents keep the default", () => {
    expect(waitSliceSecs(spec("claude"))).toBeLessThan(120)
    expect(waitSliceSecs(spec("command"))).toBe(240)
  })

  it("a claude whose Bash limit the owner changed (BASH_DEFAULT_TIMEOUT_MS) gets a slice that still ends before it", () => {
    expect(waitSliceSecs(spec("claude", { env: { BASH_DEFAULT_TIMEOUT_MS: "600000" } }), {})).toBe(500)
    expect(waitSliceSecs(spec("claude"), { BASH_DEFAULT_TIMEOUT_MS: "30000" })).toBe(10)
    expect(waitSliceSecs(spec("claude"), {})).toBe(100)
    expect(waitSliceSecs(spec("claude", { waitSliceSecs: 7, env: { BASH_DEFAULT_TIMEOUT_MS: "600000" } }), {})).toBe(7)
  })

  it("[agents.<id>] wait_slice overrides the kind's slice, and a bad one is refused with what to write", () =>
    Effect.gen(function* () {
      const [a] = yield* fromTable({ agents: { fast: { kind: "claude", wait_slice: 30 } } }, ["magi.toml"])
      expect(waitSliceSecs(a!)).toBe(30)
      const bad = yield* Effect.flip(fromTable({ agents: { fast: { kind: "claude", wait_slice: "30s" } } }, ["magi.toml"]))
      expect(bad.message).toContain("wait_slice must be a whole number of seconds")
    }).pipe(Effect.runSync))
})

describe("what a seat does on pending", () => {
  it("claude, codex and opencode end their turn by default (the waiter resumes them); agy and command agents keep polling", () => {
    expect(waitModeOf(spec("claude"))).toBe("end-turn")
    expect(waitModeOf(spec("codex"))).toBe("end-turn")
    expect(waitModeOf(spec("opencode"))).toBe("end-turn")
    expect(waitModeOf(spec("agy"))).toBe("poll")
    expect(waitModeOf(spec("command"))).toBe("poll")
  })

  it("[agents.<id>] wait chooses, and anything but end-turn or poll is refused with what to write", () =>
    Effect.gen(function* () {
      const [a, b] = yield* fromTable({ agents: { c: { kind: "codex", wait: "poll" }, d: { kind: "command", command: ["x"], wait: "end-turn" } } }, [
        "magi.toml"
      ])
      expect(waitModeOf(a!)).toBe("poll")
      expect(waitModeOf(b!)).toBe("end-turn")
      const bad = yield* Effect.flip(fromTable({ agents: { c: { kind: "codex", wait: "end_turn" } } }, ["magi.toml"]))
      expect(bad.message).toBe('[agents.c] (in magi.toml): wait must be "end-turn" or "poll", not "end_turn"')
    }).pipe(Effect.runSync))

  it("magi mcp's slice is the one under the CLI's tool-call timeout, or the agent's wait_slice when shorter", () => {
    const slice = (agent: AgentSpec) => {
      const args = mcpServer(agent, "/bin/magi", {}, "/w")!.args
      return args[args.indexOf("--slice") + 1]
    }
    expect(slice(spec("codex"))).toBe("600")
    expect(slice(spec("codex", { waitSliceSecs: 10 }))).toBe("10")
    expect(slice(spec("claude", { waitSliceSecs: 5000 }))).toBe("600")
  })
})

describe("the session environment", () => {
  it("records what the CLI finds its sessions by: the agent's env over the process's, nothing else", () => {
    const env = sessionEnvOf(spec("claude", { env: { CLAUDE_CONFIG_DIR: "/cfg", OTHER: "x" } }), { HOME: "/home/me", PATH: "/bin" })
    expect(env).toEqual({ HOME: "/home/me", CLAUDE_CONFIG_DIR: "/cfg" })
  })
})

describe("the prompt", () => {
  it("names magi's absolute path, so an agent whose shell resets PATH still finds it, and says how to wait again", async () => {
    const { runPrompt, resumePrompt } = await import("../../src/agents/Prompts.js")
    const magi = { path: "/opt/magi/dist/bin/magi", run: "magi" }
    const p = runPrompt("Do it.", "/w", "magi/ab12", magi)
    expect(p).toContain("`magi` is /opt/magi/dist/bin/magi")
    expect(p).toContain("magi ask --wait <id>")
    expect(resumePrompt("", magi)).toContain("/opt/magi/dist/bin/magi")
    // From source (no build), plain `magi` and no path.
    expect(runPrompt("Do it.", "/w", "magi/ab12")).not.toContain("is magi")
  })

  it("tells a seat that ends its turn on pending to end it, in the shell form and the tool form, and never to wait again", async () => {
    const { runPrompt, resumePrompt } = await import("../../src/agents/Prompts.js")
    for (
      const magi of [
        { path: "/opt/magi/bin/magi", run: "/opt/magi/bin/magi", endTurn: true },
        { path: "/opt/magi/bin/magi", run: "magi", tools: true, endTurn: true }
      ]
    ) {
      const p = runPrompt("Do it.", "/w", "magi/ab12", magi)
      expect(p).toMatch(/end your turn then/i)
      expect(p).toMatch(/magi resumes this\s+same session with their/)
      expect(p).not.toContain("ask --wait <id>`, again")
      expect(p).not.toContain("as often as it takes")
      expect(resumePrompt("", magi)).toContain("ending your turn when a")
    }
  })
})

describe("a command agent's usage limit", () => {
  it.each(
    [
      ["said on stderr, with its reset", "", "error: usage limit reached; resets 3pm\n", 1, "3pm"],
      ["quota exceeded, no reset given", "", "quota exceeded\n", 1, ""],
      ["a plain failure is no limit", "", "error: no such file\n", 1, null],
      ["its reply mentioning one is no limit", "I hit no usage limit today", "", 0, null]
    ] as const
  )("%s", (_, stdout, stderr, exit, quota) => {
    expect(parse("command", stdout, stderr, exit, false).quota).toBe(quota)
  })
})
