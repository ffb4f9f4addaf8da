/**
 * The per-record lock: a file created new (`<id>.lock`) that says one writer
 * on the machine is in the middle of a read-modify-write of that record.
 *
 * It is the file backend's one claim primitive (`FileClaim`: create-new,
 * and a stale holder broken by exactly one breaker) with the writer's rule:
 * stale once older than `LOCK_STALE_MS`, by its mtime or by how long this
 * writer has watched the same lock sit unchanged (so a lock dated in the
 * future by a clock stepped back, or a directory in its place, is broken
 * too). Writers wait for it with backoff and report "busy" only after
 * `LOCK_GIVE_UP_MS`.
 *
 * A writer removes only its own lock (its random token is the content): a
 * writer stalled past the limit must not remove the next holder's.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import { Clock, Data, Duration, Effect, Option, RcMap, Schedule, Scope } from "effect"
import * as NodeCrypto from "node:crypto"
import * as FileClaim from "./FileClaim.js"

/**
 * A lock older than this was left by a writer that died mid-update: a real
 * update holds it for a read, a transition and a rename, milliseconds.
 */
export const LOCK_STALE_MS = 10_000
/** How soon a writer first retries a held lock. */
export const LOCK_RETRY_MS = 15
/** The longest it waits between retries: a person answering notices a fifth of a second, not less. */
export const LOCK_RETRY_MAX_MS = 200
/**
 * How long a writer waits before saying the record is busy. Twice the stale
 * limit, so a lock that simply sits there is always broken first: only a lock
 * that keeps changing hands for this long (a storm of live writers) is
 * reported.
 */
export const LOCK_GIVE_UP_MS = 2 * LOCK_STALE_MS

export class LockError extends Data.TaggedError("LockError")<{
  /** `busy`: gave up waiting; `io`: the lock could not be created at all. */
  readonly reason: "busy" | "io"
  readonly message: string
  /** The lock file, and how long a busy writer waited on it. */
  readonly lock: string
  readonly waitedMs: number
}> {}

export interface LockTiming {
  readonly staleMs?: number
  readonly retryMs?: number
  readonly giveUpMs?: number
}

/** A try that found the lock taken, retried until the backoff gives up. */
const TAKEN = Symbol("taken")

const randomToken = () => `${process.pid} ${NodeCrypto.randomBytes(9).toString("base64url")}\n`

/**
 * Hold the lock at `lockPath` while `body` runs; `what` names the record in
 * the busy message ("question ab12"). The lock's directory must exist.
 */
export const hold = <A, E, R>(
  lockPath: string,
  what: string,
  body: Effect.Effect<A, E, R>,
  timing?: LockTiming
): Effect.Effect<A, E | LockError, R | FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const staleMs = timing?.staleMs ?? LOCK_STALE_MS
    const retryMs = timing?.retryMs ?? LOCK_RETRY_MS
    const giveUpMs = timing?.giveUpMs ?? LOCK_GIVE_UP_MS
    const token = randomToken()
    const watch = FileClaim.makeWatch()

    // A writer's lock is stale by age alone: a real update holds it for
    // milliseconds. A directory where the lock should be (no writer of
    // magi's makes one) ages the same way and is broken too.
    const isStale = (seen: FileClaim.There) => Effect.map(watch.ageOf(lockPath, seen, seen.mtime), (age) => age > staleMs)

    const attempt = FileClaim.take(fs, lockPath, token, isStale, watch, staleMs).pipe(
      Effect.mapError((e) => new LockError({ reason: "io", message: `cannot take the lock ${lockPath}: ${e.message}`, lock: lockPath, waitedMs: 0 }))
    )

    // Each try is uninterruptible from creating the lock to handing it to
    // `body` (so an interruption never leaves a lock nobody releases); the
    // waits between tries are interruptible, so a writer told to stop while
    // it waits stops at once.
    const tryOnce = Effect.acquireUseRelease(
      attempt,
      (held) => (held ? Effect.map(body, Option.some) : Effect.succeedNone),
      (held) => (held ? FileClaim.removeIfHolds(fs, lockPath, token) : Effect.void)
    )
    // Backing off, with jitter, so twenty waiters do not hammer the disk
    // (and starve the holder) in lockstep; "busy" only once `giveUpMs` has
    // passed since the first try.
    const started = yield* Clock.currentTimeMillis
    const backoff = Schedule.exponential(Duration.millis(retryMs), 1.5).pipe(
      Schedule.union(Schedule.spaced(Duration.millis(LOCK_RETRY_MAX_MS))),
      Schedule.jitteredWith({ min: 0.5, max: 1.5 }),
      Schedule.checkEffect(() => Effect.map(Clock.currentTimeMillis, (now) => now - started < giveUpMs))
    )
    return yield* tryOnce.pipe(
      Effect.flatMap(Option.match({ onNone: () => Effect.fail(TAKEN), onSome: Effect.succeed })),
      Effect.retry({ schedule: backoff, while: (e) => e === TAKEN }),
      Effect.catchIf(
        (e): e is typeof TAKEN => e === TAKEN,
        () =>
          new LockError({
            reason: "busy",
            lock: lockPath,
            waitedMs: giveUpMs,
            message: `${what} is being updated by another process (${lockPath} kept changing hands for ${giveUpMs / 1000}s); try again`
          })
      )
    )
  })

/**
 * Writers in one process queue here, per key, rather than spinning on the
 * lock file against each other; the lock file is what other processes see.
 * Per key, so one record's stuck lock never delays a write to another.
 */
export const makeLocalQueue = (): <A, E, R>(key: string, body: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R> => {
  // One semaphore per key while anyone holds or waits for it: the map drops
  // a key when its last user lets go. Made synchronously, as the store's
  // parts are; its scope is never closed because a semaphore holds nothing
  // to release.
  const semaphores = Effect.runSync(
    Effect.flatMap(Scope.make(), (scope) => RcMap.make({ lookup: (_key: string) => Effect.makeSemaphore(1) }).pipe(Scope.extend(scope)))
  )
  return (key, body) => Effect.scoped(Effect.flatMap(RcMap.get(semaphores, key), (semaphore) => semaphore.withPermits(1)(body)))
}
