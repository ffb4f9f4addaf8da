/**
 * claude (Anthropic's Claude Code): `claude -p`, its JSON event stream
 * (`--output-format stream-json --verbose`: one event a line as the turn
 * happens, which the page shows live, closed by the `result` event the
 * reply, session and usage are read from), a session id
 * magi mints up front (`--session-id` creates it, `--resume` continues it).
 *
 * Sessions live in `$CLAUDE_CONFIG_DIR/projects/<cwd as a folder name>/<id>.jsonl`
 * (`CLAUDE_CONFIG_DIR` defaults to `$HOME/.claude`).
 */
import * as Usage from "../Usage.js"
import { Duration } from "effect"
import * as NodePath from "node:path"
import {
  type AgentAdapter,
  type AttachedImage,
  commandOf,
  get,
  jsonLines,
  MCP_SERVER_NAME,
  type McpServerSpec,
  type Parsed,
  plainMessage,
  sliceBefore,
  str,
  usageLimit,
  wholeJson
} from "./Adapter.js"

const CLAUDE_WRITE_TOOLS = "Edit,Write,MultiEdit,NotebookEdit"

/**
 * A read-only seat: `dontAsk` denies every tool call that is not allowed
 * up front, and claude allows on its own only what cannot change anything
 * (reading files, `ls`, `git status`); a `touch`, a redirect or a
 * `magi ask … && rm` is denied. The edit tools are removed outright, and
 * `magi ask` (by name and by magi's absolute path) is the one command
 * allowed, so the seat can still ask the owner. No bypass, so it also runs
 * as root without IS_SANDBOX.
 */
const readOnly = (magi: string | undefined, mcp: boolean): string[] => [
  "--permission-mode",
  "dontAsk",
  "--allowed-tools",
  [
    "Bash(magi ask:*)",
    ...(magi === undefined || magi === "magi" ? [] : [`Bash(${magi} ask:*)`]),
    // Every tool of magi's MCP server (ask, reply, wait): asking changes nothing.
    ...(mcp ? [`mcp__${MCP_SERVER_NAME}`] : [])
  ].join(","),
  "--disallowed-tools",
  CLAUDE_WRITE_TOOLS
]

/** claude's name for magi's `approve` tool: `mcp__<server>__<tool>`. */
export const APPROVE_TOOL = `mcp__${MCP_SERVER_NAME}__approve`

/**
 * A writing seat whose tool calls are approved by the owner (`[approvals]
 * ask`): file edits in its worktree are accepted (`acceptEdits`: they are
 * committed on the run's branch, where the owner reviews them), reading is
 * claude's own to allow, and every other call that needs permission (a
 * shell command, a fetch, another MCP server's tool) is put to magi's
 * `approve` tool, which decides by the rules or asks the owner. magi's own
 * tools and `magi ask` never need approving.
 */
const approvedByOwner = (magi: string | undefined): string[] => [
  "--permission-mode",
  "acceptEdits",
  "--permission-prompt-tool",
  APPROVE_TOOL,
  "--allowed-tools",
  [`mcp__${MCP_SERVER_NAME}`, "Bash(magi ask:*)", ...(magi === undefined || magi === "magi" ? [] : [`Bash(${magi} ask:*)`])].join(",")
]

/** How claude words its usage limits (Pro/Max plans), besides the common "usage limit". */
const LIMIT_WORDS = [/5-hour limit/i, /weekly limit/i, /opus limit/i, /session limit/i, /\blimit reached\b/i]

/**
 * claude refuses `--permission-mode bypassPermissions` (which is
 * `--dangerously-skip-permissions`) as root unless told it runs in a sandbox.
 */
const ROOT_REFUSAL = /cannot be used with root\/sudo privileges/i

export const ROOT_ADVICE = "claude refuses --permission-mode bypassPermissions when run as root. Either run magi as a non-root user, " +
  'or, if this machine is a sandbox or container you are willing to let the agent act in unchecked, set IS_SANDBOX = "1" ' +
  'in the agent\'s env in magi.toml ([agents.<id>] env = { IS_SANDBOX = "1" }); magi never sets it for you'

/**
 * The tool-call timeout magi registers its server with. claude's own, with
 * nothing set, is MCP_TOOL_TIMEOUT's 100,000,000 ms (about 28 hours), but a
 * stdio call with no progress for 30 minutes is given up
 * (CLAUDE_CODE_MCP_TOOL_IDLE_TIMEOUT's default; both read from the
 * pinned 2.1.328's code, too long to measure in a test). Twelve minutes sits well under
 * both and gives a ten-minute slice.
 */
export const CLAUDE_MCP_TIMEOUT = Duration.minutes(12)

/** `--mcp-config`'s JSON: magi's server, started as the seat's `magi ask` would run. */
const mcpConfig = (server: McpServerSpec): string =>
  JSON.stringify({
    mcpServers: {
      [MCP_SERVER_NAME]: {
        type: "stdio",
        command: server.command,
        args: server.args,
        env: server.env,
        timeout: Duration.toMillis(CLAUDE_MCP_TIMEOUT),
        // Offered to the model outright: claude otherwise defers MCP tools
        // behind its ToolSearch, and a model that calls mcp__magi__ask
        // without searching first is refused (InputValidationError).
        alwaysLoad: true
      }
    }
  })

/**
 * The stream's closing `result` event (the one `--output-format json` would
 * print alone, which is also read); without it (a turn cut short) the
 * session id of any event, so a resume still finds the session.
 */
const resultOf = (out: string): Record<string, unknown> | undefined => {
  const events = jsonLines(out)
  const result = events.findLast((e) => get(e, "type") === "result")
  if (result !== undefined) return result as Record<string, unknown>
  const last = wholeJson(out)
  if (last !== undefined && ("result" in last || "is_error" in last)) return last
  const session = events.map((e) => str(get(e, "session_id"))).find((s) => s !== undefined)
  return session === undefined ? last : { session_id: session }
}

/**
 * A turn with images: claude reads its input as stream-json, one user
 * message whose content is the prompt and each image as a base64 image
 * block, which claude sends to the model as is (measured:
 * test/compat/images.compat.test.ts). Without images the prompt stays
 * plain text on stdin.
 */
const userMessage = (prompt: string, images: ReadonlyArray<AttachedImage>): string =>
  JSON.stringify({
    type: "user",
    message: {
      role: "user",
      content: [
        { type: "text", text: prompt },
        ...images.flatMap((i) =>
          i.inline === undefined ? [] : [{ type: "image", source: { type: "base64", media_type: i.inline.mime, data: i.inline.base64 } }]
        )
      ]
    }
  }) + "\n"

const withContext = (u: Usage.TurnUsage | undefined, context: Pick<Usage.TurnUsage, "context_tokens" | "context_window">) =>
  u === undefined ? undefined : { ...u, ...context }

const parse = (out: string, err: string): Parsed => {
  const j = resultOf(out)
  const text = str(j?.result) ?? ""
  const error = j?.is_error === true || (j !== undefined && str(j.subtype)?.startsWith("error") === true)
  const quota = error ? usageLimit(text, LIMIT_WORDS) : null
  const problem = ROOT_REFUSAL.test(err) || ROOT_REFUSAL.test(out) ? ROOT_ADVICE : undefined
  return {
    text: error ? plainMessage(text) : text,
    session: str(j?.session_id) ?? null,
    error,
    quota,
    usage: withContext(Usage.ofClaudeResult(j), Usage.claudeContext(jsonLines(out), j)),
    ...(problem === undefined ? {} : { problem })
  }
}

export const claude: AgentAdapter = {
  // Polling costs a model request per slice (36 an hour in the shell, 6
  // through magi mcp), each re-reading the whole conversation; ending the
  // turn costs none while the owner is away, and the waiter resumes the
  // session within seconds of the answer (docs/agents/README.md).
  wait: "end-turn",
  // claude's Bash tool stops waiting on a command at 120 s (its default
  // BASH_DEFAULT_TIMEOUT_MS) and moves it to the background, where nobody
  // reads the answer; 100 s leaves room for magi ask's start and the notify.
  waitSlice: sliceBefore(Duration.seconds(120)),
  // An owner who changed that limit gets a slice that fits it.
  waitSliceIn: (env) => {
    const ms = Number(env.BASH_DEFAULT_TIMEOUT_MS)
    return Number.isFinite(ms) && ms > 0 ? sliceBefore(Duration.millis(ms)) : undefined
  },
  sessionEnv: ["HOME", "CLAUDE_CONFIG_DIR"],
  mcp: { client: "claude", timeout: CLAUDE_MCP_TIMEOUT },
  sessionFiles: (session, env) => ({
    root: NodePath.join(env.CLAUDE_CONFIG_DIR ?? NodePath.join(env.HOME ?? "", ".claude"), "projects"),
    name: `${session}.jsonl`
  }),
  images: "bytes",
  plan: (agent, input) => {
    const { program, lead, model } = commandOf(agent)
    const images = (input.images ?? []).filter((i) => i.inline !== undefined)
    return {
      argv: [
        program,
        ...lead,
        "-p",
        "--output-format",
        "stream-json",
        "--verbose",
        ...(images.length === 0 ? [] : ["--input-format", "stream-json"]),
        ...(input.allowWrite
          ? input.approve === true && input.mcp !== undefined
            ? approvedByOwner(input.magi)
            : ["--permission-mode", "bypassPermissions"]
          : readOnly(input.magi, input.mcp !== undefined)),
        ...(input.mcp === undefined ? [] : ["--mcp-config", mcpConfig(input.mcp)]),
        ...model("--model"),
        ...(input.resume !== null ? ["--resume", input.resume] : input.newSession !== null ? ["--session-id", input.newSession] : []),
        ...agent.args
      ],
      stdin: images.length === 0 ? input.prompt : userMessage(input.prompt, images)
    }
  },
  parse
}
