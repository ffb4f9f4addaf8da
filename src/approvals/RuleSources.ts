/**
 * The approval rules in force for one agent in one repository, each named
 * by the file and key it is written under, read file by file (never the
 * merged config, which cannot say where a rule came from):
 *
 * - the machine's config (`<config_dir>/magi/config.toml`): allow and deny;
 * - the repository's `.magi/config.toml` and `magi.toml`: deny always (a
 *   rule there only tightens), allow only while the owner trusts the file
 *   as it reads now (`TrustedConfigs`, `magi approvals trust`).
 *
 * A file that cannot be read or parsed may hold deny rules magi cannot see,
 * so while one is unreadable no config allow rule applies: every call a deny
 * rule does not stop goes to the owner.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import { Effect } from "effect"
import * as NodePath from "node:path"
import { parse } from "smol-toml"
import { type ApprovalSettings, approvalsOf, userConfigFile } from "../platform/MagiConfig.js"
import * as Rules from "./Rules.js"
import { contentHash, type Trust, trustOf } from "./TrustedConfigs.js"

/** Expand `~/` and make a configured repository path absolute, for comparing with the agent's repository. */
const repoKey = (path: string, home: string): string =>
  NodePath.resolve(path === "~" ? home : path.startsWith("~/") ? NodePath.join(home, path.slice(2)) : path)

/** The config's rules that apply to `agent` in `repo`, each named by where it was written; unreadable ones are returned apart. */
export const configRules = (settings: ApprovalSettings, agent: string, repo: string, home: string, where = "") => {
  const allow: Rules.SourcedRule[] = []
  const deny: Rules.SourcedRule[] = []
  const bad: Rules.BadRule[] = []
  const add = (texts: ReadonlyArray<string>, into: Rules.SourcedRule[], scope: string) => {
    for (const text of texts) {
      const rule = Rules.parseRule(text)
      if (Rules.isBadRule(rule)) bad.push(rule)
      else into.push({ rule, source: { _tag: "config", scope: `${scope}${where}` } })
    }
  }
  add(settings.deny, deny, "approvals.deny")
  add(settings.allow, allow, "approvals.allow")
  const forAgent = settings.agents[agent]
  if (forAgent !== undefined) {
    add(forAgent.deny, deny, `approvals.agents.${agent}.deny`)
    add(forAgent.allow, allow, `approvals.agents.${agent}.allow`)
  }
  for (const [path, rules] of Object.entries(settings.repos)) {
    if (repoKey(path, home) !== NodePath.resolve(repo)) continue
    add(rules.deny, deny, `approvals.repos."${path}".deny`)
    add(rules.allow, allow, `approvals.repos."${path}".allow`)
  }
  return { allow, deny, bad }
}

/** One config file's part in the rules. */
export interface RuleFile {
  readonly file: string
  /** `machine`: the machine's own config; else a repository's, trusted or not. */
  readonly trust: "machine" | Trust
  readonly sha256: string
  readonly approvals: ApprovalSettings
}

export interface RulesInForce {
  readonly allow: ReadonlyArray<Rules.SourcedRule>
  readonly deny: ReadonlyArray<Rules.SourcedRule>
  readonly bad: ReadonlyArray<Rules.BadRule>
  readonly files: ReadonlyArray<RuleFile>
  /** What was left out and why, for the log and `magi doctor`: an untrusted file's allow rules, an unreadable file. */
  readonly notes: ReadonlyArray<string>
}

/** The repository config files that can hold rules, lowest precedence first. */
export const repoConfigFiles = (repo: string) => [NodePath.join(repo, ".magi", "config.toml"), NodePath.join(repo, "magi.toml")]

/** One file's `[approvals]`, or undefined when it does not exist; a file that cannot be read or parsed fails with why. */
const readRules = (file: string) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const text = yield* fs.readFileString(file).pipe(
      Effect.map((t): string | undefined => t),
      Effect.catchIf((e) => e._tag === "SystemError" && e.reason === "NotFound", () => Effect.void),
      Effect.mapError((e) => `cannot read ${file}: ${e.message}`)
    )
    if (text === undefined) return undefined
    const table = yield* Effect.try({ try: () => parse(text) as Record<string, unknown>, catch: (e) => `${file}: ${(e as Error).message.split("\n")[0]}` })
    const approvals = yield* approvalsOf(table.approvals, [file]).pipe(Effect.mapError((e) => e.message))
    return { text, approvals }
  })

/**
 * The rules for `agent` in `repo`. `fallback` is the settings this process
 * was given, used when no file exists at all (fixed settings: tests, embedding).
 */
export const rulesInForce = (
  agent: string,
  repo: string,
  home: string,
  fallback: { readonly approvals: ApprovalSettings; readonly files: ReadonlyArray<string> }
) =>
  Effect.gen(function* () {
    const machineFile = yield* userConfigFile
    const allow: Rules.SourcedRule[] = []
    const deny: Rules.SourcedRule[] = []
    const bad: Rules.BadRule[] = []
    const files: RuleFile[] = []
    const notes: string[] = []
    let unreadable = false
    for (const file of [machineFile, ...repoConfigFiles(repo)]) {
      const read = yield* Effect.either(readRules(file))
      if (read._tag === "Left") {
        unreadable = true
        notes.push(`${read.left}: until it reads, no config allow rule applies and every call a deny rule does not stop goes to the owner`)
        continue
      }
      if (read.right === undefined) continue
      const trust = file === machineFile ? "machine" : yield* trustOf(file, read.right.text)
      files.push({ file, trust, sha256: contentHash(read.right.text), approvals: read.right.approvals })
      const rules = configRules(read.right.approvals, agent, repo, home, ` in ${file}`)
      deny.push(...rules.deny)
      bad.push(...rules.bad)
      if (trust === "machine" || trust === "trusted") allow.push(...rules.allow)
      else if (rules.allow.length > 0)
        notes.push(
          `${file} has ${rules.allow.length} allow rule(s) that do not apply: ${
            trust === "changed" ? "it changed since the owner trusted it" : "the owner has not trusted it"
          } (a repository's config can be written by an agent); if you wrote it, run magi approvals trust --repo ${repo}`
        )
    }
    if (files.length === 0 && !unreadable && fallback.files.length === 0) {
      const rules = configRules(fallback.approvals, agent, repo, home)
      return { allow: rules.allow, deny: rules.deny, bad: rules.bad, files, notes } satisfies RulesInForce
    }
    return { allow: unreadable ? [] : allow, deny, bad, files, notes } satisfies RulesInForce
  })

/** Every rule of one file's `[approvals]`, with the key it is written under: what `magi doctor` lists. */
export const everyRule = (a: ApprovalSettings): ReadonlyArray<{ readonly key: string; readonly kind: "allow" | "deny"; readonly rule: string }> => [
  ...a.deny.map((rule) => ({ key: "approvals.deny", kind: "deny" as const, rule })),
  ...a.allow.map((rule) => ({ key: "approvals.allow", kind: "allow" as const, rule })),
  ...Object.entries(a.agents).flatMap(([id, r]) => [
    ...r.deny.map((rule) => ({ key: `approvals.agents.${id}.deny`, kind: "deny" as const, rule })),
    ...r.allow.map((rule) => ({ key: `approvals.agents.${id}.allow`, kind: "allow" as const, rule }))
  ]),
  ...Object.entries(a.repos).flatMap(([path, r]) => [
    ...r.deny.map((rule) => ({ key: `approvals.repos."${path}".deny`, kind: "deny" as const, rule })),
    ...r.allow.map((rule) => ({ key: `approvals.repos."${path}".allow`, kind: "allow" as const, rule }))
  ])
]
