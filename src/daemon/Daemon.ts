/**
 * One loop per home. Two waiters over the same questions would each resume
 * the same seat, which is the one thing the waiter exists to prevent, so the
 * loop that runs (`magi serve`, or `magi web` in-process) holds
 * `<home>/daemon.json` and refreshes it every `HEARTBEAT`; a second is refused
 * with the owner's pid while that heartbeat is fresh. A loop that was killed
 * stops beating, and after `STALE_AFTER` the next one takes the home over.
 * A loop that was only paused (SIGSTOP, a debugger) finds the new owner's
 * record at its next beat and stops, rather than run beside it.
 */
import { FileSystem } from "@effect/platform"
import { Clock, Data, Deferred, Duration, Effect, Option, Random, Schedule, Schema } from "effect"
import * as NodePath from "node:path"
import { writeAtomically } from "../platform/AtomicFile.js"
import * as Q from "../questions/Question.js"

/** How often the owning loop says it is alive. */
export const HEARTBEAT = Duration.seconds(5)

/** Six missed heartbeats: the loop is gone, not just slow. */
export const STALE_AFTER = Duration.seconds(30)

export const DaemonRecord = Schema.Struct({
  pid: Schema.Number,
  /** Tells this loop's record from another's with a reused pid. */
  token: Schema.String,
  started_at: Q.Timestamp,
  beat_at: Q.Timestamp,
  /** The queue tasks this loop has a turn running for, and their runs. */
  current: Schema.optionalWith(Schema.Array(Schema.Struct({ task: Schema.String, run: Schema.String })), { default: () => [] }),
  /** Tasks this loop has brought to done since it started. */
  completed: Schema.optionalWith(Schema.Number, { default: () => 0 })
})
export type DaemonRecord = typeof DaemonRecord.Type

export class HomeTaken extends Data.TaggedError("HomeTaken")<{ readonly pid: number; readonly message: string }> {}

export const daemonFile = (home: string) => NodePath.join(home, "daemon.json")

const decodeRecord = Schema.decodeUnknownOption(Schema.parseJson(DaemonRecord))

/** The record in `home`, if there is a readable one. */
export const read = Effect.fn("Daemon.read")(function* (home: string) {
  const fs = yield* FileSystem.FileSystem
  return Option.flatMap(yield* fs.readFileString(daemonFile(home)).pipe(Effect.option), decodeRecord)
})

/** Is the loop that wrote `record` still alive at `now`? */
export const isLive = (record: DaemonRecord, now: Date): boolean =>
  now.getTime() - Date.parse(record.beat_at) <= Duration.toMillis(STALE_AFTER)

/** Owning a home: this loop's token, and an effect that fails once it no longer owns it. */
export interface Owned {
  readonly token: string
  /**
   * Never succeeds; fails with `HomeTaken` when a beat finds another loop's
   * record (this one was paused past `STALE_AFTER` and taken over). Run the
   * loop's work raced against it, so the work stops with the ownership.
   */
  readonly lost: Effect.Effect<never, HomeTaken>
  /** Write the record now, with what `doing` says (after the queue started or settled a task). */
  readonly refresh: Effect.Effect<void>
}

/** What the loop is doing, written into every beat of its record. */
export interface Doing {
  readonly current: ReadonlyArray<{ readonly task: string; readonly run: string }>
  readonly completed: number
}

const idle: Effect.Effect<Doing> = Effect.succeed({ current: [], completed: 0 })

/**
 * Own `home` for the rest of the current scope: refuse if another live loop
 * holds it, beat every `HEARTBEAT`, and let go on the way out.
 */
export const own = Effect.fn("Daemon.own")(function* (home: string, doing: Effect.Effect<Doing> = idle) {
  const fs = yield* FileSystem.FileSystem
  const token = `${process.pid}-${(yield* Random.nextIntBetween(0, 2 ** 31)).toString(36)}`
  const startedAt = Q.timestamp(new Date(yield* Clock.currentTimeMillis))
  const file = daemonFile(home)

  const taken = (other: DaemonRecord) =>
    new HomeTaken({
      pid: other.pid,
      message: `another magi loop (pid ${other.pid}, since ${other.started_at}) already owns ${home}; only one may wait on its questions at a time`
    })

  const write = Effect.gen(function* () {
    const now = Q.timestamp(new Date(yield* Clock.currentTimeMillis))
    const { current, completed } = yield* doing
    const record: DaemonRecord = { pid: process.pid, token, started_at: startedAt, beat_at: now, current, completed }
    yield* writeAtomically(file, JSON.stringify(record, null, 2) + "\n")
  }).pipe(Effect.provideService(FileSystem.FileSystem, fs))

  const current = yield* read(home)
  const now = new Date(yield* Clock.currentTimeMillis)
  if (Option.isSome(current) && current.value.token !== token && isLive(current.value, now))
    return yield* taken(current.value)
  yield* write.pipe(Effect.orDie)
  // Two loops that found the home free at once both wrote; the last rename
  // won, and the other learns it here.
  const after = yield* read(home)
  if (Option.isSome(after) && after.value.token !== token) return yield* taken(after.value)

  yield* Effect.addFinalizer(() =>
    Effect.gen(function* () {
      const mine = yield* read(home)
      if (Option.isSome(mine) && mine.value.token === token) yield* fs.remove(file).pipe(Effect.ignore)
    })
  )
  const lost = yield* Deferred.make<never, HomeTaken>()
  // Each beat looks before it writes: a record with another token means this
  // loop was given up for dead and replaced, and writing over it would make
  // two owners. A missing or unreadable record is still ours to rewrite.
  const beat = Effect.gen(function* () {
    const seen = yield* read(home)
    if (Option.isSome(seen) && seen.value.token !== token)
      return yield* new HomeTaken({
        pid: seen.value.pid,
        message: `another magi loop (pid ${seen.value.pid}, since ${seen.value.started_at}) took ${home} over while this one was not beating (paused?); this one stops`
      })
    yield* write.pipe(Effect.catchAll((e) => Effect.logWarning(`could not refresh ${file}: ${e.message}`)))
  })
  yield* Effect.forkScoped(
    Effect.repeat(beat, Schedule.spaced(HEARTBEAT)).pipe(
      Effect.catchAll((e) => Effect.zipRight(Effect.logWarning(e.message), Deferred.fail(lost, e)))
    )
  )
  const refresh = Effect.gen(function* () {
    const seen = yield* read(home)
    if (Option.isNone(seen) || seen.value.token === token) yield* write.pipe(Effect.ignore)
  }).pipe(Effect.provideService(FileSystem.FileSystem, fs))
  return { token, lost: Deferred.await(lost), refresh } satisfies Owned
})
