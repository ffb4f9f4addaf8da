/**
 * What every agent CLI adapter provides: how to call it headless (a new
 * session, a resumed one, read-only or not) and how to read what it printed.
 * Adapters are pure; `Agents.call` is the one place a process starts.
 */
import { Duration } from "effect"
import type { AgentSpec, WaitMode } from "../AgentRoster.js"
import type { TurnUsage } from "../Usage.js"

export interface PlanInput {
  readonly cwd: string
  readonly promptFile: string
  readonly prompt: string
  /** The seat's name, for `{label}`. */
  readonly label: string
  /** Resume this session; null starts a new one. */
  readonly resume: string | null
  /** The planning chat this turn is of, for a `command` agent's `{session}`: the one conversation id a chat has. */
  readonly chat?: string
  /** The id a new claude session is created under. */
  readonly newSession: string | null
  readonly allowWrite: boolean
  readonly timeout: Duration.Duration
  /**
   * `<MAGI_HOME>/questions`: the one folder an agent must be able to write
   * to ask, whatever its sandbox (it exists before the agent starts).
   */
  readonly questionsDir: string
  /** The absolute path of the magi command, when known: a read-only seat may still run `<magi> ask`. */
  readonly magi?: string
  /** `magi mcp` to register with the CLI for this call, when the seat asks through MCP. */
  readonly mcp?: McpServerSpec
  /**
   * `[approvals] ask` for a writing seat: its tool calls that need
   * permission go to the owner instead of being allowed unchecked, by the
   * CLI's own route (claude: `magi mcp`'s `approve` tool as its
   * `--permission-prompt-tool`, so only with `mcp`; codex: `magi approvals
   * hook codex` as its `PermissionRequest` hook; opencode: magi's plugin,
   * which runs `magi approvals hook opencode`). CLIs that offer no such hook
   * ignore it (`magi doctor` says so).
   */
  readonly approve?: boolean
  /** `MAGI_HOME`: where magi keeps files a CLI loads (opencode's approval plugin, `Plan.files`). */
  readonly home?: string
  /**
   * The environment the CLI inherits from magi (the owner's shell), under
   * the agent's configured `env`: a variable magi extends (opencode's
   * `OPENCODE_CONFIG_CONTENT`) is extended from what the CLI would have seen.
   */
  readonly inherited?: Readonly<Record<string, string | undefined>>
  /**
   * Images the owner attached to this turn's words, for a CLI that takes
   * images (`AgentAdapter.images`): each by its absolute path, and its bytes
   * when the CLI takes them in its input rather than by a file flag.
   */
  readonly images?: ReadonlyArray<AttachedImage>
}

/** One image given to a turn: its file, and (for `images: "bytes"`) its sniffed type and base64 bytes. */
export interface AttachedImage {
  readonly path: string
  readonly inline?: { readonly mime: string; readonly base64: string }
}

/**
 * The stdio MCP server a CLI starts for this seat: `command args…` with
 * `env` set, each value exactly as the agent's own `magi ask` would see it
 * (some CLIs start MCP servers with a cleaned environment: codex keeps only
 * PATH, HOME and a few more), and `slice` for the CLI's tool-call timeout.
 */
export interface McpServerSpec {
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly env: Readonly<Record<string, string>>
}

/** The name every CLI knows magi's MCP server by: claude calls its tools `mcp__magi__ask`. */
export const MCP_SERVER_NAME = "magi"

/** What to spawn: argv, and what to feed on stdin ("" for nothing). */
export interface Plan {
  readonly argv: ReadonlyArray<string>
  readonly stdin: string
  /** Environment this call needs on top of the agent's (opencode's read-only permissions). */
  readonly env?: Readonly<Record<string, string>>
  /**
   * Files the call needs in place before it starts (opencode's approval
   * plugin). Each is named by its content: one already there is kept, and
   * two calls writing the same one write the same bytes.
   */
  readonly files?: ReadonlyArray<{ readonly path: string; readonly content: string }>
}

/** One CLI's reading of its own output, before magi's common rules apply. */
export const jsonLines = (out: string): unknown[] =>
  out.split("\n").flatMap((line) => {
    const t = line.trim()
    if (!t.startsWith("{")) return []
    try {
      return [JSON.parse(t)]
    } catch {
      return []
    }
  })

export const wholeJson = (out: string): Record<string, unknown> | undefined => {
  try {
    const v = JSON.parse(out.trim())
    if (typeof v === "object" && v !== null && !Array.isArray(v)) return v as Record<string, unknown>
  } catch {
    // Some CLIs print a banner first; fall back to the last JSON line.
  }
  const last = jsonLines(out).at(-1)
  return typeof last === "object" && last !== null ? (last as Record<string, unknown>) : undefined
}

export const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined)
export const get = (v: unknown, key: string): unknown => (typeof v === "object" && v !== null ? (v as Record<string, unknown>)[key] : undefined)

export interface Parsed {
  readonly text: string
  readonly session: string | null
  readonly error: boolean
  /**
   * Set when the CLI hit a usage limit (a stall, not a failure): the reset
   * time when it said one, else "". Read with `usageLimit`.
   */
  readonly quota: string | null
  /**
   * What went wrong, in plain words and with what to do when the adapter
   * knows (e.g. claude refusing bypassPermissions as root). Without it the
   * failure is told by `plainMessage` of what the CLI printed.
   */
  readonly problem?: string
  /** What the turn cost, as the CLI reported it (`Usage.ts`); absent when it reported nothing. */
  readonly usage?: TurnUsage | undefined
}

// ---------------------------------------------------------------------------
// Shared readings of what a CLI printed (issue 7). Every adapter's `parse`
// uses these, so an error reads the same whichever CLI said it.

/** ANSI escape sequences (colours, cursor moves, OSC titles/links). */
const ANSI = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[@-Z\\-_]/g

export const stripAnsi = (s: string): string => s.replace(ANSI, "")

/** The human message inside one JSON value a CLI printed about an error, if it carries one. */
const messageIn = (v: unknown, depth = 0): string | undefined => {
  if (depth > 4) return undefined
  if (typeof v === "string") return v.trim() === "" ? undefined : v.trim()
  if (typeof v !== "object" || v === null || Array.isArray(v)) return undefined
  for (const key of ["message", "error", "detail", "result", "data"]) {
    const found = messageIn(get(v, key), depth + 1)
    if (found !== undefined) return found
  }
  return undefined
}

/** One line as its message: a JSON body (whole, or after a prefix like `API Error: 500 `) gives its `message`. */
const plainLine = (line: string): string => {
  const brace = line.indexOf("{")
  if (brace < 0) return line
  try {
    const inner = messageIn(JSON.parse(line.slice(brace)))
    if (inner === undefined) return line
    const prefix = line.slice(0, brace).trim()
    return prefix === "" ? inner : `${prefix} ${inner}`
  } catch {
    return line
  }
}

/**
 * An error as the owner should read it: its message, never raw JSON
 * (`{"type":"error","error":{"message":…}}`) or ANSI colour codes
 * (`\u001b[91m…`). Blank lines go; the rest is kept in order.
 */
export const plainMessage = (raw: string): string =>
  stripAnsi(raw)
    .split("\n")
    .map((l) => plainLine(l.trim()))
    .filter((l) => l !== "")
    .join("\n")

/**
 * Wordings of a usage limit that any CLI may print. Each adapter adds its
 * own (claude: "5-hour limit", "weekly limit", …) and calls `usageLimit`.
 */
export const USAGE_LIMIT_WORDS: ReadonlyArray<RegExp> = [/usage limit/i, /quota exceeded/i]

/** When a limit lifts, as the CLI said it: "resets 3pm (UTC)", "try again at 4:05 PM", "reset in 2 hours". */
export const resetTime = (text: string): string | undefined => {
  const m = /\bresets?\s+(?:at\s+|on\s+)?([^\n·|]+?)\s*(?:[.;]\s|[.;]?$|\n|·|\|)/im.exec(text) ??
    /\btry again\s+((?:at|in|after)\s+[^\n·|]+?)\s*(?:[.;]\s|[.;]?$|\n|·|\|)/im.exec(text)
  const t = m?.[1]?.trim()
  return t === undefined || t === "" ? undefined : t
}

/**
 * Is `text` a usage limit in one of `wordings` (plus the common ones)? The
 * reset time when given, "" when not, null when it is no usage limit.
 */
export const usageLimit = (text: string, wordings: ReadonlyArray<RegExp> = []): string | null => {
  const plain = stripAnsi(text)
  if (![...USAGE_LIMIT_WORDS, ...wordings].some((w) => w.test(plain))) return null
  return resetTime(plain) ?? ""
}

export interface AgentAdapter {
  /**
   * How long one `magi ask` may block under this CLI's shell tool: it must
   * hand back `pending` (with the `--wait` hint) before the tool gives up on
   * the command. Given to the agent as `MAGI_WAIT_SLICE`.
   */
  readonly waitSlice: Duration.Duration
  /**
   * The slice for an agent whose environment changes its shell tool's limit
   * (claude's `BASH_DEFAULT_TIMEOUT_MS`); undefined keeps `waitSlice`.
   */
  readonly waitSliceIn?: (env: Readonly<Record<string, string | undefined>>) => Duration.Duration | undefined
  /**
   * What a seat of this CLI does when a slice hands back `pending`, unless
   * `[agents.<id>] wait` says otherwise: the cheaper way that still brings
   * the owner's answer within seconds (measured: docs/agents/README.md).
   */
  readonly wait: WaitMode
  /**
   * Environment variables that decide where this CLI keeps its sessions
   * (`HOME`, `CLAUDE_CONFIG_DIR`, `CODEX_HOME`, `XDG_*`): recorded when a
   * seat starts, so a resume finds the session whoever resumes it.
   */
  readonly sessionEnv: ReadonlyArray<string>
  /**
   * This CLI's shell tool is known to lose the PATH magi gives it (codex runs
   * every command as `bash -lc`, and a login profile may reset PATH): its
   * prompts name magi by its absolute path in every command, not plain
   * `magi`, which that shell would not find.
   */
  readonly shellLosesPath?: boolean
  /**
   * How this CLI is told about an MCP server: set when it speaks MCP, and
   * then magi registers `magi mcp` with every seat unless `[agents.<id>]
   * mcp = false`. `timeout` is the tool-call timeout magi sets with it, and
   * `slice` how long one `ask`/`wait` call may wait under it.
   */
  readonly mcp?: McpSupport
  /**
   * How this CLI puts an attached image into its model request (measured
   * per CLI: docs/agents/<cli>.md): `path`, a file flag it reads itself
   * (codex's `-i`, opencode's `-f`); `bytes`, the image in its own input
   * (claude's stream-json user message). Unset: it takes none, and the
   * prompt names each image's path for it to open (the `command` agent).
   */
  readonly images?: "path" | "bytes"
  /** The headless argv for one call, exactly as this CLI wants it. */
  readonly plan: (agent: AgentSpec, input: PlanInput) => Plan
  /**
   * The reply text, the session id and whether the CLI reported an error or
   * a usage limit. stderr is given too: some CLIs say why they refused there.
   */
  readonly parse: (stdout: string, stderr: string) => Parsed
  /**
   * Where this CLI would keep `session` for a call run with `env` (the
   * seat's recorded environment over the daemon's): candidate files, any of
   * which existing means the session exists and is resumed rather than
   * created. Only for CLIs whose session id magi mints (claude): a first
   * turn cut short may or may not have created it.
   */
  readonly sessionFiles?: (session: string, env: Readonly<Record<string, string | undefined>>) => SessionLookup
}

export interface McpSupport {
  /** `magi mcp --client <client>`: the slice it takes when started by hand. */
  readonly client: "claude" | "codex" | "opencode"
  /** The tool-call timeout magi registers the server with (or the CLI's own, where none can be set). */
  readonly timeout: Duration.Duration
}

/**
 * A slice that ends safely before a shell tool limit of `tool`: 20 s, or a
 * sixth of the limit when that is more (limits over two minutes), is left
 * for `magi ask` to start, file and notify; never under 1 s.
 */
export const sliceBefore = (tool: Duration.Duration): Duration.Duration => {
  const secs = Duration.toSeconds(tool)
  return Duration.seconds(Math.max(1, Math.floor(Math.min(secs - 20, (secs * 5) / 6))))
}

/** Where to look for a session: a file `name` in `root` or in any folder directly under it. */
export interface SessionLookup {
  readonly root: string
  readonly name: string
}

/** `[program, ...leading args]` of an agent's command, and its model flag when one is set. */
export const commandOf = (agent: AgentSpec) => {
  const [program, ...lead] = agent.command
  return { program: program, lead, model: (flag: string) => (agent.model === null ? [] : [flag, agent.model]) }
}

/** Fill `{prompt_file}`, `{cwd}`, `{label}`, `{session}` in one pass; others are kept. */
export const expandTemplate = (arg: string, values: Record<"prompt_file" | "cwd" | "label" | "session", string>): string =>
  arg.replace(/\{(prompt_file|cwd|label|session)\}/g, (_, k: keyof typeof values) => values[k])
