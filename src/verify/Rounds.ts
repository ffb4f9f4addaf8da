/**
 * When a review round is clean, goes to the fixer, or ends the run blocked:
 * pure, over the recorded rounds, tested as a table. A round blocks on a
 * major or blocker finding, a red e2e command, or (under
 * `incomplete_review = "block"`) a reviewer that did not answer.
 */
import { blocks, type Round, type Verdict } from "../runs/Verification.js"

export interface RoundRules {
  readonly reviewRounds: number
  readonly incompleteReview: "block" | "allow"
}

/** Why the round holds the branch back; empty when it is clean. */
export const blockers = (r: Round, rules: RoundRules): ReadonlyArray<string> => [
  ...r.reviews.flatMap((v) => v.findings.filter((f) => blocks(f.severity) && f.reply?.kind !== "fixed").map((f) => `${f.id} (${f.severity}) ${f.title}`)),
  ...(r.e2e ?? []).filter((c) => c.exit !== 0).map((c) => `e2e \`${c.command}\` ${c.timed_out ? "timed out" : `exited ${c.exit ?? "without a code"}`}`),
  ...(rules.incompleteReview === "block" ? r.reviews.filter((v) => v.status === "unanswered").map((v) => `${v.seat} did not answer (${v.failure})`) : [])
]

const approves = (v: Verdict) => v !== "reject"

/** Did the reviewers who answered disagree (some approve, some reject)? Then the round gets one re-vote. */
export const split = (r: Round): boolean => {
  const verdicts = r.reviews.flatMap((v) => (v.verdict === null ? [] : [v.revote ?? v.verdict]))
  return verdicts.some(approves) && verdicts.some((v) => !approves(v))
}

export type Next =
  | { readonly _tag: "clean" }
  | { readonly _tag: "fix"; readonly why: ReadonlyArray<string> }
  | { readonly _tag: "blocked"; readonly why: string }

/** After a round is reviewed and run end to end: clean, to the fixer, or past the bound. */
export const afterRound = (rounds: ReadonlyArray<Round>, rules: RoundRules): Next => {
  const last = rounds.at(-1)
  if (last === undefined) return { _tag: "clean" }
  const why = blockers(last, rules)
  if (why.length === 0) return { _tag: "clean" }
  if (last.n >= rules.reviewRounds)
    return { _tag: "blocked", why: `still open after ${rules.reviewRounds} review rounds: ${why.join("; ")}` }
  return { _tag: "fix", why }
}

/**
 * After the fixer's turn: a turn with no commit, or a second round in a row
 * whose tree did not change, ends the loop blocked with what is still open.
 */
export const afterFix = (
  rounds: ReadonlyArray<Round>,
  fix: { readonly before: string; readonly after: string; readonly tree: string },
  rules: RoundRules
): { readonly _tag: "review" } | { readonly _tag: "blocked"; readonly why: string } => {
  const last = rounds.at(-1)
  const open = last === undefined ? "" : blockers(last, rules).join("; ")
  if (fix.after === fix.before) return { _tag: "blocked", why: `the fixer made no commit; open: ${open}` }
  const prev = rounds.at(-2)
  if (last !== undefined && prev !== undefined && last.tree === prev.tree && fix.tree === last.tree)
    return { _tag: "blocked", why: `two rounds went by with no change in the tree; open: ${open}` }
  return { _tag: "review" }
}
