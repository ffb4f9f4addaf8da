/**
 * `magi run stop` and the run page's Stop: end the turn a run has in flight,
 * whichever process runs it. The stop is asked in the run's record
 * (`stop_requested_at`), because the process running the turn may be
 * `magi run` in another terminal or a `magi serve` on another host sharing
 * PostgreSQL; that process looks for it every `STOP_POLL` and ends the turn
 * (`RunDriver.turn`), leaving the run `stopped`, resumable. This side waits a
 * little for it to happen and says which it was.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import { Clock, Data, Duration, Effect, Option, Schedule } from "effect"
import { defaultHostName, MagiConfig } from "../platform/MagiConfig.js"
import * as Q from "../questions/Question.js"
import { inFlight, resumable } from "./RunStatus.js"
import { makeSeatLocks } from "./RunTurns.js"
import { RunStore, runsHere, withoutStopRequest, type Run } from "./Runs.js"

export class RunNotStopped extends Data.TaggedError("RunNotStopped")<{ readonly message: string }> {}

/** How long `stop` waits to see the turn ended before saying it only asked: many polls of the owning process, on any host. */
export const STOP_WAIT = Duration.seconds(30)

export type StopPlan =
  | { readonly _tag: "Refuse"; readonly why: string }
  /** No process is running a turn of it: marked stopped here and now. */
  | { readonly _tag: "MarkStopped" }
  /** A turn is (or may be) in flight somewhere: ask its process. */
  | { readonly _tag: "Ask" }

/**
 * What stopping `run` takes. `turnHere` is whether a seat's lock is held on
 * this machine; `here` whether the run lives on this host (only there can a
 * lock be seen). Refused where nothing is running (saying what the owner
 * may mean instead), and for a run already over.
 */
export const stopPlan = (run: Run, turnHere: boolean, here: boolean): StopPlan => {
  const short = Q.shortId(run.id)
  if (!resumable(run.status)) return { _tag: "Refuse", why: `run ${short} is ${run.status}; there is no turn of it to stop` }
  if (run.status === "stopped") return { _tag: "Refuse", why: `run ${short} is already stopped; magi run --resume ${short} continues it` }
  if (turnHere || (inFlight(run.status) && !here)) return { _tag: "Ask" }
  if (inFlight(run.status)) return { _tag: "MarkStopped" }
  return {
    _tag: "Refuse",
    why: run.status === "waiting"
      ? `run ${short} is waiting on you and no turn of it is running, so there is nothing to stop; withdraw its question (magi answer ID --withdraw) if you do not mean to answer it`
      : `run ${short} is ${run.status} and no turn of it is running, so there is nothing to stop`
  }
}

/** Stop run `wanted`'s turn; what happened, in a line. */
export const stopRun = Effect.fn("stopRun")(function* (wanted: string) {
  const runs = yield* RunStore
  const fs = yield* FileSystem.FileSystem
  const self = Option.match(yield* Effect.serviceOption(MagiConfig), { onNone: defaultHostName, onSome: (c) => c.hostName })
  const refuse = (message: string) => new RunNotStopped({ message })
  // Not found stays not found (the page answers 404); only a refusal is RunNotStopped.
  const run = yield* runs.get(wanted)
  const locks = yield* makeSeatLocks.pipe(Effect.provideService(FileSystem.FileSystem, fs))
  let busy = false
  for (const seat of run.seats) busy ||= yield* locks.held(runs.dir(run.id), seat.key)
  const plan = stopPlan(run, busy, runsHere(run, self))
  const short = Q.shortId(run.id)
  const stoppedLine = `run ${short} stopped; continue it with magi run --resume ${short}`
  if (plan._tag === "Refuse") return yield* refuse(plan.why)
  if (plan._tag === "MarkStopped") {
    yield* runs.setStatus(run.id, "stopped", `stopped by the owner; continue it with magi run --resume ${short}`).pipe(
      Effect.mapError((e) => refuse(e.message))
    )
    return `${stoppedLine} (no turn of it was running)`
  }
  const at = Q.timestamp(new Date(yield* Clock.currentTimeMillis))
  yield* runs.update(run.id, (r) => (resumable(r.status) && r.status !== "stopped" ? { ...r, stop_requested_at: at } : withoutStopRequest(r))).pipe(
    Effect.mapError((e) => refuse(e.message))
  )
  // The owning process clears the request when it sets the run's new status.
  const settled = yield* runs.get(run.id).pipe(
    Effect.repeat({ schedule: Schedule.spaced(Duration.millis(250)), until: (r) => r.stop_requested_at === undefined }),
    Effect.zipRight(runs.get(run.id)),
    Effect.timeoutOption(STOP_WAIT),
    // fallback: no pid read is no process to stop
    Effect.orElseSucceed(() => Option.none())
  )
  if (Option.isSome(settled))
    return settled.value.status === "stopped" ? `${stoppedLine}: its agent's process was ended` : `run ${short} is ${settled.value.status} now`
  return `asked run ${short}'s turn to stop; the magi running it${run.host === undefined ? "" : ` on host ${run.host}`} has not stopped it within ${
    Duration.toSeconds(STOP_WAIT)
  }s (it looks every second while the turn runs; is that process alive?)`
})
