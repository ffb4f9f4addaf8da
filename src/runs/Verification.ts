/**
 * The verification's part of the run record (issue 30): after a competition
 * elects a winner (or a solo run's turn ends well) the branch is synced to
 * its base, reviewed, fixed, run end to end and gated before it is `ready`.
 * Like the competition it lives inside `run.json`, so every step writes the
 * one durable record before the next starts and a resume skips what is
 * recorded. Pure: the schema and the rules over it; `verify/VerifyDriver`
 * does the I/O.
 */
import { Schema } from "effect"
import { Check } from "./Competition.js"

/**
 * sync → review → gate → ready, or an ending: blocked, already_in_base.
 * `fix`: `magi fix`'s fixer turn on chosen findings, recorded before the
 * turn so a kill mid-turn is resumed (the turn again, then a review round).
 */
export const VerifyStep = Schema.Literal("sync", "review", "gate", "ready", "blocked", "already_in_base", "fix")
export type VerifyStep = typeof VerifyStep.Type

/** Has the verification ended (nothing left to drive)? */
export const ended = (step: VerifyStep): boolean => step === "ready" || step === "blocked" || step === "already_in_base"

export const Severity = Schema.Literal("nit", "minor", "major", "blocker")
export type Severity = typeof Severity.Type
export const SEVERITIES: ReadonlyArray<Severity> = ["nit", "minor", "major", "blocker"]
/** Major and blocker findings hold the branch back; nits and minors become follow-ups. */
export const blocks = (s: Severity): boolean => s === "major" || s === "blocker"

export const Verdict = Schema.Literal("approve", "approve_with_findings", "reject")
export type Verdict = typeof Verdict.Type

/** The fixer's answer to one finding: fixed by a commit, or rejected with its argument. */
export const Reply = Schema.Struct({
  kind: Schema.Literal("fixed", "rejected"),
  commit: Schema.NullOr(Schema.String),
  argument: Schema.String
})
export type Reply = typeof Reply.Type

export const Finding = Schema.Struct({
  /** `R<round>-<seat>-<n>`, numbered by magi, never by the agent. */
  id: Schema.String,
  seat: Schema.String,
  severity: Severity,
  file: Schema.String,
  line: Schema.NullOr(Schema.Number),
  title: Schema.String,
  body: Schema.String,
  reply: Schema.optional(Reply)
})
export type Finding = typeof Finding.Type

export const Review = Schema.Struct({
  seat: Schema.String,
  agent: Schema.String,
  status: Schema.Literal("pending", "answered", "unanswered"),
  verdict: Schema.NullOr(Verdict),
  findings: Schema.Array(Finding),
  /** Answers sent back for not being a review magi can read. */
  retries: Schema.Number,
  failure: Schema.String,
  /** The verdict after reading the others', when the round was split. */
  revote: Schema.optional(Verdict)
})
export type Review = typeof Review.Type

export const Round = Schema.Struct({
  n: Schema.Number,
  /** The commit reviewed and run end to end. */
  head: Schema.String,
  /** Its tree, to tell a fix that changed nothing. */
  tree: Schema.String,
  reviews: Schema.Array(Review),
  /** Whether the split verdict's re-vote ran (once per round). */
  revoted: Schema.Boolean,
  /** null: not run yet this round. */
  e2e: Schema.NullOr(Schema.Array(Check)),
  /** The fixer's commit after this round, when it went to the fixer. */
  fixed_to: Schema.optional(Schema.String)
})
export type Round = typeof Round.Type

export const Sync = Schema.Struct({
  /** Rebases tried (at most `SYNC_ATTEMPTS`, when the base keeps moving). */
  attempts: Schema.Number,
  /** The base commit the branch was rebased onto. */
  onto: Schema.NullOr(Schema.String),
  rebase_fix_rounds: Schema.Number,
  conflicts: Schema.Array(Schema.String)
})
export type Sync = typeof Sync.Type

export const GateAttempt = Schema.Struct({
  n: Schema.Number,
  /** The commit gated: a result is only ever shown for the head it ran on. */
  head: Schema.String,
  at: Schema.String,
  results: Schema.Array(Check)
})
export type GateAttempt = typeof GateAttempt.Type

/** What `magi fix` asked for, kept while its fixer's turn goes on (step `fix`). */
export const Fixing = Schema.Struct({
  /** The chosen findings' ids. */
  ids: Schema.Array(Schema.String),
  /** The owner's words to the fixer. */
  reason: Schema.optional(Schema.String),
  /** The head before the fixer's first turn: a commit made by a killed turn still counts. */
  before: Schema.String
})
export type Fixing = typeof Fixing.Type

export const Verification = Schema.Struct({
  step: VerifyStep,
  /** The seat that fixes: `[roles] fixer`, default the winner's own. */
  fixer: Schema.String,
  sync: Sync,
  rounds: Schema.Array(Round),
  gates: Schema.Array(GateAttempt),
  gate_fix_rounds: Schema.Number,
  /** Why it stopped where it did (empty while going on). */
  stopped: Schema.String,
  fixing: Schema.optional(Fixing)
})
export type Verification = typeof Verification.Type

export const fresh = (fixer: string): Verification => ({
  step: "sync",
  fixer,
  sync: { attempts: 0, onto: null, rebase_fix_rounds: 0, conflicts: [] },
  rounds: [],
  gates: [],
  gate_fix_rounds: 0,
  stopped: ""
})

/**
 * Set up and not yet started: what a turn that ended well writes when a
 * verification follows it, in the same write as its `running` status.
 */
export const unstarted = (v: Verification): boolean => v.step === "sync" && v.sync.attempts === 0 && v.rounds.length === 0 && v.gates.length === 0

/** Every finding of the round, after any re-vote. */
export const findingsOf = (r: Round): ReadonlyArray<Finding> => r.reviews.flatMap((v) => v.findings)

/** The findings the fixer has not answered yet. */
export const openFindings = (r: Round): ReadonlyArray<Finding> => findingsOf(r).filter((f) => f.reply === undefined)
