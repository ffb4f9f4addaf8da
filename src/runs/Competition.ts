/**
 * A competition's part of the run record: several candidates implement one
 * instruction blind, a panel of judges ranks them, a pure tally elects one
 * (`graph/`). It lives inside `run.json` so every step (prep, implement,
 * checks, judge, deliberate, vote, tally, fold) writes the one durable
 * record before the next starts, and a resume skips what is recorded. The
 * next steps (review, gate, landing) extend the same record.
 *
 * Pure: the schema and the rules over it; the driver (`graph/CompetitionDriver`)
 * does the I/O.
 */
import { Schema } from "effect"

/** Where the competition is; every step but the endings can be resumed from. */
export const Step = Schema.Literal(
  "prep",
  "implement",
  "checks",
  "judge",
  "deliberate",
  "vote",
  "tally",
  "fold",
  "elected",
  "verified_noop",
  "failed"
)
export type Step = typeof Step.Type

/** The order the steps run in: a step is done once the record's step is past it. */
export const STEPS: ReadonlyArray<Step> = ["prep", "implement", "checks", "judge", "deliberate", "vote", "tally", "fold", "elected"]

/** Is `step` recorded as finished in a competition standing at `at`? */
export const past = (at: Step, step: Step): boolean => {
  if (at === "verified_noop" || at === "failed") return true
  return STEPS.indexOf(at) > STEPS.indexOf(step)
}

/** One `[verify] checks` command run in a candidate's worktree. */
export const Check = Schema.Struct({
  command: Schema.String,
  /** null when it was killed (the timeout) or could not start. */
  exit: Schema.NullOr(Schema.Number),
  duration_ms: Schema.Number,
  timed_out: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  /** The last 4 KB of its stdout and stderr together. */
  tail: Schema.optionalWith(Schema.String, { default: () => "" })
})
export type Check = typeof Check.Type

/**
 * pending: not implemented yet; viable: has commits of its own; noop: said
 * `NO CHANGE NEEDED:`; dropped: out of the running, `dropped` says why.
 */
export const CandidateStatus = Schema.Literal("pending", "viable", "noop", "dropped")
export type CandidateStatus = typeof CandidateStatus.Type

export const Candidate = Schema.Struct({
  label: Schema.String,
  /** `impl-<label>`: its seat in the run's seats, its own CLI session. */
  seat: Schema.String,
  agent: Schema.String,
  branch: Schema.String,
  worktree: Schema.String,
  status: CandidateStatus,
  /** Its commits off the base, newest first, `<sha> <subject>`. */
  commits: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] }),
  /** `git diff --numstat base...branch`. */
  numstat: Schema.optionalWith(Schema.String, { default: () => "" }),
  /** Its own account of what it did, author trailers stripped. */
  summary: Schema.optionalWith(Schema.String, { default: () => "" }),
  dropped: Schema.optionalWith(Schema.String, { default: () => "" }),
  checks: Schema.optionalWith(Schema.Array(Check), { default: () => [] }),
  /** Agent and vendor names found in its patch (`[blind] on_leak`). */
  leaks: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] }),
  /** `on_leak = "redact"` found some: the judges see its text with those names as `[redacted]`. */
  redacted: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  /** How long its implementing turns took, for `magi stats`; 0 when not timed. */
  implement_ms: Schema.optionalWith(Schema.Number, { default: () => 0 }),
  /** The agents that held this seat before its usage limit handed it to `agent`, oldest first. */
  fallback_from: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] })
})
export type Candidate = typeof Candidate.Type

export const JudgeStatus = Schema.Literal("pending", "answered", "failed")

export const Judge = Schema.Struct({
  seat: Schema.String,
  agent: Schema.String,
  worktree: Schema.String,
  /** The order it was shown the candidates in (its own seeded shuffle). */
  order: Schema.Array(Schema.String),
  status: JudgeStatus,
  ranking: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] }),
  reasons: Schema.optionalWith(Schema.Record({ key: Schema.String, value: Schema.String }), { default: () => ({}) }),
  confidence: Schema.optionalWith(Schema.NullOr(Schema.Number), { default: () => null }),
  /** Answers sent back for not being a ranking of the labels. */
  retries: Schema.optionalWith(Schema.Number, { default: () => 0 }),
  failure: Schema.optionalWith(Schema.String, { default: () => "" })
})
export type Judge = typeof Judge.Type

/** One judge's turn of deliberation: what it said, and its tentative pick. */
export const Deliberation = Schema.Struct({
  seat: Schema.String,
  round: Schema.Number,
  text: Schema.String,
  pick: Schema.NullOr(Schema.String)
})
export type Deliberation = typeof Deliberation.Type

/** One judge's private vote; `label` null when it failed (then its first ranking's top counts). */
export const Vote = Schema.Struct({
  seat: Schema.String,
  label: Schema.NullOr(Schema.String),
  failure: Schema.optionalWith(Schema.String, { default: () => "" }),
  /** Answers sent back for not naming one viable label. */
  retries: Schema.optionalWith(Schema.Number, { default: () => 0 })
})
export type Vote = typeof Vote.Type

export const TieBreak = Schema.Literal("none", "borda", "label")

export const Tally = Schema.Struct({
  winner: Schema.String,
  first_choices: Schema.Record({ key: Schema.String, value: Schema.Number }),
  borda: Schema.Record({ key: Schema.String, value: Schema.Number }),
  unanimous_first: Schema.Boolean,
  unanimous_final: Schema.Boolean,
  votes_changed: Schema.Number,
  tie_break: TieBreak,
  /** Judges whose rankings counted, and how many the quorum needs. */
  answered: Schema.Number,
  quorum: Schema.Number
})
export type Tally = typeof Tally.Type

/** The owner's choice beside the panel's (`magi pick`). */
export const Pick = Schema.Struct({ label: Schema.String, at: Schema.String })

export const Competition = Schema.Struct({
  /** The seed of every shuffle (labels, each judge's order); `magi run --seed N` repeats one. */
  seed: Schema.Number,
  step: Step,
  candidates: Schema.Array(Candidate),
  judges: Schema.optionalWith(Schema.Array(Judge), { default: () => [] }),
  deliberation: Schema.optionalWith(Schema.Array(Deliberation), { default: () => [] }),
  votes: Schema.optionalWith(Schema.Array(Vote), { default: () => [] }),
  tally: Schema.optionalWith(Schema.NullOr(Tally), { default: () => null }),
  /** The elected label: the panel's, or the owner's pick. */
  winner: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null }),
  pick: Schema.optional(Pick),
  /** When the losers' and judges' worktrees and branches were removed. */
  folded_at: Schema.optional(Schema.String),
  keep_losers: Schema.optionalWith(Schema.Boolean, { default: () => false })
})
export type Competition = typeof Competition.Type

/**
 * The node a seat's questions record (`MAGI_NODE`): a candidate's is
 * `implement` and a judge's `judge`, their seat saying which one, so the
 * page tells the owner which candidate asks; any other seat is its own node.
 */
export const nodeOfSeat = (seat: string): string => seat.startsWith("impl-") ? "implement" : seat.startsWith("judge-") ? "judge" : seat

/** Is `seat` one of a competition's candidates (`impl-A`…), whose answered question resumes only it? */
export const isCandidateSeat = (c: Competition, seat: string): boolean => c.candidates.some((x) => x.seat === seat)

/** The candidates still in the running. */
export const viable = (c: Competition): ReadonlyArray<Candidate> => c.candidates.filter((x) => x.status === "viable")

/** Replace the candidate `label` with `change` of it. */
export const withCandidate = (c: Competition, label: string, change: (x: Candidate) => Candidate): Competition => ({
  ...c,
  candidates: c.candidates.map((x) => (x.label === label ? change(x) : x))
})

export const withJudge = (c: Competition, seat: string, change: (j: Judge) => Judge): Competition => ({
  ...c,
  judges: c.judges.map((j) => (j.seat === seat ? change(j) : j))
})

/** A candidate that said nothing needed changing, and why (the rest of its line). */
export const NO_CHANGE = "NO CHANGE NEEDED:"
export const saysNoChange = (summary: string): boolean => summary.split("\n").some((l) => l.trim().startsWith(NO_CHANGE))

/**
 * What a finished implement turn makes of a candidate: commits of its own
 * keep it in (a failed agent's commits are still judged); none, with a
 * `NO CHANGE NEEDED:` line, is a noop; none otherwise drops it, saying why.
 */
export const afterImplement = (
  x: Candidate,
  got: { readonly commits: ReadonlyArray<string>; readonly summary: string; readonly failed: string | null; readonly baseMoved: string | null }
): Candidate => {
  if (got.baseMoved !== null) return { ...x, status: "dropped", commits: got.commits, summary: got.summary, dropped: got.baseMoved }
  if (got.commits.length > 0) return { ...x, status: "viable", commits: got.commits, summary: got.summary }
  if (got.failed === null && saysNoChange(got.summary)) return { ...x, status: "noop", summary: got.summary }
  return { ...x, status: "dropped", summary: got.summary, dropped: got.failed ?? "it made no commits" }
}

/**
 * After implement: every candidate a noop ends the run `verified_noop`;
 * none viable fails it; one viable is elected without a panel; more go to
 * the checks and the judges.
 */
export const afterAllImplemented = (c: Competition): { readonly next: Step; readonly winner: string | null } => {
  const v = viable(c)
  if (v.length === 0 && c.candidates.length > 0 && c.candidates.every((x) => x.status === "noop")) return { next: "verified_noop", winner: null }
  if (v.length === 0) return { next: "failed", winner: null }
  if (v.length === 1) return { next: "fold", winner: v[0]!.label }
  return { next: "checks", winner: null }
}

/** Is the tally recorded, so the authors may be shown? */
export const revealed = (c: Competition): boolean => c.tally !== null || c.winner !== null && c.judges.length === 0

/** Can the run still go on (so `magi fold` must refuse it)? */
export const finished = (c: Competition): boolean => c.step === "elected" || c.step === "verified_noop" || c.step === "failed"
