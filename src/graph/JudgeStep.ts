/**
 * The judge step of a competition: the panel seated once (agents rotated
 * away from their own candidates, detached read-only worktrees at the
 * base), what each judge is shown, and one judge's turn with its one retry
 * in the same session. Each answer is written to the run as it comes, so a
 * resume re-asks only the judges that did not answer.
 */
import * as NodePath from "node:path"
import { Duration, Effect } from "effect"
import * as C from "../runs/Competition.js"
import type * as RecordStore from "../store/RecordStore.js"
import type { RunDriverShape } from "../runs/RunDriver.js"
import type { Run, RunStoreShape, Seat } from "../runs/Runs.js"
import * as Git from "./CandidateGit.js"
import type { GraphSettings, Seating } from "./GraphConfig.js"
import * as JudgeAnswer from "./JudgeAnswer.js"
import * as Leaks from "./Leaks.js"
import { judgePrompt, type Shown } from "./JudgePrompt.js"
import * as Labels from "./Labels.js"

/** A judge's turn: reading a few patches and answering is shorter work than implementing. */
export const JUDGE_TURN_TIMEOUT = Duration.minutes(30)

/** The judges' answers sent back once for not being a ranking of the labels. */
export const JUDGE_RETRIES = 1

export interface JudgingDeps {
  readonly runs: RunStoreShape
  readonly driver: RunDriverShape
  readonly io: <A, E>(e: Effect.Effect<A, E, Git.GitServices>) => Effect.Effect<A, E>
  readonly change: (
    id: string,
    f: (c: C.Competition, run: Run) => Partial<Run> & { readonly competition: C.Competition }
  ) => Effect.Effect<Run, RecordStore.Failure>
  readonly compOf: (run: Run) => C.Competition
}

export const judging = ({ change, compOf, driver, io, runs }: JudgingDeps) => {
  /** Seat the panel once: agents rotated away from their own candidates, detached worktrees at the base. */
  const seatJudges = (run: Run, seating: Seating, settings: GraphSettings) =>
    Effect.gen(function* () {
      const c = compOf(run)
      if (c.judges.length > 0) return run
      const labels = C.viable(c).map((x) => x.label)
      const agents = Labels.judgeAgents(seating.judgePool, c.candidates.map((x) => x.agent), settings.judges)
      const judges: ReadonlyArray<C.Judge> = agents.map((agent, i) => ({
        seat: `judge-${i + 1}`,
        agent,
        worktree: NodePath.join(run.worktree, `judge-${i + 1}`),
        order: Labels.orderFor(labels, c.seed, i),
        status: "pending",
        ranking: [],
        reasons: {},
        confidence: null,
        retries: 0,
        failure: ""
      }))
      for (const j of judges) yield* io(Git.addJudge(run.repo, j.worktree, run.base_commit))
      return yield* change(run.id, (cur, r) => ({
        seats: [...r.seats, ...judges.map((j): Seat => ({ key: j.seat, agent: j.agent, turns: 0, session: null, write: false, worktree: j.worktree }))],
        competition: { ...cur, judges }
      }))
    })

  const shownOf = (run: Run) =>
    Effect.forEach(
      C.viable(compOf(run)),
      (x) =>
        // fallback: a candidate whose patch cannot be read is shown to the judges as empty
        Effect.map(io(Git.patchOf(run.repo, run.base_commit, x.branch)).pipe(Effect.orElseSucceed(() => "")), (patch): Shown => {
          // `on_leak = "redact"`: the judges' view blanks the names found; the branch keeps them.
          const blank = (text: string) => (x.redacted ? Leaks.redact(text, x.leaks) : text)
          return {
            label: x.label,
            branch: x.branch,
            summary: blank(x.summary),
            numstat: blank(x.numstat),
            patch: blank(patch),
            checks: x.checks.map((k) => ({ ...k, tail: blank(k.tail) }))
          }
        })
    )

  const judgeOne = (run: Run, j: C.Judge, shown: ReadonlyArray<Shown>) =>
    Effect.gen(function* () {
      const labels = shown.map((s) => s.label)
      const first = judgePrompt(run.instruction, shown, j.order)
      let prompt = first
      let retries = j.retries
      for (;;) {
        const turn = yield* Effect.either(driver.turn({ run: run.id, seat: j.seat, prompt, timeout: JUDGE_TURN_TIMEOUT }))
        if (turn._tag === "Left" && turn.left._tag === "SeatBusy") return yield* turn.left
        const record = (f: (cur: C.Judge) => C.Judge) => change(run.id, (c) => ({ competition: C.withJudge(c, j.seat, f) }))
        if (turn._tag === "Left") return yield* record((cur) => ({ ...cur, status: "failed", failure: turn.left.message, retries }))
        if (!turn.right.usable)
          return yield* record((cur) => ({ ...cur, status: "failed", failure: turn.right.problem ?? "its agent's turn failed", retries }))
        const parsed = JudgeAnswer.parseRanking(turn.right.text, labels)
        if (parsed._tag === "ok")
          return yield* record((cur) => ({
            ...cur,
            status: "answered",
            ranking: parsed.value.ranking,
            reasons: parsed.value.reasons,
            confidence: parsed.value.confidence,
            retries,
            failure: ""
          }))
        if (retries >= JUDGE_RETRIES) return yield* record((cur) => ({ ...cur, status: "failed", failure: parsed.reason, retries }))
        retries++
        yield* record((cur) => ({ ...cur, retries }))
        // The same session hears only the nudge; a seat with none gets the whole context again.
        const session = (yield* runs.get(run.id)).seats.find((s) => s.key === j.seat)?.session ?? null
        prompt = session === null ? `${first}\n\n${JudgeAnswer.nudge(parsed.reason, labels)}` : JudgeAnswer.nudge(parsed.reason, labels)
      }
    })

  return { judgeOne, seatJudges, shownOf }
}
