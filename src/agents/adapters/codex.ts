/** codex (OpenAI's Codex CLI): `codex exec --json`, the session id read from `thread.started`. */
import { Duration } from "effect"
import { type AgentAdapter, commandOf, type Parsed, jsonLines, str, get } from "./Adapter.js"

const parse = (out: string): Parsed => {
  let session: string | null = null
  let text = ""
  for (const e of jsonLines(out)) {
    if (get(e, "type") === "thread.started") session = str(get(e, "thread_id")) ?? session
    if (get(e, "type") === "item.completed") {
      const item = get(e, "item")
      const kind = get(item, "type") ?? get(item, "item_type")
      if (kind === "agent_message" || kind === "assistant_message") text = str(get(item, "text")) ?? text
    }
  }
  return { text, session, error: false, quota: null }
}

export const codex: AgentAdapter = {
  // Placeholder until proven against the real CLI (issue 7).
  waitSlice: Duration.seconds(100),
  sessionEnv: ["HOME", "CODEX_HOME"],
  plan: (agent, input) => {
    const { program, lead, model } = commandOf(agent)
    return {
      argv: [
        program,
        ...lead,
        "exec",
        "--json",
        "--skip-git-repo-check",
        "-C",
        input.cwd,
        "--sandbox",
        input.allowWrite ? "workspace-write" : "read-only",
        "-c",
        'approval_policy="never"',
        ...model("-m"),
        ...agent.args,
        // `resume <id>` must be the last words before the prompt: codex
        // parses it as a subcommand of `exec`.
        ...(input.resume !== null ? ["resume", input.resume] : []),
        "-"
      ],
      stdin: input.prompt
    }
  },
  parse
}
