/**
 * The loop that owns a home, as a process runs it: the waiter and the
 * queue's loop on one beat, under the home's and the host's claims
 * (`waiterLoop`, what `magi serve` runs), and the same loop beside the page
 * in `magi web` (`inProcessWaiter`), where any failure is one warning and the
 * page keeps serving.
 */
import { Cause, Duration, Effect, Layer, Option, Queue, Schedule } from "effect"
import * as Daemon from "../daemon/Daemon.js"
import { QueueLoop } from "../daemon/QueueLoop.js"
import { Landings } from "../land/Landings.js"
import { SaidLoop } from "../daemon/SaidLoop.js"
import { Waiter } from "../daemon/Waiter.js"
import { TurnSlots } from "../agents/TurnSlots.js"
import { Hosts } from "../platform/Hosts.js"
import { MagiHome } from "../platform/MagiHome.js"
import { waiterLayer } from "./Layers.js"

/**
 * Own the home and run the waiter until interrupted; fails with `HomeTaken`
 * when another loop owns it, or takes it over later (this one was paused past
 * the heartbeat's staleness), which stops the waiter. Provide
 * `waiterLayer(home)` around it. `announce` says, once the home is owned,
 * in the words of the command running it, that the loop runs there.
 */
export const waiterLoop = (announce: (home: string) => Effect.Effect<void>) =>
  Effect.scoped(
    Effect.gen(function* () {
      const home = yield* MagiHome
      const queue = yield* QueueLoop
      const owned = yield* Daemon.own(home.dir, queue.status)
      // The host's name, claimed on the store every host shares: a second
      // loop calling itself this host is refused here, before it resumes a
      // seat or takes a task.
      const slots = yield* TurnSlots
      const host = yield* (yield* Hosts).register(
        Effect.map(slots.load, (l) => ({ turns: l.running, queued: l.queued, waiting: l.waiting }))
      )
      // A turn queued or started is on the host's record at once, so the
      // page says "queued behind N turns" without waiting for the next beat.
      yield* Effect.forkScoped(Effect.forever(Effect.zipRight(Queue.take(slots.changed), host.refresh)))
      const waiter = yield* Waiter
      yield* announce(home.dir)
      // One beat: the waiter first (an answer that unblocks or finishes a
      // task is delivered before the queue looks), then the queue. The
      // waiter's own loop paces it: at once when an answer lands or an
      // asker lets go, else every `TICK`. A fixed five-second beat here
      // left every answer waiting for the next one (2.5 s on average, 3.2 s
      // median measured, where the waiter's wake-up takes milliseconds).
      const landings = yield* Landings
      // The owner's words to seats at rest (`magi say`) go after the
      // waiter's answers, before the queue starts new work; a loop built
      // without them (some tests) has none to carry.
      const said = yield* Effect.serviceOption(SaidLoop)
      const queueTurn = Effect.gen(function* () {
        if (Option.isSome(said)) yield* said.value.tick
        if ((yield* queue.tick).length > 0) yield* owned.refresh
        // An approval answered on the phone: the landing goes on to the merge in the background.
        yield* landings.tick
      })
      // The first to end, failure included: losing the home or the host name stops the loop.
      return yield* Effect.raceFirst(waiter.beats(queueTurn), Effect.raceFirst(owned.lost, host.lost))
    })
  )

/** The one line that says why the waiter does not run here, and what that costs. */
const notRunning = (cause: Cause.Cause<unknown>): string => {
  // A failure carries its own message; a crash is squashed to its error's.
  const error = Option.getOrElse(Cause.failureOption(cause), () => Cause.squash(cause))
  const why = typeof error === "object" && error !== null && "message" in error ? String(error.message) : String(error)
  if (typeof error === "object" && error !== null && "_tag" in error && error._tag === "HomeTaken")
    return `magi web is not running the waiter: ${why}. That loop delivers the answers; this server serves the page, and takes the loop over if that one stops.`
  return (
    `magi web is not running the waiter: ${why}. Answers are still recorded, but none reaches an agent ` +
    "whose `magi ask` is gone until this is fixed and magi web (or magi serve) is restarted."
  )
}

/**
 * How often a `magi web` that found another loop owning the home looks again.
 * That loop's record goes stale 30 s after it dies, so the answers stop
 * flowing for at most about a minute before this server picks the loop up.
 */
export const TAKEOVER_RETRY = Duration.seconds(30)

const isHomeTaken = (e: unknown): boolean => typeof e === "object" && e !== null && "_tag" in e && e._tag === "HomeTaken"

/**
 * The waiter inside `magi web`, for as long as the server runs: the same loop
 * as `magi serve`, so one command is enough for an answer to reach an agent
 * whose `magi ask` is gone. Its config is read here, not before serving: any
 * failure (a broken config, a crash later on) becomes one warning, and the
 * page keeps serving. Another loop owning the home is warned about once,
 * then watched: when it stops, this server takes over.
 */
export const inProcessWaiter = (home: Layer.Layer<MagiHome>, announce: (home: string) => Effect.Effect<void>) =>
  Effect.gen(function* () {
    let warned = false
    return yield* waiterLoop(announce).pipe(
      Effect.provide(waiterLayer(home)),
      Effect.tapError((e) =>
        isHomeTaken(e) && !warned
          ? Effect.zipRight(Effect.sync(() => (warned = true)), Effect.logWarning(notRunning(Cause.fail(e))))
          : Effect.void
      ),
      Effect.retry({ while: isHomeTaken, schedule: Schedule.spaced(TAKEOVER_RETRY) })
    )
    // display: the loop's end is logged; nothing is written after it
  }).pipe(Effect.catchAllCause((cause) => (Cause.isInterruptedOnly(cause) ? Effect.void : Effect.logWarning(notRunning(cause)))))
