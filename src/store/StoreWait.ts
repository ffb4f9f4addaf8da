/**
 * Writes that must land: settling a turn, moving its task on, letting go of
 * or renewing a claim. A store that is briefly away (PostgreSQL restarted,
 * its connections full) must not turn a finished step into one that is done
 * again, so these are retried on a `Schedule` until the store answers,
 * saying once that they wait and once that the store is back.
 */
import { Duration, Effect, Ref, Schedule } from "effect"

/**
 * How a write waits for the store: quickly at first, then every 5 s, for
 * up to half an hour (longer than any outage worth waiting out; after it
 * the failure is the caller's to report as before).
 */
export const STORE_WAIT = Schedule.exponential(Duration.millis(200)).pipe(
  Schedule.union(Schedule.spaced(Duration.seconds(5))),
  Schedule.upTo(Duration.minutes(30))
)

/**
 * The store's errors that pass when the store answers again: the backend
 * said no (a disk, a database away) or a lock stayed busy. A record that
 * cannot be read, or an id no path is built from, stays so: never waited on.
 */
export const storeAway = (e: { readonly _tag: string }): boolean => e._tag === "StoreFailed" || e._tag === "LockBusy"

/**
 * `effect`, retried while it fails with an error `retryable` says is the
 * store's (all of them by default), logging `what` once when it starts to
 * wait and once when the store answers again.
 */
export const untilStoreAnswers = <A, E extends { readonly message: string }, R>(
  what: string,
  effect: Effect.Effect<A, E, R>,
  retryable: (e: E) => boolean = () => true
): Effect.Effect<A, E, R> =>
  Effect.gen(function* () {
    const waited = yield* Ref.make(false)
    return yield* effect.pipe(
      Effect.tapError((e) =>
        retryable(e)
          ? Effect.flatMap(
            Ref.getAndSet(waited, true),
            (before) => before ? Effect.void : Effect.logWarning(`${what}: waiting for the store to answer (${e.message})`)
          )
          : Effect.void
      ),
      Effect.retry({ schedule: STORE_WAIT, while: retryable }),
      Effect.tap(() => Effect.flatMap(Ref.get(waited), (w) => (w ? Effect.logWarning(`${what}: the store answers again`) : Effect.void)))
    )
  })
