/** command: any argv, with `{prompt_file}`, `{cwd}`, `{label}` and `{session}` filled in; the reply is stdout. */
import { type AgentAdapter, type Parsed, expandTemplate } from "./Adapter.js"

const parse = (out: string): Parsed => ({ text: out.trim(), session: null, error: false, quota: null })

export const command: AgentAdapter = {
  plan: (agent, input) => {
    const values = { prompt_file: input.promptFile, cwd: input.cwd, label: input.label, session: input.resume ?? "" }
    return { argv: [...agent.command, ...agent.args].map((a) => expandTemplate(a, values)), stdin: "" }
  },
  parse
}
