/**
 * `magi doctor`'s approval lines: every approval rule in force for the
 * repository, with the file and key it is written under; a repository
 * config whose allow rules do not apply (untrusted, or changed since it was
 * trusted); and allow rules that let more through than they read
 * (`RiskyRules.ts`).
 */
import * as FileSystem from "@effect/platform/FileSystem"
import { Effect } from "effect"
import { riskyAllow } from "../approvals/RiskyRules.js"
import { everyRule, type RuleFile, rulesInForce } from "../approvals/RuleSources.js"
import * as Rules from "../approvals/Rules.js"
import { noApprovals } from "../platform/MagiConfig.js"
import type { MagiHome } from "../platform/MagiHome.js"
import { type Check, fail, ok, warn } from "./Check.js"

const TRUST_WORDS: Record<RuleFile["trust"], string> = {
  machine: "the machine's config: allow and deny rules apply",
  trusted: "a repository config the owner trusted as it reads: allow and deny rules apply",
  untrusted: "a repository config the owner has not trusted: only its deny rules apply",
  changed: "a repository config changed since the owner trusted it: only its deny rules apply"
}

/** The checks for the rules in force in `repo`. */
export const approvalChecks = (repo: string): Effect.Effect<ReadonlyArray<Check>, never, FileSystem.FileSystem | MagiHome> =>
  Effect.gen(function* () {
    const home = process.env.HOME ?? ""
    const inForce = yield* rulesInForce("", repo, home, { approvals: noApprovals, files: [] })
    const checks: Check[] = []
    for (const note of inForce.notes.filter((n) => n.startsWith("cannot read") || !n.includes("allow rule(s)")))
      checks.push(fail("approvals", note, "fix the file named"))
    for (const file of inForce.files) {
      const rules = everyRule(file.approvals)
      const applies = (kind: "allow" | "deny") => kind === "deny" || file.trust === "machine" || file.trust === "trusted"
      const listed = rules.length === 0
        ? "no rules"
        : rules.map((r) => `${r.kind} ${r.rule} (${r.key})${applies(r.kind) ? "" : " NOT IN FORCE"}`).join("; ")
      const name = `approvals: ${file.file}`
      const ignored = rules.some((r) => !applies(r.kind))
      checks.push(
        ignored
          ? warn(name, `${TRUST_WORDS[file.trust]}: ${listed}`, `if you wrote this file, \`magi approvals trust --repo ${repo}\``)
          : ok(name, `${TRUST_WORDS[file.trust]}: ${listed}`)
      )
      for (const r of rules) {
        if (r.kind !== "allow" || !applies(r.kind)) continue
        const rule = Rules.parseRule(r.rule)
        const why = Rules.isBadRule(rule) ? undefined : riskyAllow(rule)
        if (why !== undefined)
          checks.push(
            warn(
              `approvals: allow ${r.rule}`,
              `${why} (${r.key} in ${file.file})`,
              "allow the exact commands instead, or add deny rules for the options that run or write"
            )
          )
      }
    }
    return checks
  })
