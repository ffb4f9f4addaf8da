/**
 * opencode (sst's opencode): `opencode run --format json`, the prompt on
 * stdin, the session id read from the first event that names one. What was
 * measured against the real opencode (argv re-quoted and capped, so the
 * prompt goes on stdin; the bash tool's 120 s; no read-only switch, so a
 * read-only seat is `plan` plus `OPENCODE_PERMISSION`; where sessions live;
 * the approval plugin; how failures look) is in docs/agents/opencode.md.
 */
import * as Usage from "../Usage.js"
import { Duration } from "effect"
import * as NodePath from "node:path"
import { pathToFileURL } from "node:url"
import * as OpencodeHook from "../../approvals/OpencodeHook.js"
import { MAX_SLICE } from "../Slices.js"
import type { AgentSpec } from "../AgentRoster.js"
import {
  type AgentAdapter,
  commandOf,
  get,
  MCP_SERVER_NAME,
  type McpServerSpec,
  jsonLines,
  type Parsed,
  type PlanInput,
  plainMessage,
  resetTime,
  sliceBefore,
  str,
  usageLimit
} from "./Adapter.js"

/** How long its bash tool waits on a command before killing it, unless the model asks for longer. */
const BASH_LIMIT = Duration.seconds(120)
/** The variable that changes that default (in milliseconds). */
const BASH_LIMIT_ENV = "OPENCODE_EXPERIMENTAL_BASH_DEFAULT_TIMEOUT_MS"

/**
 * The git commands that only read: a judge or a reviewer reads the
 * candidates' history (`git show magi/<short>/B`). Each may still write
 * through `--output`, which the denials below catch.
 */
const GIT_READS = ["log", "show", "diff", "status", "blame", "grep", "ls-files", "ls-tree", "rev-parse", "cat-file", "shortlog", "describe"]

/**
 * What a read-only seat may do, as opencode permissions: no edit tool (its
 * `edit` permission covers edit, write and apply_patch); no shell command
 * but magi's own (`magi ask`, by name or by the absolute path the prompt
 * names) and git's reading ones. opencode decides by the last matching rule
 * and checks each command of a chain on its own, so the catch-all deny
 * comes first and the denials of writes by a reading command (`--output`,
 * a redirect, measured: opencode matches the whole command with its
 * redirect) come last.
 */
export const READ_ONLY_PERMISSION = {
  edit: "deny",
  bash: {
    "*": "deny",
    "magi *": "allow",
    "*/magi *": "allow",
    ...Object.fromEntries(GIT_READS.flatMap((c) => [[`git ${c}`, "allow"], [`git ${c} *`, "allow"]])),
    "*--output*": "deny",
    "*>*": "deny"
  }
} as const

/** The permissions for a read-only seat over what the agent's own env already sets. */
const readOnlyPermission = (own: string | undefined): string => {
  let base: Record<string, unknown> = {}
  try {
    const parsed: unknown = own === undefined ? {} : JSON.parse(own)
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) base = parsed as Record<string, unknown>
  } catch {
    // opencode itself skips an unreadable OPENCODE_PERMISSION; so does this.
  }
  return JSON.stringify({ ...base, ...READ_ONLY_PERMISSION })
}

// ---------------------------------------------------------------------------
// Reading what it printed

/** The message of one `{"type":"error"}` event: the API's own words, else the error's name. */
const eventMessage = (e: unknown): string => {
  const error = get(e, "error")
  return plainMessage(str(get(get(error, "data"), "message")) ?? "") || str(get(error, "name")) || "opencode reported an error"
}

/** opencode's stderr as its message: no colours, no `Error:` label. */
const stderrMessage = (err: string): string => plainMessage(err).replace(/^Error:\s*/gm, "")

/**
 * How a model API says its usage ran out, through opencode, besides the
 * common wordings: its own Go and free tiers (`GoUsageLimitError`, "Free
 * usage exceeded"), OpenAI-style `insufficient_quota`. Any HTTP 429 still
 * refused after opencode's own retries counts too: a limit to wait out,
 * not a broken turn.
 */
const LIMIT_WORDS = [/UsageLimitError/, /free usage exceeded/i, /insufficient_quota/i, /exceeded your current quota/i]

/** "2 hours 5 minutes" for a count of seconds. */
const spell = (secs: number): string => {
  const n = (v: number, unit: string) => `${v} ${unit}${v === 1 ? "" : "s"}`
  const d = Math.floor(secs / 86400)
  const h = Math.floor((secs % 86400) / 3600)
  const m = Math.ceil((secs % 3600) / 60)
  if (d > 0) return h > 0 ? `${n(d, "day")} ${n(h, "hour")}` : n(d, "day")
  if (h > 0) return m > 0 ? `${n(h, "hour")} ${n(m, "minute")}` : n(h, "hour")
  return m > 0 ? n(m, "minute") : "less than a minute"
}

/** When the API says to come back (`retry-after`: seconds, or an HTTP date). */
const retryAfter = (error: unknown): string | undefined => {
  const after = str(get(get(get(error, "data"), "responseHeaders"), "retry-after"))?.trim()
  if (after === undefined || after === "") return undefined
  const secs = Number(after)
  if (Number.isFinite(secs) && secs >= 0) return `in ${spell(Math.ceil(secs))}`
  return Number.isNaN(Date.parse(after)) ? undefined : `at ${after}`
}

/** A usage limit's reset ("" when unknown), or null when the error is none. */
const limitOf = (error: unknown, message: string): string | null => {
  const data = get(error, "data")
  const said = usageLimit(`${message}\n${str(get(data, "responseBody")) ?? ""}`, LIMIT_WORDS)
  if (said === null && get(data, "statusCode") !== 429) return null
  return retryAfter(error) ?? (said || (resetTime(message) ?? ""))
}

export const parse = (out: string, err = ""): Parsed => {
  let session: string | null = null
  const parts: string[] = []
  const errors: string[] = []
  let quota: string | null = null
  const events = jsonLines(out)
  const usage = Usage.ofOpencodeEvents(events)
  for (const e of events) {
    session ??= str(get(e, "sessionID")) ?? str(get(get(e, "part"), "sessionID")) ?? null
    const part = get(e, "part")
    if (get(e, "type") === "error") {
      const message = eventMessage(e)
      errors.push(message)
      quota ??= limitOf(get(e, "error"), message)
    } else if (get(part, "type") === "text") {
      const t = str(get(part, "text"))
      if (t !== undefined && t !== "") parts.push(t)
    }
  }
  if (errors.length > 0) return { text: errors.join("\n"), session, error: true, quota, usage }
  // Nothing on stdout but a message on stderr: opencode refused before the
  // session started (an unknown session, a bad flag).
  const refused = parts.length === 0 && session === null ? stderrMessage(err) : ""
  if (refused !== "") return { text: refused, session, error: true, quota: null }
  return { text: parts.join("\n"), session, error: false, quota: null, usage }
}

/**
 * The request timeout magi registers its server with (`mcp.magi.timeout`);
 * with none, opencode gives up on a tool call after 60 s (the MCP SDK's
 * default; measured in the compat suite). Twelve minutes gives a
 * ten-minute slice.
 */
export const OPENCODE_MCP_TIMEOUT = Duration.minutes(12)

/** What magi adds to a seat's opencode config: its MCP server, its approval plugin. */
interface Additions {
  readonly mcp?: McpServerSpec
  /** The approval plugin's entry: its `file://` URL and its options. */
  readonly plugin?: readonly [string, { readonly slice: number }]
}

/**
 * `OPENCODE_CONFIG_CONTENT` with magi's server and plugin added: opencode
 * merges it over its config files, so the owner's own servers, plugins and
 * settings stay. One the agent's env or the owner's environment already
 * sets (the agent's first) is kept, magi's entries added to it.
 */
const withAdditions = (own: string | undefined, add: Additions): string => {
  let base: Record<string, unknown> = {}
  try {
    const parsed: unknown = own === undefined ? {} : JSON.parse(own)
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) base = parsed as Record<string, unknown>
  } catch {
    // An unreadable one is what opencode itself would skip.
  }
  const servers = typeof base.mcp === "object" && base.mcp !== null ? (base.mcp as Record<string, unknown>) : {}
  const plugins = Array.isArray(base.plugin) ? base.plugin : []
  return JSON.stringify({
    ...base,
    ...(add.mcp === undefined ? {} : {
      mcp: {
        ...servers,
        [MCP_SERVER_NAME]: {
          type: "local",
          command: [add.mcp.command, ...add.mcp.args],
          environment: add.mcp.env,
          enabled: true,
          timeout: Duration.toMillis(OPENCODE_MCP_TIMEOUT)
        }
      }
    }),
    ...(add.plugin === undefined ? {} : { plugin: [...plugins, add.plugin] })
  })
}

/**
 * Seconds one tool call waits for the owner's approval before it is refused
 * with "make the same call again": `MAX_SLICE` (opencode sets a plugin hook
 * no limit), or `[agents.<id>] wait_slice` when that is shorter, as for
 * magi's MCP tools.
 */
export const approveSliceSecs = (agent: AgentSpec): number => Math.min(Duration.toSeconds(MAX_SLICE), agent.waitSliceSecs ?? Number.POSITIVE_INFINITY)

/**
 * The approval plugin for a writing seat under `[approvals] ask`
 * (approvals/OpencodeHook.ts): its file in magi's home, named by its
 * content, and what the config names it by. It runs `magi approve`, so it
 * needs magi's own path (`MAGI_BIN`, set with it).
 */
const approvalPlugin = (input: PlanInput): { readonly path: string; readonly content: string } | undefined => {
  if (!input.allowWrite || input.approve !== true || input.magi === undefined || input.home === undefined) return undefined
  const content = OpencodeHook.pluginSource(MCP_SERVER_NAME)
  return { path: NodePath.join(input.home, "opencode", OpencodeHook.pluginFileName(content)), content }
}

export const opencode: AgentAdapter = {
  // As for claude: a request per slice polling, none ending the turn.
  wait: "end-turn",
  // Its bash tool kills a command at 120 s (measured: see the compat suite);
  // 100 s leaves room for `magi ask` to start and notify before that.
  waitSlice: sliceBefore(BASH_LIMIT),
  // An owner who changed that limit gets a slice that fits it.
  waitSliceIn: (env) => {
    const ms = Number(env[BASH_LIMIT_ENV])
    return env[BASH_LIMIT_ENV] !== undefined && Number.isInteger(ms) && ms > 0 ? sliceBefore(Duration.millis(ms)) : undefined
  },
  // Where the session is (the data dir, or OPENCODE_DB) and what it runs on
  // (the config: provider, model; the state dir: the last model used).
  mcp: { client: "opencode", timeout: OPENCODE_MCP_TIMEOUT },
  sessionEnv: ["HOME", "XDG_DATA_HOME", "OPENCODE_DB", "XDG_CONFIG_HOME", "OPENCODE_CONFIG", "OPENCODE_CONFIG_DIR", "XDG_STATE_HOME"],
  // `-f FILE`: opencode reads the file and sends an image as a file part
  // of the user message (a data URL in the model request; measured:
  // test/compat/images.compat.test.ts).
  images: "path",
  plan: (agent, input) => {
    const { program, lead, model } = commandOf(agent)
    const plugin = approvalPlugin(input)
    // What opencode would read without magi: the agent's env, else the
    // owner's own (a provider set there must survive magi's additions).
    const own = (name: string) => agent.env[name] ?? input.inherited?.[name]
    return {
      argv: [
        program,
        ...lead,
        "run",
        // Each `-f` right before another flag: it takes several values, so
        // a word after it that is no flag would be read as one more file.
        ...(input.images ?? []).flatMap((i) => ["-f", i.path]),
        "--format",
        "json",
        "--dir",
        input.cwd,
        "--auto",
        ...(input.allowWrite ? [] : ["--agent", "plan"]),
        ...model("-m"),
        ...(input.resume !== null ? ["-s", input.resume] : []),
        ...agent.args
      ],
      // No message argument: piped stdin alone is the message, unquoted and
      // unbounded by argv.
      stdin: input.prompt,
      ...(input.allowWrite && input.mcp === undefined && plugin === undefined
        ? {}
        : {
          env: {
            ...(input.allowWrite ? {} : { OPENCODE_PERMISSION: readOnlyPermission(own("OPENCODE_PERMISSION")) }),
            ...(input.mcp === undefined && plugin === undefined ? {} : {
              OPENCODE_CONFIG_CONTENT: withAdditions(own("OPENCODE_CONFIG_CONTENT"), {
                ...(input.mcp === undefined ? {} : { mcp: input.mcp }),
                ...(plugin === undefined ? {} : { plugin: [pathToFileURL(plugin.path).href, { slice: approveSliceSecs(agent) }] as const })
              })
            })
          }
        }),
      ...(plugin === undefined ? {} : { files: [plugin] })
    }
  },
  parse
}
