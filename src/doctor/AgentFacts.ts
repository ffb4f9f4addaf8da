/**
 * What `magi doctor` needs to know about each agent CLI, one small table the
 * adapter owners extend as they learn the real programs: how to ask its
 * version, how to make a dry call of magi's own argv that needs no network,
 * where it keeps its sessions, what keeps it off the network while doing so,
 * and what it refuses to do as root.
 */
import * as NodePath from "node:path"
import type { AgentKind, AgentSpec } from "../agents/AgentRoster.js"

export interface Env {
  readonly [name: string]: string | undefined
}

export interface AgentFacts {
  /** Arguments that print the version and touch no network. */
  readonly versionArgs: ReadonlyArray<string>
  /**
   * Turn the argv magi would run (without the prompt) into a dry call that
   * parses every flag and exits without starting a session: by default,
   * `--help` appended.
   */
  readonly dryCall: (argv: ReadonlyArray<string>) => ReadonlyArray<string>
  /** Where this CLI keeps its sessions for `env` (what a resume needs to find). */
  readonly sessionsDir: (env: Env) => string | undefined
  /** Environment that keeps update checks and telemetry off during the doctor's calls. */
  readonly quietEnv: Readonly<Record<string, string>>
  /** A refusal this CLI makes when run as `uid`, with magi's argv, and what to do; none if it runs. */
  readonly rootProblem: (agent: AgentSpec, argv: ReadonlyArray<string>, env: Env, uid: number) => string | undefined
  /** Which of its tool approvals magi can route to the owner (`[approvals] ask`), in plain words. */
  readonly approvals: string
}

/** What magi says of a CLI whose pinned version offers it no way to route tool approvals. */
const NO_APPROVALS = (how: string) => `magi routes none of its tool approvals to the owner: ${how}; [approvals] ask does not change it (docs/approvals.md)`

const home = (env: Env) => env.HOME ?? ""
const withHelp = (argv: ReadonlyArray<string>) => [...argv, "--help"]
const noProblem = () => undefined

export const FACTS: Record<Exclude<AgentKind, "command">, AgentFacts> = {
  claude: {
    versionArgs: ["--version"],
    dryCall: withHelp,
    sessionsDir: (env) => NodePath.join(env.CLAUDE_CONFIG_DIR ?? NodePath.join(home(env), ".claude"), "projects"),
    quietEnv: { DISABLE_AUTOUPDATER: "1", DISABLE_TELEMETRY: "1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1" },
    // claude refuses `--permission-mode bypassPermissions` as root unless it
    // is told it runs in a sandbox; magi never sets that on its own.
    rootProblem: (agent, argv, env, uid) =>
      uid === 0 && argv.includes("bypassPermissions") && (agent.env.IS_SANDBOX ?? env.IS_SANDBOX) !== "1"
        ? `claude refuses --permission-mode bypassPermissions as root unless IS_SANDBOX=1: if this machine is a sandbox (a container, a VM you throw away), set env = { IS_SANDBOX = "1" } under [agents.${agent.id}]; otherwise run magi as a user other than root`
        : undefined,
    approvals:
      "with [approvals] ask = true and its MCP on, every tool call of a writing seat that needs permission (shell commands, fetches, other MCP tools; file edits in its worktree are accepted) goes to the owner through magi mcp's approve tool"
  },
  codex: {
    versionArgs: ["--version"],
    dryCall: withHelp,
    sessionsDir: (env) => NodePath.join(env.CODEX_HOME ?? NodePath.join(home(env), ".codex"), "sessions"),
    quietEnv: {},
    rootProblem: noProblem,
    approvals:
      "with [approvals] ask = true, a writing seat runs codex exec with --approve-for-me and magi's PermissionRequest hook (magi approvals hook codex, run under --dangerously-bypass-hook-trust): every call codex would ask about goes to the owner (a command that asks to leave the workspace-write sandbox, another MCP server's tool; commands inside the sandbox run unasked). By codex's source, a call it puts to no hook (request_permissions) would still go to its automatic reviewer, a model (docs/approvals.md)"
  },
  opencode: {
    versionArgs: ["--version"],
    dryCall: withHelp,
    sessionsDir: (env) => NodePath.join(env.XDG_DATA_HOME ?? NodePath.join(home(env), ".local", "share"), "opencode"),
    quietEnv: { OPENCODE_DISABLE_AUTOUPDATE: "1" },
    rootProblem: noProblem,
    approvals:
      "with [approvals] ask = true, every tool call of a writing seat that needs permission (shell commands, fetches, edits outside its worktree, other MCP tools; reads and edits in its worktree run) goes to the owner through the plugin magi gives it, which runs magi approvals hook opencode (a seat run with --pure or OPENCODE_PURE loads no plugin and is not checked)"
  },
  agy: {
    versionArgs: ["--version"],
    dryCall: withHelp,
    sessionsDir: () => undefined,
    quietEnv: {},
    rootProblem: noProblem,
    approvals: NO_APPROVALS("agy offers magi no permission hook")
  }
}

/** The facts for `kind`; a `command` agent is the owner's own program, and has none. */
export const factsFor = (kind: AgentKind): AgentFacts | undefined => (kind === "command" ? undefined : FACTS[kind])
