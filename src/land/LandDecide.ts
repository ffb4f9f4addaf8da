/**
 * The land loop's one decision: given one observation of the pull request
 * and what the loop remembers, what to do next. Pure, so every case of
 * issue 31 is a row of a table; the driver does the polling, pushing,
 * fixing and merging around it. It never answers "force-merge".
 */
import type { Check, Observation, Remark } from "./Forge.js"

export const POLL_MS = 30_000
/** Checks not reported at all yet: believed absent only after this long. */
export const NO_CHECKS_GRACE_MS = 3 * 60_000
export const DEFAULT_LAND_WAIT_MS = 45 * 60_000
export const DEFAULT_LAND_ROUNDS = 4

export interface LandSettings {
  /** `[graph] land_wait`: the longest wait on pending checks. */
  readonly waitMs: number
  /** `[graph] land_rounds`: fix and rebase rounds before the PR is left open. */
  readonly rounds: number
  /** `[graph] land_approval`: ask the owner before the merge. */
  readonly approval: boolean
}

export const defaultSettings: LandSettings = { waitMs: DEFAULT_LAND_WAIT_MS, rounds: DEFAULT_LAND_ROUNDS, approval: true }

/** What the loop keeps on disk between observations. */
export interface LandState {
  /** The head magi last pushed; another head means someone force-pushed. */
  readonly pushedSha: string
  /** Fix and rebase rounds spent. */
  readonly roundsUsed: number
  /** When this head was first seen with no checks at all (epoch ms), or null. */
  readonly checksMissingSince: number | null
  /** When the wait on this head's checks began (epoch ms). */
  readonly waitingSince: number
  /** The owner answered `merge` to the approval question for this head. */
  readonly approved: boolean
  readonly now: number
}

export type LandAction =
  | { readonly _tag: "ended"; readonly outcome: "merged" | "closed" }
  | { readonly _tag: "held"; readonly reason: string }
  | { readonly _tag: "rebase" }
  | { readonly _tag: "wait"; readonly reason: string; readonly checksMissingSince: number | null }
  | { readonly _tag: "never_merge"; readonly reason: string }
  | { readonly _tag: "fix"; readonly failing: ReadonlyArray<Check>; readonly remarks: ReadonlyArray<Remark> }
  | { readonly _tag: "ask_approval" }
  | { readonly _tag: "merge" }
  | { readonly _tag: "give_up"; readonly reason: string }

/**
 * Review that asks for work: a human's inline comment still open, or a
 * human's "changes requested". Bots' notes outside a review and magi's own
 * comments never are; a bot's inline review comment is (a linter's review).
 */
export const unresolved = (remarks: ReadonlyArray<Remark>): ReadonlyArray<Remark> =>
  remarks.filter((r) => {
    if (r.mine) return false
    switch (r.kind) {
      case "review_comment":
        return !r.resolved
      case "review":
        return r.authorKind === "human" && r.verdict === "CHANGES_REQUESTED"
      case "issue_comment":
        return false
    }
  })

const names = (checks: ReadonlyArray<Check>): string => checks.map((c) => `${c.name} (${c.conclusion})`).join(", ")

export const decide = (observation: Observation, state: LandState, settings: LandSettings): LandAction => {
  const { pr } = observation
  if (pr.state === "merged") return { _tag: "ended", outcome: "merged" }
  if (pr.state === "closed") return { _tag: "ended", outcome: "closed" }
  if (pr.headSha !== state.pushedSha) {
    return { _tag: "held", reason: `the head is ${pr.headSha.slice(0, 12)}, not ${state.pushedSha.slice(0, 12)} which magi pushed: someone force-pushed` }
  }
  const outOfRounds = state.roundsUsed >= settings.rounds
  if (observation.mergeable === "conflicting") {
    return outOfRounds
      ? { _tag: "give_up", reason: `still conflicts with ${pr.base} after ${state.roundsUsed} rounds` }
      : { _tag: "rebase" }
  }
  if (observation.checks._tag === "Unreadable") return { _tag: "never_merge", reason: `the checks cannot be read: ${observation.checks.reason}` }
  const checks = observation.checks.checks
  const waited = state.now - state.waitingSince
  if (checks.length === 0) {
    const since = state.checksMissingSince ?? state.now
    if (state.now - since < NO_CHECKS_GRACE_MS) return { _tag: "wait", reason: "no checks reported yet", checksMissingSince: since }
  }
  const failing = checks.filter((c) => c.outcome === "failure")
  const pending = checks.filter((c) => c.outcome === "pending")
  if (failing.length === 0 && pending.length > 0) {
    return waited >= settings.waitMs
      ? { _tag: "give_up", reason: `checks still pending after ${Math.round(waited / 60_000)} min: ${names(pending)}` }
      : { _tag: "wait", reason: `checks pending: ${names(pending)}`, checksMissingSince: null }
  }
  const remarks = unresolved(observation.remarks)
  if (failing.length > 0 || remarks.length > 0) {
    if (outOfRounds) {
      const what = [failing.length > 0 ? `failing: ${names(failing)}` : "", remarks.length > 0 ? `${remarks.length} review comment(s) unresolved` : ""]
        .filter((s) => s !== "").join("; ")
      return { _tag: "give_up", reason: `after ${state.roundsUsed} rounds, still ${what}` }
    }
    return { _tag: "fix", failing, remarks }
  }
  // Green and clean, but the forge has not yet said it merges cleanly.
  if (observation.mergeable === "unknown") return { _tag: "wait", reason: "the forge is still computing whether it merges", checksMissingSince: null }
  return settings.approval && !state.approved ? { _tag: "ask_approval" } : { _tag: "merge" }
}
