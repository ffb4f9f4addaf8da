/**
 * command: any argv, with `{prompt_file}`, `{cwd}`, `{label}` and `{session}`
 * filled in; the reply is stdout. The program reports no session, so
 * `{session}` is the planning chat's id in a chat's turn (the program's key
 * for its own state), else empty.
 */
import { Duration } from "effect"
import { type AgentAdapter, type Parsed, expandTemplate, usageLimit } from "./Adapter.js"

/**
 * A program that says "usage limit" (or "quota exceeded") on stderr reports
 * a usage limit, as the CLIs do in their own words: magi then rests it, or
 * hands its competition seat to the next implementer. Stdout is its reply
 * and is never read for one.
 */
const parse = (out: string, err: string): Parsed => ({ text: out.trim(), session: null, error: false, quota: usageLimit(err) })

export const command: AgentAdapter = {
  // A command agent is a program of the owner's: it keeps `magi ask`'s
  // long-standing contract, waiting until an answer or the deadline.
  wait: "poll",
  // Placeholder until proven against the real CLI (issue 7).
  waitSlice: Duration.seconds(240),
  sessionEnv: [],
  plan: (agent, input) => {
    const values = { prompt_file: input.promptFile, cwd: input.cwd, label: input.label, session: input.resume ?? input.chat ?? "" }
    return { argv: [...agent.command, ...agent.args].map((a) => expandTemplate(a, values)), stdin: "" }
  },
  parse
}
