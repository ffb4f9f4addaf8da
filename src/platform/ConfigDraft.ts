/**
 * The first config `magi init` writes: what it found and what the owner
 * chose, with a comment on each part saying what it does. Pure, so the file
 * a new user starts from is tested line by line.
 */
import * as NodeCrypto from "node:crypto"

export interface FoundAgent {
  /** The roster id and kind: `claude`, `codex`, `opencode`, `agy`. */
  readonly kind: string
  /** Where it was found on PATH. */
  readonly path: string
  /** The first line of its `--version`, or undefined when it gave none. */
  readonly version: string | undefined
}

export interface Draft {
  readonly agents: ReadonlyArray<FoundAgent>
  /** Git repositories in the folder `magi init` ran in (its own included). */
  readonly repos: ReadonlyArray<string>
  /** ntfy's server and topic, when the owner took it. */
  readonly ntfy: { readonly server: string; readonly topic: string } | undefined
  /** Where the owner's devices reach `magi web`, when given. */
  readonly publicUrl: string | undefined
  /** `[graph] candidates`, asked when two or more agents were found: how many implement each task blind. */
  readonly candidates?: number | undefined
}

/** The panel a competition seats unless `[graph] judges` says otherwise. */
export const DRAFT_JUDGES = 3

/**
 * What a competition of `candidates` costs against a solo run, in agent
 * turns: one per candidate, and a ranking and a private vote per judge (a
 * split panel adds a turn per judge for each round of deliberation).
 */
export const competitionCost = (candidates: number, judges: number = DRAFT_JUDGES): string =>
  candidates <= 1
    ? "one agent implements each task: one agent turn, no panel"
    : `${candidates} candidates and ${judges} judges cost about ${candidates + 2 * judges} agent turns a task ` +
      `(${candidates} implementing, a ranking and a vote from each judge; a split panel adds ${judges} per round of deliberation), ` +
      "where a solo run costs 1"

/** The owner's answer to how many candidates: a whole number from 1 to 9, empty for `fallback`; undefined when it is neither. */
export const candidatesOf = (answer: string, fallback: number): number | undefined => {
  const t = answer.trim()
  if (t === "") return fallback
  return /^[1-9]$/.test(t) ? Number(t) : undefined
}

export const NTFY_SERVER = "https://ntfy.sh"

/**
 * A topic nobody guesses: on a public ntfy server the topic is the only
 * secret, and anyone who knows it reads the notifications. 20 base32
 * characters, 100 random bits.
 */
export const randomTopic = (): string => {
  const alphabet = "abcdefghijklmnopqrstuvwxyz234567"
  return `magi-${[...NodeCrypto.randomBytes(20)].map((b) => alphabet[b % 32]).join("")}`
}

/** The address a phone opens to subscribe to the topic (the ntfy app and its web app both take it). */
export const subscribeLink = (ntfy: { readonly server: string; readonly topic: string }): string => `${ntfy.server.replace(/\/+$/, "")}/${ntfy.topic}`

/** A TOML basic string. */
const str = (text: string) => JSON.stringify(text)

export const render = (draft: Draft): string => {
  const lines: Array<string> = [
    "# magi's config, written by `magi init`. Every key: docs/configuration.md.",
    "# A repository's own magi.toml (or .magi/config.toml) overrides this file.",
    ""
  ]
  if (draft.agents.length === 0)
    lines.push("# No agent CLI (claude, codex, opencode, agy) was on PATH; install one, or", "# describe yours as [agents.<id>] (docs/agents/).", "")
  else {
    lines.push("# The agents magi runs, as found on PATH.")
    for (const a of draft.agents)
      lines.push(
        `[agents.${a.kind}]`,
        `kind = ${str(a.kind)}`,
        `command = ${str(a.path)}${a.version === undefined ? "" : `  # ${a.version.replace(/[\r\n]/g, " ")}`}`,
        ""
      )
    lines.push("[roles]", "# Who works the queue's tasks (magi task add, magi serve).", `implementer = ${str(draft.agents[0]!.kind)}`, "")
  }
  if (draft.candidates !== undefined && draft.agents.length >= 2)
    lines.push(
      "[graph]",
      "# How many agents implement each task blind before a panel elects one (1: one agent, solo);",
      `# ${competitionCost(draft.candidates)}.`,
      `candidates = ${draft.candidates}`,
      ""
    )
  if (draft.repos.length > 0) {
    lines.push("# Repositories found here; file work for one with", '#   magi task add --repo <path> "…"')
    for (const r of draft.repos) lines.push(`#   ${r}`)
    lines.push("")
  }
  if (draft.ntfy !== undefined) {
    lines.push(
      "[notify]",
      "# Notifications through ntfy: subscribe to the topic in the ntfy app",
      `# (${subscribeLink(draft.ntfy)}). The topic is the secret: keep it to yourself.`,
      `ntfy = { server = ${str(draft.ntfy.server)}, topic = ${str(draft.ntfy.topic)} }`,
      ""
    )
  }
  if (draft.publicUrl !== undefined)
    lines.push(
      "[web]",
      "# Where your phone reaches magi web; a device pairs first (magi web pair).",
      `public_url = ${str(draft.publicUrl)}`,
      ""
    )
  return lines.join("\n")
}
