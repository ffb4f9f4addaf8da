/**
 * The landing part of a run record (schema 3): how a `ready` run is being
 * landed, step by step, each step written before the next so a restarted
 * process resumes where the last one stopped and never asks twice, merges
 * twice, opens a second pull request or pushes twice.
 *
 * Only ids, shas, numbers and short summaries live here: a forge token never
 * does, and the diff shown to the owner stays in the question's panel.
 */
import { Schema } from "effect"
import * as Q from "../questions/Question.js"

export const MergeMode = Schema.Literal("none", "local", "pr")
export type MergeMode = typeof MergeMode.Type

export const MergeStyle = Schema.Literal("merge", "squash", "rebase")
export type MergeStyle = typeof MergeStyle.Type

/**
 * Where the landing is. `approval`: the question is filed (or about to be)
 * and the run waits for the owner; `merge`: approved, the local merge comes
 * next; `push`/`open`/`loop`: the pull request's steps; `done`: landed or
 * stopped with `stopped` saying why.
 */
export const LandStep = Schema.Literal("approval", "merge", "push", "open", "loop", "done")
export type LandStep = typeof LandStep.Type

export const LocalMerge = Schema.Struct({
  /** The base branch's tip after the merge. */
  sha: Schema.String,
  style: MergeStyle,
  at: Q.Timestamp
})
export type LocalMerge = typeof LocalMerge.Type

export const PullRequestRef = Schema.Struct({
  number: Schema.Number,
  url: Schema.String,
  /** The head magi pushed last: another head on the PR means someone force-pushed over it. */
  head_sha: Schema.String
})
export type PullRequestRef = typeof PullRequestRef.Type

/** One round of the land loop: what was seen, what was done, and the fix commit when there was one. */
export const LandRound = Schema.Struct({
  at: Q.Timestamp,
  observed: Schema.String,
  action: Schema.String,
  fix_commit: Schema.optional(Schema.String)
})
export type LandRound = typeof LandRound.Type

/** A check as the last observation saw it, for the page and the give-up comment. */
export const SeenCheck = Schema.Struct({ name: Schema.String, outcome: Schema.String, conclusion: Schema.String, url: Schema.String })
export type SeenCheck = typeof SeenCheck.Type

/**
 * The land loop's memory between observations (`LandDecide.LandState`).
 * `pending` is written before a side effect and cleared after it, so a
 * process killed in between knows on resume to look before acting again.
 */
export const LandLoop = Schema.Struct({
  rounds_used: Schema.Number,
  waiting_since: Schema.Number,
  checks_missing_since: Schema.NullOr(Schema.Number),
  /** The head the approval question asked about, and the head the owner approved. */
  asked_head: Schema.optional(Schema.String),
  approved_head: Schema.optional(Schema.String),
  pending: Schema.optional(Schema.Literal("push", "fix", "comment", "merge")),
  /** The sha a pending push sends. */
  push_target: Schema.optional(Schema.String),
  last_seen: Schema.optionalWith(Schema.String, { default: () => "" }),
  checks: Schema.optionalWith(Schema.Array(SeenCheck), { default: () => [] })
})
export type LandLoop = typeof LandLoop.Type

export const Landing = Schema.Struct({
  mode: MergeMode,
  step: LandStep,
  /** The merge approval's question, once filed: found again after a restart instead of asked twice. */
  question: Schema.optional(Schema.String),
  /** The owner's answer, verbatim; only `merge` merges. */
  answer: Schema.optional(Schema.String),
  /** The exact subject the merge uses, shown in the approval. */
  subject: Schema.String,
  local: Schema.optional(LocalMerge),
  pr: Schema.optional(PullRequestRef),
  loop: Schema.optional(LandLoop),
  rounds: Schema.optionalWith(Schema.Array(LandRound), { default: () => [] }),
  /** Why the landing stopped short of a merge (held, refused, given up); empty while it goes on or once merged. */
  stopped: Schema.optionalWith(Schema.String, { default: () => "" }),
  started_at: Q.Timestamp,
  updated_at: Q.Timestamp
})
export type Landing = typeof Landing.Type

/** The landing waits on the owner's answer to the approval (filed, not yet approved). */
export const waitsOnOwner = (l: Landing | undefined): boolean =>
  l !== undefined && l.step !== "done" && l.question !== undefined &&
  (l.mode !== "pr" || (l.loop?.asked_head !== undefined && l.loop.asked_head !== l.loop.approved_head))

/** Only this answer merges: anything else, or no answer, holds. */
export const approves = (answer: string | undefined): boolean => answer !== undefined && answer.trim().toLowerCase() === "merge"

/** The subject a merge of the run uses: the instruction's first line, bounded, with the run's short id. */
export const subjectFor = (run: { readonly id: string; readonly instruction: string; readonly branch: string }): string => {
  const first = run.instruction.split("\n").map((l) => l.trim()).find((l) => l !== "") ?? run.branch
  const line = first.length > 72 ? `${first.slice(0, 71)}…` : first
  return `${line} (magi ${Q.shortId(run.id)})`
}
