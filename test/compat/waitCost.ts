/**
 * One run of "the cost of waiting" against a real, pinned agent CLI on its
 * local model stand-in: `magi run` with the seat's CLI, whose scripted model
 * asks the owner (by its shell or by magi's MCP tool), then does exactly
 * what each result tells it: wait again (`magi ask --wait`, the `wait`
 * tool), or end its turn. `magi serve` runs throughout, as it (or
 * `magi web`) does for an owner answering from a phone.
 *
 * The stand-in counts every model request and its input bytes
 * (standins/meter.ts). Over `windowMs` of real waiting after the question is
 * filed, the run tells how many requests the wait cost and how big they
 * were; then the owner answers, and it tells how long the answer took to
 * reach the model (`magi answer` to the first request carrying it) and
 * whether it came to the same session.
 *
 * Used by the bench (scripts/bench/wait-cost.ts) and, small, by the
 * compatibility suite (wait-cost.compat.test.ts), which asserts on it.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { claudeEnv, lastToolResult, type MessagesBody, type Reply as ClaudeReply, startAnthropic, textOf } from "./standins/anthropic.js"
import { codexConfig, messages, type RecordedRequest, runningSession, startResponsesStandIn, toolOutputs, type Step } from "./standins/openai-responses.js"
import { type ChatRequest, contentText, type Reply as ChatReply, startOpenAiChat } from "./standins/openai-chat.js"
import { within, type Meter } from "./standins/meter.js"
import { opencodeEnv } from "./opencodeWorld.js"

export type Cli = "claude" | "codex" | "opencode"
export type Form = "shell" | "mcp"
export type Mode = "poll" | "end-turn"

export interface WaitCostOptions {
  readonly cli: Cli
  /** The pinned CLI's binary. */
  readonly bin: string
  readonly form: Form
  readonly mode: Mode
  /** `[agents.<id>] wait_slice`: short, so minutes of waiting hold several slices. Unset: the CLI's default. */
  readonly sliceSecs?: number
  /** How long the owner takes to answer, from the question being filed. */
  readonly windowMs: number
  /** The built magi (dist/magi.js). */
  readonly magi: string
  /** A bound on every wait for a process: generous, a busy machine. */
  readonly deadlineMs?: number
}

export interface WaitCost {
  readonly cli: Cli
  readonly form: Form
  readonly mode: Mode
  readonly sliceSecs: number | undefined
  readonly windowMs: number
  /** Agent model requests made while the owner had not answered, after the question was filed. */
  readonly requests: number
  /** Their input bytes, in order. */
  readonly sizes: ReadonlyArray<number>
  /** The gaps between consecutive ones, in ms (polling: one slice and the CLI's own round trip each). */
  readonly gapsMs: ReadonlyArray<number>
  /** The request that asked: its input bytes (the conversation before any waiting). */
  readonly askBytes: number
  /** From `magi answer` to the first model request carrying the answer. */
  readonly answerToModelMs: number
  /** That request's input bytes. */
  readonly answerBytes: number
  /**
   * The seat's CLI session once the owner had waited (null while a first turn
   * still runs: codex's and opencode's ids are read when it ends), and after
   * the answer was taken.
   */
  readonly sessionAsked: string | null
  readonly sessionAfter: string | null
  /** Turns the seat ran in all (1 polling; 2 when the waiter resumed it). */
  readonly turns: number
  /** The run's end and its summary (what the model said last). */
  readonly status: string
  readonly summary: string
  /** The text of the model request that carried the answer. */
  readonly answerRequest: string
  /** What the model read when the slice ran out, the first time. */
  readonly pendingText: string
  /** What the model read last in each of its requests, in order: for a case that went wrong. */
  readonly read: ReadonlyArray<string>
}

/** The owner's answer: free text, a word nothing else in the conversation carries. */
export const ANSWER = "Use-SQLite-7f3"
const SUMMARY = "Which database should the cache use?"
const FINAL_WAITING = "Waiting on the owner about the database."
const FINAL_DONE = `Done: went with ${ANSWER}.`

/** What the model sees last in a request: a tool's result, or the user's words. */
interface Latest {
  readonly tool: string | undefined
  readonly user: string | undefined
  /** No tool has run yet in this conversation. */
  readonly fresh: boolean
  /** The first user message (the prompt). */
  readonly prompt: string
}

/** What the model does next. */
type Move =
  | { readonly kind: "ask" }
  | { readonly kind: "shellWait"; readonly command: string }
  | { readonly kind: "mcpWait"; readonly id: string }
  | { readonly kind: "poll"; readonly session: number }
  | { readonly kind: "say"; readonly text: string }

/** How magi's prompt tells the agent to run magi (codex names it by path): as a model reading it would type it. */
const magiIn = (prompt: string): string => {
  const found = /`magi` is (.+?): |name magi by its path, (.+?): /.exec(prompt)
  return found?.[1] ?? found?.[2] ?? "magi"
}

/** The scripted model: it asks once, then does what each result says. */
const decide = (l: Latest, log: Said[], text: string): Move => {
  log.push({ at: Date.now(), text, latest: l.tool ?? l.user ?? "" })
  if (l.user !== undefined && l.user.includes("The owner's answer")) return { kind: "say", text: FINAL_DONE }
  if (l.fresh) return { kind: "ask" }
  const t = l.tool
  if (t === undefined) return { kind: "say", text: "Nothing to do." }
  if (t.includes(ANSWER)) return { kind: "say", text: FINAL_DONE }
  if (/End your turn now/.test(t)) return { kind: "say", text: FINAL_WAITING }
  const hint = /^\s+(\S.* ask --wait \S+)\s*$/m.exec(t)?.[1]
  if (hint !== undefined) return { kind: "shellWait", command: hint }
  // As text (`wait {"id":"…"}`), or inside structured content as JSON (codex shows the model that).
  const id = /wait \{\\?"id\\?":\\?"([^"\\]+)/.exec(t)?.[1] ?? /\\?"tool\\?":\\?"wait\\?",\\?"arguments\\?":\{\\?"id\\?":\\?"([^"\\]+)/.exec(t)?.[1]
  if (id !== undefined) return { kind: "mcpWait", id }
  const session = runningSession(t)
  if (session !== undefined) return { kind: "poll", session }
  return { kind: "say", text: `Unexpected result: ${t.slice(0, 300)}` }
}

const askCommand = (prompt: string) => `${magiIn(prompt)} ask --summary ${JSON.stringify(SUMMARY)} --detail "Both fit the schema."`
const ASK_INPUT = { summary: SUMMARY, detail: "Both fit the schema." }

/** Temp folders outside /tmp (codex's sandbox lets commands write /tmp, which would hide what a run proves). */
const scratch = (prefix: string) => {
  const root = NodePath.join(
    process.env.MAGI_AGENTS_CACHE ?? NodePath.join(process.env.XDG_CACHE_HOME ?? NodePath.join(NodeOs.homedir(), ".cache"), "magi-agents"),
    "compat-tmp"
  )
  NodeFs.mkdirSync(root, { recursive: true })
  return NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(root, prefix)))
}

interface Said {
  readonly at: number
  readonly text: string
  readonly latest: string
}

interface StandIn extends Meter {
  /** The text of each agent request, in order, with when it came and what the model read last in it. */
  readonly texts: () => ReadonlyArray<Said>
  readonly close: () => Promise<void>
}

interface Setup {
  readonly standIn: StandIn
  /** `[agents.x]` lines beyond kind, command and the wait settings. */
  readonly agentToml: string
  /** The environment every magi process runs with. */
  readonly env: Record<string, string>
}

/**
 * The tool results the model is answering: those of the user messages since
 * its last turn. claude may add a note of its own after them ("The user
 * hasn't heard from you in a while…", after four quiet tool calls), which a
 * model reads and carries on past.
 */
const trailingToolResult = (body: MessagesBody): string | undefined => {
  // Where it lands varies (a message of its own, possibly after an empty
  // assistant turn): the last tool result anywhere is what the model acts on.
  for (let i = body.messages.length - 1; i >= 0; i--) {
    const found = lastToolResult({ ...body, messages: body.messages.slice(0, i + 1) })
    if (found !== undefined) return found
  }
  return undefined
}

const startClaude = async (dir: string): Promise<Setup> => {
  const texts: Said[] = []
  let form: Form = "shell"
  const api = await startAnthropic((body: MessagesBody): ClaudeReply => {
    const last = body.messages.at(-1)
    const tool = trailingToolResult(body)
    const first = body.messages[0]
    const move = decide(
      {
        tool,
        // The delivery prompt of a resumed turn is read first, whatever came before it.
        user: last !== undefined && last.role === "user" ? textOf(last.content) : undefined,
        // claude sends its environment as a message of its own: fresh is "no tool has run yet".
        fresh: !body.messages.some((m) => typeof m.content !== "string" && m.content.some((b) => b.type === "tool_result")),
        prompt: first === undefined ? "" : textOf(first.content)
      },
      texts,
      JSON.stringify(body.messages)
    )
    form = (body.tools ?? []).some((t) => t.name === "mcp__magi__ask") ? "mcp" : "shell"
    switch (move.kind) {
      case "ask":
        return form === "mcp"
          ? { tool: "mcp__magi__ask", input: ASK_INPUT }
          : { tool: "Bash", input: { command: askCommand(""), description: "Ask the owner" } }
      case "shellWait":
        return { tool: "Bash", input: { command: move.command, description: "Keep waiting" } }
      case "mcpWait":
        return { tool: "mcp__magi__wait", input: { id: move.id } }
      case "poll":
        return { text: "unexpected poll" }
      case "say":
        return { text: move.text }
    }
  })
  const claudeHome = NodePath.join(dir, "claude-home")
  NodeFs.mkdirSync(claudeHome)
  const { HOME: _h, CLAUDE_CONFIG_DIR: _c, ...network } = claudeEnv(api.url, claudeHome)
  const agentEnv = Object.entries({ ...network, IS_SANDBOX: "1" })
    .map(([k, v]) => `${k} = ${JSON.stringify(v)}`)
    .join(", ")
  return {
    standIn: { metered: api.metered, texts: () => texts, close: api.close },
    agentToml: `env = { ${agentEnv} }\n`,
    env: { HOME: claudeHome, CLAUDE_CONFIG_DIR: NodePath.join(claudeHome, ".claude") }
  }
}

const startCodex = async (dir: string): Promise<Setup> => {
  const texts: Said[] = []
  const standIn = await startResponsesStandIn((request: RecordedRequest): Step => {
    const body = request.body
    const lastItem = body.input?.at(-1)
    const afterTool = lastItem?.type === "function_call_output"
    const users = messages(body, "user")
    const mcp = (body.tools ?? []).some((t) => t.type === "namespace" && t.name === "mcp__magi")
    const move = decide(
      {
        tool: afterTool ? toolOutputs(body).at(-1) : undefined,
        user: afterTool ? undefined : users.at(-1),
        fresh: toolOutputs(body).length === 0 && !users.some((u) => u.includes("The owner's answer")),
        prompt: users.join("\n")
      },
      texts,
      JSON.stringify(body.input)
    )
    switch (move.kind) {
      case "ask":
        return mcp
          ? { kind: "call", namespace: "mcp__magi", name: "ask", args: ASK_INPUT }
          : { kind: "call", name: "exec_command", args: { cmd: askCommand(users.join("\n")) } }
      case "shellWait":
        return { kind: "call", name: "exec_command", args: { cmd: move.command } }
      case "mcpWait":
        return { kind: "call", namespace: "mcp__magi", name: "wait", args: { id: move.id } }
      case "poll":
        return { kind: "call", name: "write_stdin", args: { session_id: move.session, chars: "", yield_time_ms: 30_000 } }
      case "say":
        return { kind: "message", text: move.text }
    }
  })
  const codexHome = NodePath.join(dir, "codex-home")
  const userHome = NodePath.join(dir, "user-home")
  for (const d of [codexHome, userHome]) NodeFs.mkdirSync(d)
  NodeFs.writeFileSync(NodePath.join(codexHome, "config.toml"), codexConfig(standIn))
  return {
    standIn: { metered: standIn.metered, texts: () => texts, close: standIn.close },
    agentToml: "",
    env: { ...standIn.proxyEnv, HOME: userHome, CODEX_HOME: codexHome }
  }
}

const startOpencode = async (dir: string): Promise<Setup> => {
  const texts: Said[] = []
  const api = await startOpenAiChat((request: ChatRequest): ChatReply => {
    const last = request.messages.at(-1)
    const tools = (request.tools ?? []).map((t) => t.function.name)
    const mcp = tools.includes("magi_ask")
    const users = request.messages.filter((m) => m.role === "user").map(contentText)
    const move = decide(
      {
        tool: last?.role === "tool" ? contentText(last) : undefined,
        user: last?.role === "user" ? contentText(last) : undefined,
        fresh: !request.messages.some((m) => m.role === "tool") && !users.some((u) => u.includes("The owner's answer")),
        prompt: users.join("\n")
      },
      texts,
      JSON.stringify(request.messages)
    )
    switch (move.kind) {
      case "ask":
        return mcp ? { tool: "magi_ask", args: ASK_INPUT } : { tool: "bash", args: { command: askCommand(""), description: "Ask the owner" } }
      case "shellWait":
        return { tool: "bash", args: { command: move.command, description: "Keep waiting" } }
      case "mcpWait":
        return { tool: "magi_wait", args: { id: move.id } }
      case "poll":
        return { text: "unexpected poll" }
      case "say":
        return { text: move.text }
    }
  })
  const env = opencodeEnv(dir, "agent", api.baseUrl)
  return { standIn: { metered: api.metered, texts: () => texts, close: api.close }, agentToml: `model = "standin/scripted"\n`, env }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

const until = async (what: string, ok: () => boolean, ms: number) => {
  const end = Date.now() + ms
  while (!ok()) {
    if (Date.now() > end) throw new Error(`gave up waiting for ${what}`)
    await sleep(100)
  }
}

const readJson = (file: string): Record<string, unknown> | undefined => {
  try {
    return JSON.parse(NodeFs.readFileSync(file, "utf8")) as Record<string, unknown>
  } catch {
    return undefined
  }
}

/** One run, start to end; everything it started is stopped and its folder removed however it ends. */
export const measureWaitCost = async (o: WaitCostOptions): Promise<WaitCost> => {
  const deadline = o.deadlineMs ?? 300_000
  const dir = scratch(`wait-${o.cli}-${o.form}-${o.mode}-`)
  const children: ChildProcess[] = []
  let setup: Setup | undefined
  try {
    setup = await (o.cli === "claude" ? startClaude(dir) : o.cli === "codex" ? startCodex(dir) : startOpencode(dir))
    const repo = NodePath.join(dir, "repo")
    NodeFs.mkdirSync(repo)
    const git = (...args: string[]) => execFileSync("git", args, { cwd: repo, stdio: "pipe" })
    git("init", "-q", "-b", "trunk")
    NodeFs.writeFileSync(
      NodePath.join(repo, "magi.toml"),
      `[agents.x]\nkind = "${o.cli}"\ncommand = ${JSON.stringify([o.bin])}\nmcp = ${o.form === "mcp"}\nwait = "${o.mode}"\n` +
        (o.sliceSecs === undefined ? "" : `wait_slice = ${o.sliceSecs}\n`) +
        setup.agentToml +
        `\n[notify]\ncommand = ["true"]\n`
    )
    git("add", ".")
    git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "-m", "init")
    const home = NodePath.join(dir, "magi-home")
    const env: Record<string, string> = {}
    for (
      const [k, v] of Object.entries({ ...process.env, IS_SANDBOX: undefined, XDG_CONFIG_HOME: NodePath.join(dir, "no-config"), ...setup.env, MAGI_HOME: home })
    )
      if (v !== undefined) env[k] = v
    const start = (args: ReadonlyArray<string>) => {
      // Its own process group: the agent CLIs it starts go with it.
      const p = spawn(process.execPath, [o.magi, ...args], { cwd: repo, env, stdio: ["ignore", "pipe", "pipe"], detached: true })
      let err = ""
      p.stderr!.on("data", (d: Buffer) => (err += d.toString()))
      p.stdout!.resume()
      children.push(p)
      return { p, err: () => err }
    }
    const serve = start(["serve", "--home", home])
    const run = start(["run", "Pick a database for the cache, asking the owner which."])

    const questions = () => {
      const qdir = NodePath.join(home, "questions")
      return NodeFs.existsSync(qdir)
        ? NodeFs.readdirSync(qdir)
          .filter((f) => f.endsWith(".json"))
          .flatMap((f) => {
            const q = readJson(NodePath.join(qdir, f))
            return q === undefined ? [] : [q]
          })
        : []
    }
    const theRun = () => {
      const rdir = NodePath.join(home, "runs")
      const [id] = NodeFs.existsSync(rdir) ? NodeFs.readdirSync(rdir) : []
      return id === undefined
        ? undefined
        : (readJson(NodePath.join(rdir, id, "run.json")) as
          | { status: string; summary?: string; seats: Array<{ session: string | null; turns: number }> }
          | undefined)
    }
    await until(
      "the question to be filed",
      () => {
        if (run.p.exitCode !== null && questions().length === 0)
          throw new Error(
            `magi run ended with no question filed:\n${run.err()}\nthe model read: ${JSON.stringify(setup!.standIn.texts().map((t) => t.latest.slice(0, 400)))}`
          )
        return questions().length === 1
      },
      deadline
    )
    const filedAt = Date.now()
    const q = questions()[0]!
    const askBytes = setup.standIn.metered.filter((m) => m.agent && m.at < filedAt).at(-1)?.bytes ?? 0
    await sleep(Math.max(0, filedAt + o.windowMs - Date.now()))
    const waited = within(setup.standIn, filedAt, filedAt + o.windowMs)
    const at = setup.standIn.metered.filter((m) => m.agent && m.at >= filedAt && m.at < filedAt + o.windowMs).map((m) => m.at)
    const sessionAsked = theRun()?.seats[0]?.session ?? null
    const pendingText = setup.standIn.texts().find((t) => t.at >= filedAt && /No answer yet/.test(t.latest))?.latest ?? ""

    // The owner answers.
    const answeredAt = Date.now()
    const answered = spawn(process.execPath, [o.magi, "answer", String(q.id), "--reply", ANSWER], { cwd: repo, env, stdio: "ignore" })
    const code = await new Promise<number | null>((r) => answered.once("exit", r))
    if (code !== 0) throw new Error(`magi answer exited ${code}`)
    await until("the answer to reach the model", () => setup!.standIn.texts().some((t) => t.at >= answeredAt && t.text.includes(ANSWER)), deadline)
    const carrying = setup.standIn.texts().find((t) => t.at >= answeredAt && t.text.includes(ANSWER))!
    // Metered as the body arrives, just before the script reads it.
    const answerBytes = setup.standIn.metered.filter((m) => m.agent && m.at <= carrying.at).at(-1)?.bytes ?? 0
    await until("the run to end", () => ["done", "failed", "stalled"].includes(theRun()?.status ?? ""), deadline)
    const finished = theRun()!
    serve.p.kill("SIGTERM")
    await until("magi serve to stop", () => serve.p.exitCode !== null || serve.p.signalCode !== null, 60_000)
    return {
      cli: o.cli,
      form: o.form,
      mode: o.mode,
      sliceSecs: o.sliceSecs,
      windowMs: o.windowMs,
      requests: waited.requests,
      sizes: waited.sizes,
      gapsMs: at.slice(1).map((t, i) => t - at[i]!),
      askBytes,
      answerToModelMs: carrying.at - answeredAt,
      answerBytes,
      sessionAsked,
      sessionAfter: finished.seats[0]?.session ?? null,
      turns: finished.seats[0]?.turns ?? 0,
      status: finished.status,
      summary: finished.summary ?? "",
      answerRequest: carrying.text,
      pendingText,
      read: setup.standIn.texts().map((t) => t.latest)
    }
  } finally {
    for (const p of children)
      try {
        process.kill(-p.pid!, "SIGKILL")
      } catch {
        // The group is gone already.
      }
    await setup?.standIn.close()
    NodeFs.rmSync(dir, { recursive: true, force: true })
  }
}
