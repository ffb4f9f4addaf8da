/**
 * The deliberate and vote steps of a competition. Each goes through the
 * same turn machinery as the judge step (`RunDriver.turn` on the judge's own
 * seat, so its CLI session carries on); the prompts and the parsing are pure
 * (`Deliberation`, `VoteAnswer`). Every turn and every vote is written to
 * the run as it comes, so a resume continues at the first turn not recorded
 * and never re-asks a judge whose vote is.
 */
import { Effect } from "effect"
import * as C from "../runs/Competition.js"
import type * as RecordStore from "../store/RecordStore.js"
import type { Run } from "../runs/Runs.js"
import * as D from "./Deliberation.js"
import type { GraphSettings } from "./GraphConfig.js"
import { JUDGE_RETRIES, JUDGE_TURN_TIMEOUT, type JudgingDeps } from "./JudgeStep.js"
import { judgePrompt, type Shown } from "./JudgePrompt.js"
import * as VoteAnswer from "./VoteAnswer.js"

export const voting = (
  { change, compOf, driver, runs }: JudgingDeps,
  shownOf: (run: Run) => Effect.Effect<ReadonlyArray<Shown>>,
  toStep: (id: string, step: C.Step) => Effect.Effect<Run, RecordStore.Failure>
) => {
  /** Every agent name in the run, blanked from what the judges read of each other. */
  const namesOf = (run: Run) => [...new Set(run.seats.map((s) => s.agent))]

  /** The ask alone to a seat whose session goes on; with the whole context to one that has none. */
  const withContext = (run: Run, j: C.Judge, shown: ReadonlyArray<Shown>, ask: string) =>
    Effect.map(runs.get(run.id), (now) => {
      const session = now.seats.find((s) => s.key === j.seat)?.session ?? null
      return session === null ? `${judgePrompt(run.instruction, shown, j.order)}\n\n${ask}` : ask
    })

  const turnOf = (run: Run, seat: string, prompt: string) =>
    Effect.gen(function* () {
      const turn = yield* Effect.either(driver.turn({ run: run.id, seat, prompt, timeout: JUDGE_TURN_TIMEOUT }))
      if (turn._tag === "Left" && turn.left._tag === "SeatBusy") return yield* turn.left
      if (turn._tag === "Left") return { text: null, problem: turn.left.message }
      if (!turn.right.usable) return { text: null, problem: turn.right.problem ?? "its agent's turn failed" }
      return { text: turn.right.text, problem: "" }
    })

  /** One judge's turn of deliberation, appended to the record. */
  const deliberateOne = (runId: string, seat: string, round: number, rounds: number, shown: ReadonlyArray<Shown>) =>
    Effect.gen(function* () {
      const run = yield* runs.get(runId)
      const c = compOf(run)
      const j = c.judges.find((x) => x.seat === seat)!
      const labels = shown.map((s) => s.label)
      const ask = D.deliberatePrompt(D.transcript(c.judges, c.deliberation, seat, namesOf(run)), labels, round, rounds)
      const got = yield* turnOf(run, seat, yield* withContext(run, j, shown, ask))
      const said: C.Deliberation = got.text === null
        ? { seat, round, text: `(its turn failed: ${got.problem})`, pick: null }
        : { seat, round, text: D.turnText(got.text), pick: VoteAnswer.parsePick(got.text, labels) }
      return yield* change(runId, (cur) => ({ competition: { ...cur, deliberation: [...cur.deliberation, said] } }))
    })

  /** One judge's private vote, with one retry in the same session; recorded once it is final. */
  const voteOne = (runId: string, seat: string, shown: ReadonlyArray<Shown>) =>
    Effect.gen(function* () {
      const run = yield* runs.get(runId)
      const c = compOf(run)
      const j = c.judges.find((x) => x.seat === seat)!
      const labels = shown.map((s) => s.label)
      const ask = D.votePrompt(D.transcript(c.judges, c.deliberation, seat, namesOf(run)), labels)
      let prompt = yield* withContext(run, j, shown, ask)
      const record = (vote: C.Vote) => change(runId, (cur) => ({ competition: { ...cur, votes: [...cur.votes.filter((v) => v.seat !== seat), vote] } }))
      for (let retries = 0;; retries++) {
        const got = yield* turnOf(run, seat, prompt)
        if (got.text === null) return yield* record({ seat, label: null, failure: got.problem, retries })
        const parsed = VoteAnswer.parseVote(got.text, labels)
        if (parsed._tag === "ok") return yield* record({ seat, label: parsed.label, failure: "", retries })
        if (retries >= JUDGE_RETRIES) return yield* record({ seat, label: null, failure: parsed.reason, retries })
        // The same session hears only the nudge; a seat with none gets the whole context and the ask again.
        const nudge = VoteAnswer.voteNudge(parsed.reason, labels)
        const whole = yield* withContext(run, j, shown, `${ask}\n\n${nudge}`)
        prompt = whole === `${ask}\n\n${nudge}` ? nudge : whole
      }
    })

  /** Only when the first choices differ: each round, the judges speak in seat order, each turn recorded as it ends. */
  const deliberate = (run: Run, settings: GraphSettings) =>
    Effect.gen(function* () {
      const c = compOf(run)
      if (settings.deliberateRounds > 0 && D.split(c.judges)) {
        const shown = yield* shownOf(run)
        for (const t of D.turnsLeft(c.judges, settings.deliberateRounds, c.deliberation))
          yield* deliberateOne(run.id, t.seat, t.round, settings.deliberateRounds, shown)
      }
      return yield* toStep(run.id, "vote")
    })

  /** Every judge that ranked votes alone, all at once; one whose vote is recorded is not asked again. */
  const vote = (run: Run) =>
    Effect.gen(function* () {
      const c = compOf(run)
      const shown = yield* shownOf(run)
      const asked = D.answered(c.judges).filter((j) => !c.votes.some((v) => v.seat === j.seat))
      yield* Effect.all(asked.map((j) => voteOne(run.id, j.seat, shown)), { concurrency: "unbounded" })
      return yield* toStep(run.id, "tally")
    })

  return { deliberate, vote }
}
