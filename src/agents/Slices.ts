/**
 * How long one `ask`/`reply`/`wait` tool call may wait before it hands back
 * `pending`, per MCP client. A client gives up on a tool call after its own
 * timeout and tells its model the call failed, so the call must return,
 * with the exact `wait` to make next, before that.
 *
 * Measured against the pinned CLIs (test/compat/mcp-timeouts.compat.test.ts):
 * see MCP_TOOL_TIMEOUTS. By hand (`magi mcp --client X`) that gives claude
 * 10 min (MAX_SLICE), codex 250 s and opencode 50 s; `magi run` registers
 * the server with a 12-minute timeout on every CLI and a 10-minute slice.
 */
import { Duration } from "effect"

export type McpClient = "claude" | "codex" | "opencode"

export const MCP_CLIENTS: ReadonlyArray<McpClient> = ["claude", "codex", "opencode"]

/**
 * Each client's MCP tool-call timeout with nothing configured, for the
 * pinned versions:
 * - claude 2.1.328: `MCP_TOOL_TIMEOUT`, 100,000,000 ms by default, but a
 *   stdio call with no progress for 30 minutes is given up
 *   (`CLAUDE_CODE_MCP_TOOL_IDLE_TIMEOUT`); read from the binary. The idle
 *   limit is the one that bites.
 * - codex 0.169.0: `tool_timeout_sec`, measured 300 s ("timed out awaiting
 *   tools/call after 300s"; test/compat/mcp-timeouts.compat.test.ts).
 * - opencode 1.18.33: the MCP SDK's request timeout, measured 60 s (the
 *   model read "MCP error -32001: Request timed out" 62 s after its call).
 */
export const MCP_TOOL_TIMEOUTS: Readonly<Record<McpClient, Duration.Duration>> = {
  claude: Duration.minutes(30),
  codex: Duration.seconds(300),
  opencode: Duration.seconds(60)
}

/**
 * The slice for a client: ends safely before its timeout, leaving 10 s (or
 * a sixth of a shorter timeout) for the call to start, file and notify,
 * never under 1 s, never over `MAX_SLICE`.
 */
export const sliceFor = (client: McpClient | undefined): Duration.Duration => client === undefined ? DEFAULT_SLICE : sliceUnder(MCP_TOOL_TIMEOUTS[client])

/**
 * Never more than this, however long a client waits: a stuck call is found
 * out within minutes, and a wait costs the model one short request per slice.
 */
export const MAX_SLICE = Duration.minutes(10)

export const sliceUnder = (timeout: Duration.Duration): Duration.Duration => {
  const secs = Duration.toSeconds(timeout)
  const slice = Math.max(1, Math.floor(Math.min(secs - 10, (secs * 5) / 6)))
  return Duration.min(Duration.seconds(slice), MAX_SLICE)
}

/**
 * An unknown client: the official MCP SDKs give up on a request after 60 s
 * by default, so 50 s fits them.
 */
export const DEFAULT_SLICE = sliceUnder(Duration.seconds(60))
