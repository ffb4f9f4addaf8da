/**
 * codex (OpenAI's Codex CLI): `codex exec --json`, the prompt on stdin, the
 * session id read from `thread.started`, a later turn `exec … resume <id>`.
 *
 * Proven against the real CLI (test/compat/codex.compat.test.ts). What it
 * does that shapes this adapter:
 *
 * - Its shell tool runs every command as `bash -lc`: the login profile
 *   resets PATH, so the prompt (and `magi ask`'s own hints) name magi by its
 *   absolute path, which runs on magi's own node (`MAGI_NODEJS`).
 * - Its sandbox (`workspace-write`) lets commands write only the worktree
 *   and the temp dirs, and reach no network; `read-only` writes nothing. A
 *   `magi ask` must write its question under `<MAGI_HOME>/questions`, so that
 *   one folder is made writable in both modes, and nothing more of the home
 *   (it holds the other runs' worktrees and records). The worktree's `.git`
 *   stays read-only to it, so what it leaves uncommitted is committed for it
 *   after the turn (`runs/TurnCommit`).
 */
import { Duration } from "effect"
import * as NodePath from "node:path"
import { sliceUnder } from "../Slices.js"
import type { AgentSpec } from "../AgentRoster.js"
import * as Usage from "../Usage.js"
import { type AgentAdapter, commandOf, get, jsonLines, MCP_SERVER_NAME, type McpServerSpec, type Parsed, type PlanInput, str, usageLimit } from "./Adapter.js"

/**
 * How long codex's exec tool (`exec_command`) waits on a command before it
 * hands back "Process running with session ID …" and leaves the model to poll
 * (`yield_time_ms`, 10 s unless the model asks otherwise; measured 10.0 s).
 */
const EXEC_YIELD = Duration.seconds(10)

/**
 * What a `magi ask` spends before its slice starts: `bash -l` reading the
 * profile, node starting, the question filed. About a second measured (a 7 s
 * slice came back after 7.9–8.3 s); three leave room for a busy machine.
 */
const ASK_START = Duration.seconds(3)

/** codex's wordings of a usage limit, beyond the common ones. */
const LIMIT_WORDS: ReadonlyArray<RegExp> = [/you.ve hit your usage limit/i, /usage_limit_reached/i]

/**
 * The profile a read-only seat runs under: codex's own `:read-only`, plus the
 * questions folder writable, so the seat can ask and change nothing else.
 * (A `--sandbox read-only` cannot be widened: its writable roots are none.)
 */
const READ_ONLY_PROFILE = "magi-read-only"

/** A TOML string (basic strings take JSON's escapes). */
const toml = (s: string) => JSON.stringify(s)

/**
 * How long codex lets magi's `PermissionRequest` hook run (its own default
 * is 600 s). Twelve minutes gives the hook a ten-minute slice of waiting for
 * the owner, as `magi mcp` has: codex's turn is held, costing nothing, while
 * it waits.
 */
export const CODEX_HOOK_TIMEOUT = Duration.minutes(12)

/** A word for a POSIX shell: codex runs a hook's command through one. */
const shellWord = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`

/**
 * A writing seat whose calls that need permission go to the owner
 * (`[approvals] ask`). `codex exec` pins approval_policy to "never" (a call
 * that needs approval is refused, the hook never runs) unless
 * `--approve-for-me`, which runs the workspace-write sandbox with
 * approval_policy "on-request" and codex's automatic reviewer (a model)
 * deciding. A `PermissionRequest` hook runs before that reviewer, and a hook
 * that decides is final: magi's hook (`magi approvals hook codex`) always
 * decides, so the reviewer is never asked about a shell command or another
 * MCP server's tool (magi's own are approved up front). Commands
 * run in the sandbox unasked, as with "never"; what asks is a command that
 * wants to leave it (codex's `require_escalated`, or network access), which
 * "never" refused outright.
 *
 * The hook is given with `-c`, for this call only (never in the owner's
 * ~/.codex), and codex runs only hooks it trusts, trust being recorded by
 * its interactive `/hooks` review: `--dangerously-bypass-hook-trust` runs it
 * unreviewed (and any other hook the owner enabled but has not reviewed).
 */
const approvedByOwner = (magi: string, questionsDir: string, sliceSecs: number): ReadonlyArray<string> => {
  const command = [magi, "approvals", "hook", "codex", "--slice", String(sliceSecs)].map(shellWord).join(" ")
  return [
    "--approve-for-me",
    "--add-dir",
    questionsDir,
    "--dangerously-bypass-hook-trust",
    "-c",
    `hooks.PermissionRequest=[{hooks=[{type="command",command=${toml(command)},timeout=${Duration.toSeconds(CODEX_HOOK_TIMEOUT)}}]}]`
  ]
}

/** Seconds the hook waits for the owner: a slice under its timeout, or `[agents.<id>] wait_slice` when shorter. */
const hookSliceSecs = (agent: AgentSpec): number =>
  Math.min(Duration.toSeconds(sliceUnder(CODEX_HOOK_TIMEOUT)), agent.waitSliceSecs ?? Number.POSITIVE_INFINITY)

const sandbox = (agent: AgentSpec, input: PlanInput): ReadonlyArray<string> =>
  input.allowWrite
    ? input.approve === true && input.magi !== undefined
      ? approvedByOwner(input.magi, input.questionsDir, hookSliceSecs(agent))
      : ["--sandbox", "workspace-write", "--add-dir", input.questionsDir, "-c", 'approval_policy="never"']
    : [
      "-c",
      `default_permissions=${toml(READ_ONLY_PROFILE)}`,
      "-c",
      `permissions.${READ_ONLY_PROFILE}.extends=${toml(":read-only")}`,
      "-c",
      `permissions.${READ_ONLY_PROFILE}.filesystem={${toml(input.questionsDir)}=${toml("write")}}`,
      "-c",
      'approval_policy="never"'
    ]

/**
 * How an image's file is named to codex's `-i`, which splits its values at
 * commas (measured: a path with one is dropped, silently): the absolute
 * path, or, when that holds a comma (a home folder named so), the path from
 * the worktree codex runs in, which leaves the home's own name out. When
 * even that holds one, nothing: the prompt still names the file.
 */
export const imageArg = (cwd: string, path: string): ReadonlyArray<string> => {
  if (!path.includes(",")) return ["-i", path]
  const relative = NodePath.relative(cwd, path)
  return relative.includes(",") ? [] : ["-i", relative]
}

/** When a codex usage limit lifts: "try again at 3:28 PM", "… in 2 hours", "Try again Aug 18." */
const codexReset = (message: string): string | undefined => /\btry again\s+(?!later\b)([^\n]+?)\.?\s*$/im.exec(message)?.[1]?.trim()

const parse = (out: string): Parsed => {
  let session: string | null = null
  let text = ""
  // The turn's failure, as codex words it; a turn that completes after a
  // transient error (a reconnect) has none.
  let failure: string | undefined
  const events = jsonLines(out)
  const usage = Usage.ofCodexEvents(events)
  for (const e of events) {
    const type = get(e, "type")
    if (type === "thread.started") session = str(get(e, "thread_id")) ?? session
    else if (type === "item.completed") {
      const item = get(e, "item")
      const kind = get(item, "type") ?? get(item, "item_type")
      if (kind === "agent_message" || kind === "assistant_message") text = str(get(item, "text")) ?? text
    } else if (type === "error") failure = str(get(e, "message")) ?? failure
    else if (type === "turn.failed") failure = str(get(get(e, "error"), "message")) ?? failure ?? "the turn failed"
    else if (type === "turn.completed") failure = undefined
  }
  if (failure === undefined) return { text, session, error: false, quota: null, usage }
  const limit = usageLimit(failure, LIMIT_WORDS)
  return {
    // The owner reads codex's message, not the JSON event it came in.
    text: failure,
    session,
    error: true,
    usage,
    quota: limit === null ? null : limit === "" ? (codexReset(failure) ?? "") : limit
  }
}

/**
 * The tool-call timeout magi registers its server with
 * (`mcp_servers.magi.tool_timeout_sec`); codex's own default is 300 s
 * (measured: test/compat/mcp-timeouts.compat.test.ts). Twelve minutes gives
 * a ten-minute slice: one model request per ten minutes of waiting.
 */
export const CODEX_MCP_TIMEOUT = Duration.minutes(12)

/** How long codex waits for `magi mcp` to start: generous, a node start on a busy machine. */
const CODEX_MCP_STARTUP_SECS = 60

/** `-c` overrides that register magi's MCP server for one codex call. */
const mcpOverrides = (server: McpServerSpec): ReadonlyArray<string> => {
  const key = `mcp_servers.${MCP_SERVER_NAME}`
  const env = Object.entries(server.env)
    .map(([k, v]) => `${k}=${toml(v as string)}`)
    .join(",")
  return [
    ["command", toml(server.command)],
    ["args", `[${server.args.map(toml).join(",")}]`],
    ["env", `{${env}}`],
    ["tool_timeout_sec", String(Duration.toSeconds(CODEX_MCP_TIMEOUT))],
    // codex starts its MCP servers beside the first model request: without
    // `required` the first turn could go out before magi's tools were
    // offered (seen twice in the compatibility suite). Required, codex waits for the
    // server (up to `startup_timeout_sec`: a cold `magi mcp` on a loaded
    // machine takes seconds) and says so plainly if it cannot start.
    ["required", "true"],
    ["startup_timeout_sec", String(CODEX_MCP_STARTUP_SECS)],
    // codex asks before every MCP tool call by default, and with
    // approval_policy="never" that is a refusal ("MCP tool call requires
    // approval, but approval policy is never"): asking the owner is
    // approved up front (one of auto, prompt, writes, approve).
    ["default_tools_approval_mode", toml("approve")]
  ].flatMap(([field, value]) => ["-c", `${key}.${field}=${value}`])
}

export const codex: AgentAdapter = {
  // Its shell hands every command back within 10 s: polling there is a
  // model request every ~8 s (some 450 an hour), each re-reading the whole
  // conversation. Ending the turn costs none while the owner is away, and
  // the waiter resumes the session within seconds of the answer.
  wait: "end-turn",
  // Each `magi ask` hands back within codex's exec yield, so the tool's
  // first answer always holds the outcome or the `--wait` hint, whatever
  // the model does about polling: an empty poll waits only 5 s by default
  // (measured), so a longer slice saves no model requests.
  waitSlice: Duration.subtract(EXEC_YIELD, ASK_START),
  // codex keeps sessions (rollouts and its thread database) in CODEX_HOME,
  // else ~/.codex; CODEX_SQLITE_HOME moves the database.
  sessionEnv: ["HOME", "CODEX_HOME", "CODEX_SQLITE_HOME"],
  // `bash -lc`: a login profile that resets PATH loses plain `magi`.
  shellLosesPath: true,
  mcp: { client: "codex", timeout: CODEX_MCP_TIMEOUT },
  // `-i FILE`: codex reads the file and sends it as an `input_image` of the
  // turn's user message, a new session's or a resumed one's (measured:
  // test/compat/images.compat.test.ts).
  images: "path",
  plan: (agent, input) => {
    const { program, lead, model } = commandOf(agent)
    return {
      argv: [
        program,
        ...lead,
        "exec",
        "--json",
        "--skip-git-repo-check",
        // Each `-i` right before another flag: it takes several values, so
        // a word after it that is no flag would be read as one more image.
        ...(input.images ?? []).flatMap((i) => imageArg(input.cwd, i.path)),
        "-C",
        input.cwd,
        ...sandbox(agent, input),
        ...(input.mcp === undefined ? [] : mcpOverrides(input.mcp)),
        ...model("-m"),
        ...agent.args,
        // `resume <id>` must be the last words before the prompt: codex
        // parses it as a subcommand of `exec` (whose options above still
        // apply to the resumed session).
        ...(input.resume !== null ? ["resume", input.resume] : []),
        "-"
      ],
      stdin: input.prompt
    }
  },
  parse
}
