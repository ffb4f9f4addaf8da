/**
 * Carries the owner's words (`magi say`, the run page's box) to a seat at
 * rest: every beat of the loop that owns a home, after the waiter's, it
 * looks at this host's runs for words waiting (`Said.toStart`) and resumes
 * that seat's session with them, then settles the run as any turn does.
 *
 * A word to a seat whose turn is running waits in the record; that turn's
 * end frees the seat and the next beat delivers it. The words are taken by
 * the turn itself, under the seat's lock (`RunDriver.turn`), so two loops, a
 * `magi run --resume` and this one never give one word twice. A run on
 * another host is that host's loop's: its worktree and sessions are there.
 */
import { Effect, Either, FiberMap, Option } from "effect"
import { Rosters } from "../agents/AgentRoster.js"
import { hasSession } from "../agents/Agents.js"
import * as Prompts from "../agents/Prompts.js"
import { MagiConfig } from "../platform/MagiConfig.js"
import * as Q from "../questions/Question.js"
import { RUN_TURN_TIMEOUT } from "../runs/NewRun.js"
import { RunDriver } from "../runs/RunDriver.js"
import { RunStore, withoutStopRequest, type Run } from "../runs/Runs.js"
import * as Said from "../runs/Said.js"

export interface SaidLoopShape {
  /** Look once; the turns it starts run in the background. Which runs' seats it started. */
  readonly tick: Effect.Effect<ReadonlyArray<string>>
  /** Wait until no turn of this loop is in flight (tests, orderly shutdown). */
  readonly settle: Effect.Effect<void>
}

export class SaidLoop extends Effect.Service<SaidLoop>()("magi/SaidLoop", {
  scoped: Effect.suspend(() => make())
}) {
  static layer = SaidLoop.Default
}

export const make = Effect.fn("SaidLoop.make")(function* () {
  const runs = yield* RunStore
  const driver = yield* RunDriver
  const rosters = yield* Rosters
  const self = (yield* MagiConfig).hostName
  const turns = yield* FiberMap.make<string, void, never>()

  /** The seat cannot be resumed: its words are marked refused with why, and the run stays where it was. */
  const refuse = (run: Run, seat: string, why: string) =>
    runs.update(run.id, (r) => ({ ...r, said: Said.refuseQueued(r.said, seat, why) }), { keepUpdatedAt: true }).pipe(
      Effect.zipRight(Effect.logWarning(`run ${Q.shortId(run.id)}: the owner's words to seat ${seat} cannot be given: ${why}`)),
      // fallback: a refusal not recorded is tried again on the next tick; the warning says so
      Effect.ignore
    )

  const resumableSeat = (run: Run, seat: string) =>
    Effect.gen(function* () {
      const found = run.seats.find((s) => s.key === seat)
      if (found === undefined) return Either.left(`the run has no seat ${seat}`)
      const roster = yield* Effect.either(rosters.forRepo(run.repo))
      if (Either.isLeft(roster)) return Either.left(`the agent roster cannot be read: ${roster.left.message}`)
      const agent = roster.right.get(found.agent)
      if (Option.isNone(agent)) return Either.left(`agent ${found.agent} has left the roster`)
      if (!hasSession(agent.value.kind, found))
        return Either.left(`seat ${seat} has no ${agent.value.kind} session to resume, and magi never starts a fresh agent in its place`)
      return Either.right(undefined)
    })

  const deliver = (run: Run, seat: string) =>
    Effect.gen(function* () {
      const can = yield* resumableSeat(run, seat)
      if (Either.isLeft(can)) return yield* refuse(run, seat, can.left)
      // The run is running while its seat works, as with `magi run --resume`;
      // set only if it is still at rest with words waiting, under its lock.
      let before: { status: Run["status"]; reason: string } | undefined
      yield* runs.update(run.id, (r) => {
        if (!Said.atRest(r.status) || Said.queuedFor(r.said, seat).length === 0) return r
        before = { status: r.status, reason: r.reason }
        return { ...withoutStopRequest(r), status: "running", reason: "" }
      })
      if (before === undefined) return
      const was = before
      // fallback: a status not put back is left for the settle below or a resume
      const restore = runs.update(run.id, (r) => (r.status === "running" ? { ...r, status: was.status, reason: was.reason } : r)).pipe(Effect.ignore)
      const result = yield* driver.turn({ run: run.id, seat, prompt: (magi) => Prompts.sayPrompt(magi), timeout: RUN_TURN_TIMEOUT, saidOnly: true }).pipe(
        Effect.either,
        // fallback: best-effort status on an interrupted turn; a resume reads the record as it is
        Effect.onInterrupt(() => runs.setStatus(run.id, "stalled", "interrupted; continue with magi run --resume").pipe(Effect.ignore))
      )
      if (Either.isRight(result)) {
        // display: the settle after a delivered turn is logged; the turn stands
        yield* driver.finish(run.id, result.right).pipe(Effect.catchAll((e) => Effect.logWarning(`run ${run.id}: could not settle its turn: ${e.message}`)))
        return yield* Effect.logInfo(`run ${Q.shortId(run.id)}: gave seat ${seat} the owner's words`)
      }
      const e = result.left
      // Stopped by the owner: the run is `stopped` already. Busy: another
      // process's turn has the seat, takes the words and settles the run.
      if (e._tag === "TurnStopped" || e._tag === "SeatBusy") return
      yield* restore
      // fallback: unread, the words are not refused (no write); the next tick looks again
      const still = yield* runs.get(run.id).pipe(Effect.map((r) => Said.queuedFor(r.said, seat).length > 0), Effect.orElseSucceed(() => false))
      if (still) yield* refuse(run, seat, e.message)
      // display: a delivery that failed is logged; its words stay queued for the next tick
    }).pipe(Effect.catchAll((e) => Effect.logWarning(`run ${run.id}: the owner's words could not be given: ${e.message}`)))

  const tick = Effect.gen(function* () {
    const started: Array<string> = []
    // fallback: an unread list starts nothing this tick (no write); the next tick reads again
    const all = yield* runs.list.pipe(Effect.orElseSucceed(() => [] as ReadonlyArray<Run>))
    for (const run of all) {
      if (Said.seatsWaiting(run.said).length === 0 || (yield* FiberMap.has(turns, run.id))) continue
      const busy = new Set<string>()
      for (const s of run.seats) if (yield* driver.seatBusy(run, s.key)) busy.add(s.key)
      for (const seat of Said.toStart(run, self, busy)) {
        started.push(`${run.id}/${seat}`)
        yield* FiberMap.run(turns, run.id, Effect.interruptible(deliver(run, seat)))
      }
    }
    return started as ReadonlyArray<string>
  }).pipe(Effect.withSpan("SaidLoop.tick"))

  return { tick, settle: FiberMap.awaitEmpty(turns) } satisfies SaidLoopShape
})
