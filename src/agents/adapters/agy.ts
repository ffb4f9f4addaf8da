/** agy: `agy --output-format json -p @<prompt file>`, the conversation id read from its reply. */
import { Duration } from "effect"
import { type AgentAdapter, commandOf, type Parsed, wholeJson, str } from "./Adapter.js"

const parse = (out: string): Parsed => {
  const j = wholeJson(out)
  return { text: str(j?.response) ?? "", session: str(j?.conversation_id) ?? null, error: false, quota: null }
}

export const agy: AgentAdapter = {
  // Not proven against the real CLI (no compat suite yet): it keeps polling, as before.
  wait: "poll",
  // Placeholder until proven against the real CLI (issue 7).
  waitSlice: Duration.seconds(100),
  sessionEnv: ["HOME"],
  plan: (agent, input) => {
    const { program, lead, model } = commandOf(agent)
    return {
      argv: [
        program,
        ...lead,
        "--output-format",
        "json",
        "--print-timeout",
        `${Math.max(1, Math.floor(Duration.toSeconds(input.timeout)))}s`,
        "--mode",
        input.allowWrite ? "accept-edits" : "plan",
        ...model("--model"),
        ...(input.resume !== null ? ["--conversation", input.resume] : []),
        ...agent.args,
        "-p",
        `@${input.promptFile}`
      ],
      stdin: ""
    }
  },
  parse
}
