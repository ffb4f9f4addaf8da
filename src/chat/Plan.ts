/**
 * `magi plan`'s pure half: how each agent CLI is started interactively with
 * the briefing as its first message, its own UI handed the terminal.
 *
 * This is the interactive counterpart of each adapter's headless `plan`; it
 * lives here, beside the one command that uses it, until the adapters grow
 * an interactive shape of their own.
 */
import type { AgentSpec } from "../agents/AgentRoster.js"
import { commandOf, expandTemplate } from "../agents/adapters/Adapter.js"

/** The seat name an interactive plan fills into a `command` agent's `{label}`. */
export const PLAN_LABEL = "plan"

/**
 * The argv that opens `agent`'s own interactive UI with `prompt` as the
 * first message. Every CLI takes it as its last argument, except opencode
 * (`--prompt`) and `command` agents, whose template gets `{prompt_file}`.
 */
export const interactiveArgv = (agent: AgentSpec, prompt: string, promptFile: string, cwd: string): ReadonlyArray<string> => {
  const { program, lead, model } = commandOf(agent)
  switch (agent.kind) {
    case "claude":
      return [program!, ...lead, ...model("--model"), ...agent.args, prompt]
    case "codex":
      return [program!, ...lead, ...model("-m"), ...agent.args, prompt]
    case "opencode":
      return [program!, ...lead, ...model("--model"), ...agent.args, "--prompt", prompt]
    case "agy":
      return [program!, ...lead, ...agent.args, prompt]
    case "command":
      return [
        ...agent.command.map((a) => expandTemplate(a, { prompt_file: promptFile, cwd, label: PLAN_LABEL, session: "" })),
        ...agent.args
      ]
  }
}
