/**
 * magi against the real, pinned `claude` (scripts/agents/pins.json), talking
 * to a local stand-in for the Anthropic Messages API that scripts the
 * conversation. Nothing leaves 127.0.0.1: claude runs with a dummy key, its
 * own temp HOME and config dir, and its own switches for telemetry, error
 * reporting, updates and the rest of its nonessential traffic.
 *
 * Each test has its own temp folders and its own stand-in port. Deadlines are
 * generous (a loaded 2-core machine): they bound a hang, they time nothing.
 */
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Duration, Effect } from "effect"
import { describe, expect, it } from "vitest"
import type { AgentSpec } from "../../src/agents/AgentRoster.js"
import { make as makeAgents, newSeat } from "../../src/agents/Agents.js"
import { ROOT_ADVICE } from "../../src/agents/adapters/claude.js"
import {
  type AnthropicStandIn,
  type MessagesBody,
  type Reply,
  claudeEnv,
  conversationText,
  lastToolResult,
  startAnthropic,
  textOf
} from "./standins/anthropic.js"
import { until } from "../support.js"
import { afterTest, need, startMagi as startBuiltMagi } from "./processes.js"

const MAGI_BIN = NodePath.resolve("dist/bin")

/** A process deadline: long enough for a loaded machine, short enough to end a hang. */
const DEADLINE_MS = 180_000

interface World {
  readonly dir: string
  readonly repo: string
  readonly home: string
  /** Where claude keeps its config and sessions for `magi run`. */
  readonly claudeHome: string
  readonly api: AnthropicStandIn
  /** The environment `magi` commands run with (the agent's own comes from magi.toml). */
  readonly env: Record<string, string>
}

interface WorldOptions {
  /** `IS_SANDBOX = "1"` in the agent's env: the owner's explicit opt-in to bypassPermissions as root. */
  readonly sandbox?: boolean
  readonly waitSlice?: number
  readonly agentEnv?: Record<string, string>
}

const toml = (v: unknown): string => JSON.stringify(v)

/** A git repo whose magi.toml runs the real claude against a fresh stand-in. */
const world = async (script: (body: MessagesBody, n: number) => Reply, o: WorldOptions = {}): Promise<World> => {
  const claude = need("claude")
  const dir = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "magi-claude-")))
  afterTest(() => NodeFs.rmSync(dir, { recursive: true, force: true }))
  const api = await startAnthropic(script)
  afterTest(() => api.close())
  // Every test: claude reached nothing but the stand-in's Messages API. It is
  // given the stand-in as its proxy too, so anything bound past 127.0.0.1
  // (telemetry, updates, feature flags) would show up here as a CONNECT.
  afterTest(() => {
    const elsewhere = api.requests.filter((r) => !r.path.startsWith("/v1/messages"))
    if (elsewhere.length > 0)
      throw new Error(`claude reached past the stand-in's API: ${elsewhere.map((r) => `${r.method} ${r.path}`).join(", ")}`)
  })
  const repo = NodePath.join(dir, "repo")
  NodeFs.mkdirSync(repo)
  const git = (...args: string[]) => execFileSync("git", args, { cwd: repo, stdio: "pipe" })
  git("init", "-q", "-b", "trunk")
  NodeFs.writeFileSync(NodePath.join(repo, "README.md"), "hello\n")
  git("add", ".")
  git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "-m", "init")
  const claudeHome = NodePath.join(dir, "claude-home")
  NodeFs.mkdirSync(claudeHome)
  // The session-locating variables (HOME, CLAUDE_CONFIG_DIR) come from the
  // process that starts the seat, not from magi.toml: that is what magi must
  // record for the resume (issue 7, item 10).
  const { HOME: _h, CLAUDE_CONFIG_DIR: _c, ...network } = claudeEnv(api.url, claudeHome)
  const agentEnv = { ...network, ...(o.sandbox === false ? {} : { IS_SANDBOX: "1" }), ...o.agentEnv }
  const envToml = Object.entries(agentEnv)
    .map(([k, v]) => `${k} = ${toml(v)}`)
    .join(", ")
  NodeFs.writeFileSync(
    NodePath.join(repo, "magi.toml"),
    // The shell form (`magi ask` in claude's Bash tool): magi mcp has its own suite.
    `[agents.claude]\nkind = "claude"\ncommand = ${
      toml(claude)
    }\nmcp = false\n# Polling: the end-turn way has its own suite (wait-cost).\nwait = "poll"\nenv = { ${envToml} }\n` +
      (o.waitSlice === undefined ? "" : `wait_slice = ${o.waitSlice}\n`) +
      `\n[notify]\ncommand = ["true"]\n`
  )
  const home = NodePath.join(dir, "magi-home")
  const env: Record<string, string> = {
    MAGI_HOME: home,
    XDG_CONFIG_HOME: NodePath.join(dir, "no-config"),
    HOME: claudeHome,
    CLAUDE_CONFIG_DIR: NodePath.join(claudeHome, ".claude")
  }
  return { dir, repo, home, claudeHome, api, env }
}

/** Start `magi …` in the world's repository; IS_SANDBOX only ever from magi.toml: the machine running the suite may set one. */
const startMagi = (w: World, args: ReadonlyArray<string>, env: Record<string, string | undefined> = w.env) =>
  startBuiltMagi(args, { cwd: w.repo, env: { IS_SANDBOX: undefined, ...env }, deadline: DEADLINE_MS })

const runMagi = (w: World, ...args: string[]) => startMagi(w, args).done

const runDir = (w: World) => {
  const runs = NodePath.join(w.home, "runs")
  const [id] = NodeFs.readdirSync(runs)
  return NodePath.join(runs, id!)
}

const runRecord = (w: World) => JSON.parse(NodeFs.readFileSync(NodePath.join(runDir(w), "run.json"), "utf8"))

const sessionFiles = (configDir: string, session: string): string[] => {
  const projects = NodePath.join(configDir, "projects")
  if (!NodeFs.existsSync(projects)) return []
  return NodeFs.readdirSync(projects)
    .map((d) => NodePath.join(projects, d, `${session}.jsonl`))
    .filter((f) => NodeFs.existsSync(f))
}

const ASK = `magi ask --summary "Which database?" --detail "Both fit the schema." --choice SQLite --choice Postgres`

describe("the real claude, driven by magi", () => {
  it(
    "asks through its Bash tool, hands back before the tool's limit with the --wait hint, and the waiter resumes the same session with the owner's answer",
    async () => {
      const w = await world(
        (body) => {
          const convo = conversationText(body)
          if (convo.includes("The owner's answer")) return { text: "Done: went with SQLite." }
          const result = lastToolResult(body)
          if (result === undefined) return { tool: "Bash", input: { command: ASK, description: "Ask the owner which database" } }
          return { text: `The owner has not answered yet; magi will bring the answer. (${result.split("\n").at(-1)})` }
        },
        // claude's Bash tool is told to give up at 30 s here (its
        // BASH_DEFAULT_TIMEOUT_MS, 120 s by default): magi's slice for it
        // must hand back before that, with the --wait hint.
        { agentEnv: { BASH_DEFAULT_TIMEOUT_MS: "30000" } }
      )
      const first = await runMagi(w, "run", "Pick a database for the cache and write it down.")
      expect(first.stderr).toContain("is waiting on the owner")
      expect(first.code).toBe(0)

      const [ask, ended] = w.api.turns()
      const toolResult = lastToolResult(ended!.body!)!
      // The slice the agent was given (MAGI_WAIT_SLICE), not magi's default,
      // and its hand-back with how to wait again.
      expect(toolResult).toContain("waiting up to 10s")
      expect(toolResult).toContain("No answer yet")
      const id = /magi ask --wait (\S+)/.exec(toolResult)?.[1]
      expect(id).toBeDefined()
      // The prompt told the agent magi's absolute path.
      expect(textOf(ask!.body!.messages[0]!.content)).toContain(NodePath.join(MAGI_BIN, "magi"))

      const run = runRecord(w)
      expect(run.status).toBe("waiting")
      const seat = run.seats[0]
      expect(seat.env).toEqual({ HOME: w.claudeHome, CLAUDE_CONFIG_DIR: NodePath.join(w.claudeHome, ".claude") })
      expect(sessionFiles(NodePath.join(w.claudeHome, ".claude"), seat.session)).toHaveLength(1)

      const answered = await runMagi(w, "answer", id!, "--reply", "SQLite")
      expect(answered.code).toBe(0)

      // The daemon runs with another HOME and no CLAUDE_CONFIG_DIR: the seat's
      // recorded environment is what finds the session.
      const elsewhere = NodePath.join(w.dir, "daemon-home")
      NodeFs.mkdirSync(elsewhere)
      const serve = startMagi(w, ["serve"], { ...w.env, HOME: elsewhere, CLAUDE_CONFIG_DIR: undefined })
      // The exited asker's lease ages out first (up to 90 s), then a tick.
      await until("the resumed turn to finish the run", () => runRecord(w).status === "done", 300_000)
      serve.child.kill("SIGTERM")
      await serve.done

      const turns = w.api.turns()
      expect(turns).toHaveLength(3)
      const resumed = conversationText(turns[2]!.body)
      // The same conversation: the first prompt, the ask, its hand-back, the
      // agent's reply, then the owner's answer.
      expect(resumed).toContain("Pick a database for the cache")
      expect(resumed).toContain('magi ask --summary \\"Which database?\\"')
      expect(resumed).toContain("No answer yet")
      expect(resumed).toContain("The owner has not answered yet")
      expect(resumed).toContain("SQLite")
      const after = runRecord(w)
      expect(after.summary).toBe("Done: went with SQLite.")
      expect(after.seats[0].session).toBe(seat.session)
      expect(after.seats[0].turns).toBe(2)
      // The stream's closing result event names the session.
      const out2 = JSON.parse(NodeFs.readFileSync(NodePath.join(runDir(w), "artifacts", "impl-2.out"), "utf8").trim().split("\n").at(-1)!)
      expect(out2.session_id).toBe(seat.session)
      expect(NodeFs.existsSync(NodePath.join(elsewhere, ".claude", "projects"))).toBe(false)
      // Nothing but Messages calls reached the stand-in, and nothing else was needed.
      expect(new Set(w.api.requests.map((r) => `${r.method} ${r.path}`))).toEqual(new Set(["POST /v1/messages"]))
    },
    420_000
  )

  it(
    "measured: with its Bash limit set to 30 s, claude stops waiting on a command at that limit, the one magi's slice is fitted to",
    async () => {
      // What magi's slice for claude rests on (BASH_DEFAULT_TIMEOUT_MS, 120 s
      // unless set): measured here on the pinned CLI with the limit set
      // shorter, so a claude whose Bash tool stops honouring it fails here.
      // Not `sleep`: claude refuses a long sleep outright. Twice the limit,
      // and no more: claude moves a command past its limit to the background
      // and, printing its result, waits for it to end.
      const OUTLAST = `node -e 'setTimeout(() => console.log("finished"), 60000)'`
      const at: Array<number> = []
      const w = await world(
        (body, n) => {
          at.push(Date.now())
          // Once: later requests are the hand-back and the note that the
          // backgrounded command ended.
          if (n === 0) return { tool: "Bash", input: { command: OUTLAST, description: "Outlast the tool" } }
          return { text: `measured: ${(lastToolResult(body) ?? "").split("\n")[0]}` }
        },
        { agentEnv: { BASH_DEFAULT_TIMEOUT_MS: "30000" } }
      )
      const ran = await runMagi(w, "run", "Sleep a long while.")
      expect(ran.code, ran.stderr).toBe(0)
      const toolResult = lastToolResult(w.api.turns()[1]!.body!)!
      const handedBackAfter = (at[1]! - at[0]!) / 1000
      console.log(`claude: Bash handed back after ${handedBackAfter.toFixed(1)} s: ${toolResult.slice(0, 80)}`)
      expect(toolResult).toContain("did not complete within its 30s timeout")
      // At the limit, give or take a loaded machine; well before the command's 60 s.
      expect(handedBackAfter).toBeGreaterThanOrEqual(29)
      expect(handedBackAfter).toBeLessThan(55)
    },
    420_000
  )

  it.runIf(process.getuid?.() === 0)(
    "as root without IS_SANDBOX, the run fails saying exactly what to do, and magi never sets it itself",
    async () => {
      const w = await world(() => ({ text: "should never be asked" }), { sandbox: false })
      const r = await runMagi(w, "run", "Anything.")
      expect(r.code).not.toBe(0)
      const run = runRecord(w)
      expect(run.status).toBe("failed")
      expect(run.reason).toBe(ROOT_ADVICE)
      expect(run.reason).toContain('IS_SANDBOX = "1"')
      expect(r.stderr).toContain("non-root user")
      expect(w.api.requests).toHaveLength(0)
    },
    DEADLINE_MS
  )

  it(
    "an interrupted first turn keeps its artifacts, and magi run --resume resumes the session claude had already created",
    async () => {
      let hang = true
      const w = await world((body) => hang ? { hang: true } : { text: `Resumed with ${body.messages.length} messages; finished.` })
      const first = startMagi(w, ["run", "Write the release notes."])
      await until("claude's first request", () => w.api.turns().length === 1, DEADLINE_MS)
      first.child.kill("SIGINT")
      await first.done
      const stopped = runRecord(w)
      expect(stopped.status).toBe("stalled")
      expect(stopped.seats[0].turns).toBe(1)
      expect(sessionFiles(NodePath.join(w.claudeHome, ".claude"), stopped.seats[0].session)).toHaveLength(1)

      hang = false
      const again = await runMagi(w, "run", "--resume", stopped.id)
      expect(again.code).toBe(0)
      const run = runRecord(w)
      expect(run.status).toBe("done")
      expect(run.seats[0].session).toBe(stopped.seats[0].session)
      // The resumed request carries the interrupted turn's prompt: the same
      // session, not a new one and not "already in use".
      const resumed = conversationText(w.api.turns().at(-1)!.body)
      expect(resumed).toContain("Write the release notes.")
      expect(resumed).toContain("Continue where you left off")
      const artifacts = NodeFs.readdirSync(NodePath.join(runDir(w), "artifacts")).sort()
      expect(artifacts).toEqual(expect.arrayContaining(["impl-1.prompt.md", "impl-2.prompt.md", "impl-2.out"]))
      expect(NodeFs.readFileSync(NodePath.join(runDir(w), "artifacts", "impl-1.prompt.md"), "utf8")).toContain("Write the release notes.")
    },
    DEADLINE_MS * 2
  )

  it(
    "a 200 KB instruction reaches claude whole (on stdin, not argv)",
    async () => {
      const w = await world(() => ({ text: "Read all of it." }))
      const big = `${"Spec line: keep every byte of this instruction intact.\n".repeat(3700)}END-OF-SPEC`
      expect(big.length).toBeGreaterThan(200_000)
      NodeFs.writeFileSync(NodePath.join(w.dir, "spec.md"), big)
      const r = await runMagi(w, "run", "--file", NodePath.join(w.dir, "spec.md"))
      expect(r.code).toBe(0)
      expect(runRecord(w).status).toBe("done")
      const sent = textOf(w.api.turns()[0]!.body!.messages[0]!.content)
      expect(sent).toContain(big)
    },
    DEADLINE_MS
  )

  it(
    "an API error fails the run with its message shown plainly",
    async () => {
      const w = await world(() => ({ status: 400, errorType: "invalid_request_error", message: "messages.0: the stand-in refuses this request" }), {
        agentEnv: { CLAUDE_CODE_MAX_RETRIES: "0" }
      })
      const r = await runMagi(w, "run", "Anything.")
      expect(r.code).not.toBe(0)
      const run = runRecord(w)
      expect(run.status).toBe("failed")
      expect(run.reason).toContain("the stand-in refuses this request")
      expect(run.reason).not.toMatch(/[{}]|\u001b/)
      expect(r.stderr).toContain("the stand-in refuses this request")
    },
    DEADLINE_MS
  )

  it(
    "a usage-limit reply stalls the run (not a failure) with the reset time",
    async () => {
      const w = await world(() => ({ status: 429, errorType: "rate_limit_error", message: "5-hour limit reached ∙ resets 3pm (UTC)" }), {
        agentEnv: { CLAUDE_CODE_MAX_RETRIES: "0" }
      })
      const r = await runMagi(w, "run", "Anything.")
      const run = runRecord(w)
      expect(run.status).toBe("stalled")
      expect(run.reason).toBe("the agent hit its usage limit; it resets 3pm (UTC)")
      expect(r.stderr).toContain("magi run --resume")
    },
    DEADLINE_MS
  )

  it(
    "a read-only seat cannot change the worktree, by Bash or by the edit tools, yet can still run magi ask (and needs no IS_SANDBOX as root)",
    async () => {
      const claude = need("claude")
      let repoDir = ""
      const attempts: ReadonlyArray<Reply> = [
        { tool: "Bash", input: { command: "touch made-by-bash.txt", description: "create a file" } },
        { tool: "Write", input: { file_path: "", content: "written\n" } },
        { tool: "Bash", input: { command: "echo more >> README.md", description: "append" } },
        { tool: "Bash", input: { command: "git commit -q --allow-empty -m sneaky", description: "commit" } },
        { tool: "Bash", input: { command: "magi ask --wait 00000000-none", description: "wait on a question" } },
        { tool: "Bash", input: { command: "ls", description: "look around" } }
      ]
      const w = await world((body) => {
        // Step by the tool calls already in the conversation: claude may add
        // messages of its own between them.
        const done = body.messages.flatMap((m) => (typeof m.content === "string" ? [] : m.content.filter((b) => b.type === "tool_use"))).length
        const next = attempts[done]
        if (next === undefined) return { text: "Looked, changed nothing." }
        return "tool" in next && next.tool === "Write"
          ? { tool: "Write", input: { file_path: NodePath.join(repoDir, "made-by-write.txt"), content: "x" } }
          : next
      })
      repoDir = w.repo
      const { HOME: _h, CLAUDE_CONFIG_DIR: _c, ...network } = claudeEnv(w.api.url, w.claudeHome)
      const agent: AgentSpec = {
        id: "claude",
        kind: "claude",
        command: [claude],
        model: null,
        args: [],
        env: { ...network, HOME: w.claudeHome, CLAUDE_CONFIG_DIR: NodePath.join(w.claudeHome, ".claude"), PATH: `${MAGI_BIN}:${process.env.PATH}` }
      }
      const result = await Effect.runPromise(
        Effect.flatMap(makeAgents(w.home), (agents) =>
          agents.call({
            agent,
            seat: newSeat("chat", "claude"),
            prompt: "Look at the repository; change nothing.",
            cwd: w.repo,
            allowWrite: false,
            timeout: Duration.millis(DEADLINE_MS),
            artifactsDir: NodePath.join(w.dir, "artifacts"),
            stem: "chat-1",
            run: "R1",
            node: "chat"
          })).pipe(Effect.provide(NodeContext.layer))
      )
      expect(result.usable).toBe(true)
      expect(result.text).toBe("Looked, changed nothing.")
      const status = execFileSync("git", ["status", "--porcelain"], { cwd: w.repo, encoding: "utf8" })
      // Only the magi.toml this test wrote after the first commit.
      expect(status).toBe("?? magi.toml\n")
      expect(execFileSync("git", ["rev-list", "--count", "HEAD"], { cwd: w.repo, encoding: "utf8" }).trim()).toBe("1")
      // Every write was refused, and magi ask did run (its own answer came
      // back, not a denial): read off the whole conversation claude sent last.
      const blocks = w.api.turns().at(-1)!.body!.messages.flatMap((m) => (typeof m.content === "string" ? [] : m.content))
      const commandOf = new Map(
        blocks.filter((b) => b.type === "tool_use").map((b) => [String((b as { id: unknown }).id), JSON.stringify((b as { input: unknown }).input)])
      )
      const outcome = (needle: string) => {
        const use = [...commandOf.entries()].find(([, input]) => input.includes(needle))
        const result = blocks.find((b) => b.type === "tool_result" && (b as { tool_use_id?: unknown }).tool_use_id === use?.[0])
        return result === undefined ? "(no result)" : textOf([result as never])
      }
      expect(outcome("touch made-by-bash")).toMatch(/denied/)
      expect(outcome("echo more")).toMatch(/denied/)
      expect(outcome("git commit")).toMatch(/denied/)
      expect(outcome("made-by-write")).toMatch(/Write is disabled|No such tool/)
      expect(outcome("magi ask --wait")).toContain("no question matches")
    },
    DEADLINE_MS
  )
})
