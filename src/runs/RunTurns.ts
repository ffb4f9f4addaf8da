/**
 * A seat's busy lock, and what a turn is given: the pieces `RunDriver` runs
 * a turn with. Shared by `magi run` (first turn, `--resume`) and the waiter
 * (delivering an answer), so a seat's session moves forward the same way
 * whoever drives it.
 *
 * A turn holds its seat's busy lock (`<run dir>/leases/seat-<key>.lease`)
 * from before its agent starts until the seat is written back: created only
 * if absent, so two processes (the waiter, `magi run --resume`) can never
 * both resume one session, and beaten while the turn runs. A turn whose
 * process was killed stops beating, and the seat is free again once the lock
 * ages out.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import { Clock, Data, Duration, Effect, Fiber, Option, Random, Schedule, Schema } from "effect"
import type { MagiName } from "../agents/Prompts.js"
import { createAtomically, writeAtomically } from "../platform/AtomicFile.js"
import * as Lease from "../questions/Lease.js"
import { timestamp } from "../questions/Question.js"

/**
 * How often a running turn re-beats its leases: well inside `LEASE_TTL` (90 s),
 * so four beats can be lost to a stalled disk before anyone thinks it dead.
 */
export const TURN_BEAT = Duration.seconds(20)

/** A turn that cannot start: the reason is shown to the owner. */
export class TurnRefused extends Data.TaggedError("TurnRefused")<{ readonly message: string }> {}

/** Another turn holds the seat: nothing ran and nothing is wrong; try again later. */
export class SeatBusy extends Data.TaggedError("SeatBusy")<{ readonly message: string }> {}

const busyId = (seat: string) => `seat-${seat}`

/** The seat's lock: a lease (so `seatBusy` and the owner read it as one) plus whose it is. */
const SeatLock = Schema.Struct({ ...Lease.Lease.fields, token: Schema.String })
const decodeSeatLock = Schema.decodeUnknownOption(Schema.parseJson(SeatLock))

const lockBody = (token: string) =>
  Effect.map(
    Clock.currentTimeMillis,
    (ms) => JSON.stringify({ kind: "daemon", pid: process.pid, beat_at: timestamp(new Date(ms)), token } satisfies typeof SeatLock.Type) + "\n"
  )

/** The token in the seat's lock, if there is a readable one. */
const lockToken = (dir: string, seat: string) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) => fs.readFileString(Lease.leasePath(dir, busyId(seat)))).pipe(
    Effect.option,
    Effect.map((body) => Option.map(Option.flatMap(body, decodeSeatLock), (l) => l.token))
  )

/**
 * Is the lock on `seat` still someone's? A beat inside `LEASE_TTL` says so. A
 * lock that cannot be read is judged by its file's age instead: it may be a
 * create-new write caught between create and fill (on a filesystem without
 * hard links), and taking over a live turn's seat is the worse mistake.
 */
const lockHeld = (dir: string, seat: string) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const now = yield* Clock.currentTimeMillis
    const lease = yield* Lease.read(dir, busyId(seat))
    if (Option.isSome(lease)) return Lease.isFresh(lease.value, new Date(now))
    const mtime = yield* fs.stat(Lease.leasePath(dir, busyId(seat))).pipe(
      Effect.map((s) => Option.getOrUndefined(Option.map(s.mtime, (d) => d.getTime()))),
      Effect.orElseSucceed(() => undefined)
    )
    return mtime !== undefined && now - mtime <= Lease.LEASE_TTL_MS
  })

/**
 * Take the seat's lock before anything about the turn is written, or fail
 * with `SeatBusy`. A lock left by a killed turn is taken over; two takers of
 * the same stale lock can both remove it and both create, so the token is
 * read back and only the one whose token stayed goes on.
 */
export const takeSeat = (dir: string, seat: string) =>
  Effect.gen(function* () {
    const path = Lease.leasePath(dir, busyId(seat))
    const token = `${process.pid}-${(yield* Random.nextIntBetween(0, 2 ** 31)).toString(36)}`
    const busy = new SeatBusy({ message: `seat ${seat} has a turn running in another process` })
    const create = Effect.flatMap(lockBody(token), (body) => createAtomically(path, body))
    if (!(yield* create)) {
      if (yield* lockHeld(dir, seat)) return yield* busy
      yield* Effect.logInfo(`seat ${seat}'s lock outlived its turn; taking it over`)
      yield* Effect.flatMap(FileSystem.FileSystem, (fs) => fs.remove(path)).pipe(Effect.ignore)
      if (!(yield* create)) return yield* busy
    }
    const held = yield* lockToken(dir, seat)
    if (Option.getOrUndefined(held) !== token) return yield* busy
    return token
  })

/** Refresh the seat's lock, unless it is no longer ours (then it is another turn's to keep). */
export const beatSeat = (dir: string, seat: string, token: string) =>
  Effect.gen(function* () {
    if (Option.getOrUndefined(yield* lockToken(dir, seat)) !== token)
      return yield* Effect.logWarning(`seat ${seat}'s lock was taken over while its turn ran`)
    yield* writeAtomically(Lease.leasePath(dir, busyId(seat)), yield* lockBody(token))
  }).pipe(Effect.catchAll((e) => Effect.logDebug(`could not beat seat ${seat}'s lock: ${e.message}`)))

export const releaseSeat = (dir: string, seat: string, token: string) =>
  Effect.gen(function* () {
    if (Option.getOrUndefined(yield* lockToken(dir, seat)) === token) yield* Lease.clear(dir, busyId(seat))
  })

/** Is the seat's lock held by a live turn (in any process)? */
export const seatHeld = (dir: string, seat: string) =>
  Effect.gen(function* () {
    const lease = yield* Lease.read(dir, busyId(seat))
    return Option.isSome(Lease.heldAt(lease, new Date(yield* Clock.currentTimeMillis)))
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
}
