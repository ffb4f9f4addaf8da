/**
 * A repository whose roster is the three pinned real CLIs (claude, codex,
 * opencode), each against its own local stand-in acting as a model would
 * (standins/acting.ts): the world for a competition, a review or a fix on
 * real agents. Every folder is made under the agents' cache (codex's sandbox
 * lets commands write /tmp, which would hide what a test proves) and
 * removed after the test, with the stand-ins; a clean-up fails the test if
 * any CLI reached past its stand-in.
 */
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { type Acting, actAnthropic, actChat, actResponses } from "./standins/acting.js"
import { type AnthropicStandIn, claudeEnv, startAnthropic } from "./standins/anthropic.js"
import { type OpenAiChatStandIn, startOpenAiChat } from "./standins/openai-chat.js"
import { codexConfig, type StandIn, startResponsesStandIn } from "./standins/openai-responses.js"
import { MODEL, opencodeEnv } from "./opencodeWorld.js"
import { afterTest, need, type Ran, runMagi, scratchDir } from "./processes.js"

export const CLIS = ["claude", "codex", "opencode"] as const
export type Cli = (typeof CLIS)[number]

export interface MixedWorld {
  readonly dir: string
  readonly repo: string
  readonly home: string
  readonly claude: AnthropicStandIn
  readonly codex: StandIn
  readonly opencode: OpenAiChatStandIn
  /** The environment every magi process of the test runs with. */
  readonly env: Record<string, string>
  readonly git: (...args: string[]) => string
  /** `magi ARGS…` in the repository, to its end within `deadline` ms. */
  readonly magi: (deadline: number, ...args: string[]) => Promise<Ran>
  /** The one run's record. */
  readonly record: () => any
  readonly runDir: () => string
}

export interface MixedOptions {
  /** How each CLI's stand-in acts; none given: as acting.ts's defaults. */
  readonly acting?: Partial<Record<Cli, Acting>>
  /** Appended to magi.toml (the `[graph]`, `[roles]` tables). */
  readonly toml: string
  /** Files to commit on the base before the run. */
  readonly files?: Record<string, string>
}

const tomlEnv = (env: Record<string, string>) => `{ ${Object.entries(env).map(([k, v]) => `${k} = ${JSON.stringify(v)}`).join(", ")} }`

export const mixedWorld = async (o: MixedOptions): Promise<MixedWorld> => {
  const bins = { claude: need("claude"), codex: need("codex"), opencode: need("opencode") }
  const dir = scratchDir("mixed-")
  const acting = o.acting ?? {}
  const claude = await startAnthropic(actAnthropic(acting.claude))
  const codex = await startResponsesStandIn(actResponses(acting.codex))
  const opencode = await startOpenAiChat(actChat(acting.opencode))
  afterTest(async () => {
    await Promise.all([claude.close(), codex.close(), opencode.close()])
    const elsewhere = [
      ...claude.requests.filter((r) => !r.path.startsWith("/v1/messages")).map((r) => `claude: ${r.method} ${r.path}`),
      ...codex.escaped.map((e) => `codex: ${e}`),
      ...opencode.escapes.map((e) => `opencode: ${e}`)
    ]
    if (elsewhere.length > 0) throw new Error(`a CLI reached past its stand-in: ${elsewhere.join(", ")}`)
  })

  // One HOME and one set of XDG folders for the three (opencode's config
  // names its stand-in); each CLI's own network settings go in its agent env.
  const oc = opencodeEnv(dir, "agents", opencode.baseUrl)
  const { HOME, XDG_CONFIG_HOME, XDG_DATA_HOME, XDG_STATE_HOME, XDG_CACHE_HOME, ...ocNetwork } = oc
  const { HOME: _h, CLAUDE_CONFIG_DIR: _c, ...claudeNetwork } = claudeEnv(claude.url, HOME!)
  const codexHome = NodePath.join(dir, "codex-home")
  NodeFs.mkdirSync(codexHome)
  NodeFs.writeFileSync(NodePath.join(codexHome, "config.toml"), codexConfig(codex))

  const repo = NodePath.join(dir, "repo")
  NodeFs.mkdirSync(repo)
  const git = (...args: string[]) => execFileSync("git", args, { cwd: repo, encoding: "utf8", stdio: "pipe" }).trim()
  git("init", "-q", "-b", "trunk")
  git("config", "user.email", "owner@example.com")
  git("config", "user.name", "Owner")
  for (const [f, text] of Object.entries({ "README.md": "# scratch\n", ...o.files })) NodeFs.writeFileSync(NodePath.join(repo, f), text)
  NodeFs.writeFileSync(
    NodePath.join(repo, "magi.toml"),
    // The shell form of `magi ask`, polling: MCP and ending the turn have their own suites.
    `[agents.claude]\nkind = "claude"\ncommand = ${JSON.stringify([bins.claude])}\nmcp = false\nwait = "poll"\nenv = ${
      tomlEnv({ ...claudeNetwork, IS_SANDBOX: "1" })
    }\n\n` +
      `[agents.codex]\nkind = "codex"\ncommand = ${JSON.stringify([bins.codex])}\nmcp = false\nwait = "poll"\nenv = ${tomlEnv(codex.proxyEnv)}\n\n` +
      `[agents.opencode]\nkind = "opencode"\ncommand = ${JSON.stringify([bins.opencode])}\nmodel = "${MODEL}"\nmcp = false\nwait = "poll"\nenv = ${
        tomlEnv(ocNetwork)
      }\n\n` +
      `[notify]\ncommand = ["true"]\n\n${o.toml}`
  )
  git("add", "-A")
  git("commit", "-q", "-m", "init")

  const home = NodePath.join(dir, "magi-home")
  const env: Record<string, string> = {
    MAGI_HOME: home,
    HOME: HOME!,
    CLAUDE_CONFIG_DIR: NodePath.join(HOME!, ".claude"),
    CODEX_HOME: codexHome,
    XDG_CONFIG_HOME: XDG_CONFIG_HOME!,
    XDG_DATA_HOME: XDG_DATA_HOME!,
    XDG_STATE_HOME: XDG_STATE_HOME!,
    XDG_CACHE_HOME: XDG_CACHE_HOME!
  }
  const runDir = () => {
    const [id] = NodeFs.readdirSync(NodePath.join(home, "runs")).filter((f) => /^\d{8}-/.test(f))
    return NodePath.join(home, "runs", id!)
  }
  return {
    dir,
    repo,
    home,
    claude,
    codex,
    opencode,
    env,
    git,
    // IS_SANDBOX only ever from magi.toml: the machine running the suite may set one.
    magi: (deadline, ...args) => runMagi(args, { cwd: repo, env: { ...env, IS_SANDBOX: undefined }, deadline }),
    record: () => JSON.parse(NodeFs.readFileSync(NodePath.join(runDir(), "run.json"), "utf8")),
    runDir
  }
}
