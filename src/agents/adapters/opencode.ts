/** opencode: `opencode run --format json`, the session id read from the first event that names one. */
import { Duration } from "effect"
import { type AgentAdapter, commandOf, type Parsed, jsonLines, str, get } from "./Adapter.js"

const parse = (out: string): Parsed => {
  let session: string | null = null
  const parts: string[] = []
  for (const e of jsonLines(out)) {
    session ??= str(get(e, "sessionID")) ?? str(get(get(e, "part"), "sessionID")) ?? null
    const part = get(e, "part")
    if (get(part, "type") === "text") {
      const t = str(get(part, "text"))
      if (t !== undefined && t !== "") parts.push(t)
    }
  }
  return { text: parts.join("\n"), session, error: false, quota: null }
}

export const opencode: AgentAdapter = {
  // Placeholder until proven against the real CLI (issue 7).
  waitSlice: Duration.seconds(100),
  sessionEnv: ["HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME"],
  plan: (agent, input) => {
    const { program, lead, model } = commandOf(agent)
    // opencode has no read-only switch; the prompt says so instead.
    return {
      argv: [
        program,
        ...lead,
        "run",
        "--format",
        "json",
        "--dir",
        input.cwd,
        "--auto",
        ...model("-m"),
        ...(input.resume !== null ? ["-s", input.resume] : []),
        ...agent.args,
        input.prompt
      ],
      stdin: ""
    }
  },
  parse
}
