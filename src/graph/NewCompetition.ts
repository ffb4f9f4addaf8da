/**
 * A new competition's run record, before anything is on disk: its
 * candidates labelled by the seeded shuffle, each with its seat, branch
 * (`magi/<short>/<label>`) and worktree (`<dir>/<label>`), at step `prep`.
 * Pure, so what a seed gives is testable without git.
 */
import * as NodePath from "node:path"
import * as Q from "../questions/Question.js"
import type * as C from "../runs/Competition.js"
import { RUN_SCHEMA, type Run, type Seat } from "../runs/Runs.js"
import * as Labels from "./Labels.js"

export interface NewCompetitionRun {
  readonly id: string
  readonly at: Date
  readonly instruction: string
  readonly repo: string
  readonly base: string
  readonly baseCommit: string
  /** The folder holding every candidate's and judge's worktree. */
  readonly dir: string
  readonly host: string
  readonly seed: number
  readonly implementers: ReadonlyArray<string>
  readonly candidates: number
  readonly keepLosers: boolean
}

export const newCompetitionRun = (input: NewCompetitionRun): Run => {
  const short = Q.shortId(input.id)
  const candidates: ReadonlyArray<C.Candidate> = Labels.assign(input.implementers, input.candidates, input.seed).map((a) => ({
    label: a.label,
    seat: `impl-${a.label}`,
    agent: a.agent,
    branch: `magi/${short}/${a.label}`,
    worktree: NodePath.join(input.dir, a.label),
    status: "pending",
    commits: [],
    numstat: "",
    summary: "",
    dropped: "",
    checks: [],
    leaks: [],
    redacted: false,
    implement_ms: 0,
    fallback_from: []
  }))
  return {
    schema: RUN_SCHEMA,
    id: input.id,
    status: "running",
    instruction: input.instruction,
    repo: input.repo,
    base: input.base,
    base_commit: input.baseCommit,
    worktree: input.dir,
    // Until one is elected there is no one branch: the run names them all.
    branch: `magi/${short}/{${candidates.map((c) => c.label).join(",")}}`,
    seats: candidates.map((c): Seat => ({ key: c.seat, agent: c.agent, turns: 0, session: null, write: true, worktree: c.worktree })),
    created_at: Q.timestamp(input.at),
    updated_at: Q.timestamp(input.at),
    summary: "",
    reason: "",
    host: input.host,
    competition: {
      seed: input.seed,
      step: "prep",
      candidates,
      judges: [],
      deliberation: [],
      votes: [],
      tally: null,
      winner: null,
      keep_losers: input.keepLosers
    }
  }
}
