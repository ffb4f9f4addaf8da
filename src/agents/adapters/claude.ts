/** claude (Anthropic's Claude Code): `claude -p`, JSON output, a session id magi mints up front. */
import { Duration } from "effect"
import { type AgentAdapter, commandOf, type Parsed, wholeJson, str } from "./Adapter.js"

const CLAUDE_WRITE_TOOLS = "Edit,Write,MultiEdit,NotebookEdit"

const parse = (out: string): Parsed => {
  const j = wholeJson(out)
  const text = str(j?.result) ?? ""
  const error = j?.is_error === true
  // A usage limit reads "… session limit … resets 3pm"; the reset time is what
  // the owner needs to know, so it is what is kept.
  const limited = error && /session limit/i.test(text)
  const resets = /resets (.*)$/i.exec(text)?.[1]?.trim()
  return { text, session: str(j?.session_id) ?? null, error, quota: limited ? (resets ?? text) : null }
}

export const claude: AgentAdapter = {
  // Placeholder until proven against the real CLI (issue 7).
  waitSlice: Duration.seconds(100),
  sessionEnv: ["HOME", "CLAUDE_CONFIG_DIR", "XDG_CONFIG_HOME"],
  plan: (agent, input) => {
    const { program, lead, model } = commandOf(agent)
    return {
      argv: [
        program,
        ...lead,
        "-p",
        "--output-format",
        "json",
        "--permission-mode",
        "bypassPermissions",
        ...model("--model"),
        ...(input.resume !== null ? ["--resume", input.resume] : input.newSession !== null ? ["--session-id", input.newSession] : []),
        ...(input.allowWrite ? [] : ["--disallowed-tools", CLAUDE_WRITE_TOOLS]),
        ...agent.args
      ],
      stdin: input.prompt
    }
  },
  parse
}
