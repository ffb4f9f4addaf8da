/**
 * A seat's busy lock, and what a turn is given: the pieces `RunDriver` runs
 * a turn with. Shared by `magi run` (first turn, `--resume`) and the waiter
 * (delivering an answer), so a seat's session moves forward the same way
 * whoever drives it.
 *
 * A turn holds its seat's lock (`<run dir>/leases/seat-<key>.lease`) from
 * before its agent starts until the seat is written back, so two processes
 * (the waiter, `magi run --resume`) never both resume one session. The lock
 * is a claim of the one claims primitive (`store/Claims`): renewed while
 * the turn runs, free again once its process is gone — at once on this
 * machine, where a dead pid is known (a `magi serve` killed with -9 and
 * started again picks its turns up in seconds), or after `LEASE_TTL`
 * without a renewal (a process paused or on a disk it cannot write).
 */
import { Data, Duration, Effect, Either, Fiber, Option, Schedule, Schema } from "effect"
import type { MagiName } from "../agents/Prompts.js"
import * as Claims from "../store/Claims.js"
import * as Lease from "../questions/Leases.js"

/**
 * How often a running turn re-beats its leases: well inside `LEASE_TTL` (90 s),
 * so four beats can be lost to a stalled disk before anyone thinks it dead.
 */
export const TURN_BEAT = Duration.seconds(20)

/** A turn that cannot start: the reason is shown to the owner. */
export class TurnRefused extends Data.TaggedError("TurnRefused")<{ readonly message: string }> {}

/**
 * The owner stopped the turn (`magi run stop`, the run's page): its agent's
 * process was ended and the run left `stopped`, resumable. Not a failure of
 * the turn, and nothing to retry.
 */
export class TurnStopped extends Schema.TaggedError<TurnStopped>()("TurnStopped", { run: Schema.String, seat: Schema.String }) {
  override get message() {
    return `the owner stopped seat ${this.seat}'s turn of run ${this.run}`
  }
}

/**
 * How often a running turn looks for the owner's stop request in its run's
 * record: a stop takes effect within about this long, whichever host or
 * process runs the turn, for one small read a second per turn.
 */
export const STOP_POLL = Duration.seconds(1)

/** Another turn holds the seat: nothing ran and nothing is wrong; try again later. */
export class SeatBusy extends Data.TaggedError("SeatBusy")<{ readonly message: string }> {}

/** A seat's lock outlives a silent holder by the question leases' ttl: the same stalled disk or suspended lid is forgiven. */
const SEAT_RULE: Claims.Staleness = { ttl: Lease.LEASE_TTL }

/** The seats' locks of one process: the claims are keyed by their file's path. */
export const makeSeatLocks = Effect.map(Claims.makeFiles((path) => path), (claims) => {
  const pathOf = (dir: string, seat: string) => Lease.leasePath(dir, `seat-${seat}`)
  return {
    /** Take the seat's lock before anything about the turn is written, or fail with `SeatBusy`. */
    take: (dir: string, seat: string): Effect.Effect<Claims.Claim, SeatBusy | Claims.ClaimsError> =>
      Effect.flatMap(claims.acquire(pathOf(dir, seat), SEAT_RULE, { kind: "daemon" }), (got) =>
        Either.isRight(got)
          ? Effect.succeed(got.right)
          : Effect.fail(new SeatBusy({ message: `seat ${seat} has a turn running in another process (pid ${got.left.owner.pid})` }))),
    /** Renew the lock, unless it is no longer ours (then it is another turn's to keep). */
    beat: (seat: string, claim: Claims.Claim) =>
      claims.renew(claim).pipe(
        Effect.flatMap((mine) => mine ? Effect.void : Effect.logWarning(`seat ${seat}'s lock was taken over while its turn ran`)),
        // fallback: a seat lock beat missed is retried at the next beat
        Effect.catchAll((e) => Effect.logDebug(`could not beat seat ${seat}'s lock: ${e.message}`))
      ),
    release: (claim: Claims.Claim) => claims.release(claim),
    /** Is the seat's lock held by a live turn (in any process)? */
    // fallback: a seat whose lock cannot be read counts as held, so no second turn starts on it
    held: (dir: string, seat: string) => claims.holder(pathOf(dir, seat), SEAT_RULE).pipe(Effect.map(Option.isSome), Effect.orElseSucceed(() => true))
  }
})

/** Keep `beat` going every `TURN_BEAT` while `body` runs. */
export const beating = <A, E, R, R2>(beat: Effect.Effect<void, never, R2>, body: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const beater = yield* Effect.fork(Effect.repeat(beat, Schedule.spaced(TURN_BEAT)))
    return yield* body.pipe(Effect.ensuring(Fiber.interrupt(beater)))
  })

/**
 * A turn's prompt, or how to write it once the seat's agent is known: the
 * prompt names magi as that agent's shell can run it (`Agents.magiNameFor`).
 */
export type TurnPrompt = string | ((magi: MagiName) => string)

export interface TurnInput {
  readonly run: string
  readonly seat: string
  readonly prompt: TurnPrompt
  readonly timeout: Duration.Duration
  /** Extra work to keep alive during the turn (the waiter beats its question lease). */
  readonly alsoBeat?: Effect.Effect<void>
  /** A turn only for the owner's queued words (`magi say`): refused, and not counted, when none are left. */
  readonly saidOnly?: boolean
}
