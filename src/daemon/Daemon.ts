/**
 * One loop per home. Two waiters over the same questions would each resume
 * the same seat, which is the one thing the waiter exists to prevent, so the
 * loop that runs (`magi serve`, or `magi web` in-process) holds the home's
 * claim, `<home>/daemon.json` (`Claims`), and renews it every `HEARTBEAT`; a
 * second is refused with the owner's pid while it is held. A loop killed on
 * this machine is known gone at once by its pid, so a restart a moment
 * later is let in; one that stopped beating otherwise is taken over after
 * `STALE_AFTER`. A loop that was only paused (SIGSTOP, a debugger) finds at
 * its next renewal that the home was taken over, and stops rather than run
 * beside the new owner.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import { Clock, Data, Deferred, Duration, Effect, Either, Option, Schedule, Schema } from "effect"
import * as NodePath from "node:path"
import * as Claims from "../store/Claims.js"
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

/** A loop holds its home while it beats; six missed heartbeats and it is gone. */
const HOME_CLAIM = { ttl: STALE_AFTER } as const

/** The home's claim: `daemon.json`, which is also the record the page reads (its detail says what the loop is doing). */
const claimsOf = (home: string) => Claims.makeFiles(() => daemonFile(home))

/**
 * The pid of the loop that owns `home` now, if a live one does: its beat
 * fresher than `STALE_AFTER`, and, on this machine, its process alive (a
 * loop killed with -9 is gone at once, not half a minute later).
 */
export const liveOwner = Effect.fn("Daemon.liveOwner")(function* (home: string) {
  const claims = yield* claimsOf(home)
  // display: the holder named in the "already running" message; none when it cannot be read
  const holder = yield* claims.holder("daemon", HOME_CLAIM).pipe(Effect.orElseSucceed(() => Option.none<Claims.Holding>()))
  return Option.map(holder, (h) => h.owner.pid)
})

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
  const claims = yield* claimsOf(home)
  const startedAt = Q.timestamp(new Date(yield* Clock.currentTimeMillis))
  const file = daemonFile(home)

  /** What the record says beside the claim: what the page shows of the loop. */
  const detail = Effect.gen(function* () {
    const { current, completed } = yield* doing
    return { started_at: startedAt, beat_at: Q.timestamp(new Date(yield* Clock.currentTimeMillis)), current, completed }
  })

  const got = yield* claims.acquire("daemon", HOME_CLAIM, yield* detail).pipe(Effect.orDie)
  if (Either.isLeft(got)) {
    const other = got.left
    const since = typeof other.detail.started_at === "string" ? other.detail.started_at : "a while"
    return yield* new HomeTaken({
      pid: other.owner.pid,
      message: `another magi loop (pid ${other.owner.pid}, since ${since}) already owns ${home}; only one may wait on its questions at a time`
    })
  }
  const mine = got.right
  yield* Effect.addFinalizer(() => claims.release(mine))

  const lost = yield* Deferred.make<never, HomeTaken>()
  /** The loop that took the home over, as its record names it (alive or not, it is not this one). */
  const takenOver = Effect.gen(function* () {
    const now = yield* read(home).pipe(Effect.provideService(FileSystem.FileSystem, fs))
    const pid = Option.getOrElse(Option.map(now, (r) => r.pid), () => 0)
    const since = Option.getOrElse(Option.map(now, (r) => r.started_at), () => "a moment ago")
    return new HomeTaken({
      pid,
      message: `another magi loop (pid ${pid}, since ${since}) took ${home} over while this one was not beating (paused?); this one stops`
    })
  })
  // Each beat renews the claim, which fails once another loop has taken the
  // home over (this one was given up for dead): writing on would make two owners.
  const beat = Effect.gen(function* () {
    const still = yield* claims.renew(mine, yield* detail).pipe(
      // fallback: a refresh that failed is logged and counts as done; the claim's own renewal decides ownership
      Effect.catchAll((e) => Effect.as(Effect.logWarning(`could not refresh ${file}: ${e.message}`), true))
    )
    if (!still) return yield* Effect.flip(takenOver)
  })
  yield* Effect.forkScoped(
    Effect.repeat(beat, Schedule.spaced(HEARTBEAT)).pipe(
      Effect.delay(HEARTBEAT),
      // display: the lost claim is logged and ends the daemon
      Effect.catchAll((e) => Effect.zipRight(Effect.logWarning(e.message), Deferred.fail(lost, e)))
    )
  )
  // fallback: a missed renewal is retried on the schedule
  const refresh = Effect.flatMap(detail, (d) => claims.renew(mine, d)).pipe(Effect.ignore)
  return { token: mine.token, lost: Deferred.await(lost), refresh } satisfies Owned
})
