/**
 * What every agent CLI adapter provides: how to call it headless (a new
 * session, a resumed one, read-only or not) and how to read what it printed.
 * Adapters are pure; `Agents.call` is the one place a process starts.
 */
import { Duration } from "effect"
import type { AgentSpec } from "../AgentRoster.js"

export interface PlanInput {
  readonly cwd: string
  readonly promptFile: string
  readonly prompt: string
  /** The seat's name, for `{label}`. */
  readonly label: string
  /** Resume this session; null starts a new one. */
  readonly resume: string | null
  /** The id a new claude session is created under. */
  readonly newSession: string | null
  readonly allowWrite: boolean
  readonly timeout: Duration.Duration
}

/** What to spawn: argv, and what to feed on stdin ("" for nothing). */
export interface Plan {
  readonly argv: ReadonlyArray<string>
  readonly stdin: string
  /** Environment this call needs on top of the agent's (opencode's read-only permissions). */
  readonly env?: Readonly<Record<string, string>>
}

/** One CLI's reading of its own output, before magi's common rules apply. */
export const jsonLines = (out: string): unknown[] =>
  out.split("\n").flatMap((line) => {
    const t = line.trim()
    if (!t.startsWith("{")) return []
    try {
      return [JSON.parse(t)]
    } catch {
      return []
    }
  })

export const wholeJson = (out: string): Record<string, unknown> | undefined => {
  try {
    const v = JSON.parse(out.trim())
    if (typeof v === "object" && v !== null && !Array.isArray(v)) return v as Record<string, unknown>
  } catch {
    // Some CLIs print a banner first; fall back to the last JSON line.
  }
  const last = jsonLines(out).at(-1)
  return typeof last === "object" && last !== null ? (last as Record<string, unknown>) : undefined
}

export const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined)
export const get = (v: unknown, key: string): unknown => (typeof v === "object" && v !== null ? (v as Record<string, unknown>)[key] : undefined)

export interface Parsed {
  readonly text: string
  readonly session: string | null
  readonly error: boolean
  readonly quota: string | null
}

export interface AgentAdapter {
  /**
   * How long one `magi ask` may block under this CLI's shell tool: it must
   * hand back `pending` (with the `--wait` hint) before the tool gives up on
   * the command. Given to the agent as `MAGI_WAIT_SLICE`.
   */
  readonly waitSlice: Duration.Duration
  /**
   * Environment variables that decide where this CLI keeps its sessions
   * (`HOME`, `CLAUDE_CONFIG_DIR`, `CODEX_HOME`, `XDG_*`): recorded when a
   * seat starts, so a resume finds the session whoever resumes it.
   */
  readonly sessionEnv: ReadonlyArray<string>
  /** The headless argv for one call, exactly as this CLI wants it. */
  readonly plan: (agent: AgentSpec, input: PlanInput) => Plan
  /** The reply text, the session id and whether the CLI reported an error or a usage limit. */
  readonly parse: (stdout: string) => Parsed
}

/** `[program, ...leading args]` of an agent's command, and its model flag when one is set. */
export const commandOf = (agent: AgentSpec) => {
  const [program, ...lead] = agent.command
  return { program: program, lead, model: (flag: string) => (agent.model === null ? [] : [flag, agent.model]) }
}

/** Fill `{prompt_file}`, `{cwd}`, `{label}`, `{session}` in one pass; others are kept. */
export const expandTemplate = (arg: string, values: Record<"prompt_file" | "cwd" | "label" | "session", string>): string =>
  arg.replace(/\{(prompt_file|cwd|label|session)\}/g, (_, k: keyof typeof values) => values[k])

