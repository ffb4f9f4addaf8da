/**
 * A seat's live output, from each pinned real CLI (issue 32.1): one turn
 * that runs a shell command and then says something, driven by magi's own
 * adapter through `Agents.call`, against the CLI's model stand-in. What the
 * CLI printed, fed to `LiveEvents` in small chunks as it would arrive, must
 * give a message, a tool call naming its command, and that call's result;
 * and claude's stream must still give the reply, session and usage.
 *
 * With `MAGI_RECORD_LIVE=1` each CLI's stdout is written to
 * test/fixtures/live/<cli>.jsonl: the fixtures the unit tests read.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Duration, Effect, Layer } from "effect"
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { describe, expect, it } from "vitest"
import type { AgentSpec } from "../../src/agents/AgentRoster.js"
import { Agents, type CallInput, newSeat } from "../../src/agents/Agents.js"
import { type LiveEvent, parser } from "../../src/agents/LiveEvents.js"
import { MagiHome } from "../../src/platform/MagiHome.js"
import { MODEL, opencodeEnv } from "./opencodeWorld.js"
import { afterTest, need, scratchDir } from "./processes.js"
import { claudeEnv, lastToolResult, startAnthropic } from "./standins/anthropic.js"
import { startOpenAiChat, toolResults } from "./standins/openai-chat.js"
import { codexConfig, startResponsesStandIn, toolCalls, toolOutputs } from "./standins/openai-responses.js"

const TURN_MS = 180_000
const COMMAND = "echo live-marker-42"

/** What a page would have shown: the CLI's stdout fed in 7-byte chunks. */
const liveEventsOf = (out: string): ReadonlyArray<LiveEvent> => {
  const p = parser()
  const bytes = new TextEncoder().encode(out)
  const events: LiveEvent[] = []
  for (let i = 0; i < bytes.length; i += 7) events.push(...p.feed(bytes.subarray(i, i + 7)))
  return [...events, ...p.flush()]
}

const record = (cli: string, out: string) => {
  if (process.env.MAGI_RECORD_LIVE !== "1") return
  NodeFs.mkdirSync(NodePath.resolve("test/fixtures/live"), { recursive: true })
  NodeFs.writeFileSync(NodePath.resolve(`test/fixtures/live/${cli}.jsonl`), out)
}

const call = (home: string, input: CallInput) =>
  Effect.runPromise(
    Effect.gen(function* () {
      return yield* (yield* Agents).call(input)
    }).pipe(Effect.provide(Agents.layer.pipe(Layer.provide(MagiHome.at(home)), Layer.provideMerge(NodeContext.layer))))
  )

const workdir = (dir: string) => {
  const work = NodePath.join(dir, "work")
  NodeFs.mkdirSync(work)
  execFileSync("git", ["init", "-q", "-b", "trunk"], { cwd: work })
  NodeFs.writeFileSync(NodePath.join(work, "README.md"), "# live\n")
  return work
}

const input = (dir: string, work: string, agent: AgentSpec): CallInput => ({
  agent,
  seat: newSeat("impl", agent.id),
  prompt: `Run \`${COMMAND}\`, then say what it printed.`,
  cwd: work,
  allowWrite: true,
  timeout: Duration.millis(TURN_MS),
  artifactsDir: NodePath.join(dir, "artifacts"),
  stem: "impl-1",
  run: "R1",
  node: "implement"
})

/** A message, the command as a tool call, and its result naming the marker. */
const expectLive = (events: ReadonlyArray<LiveEvent>, said: string) => {
  const call = events.find((e) => e.kind === "tool" && e.target.includes(COMMAND))
  expect(call, JSON.stringify(events)).toBeDefined()
  const id = call?.kind === "tool" ? call.id : ""
  expect(events.find((e) => e.kind === "result" && e.id === id)).toMatchObject({ text: "live-marker-42", failed: false })
  expect(events.filter((e) => e.kind === "message").map((e) => (e.kind === "message" ? e.text : ""))).toContain(said)
  // Said once: claude's closing result repeats its last message.
  expect(events.filter((e) => e.kind === "message" && e.text === said)).toHaveLength(1)
}

describe("each real CLI's live events parse into a message, a tool call with its command, and its result", () => {
  it("claude's stream-json", async () => {
    const claude = need("claude")
    const dir = scratchDir("live-claude-")
    const api = await startAnthropic((body) => {
      const r = lastToolResult(body)
      return r === undefined ? { tool: "Bash", input: { command: COMMAND, description: "print the marker" } } : { text: `It printed ${r.trim()}.` }
    })
    afterTest(() => api.close())
    const claudeHome = NodePath.join(dir, "claude-home")
    NodeFs.mkdirSync(claudeHome)
    const agent: AgentSpec = {
      id: "claude",
      kind: "claude",
      command: [claude],
      model: null,
      args: [],
      env: { ...claudeEnv(api.url, claudeHome), IS_SANDBOX: "1" }
    }
    const work = workdir(dir)
    const r = await call(NodePath.join(dir, "magi-home"), input(dir, work, agent))
    const out = NodeFs.readFileSync(r.stdoutFile, "utf8")
    record("claude", out)
    expect(r.usable, out).toBe(true)
    // The reply, the session and the usage still come from the stream's closing result.
    expect(r.text).toBe("It printed live-marker-42.")
    expect(r.seat.session).toMatch(/^[0-9a-f-]{36}$/)
    expect(r.usage?.output_tokens).toBeGreaterThan(0)
    expect(out.trim().split("\n").length).toBeGreaterThan(2)
    expectLive(liveEventsOf(out), "It printed live-marker-42.")
    expect(api.requests.filter((q) => !q.path.startsWith("/v1/messages"))).toEqual([])
  }, TURN_MS + 60_000)

  it("codex's exec --json events", async () => {
    const codex = need("codex")
    const dir = scratchDir("live-codex-")
    const api = await startResponsesStandIn((req) => {
      const outs = toolOutputs(req.body)
      if (toolCalls(req.body).length === 0) return { kind: "call", name: "exec_command", args: { cmd: COMMAND } }
      return { kind: "message", text: `It printed ${/live-marker-42/.exec(outs.join("\n"))?.[0] ?? "nothing"}.` }
    })
    afterTest(() => api.close())
    const codexHome = NodePath.join(dir, "codex-home")
    NodeFs.mkdirSync(codexHome)
    NodeFs.writeFileSync(NodePath.join(codexHome, "config.toml"), codexConfig(api))
    const agent: AgentSpec = {
      id: "codex",
      kind: "codex",
      command: [codex],
      model: null,
      args: [],
      env: { ...api.proxyEnv, CODEX_HOME: codexHome, HOME: dir }
    }
    const work = workdir(dir)
    const r = await call(NodePath.join(dir, "magi-home"), input(dir, work, agent))
    const out = NodeFs.readFileSync(r.stdoutFile, "utf8")
    record("codex", out)
    expect(r.usable, out + NodeFs.readFileSync(r.stderrFile, "utf8")).toBe(true)
    expectLive(liveEventsOf(out), "It printed live-marker-42.")
    expect(api.escaped).toEqual([])
  }, TURN_MS + 60_000)

  it("opencode's run --format json events", async () => {
    const opencode = need("opencode")
    const dir = scratchDir("live-opencode-")
    const api = await startOpenAiChat((req) => {
      const results = toolResults(req)
      return results.length === 0
        ? { tool: "bash", args: { command: COMMAND, description: "print the marker" } }
        : { text: `It printed ${results[0]!.trim()}.` }
    })
    afterTest(() => api.close())
    const agent: AgentSpec = { id: "oc", kind: "opencode", command: [opencode], model: MODEL, args: [], env: opencodeEnv(dir, "seat", api.baseUrl) }
    const work = workdir(dir)
    const r = await call(NodePath.join(dir, "magi-home"), input(dir, work, agent))
    const out = NodeFs.readFileSync(r.stdoutFile, "utf8")
    record("opencode", out)
    expect(r.usable, out + NodeFs.readFileSync(r.stderrFile, "utf8")).toBe(true)
    expectLive(liveEventsOf(out), "It printed live-marker-42.")
    expect(api.escapes).toEqual([])
  }, TURN_MS + 60_000)
})
