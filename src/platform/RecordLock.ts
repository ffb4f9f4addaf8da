/**
 * The per-record lock: a file created new (`<id>.lock`) that says one writer
 * on the machine is in the middle of a read-modify-write of that record.
 *
 * Taking it is a create-new, so at most one writer holds a lock that is
 * there. The hard part is a lock left by a writer that was killed: it must be
 * broken, and breaking is where two writers can both end up holding it (both
 * see it stale, one removes it and creates its own, the other removes *that*
 * and creates its own). So breaking is a step only one breaker can win:
 *
 * 1. A breaker names the stale lock by its identity (what it holds, its inode,
 *    mtime and size), read so that a lock swapped mid-look is not mistaken for
 *    the one judged.
 * 2. It creates `<lock>.break-<hash of that identity>`, create-new. Only one
 *    breaker ever creates the marker for one identity; the others go back to
 *    waiting.
 * 3. The winner looks again and removes the lock only if it is still the one
 *    judged. Nobody else can have removed it meanwhile (its owner is gone; every
 *    other breaker lost step 2) and nobody can create one while it is there,
 *    so the lock removed is exactly the stale one; then it drops its marker.
 *    After that every writer races on the create-new again, which one wins.
 *
 * A breaker killed between 2 and 3 leaves its marker, which ages like any
 * lock and is broken the same way, one level up (a few levels at most: each
 * needs a kill inside a window of microseconds).
 *
 * Age is measured two ways, and the lock is stale when either passes the
 * limit: by its mtime, and by how long this writer has watched the same lock
 * sit unchanged. The second is what keeps a lock whose mtime is in the future
 * (the clock was stepped back) from blocking its record until that future
 * arrives; it also breaks a lock that is a directory, which no writer of
 * magi's makes.
 *
 * A writer removes only its own lock (its random token is the content): a
 * writer stalled past the limit must not remove the next holder's.
 */
import { FileSystem } from "@effect/platform"
import { Clock, Data, Duration, Effect, Option, Random } from "effect"
import * as NodeCrypto from "node:crypto"

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

/** Levels of break markers followed before waiting instead (each level needs a kill mid-break). */
const MAX_BREAK_DEPTH = 3

/** A lock file bigger than this is none of magi's; it is named by its stat alone. */
const LOCK_CONTENT_MAX = 4096

export class LockError extends Data.TaggedError("LockError")<{
  /** `busy`: gave up waiting; `io`: the lock could not be created at all. */
  readonly reason: "busy" | "io"
  readonly message: string
}> {}

export interface LockTiming {
  readonly staleMs?: number
  readonly retryMs?: number
  readonly giveUpMs?: number
}

type Look =
  | { readonly _tag: "gone" }
  /** Changing under the look, or not statable: judge again next time. */
  | { readonly _tag: "unsure" }
  | { readonly _tag: "there"; readonly identity: string; readonly mtime: number; readonly directory: boolean }

const mtimeOf = (info: FileSystem.File.Info) => Option.getOrElse(Option.map(info.mtime, (d) => d.getTime()), () => 0)

const statKey = (info: FileSystem.File.Info) =>
  `${info.type}|${Option.getOrElse(info.ino, () => 0)}|${mtimeOf(info)}|${info.size}`

/** What sits at `path` now, named so that a different lock there gets a different name. */
const look = (fs: FileSystem.FileSystem, path: string): Effect.Effect<Look> =>
  Effect.gen(function* () {
    const first = yield* Effect.either(fs.stat(path))
    if (first._tag === "Left")
      return first.left._tag === "SystemError" && first.left.reason === "NotFound" ? { _tag: "gone" as const } : { _tag: "unsure" as const }
    const content =
      first.right.type === "File" && Number(first.right.size) <= LOCK_CONTENT_MAX
        ? yield* fs.readFileString(path).pipe(Effect.orElseSucceed(() => ""))
        : ""
    const second = yield* Effect.either(fs.stat(path))
    if (second._tag === "Left") return { _tag: "gone" as const }
    if (statKey(first.right) !== statKey(second.right)) return { _tag: "unsure" as const }
    const identity = NodeCrypto.createHash("sha256").update(`${statKey(first.right)}\n${content}`).digest("hex").slice(0, 16)
    return { _tag: "there" as const, identity, mtime: mtimeOf(first.right), directory: first.right.type === "Directory" }
  }).pipe(Effect.catchAllDefect(() => Effect.succeed({ _tag: "unsure" as const })))

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
    /** Since when this writer has watched each path hold the same identity. */
    const watched = new Map<string, { readonly identity: string; readonly since: number }>()

    // A plain create-new write: one step, where a linked temp file is three.
    // A breaker looking in the instant between create and fill sees an empty
    // file with a fresh mtime, which is never stale, and its two looks differ
    // in size, so it judges again later.
    const create = (path: string) =>
      fs.writeFileString(path, token, { flag: "wx" }).pipe(
        Effect.as(true),
        Effect.catchIf(
          (e) => e._tag === "SystemError" && e.reason === "AlreadyExists",
          () => Effect.succeed(false)
        ),
        Effect.mapError((e) => new LockError({ reason: "io", message: `cannot take the lock ${path}: ${e.message}` }))
      )

    /** The lock at `path` if it is stale now; none while it may still be live. */
    const staleAt = (path: string) =>
      Effect.gen(function* () {
        const seen = yield* look(fs, path)
        if (seen._tag !== "there") return Option.none<Extract<Look, { _tag: "there" }>>()
        const now = yield* Clock.currentTimeMillis
        const before = watched.get(path)
        const since = before !== undefined && before.identity === seen.identity ? before.since : now
        watched.set(path, { identity: seen.identity, since })
        const age = Math.max(now - seen.mtime, now - since)
        return age > staleMs ? Option.some(seen) : Option.none()
      })

    /** Remove the lock at `path` if it still is `identity`, as the one breaker allowed to. */
    const breakStale = (path: string, identity: string, depth: number): Effect.Effect<void> =>
      Effect.gen(function* () {
        const marker = `${path}.break-${identity}`
        const won = yield* create(marker).pipe(Effect.orElseSucceed(() => false))
        if (!won) {
          // Another breaker is at it, or was killed at it: its marker ages too.
          if (depth >= MAX_BREAK_DEPTH) return
          const stuck = yield* staleAt(marker)
          if (Option.isSome(stuck)) yield* breakStale(marker, stuck.value.identity, depth + 1)
          return
        }
        const still = yield* look(fs, path)
        yield* Effect.gen(function* () {
          if (still._tag === "there" && still.identity === identity)
            yield* fs.remove(path, { recursive: still.directory }).pipe(Effect.ignore)
        }).pipe(Effect.ensuring(release(marker)))
      })

    const release = (path: string) =>
      fs.readFileString(path).pipe(
        Effect.flatMap((held) => (held === token ? fs.remove(path) : Effect.void)),
        Effect.ignore
      )

    const attempt = Effect.gen(function* () {
      if (yield* create(lockPath)) return true
      const stale = yield* staleAt(lockPath)
      if (Option.isNone(stale)) return false
      yield* breakStale(lockPath, stale.value.identity, 0)
      return yield* create(lockPath)
    })

    // Each try is uninterruptible from creating the lock to handing it to
    // `body` (so an interruption never leaves a lock nobody releases); the
    // waits between tries are interruptible, so a writer told to stop while
    // it waits stops at once.
    const tryOnce = Effect.acquireUseRelease(
      attempt,
      (held) => (held ? Effect.map(body, Option.some) : Effect.succeedNone),
      (held) => (held ? release(lockPath) : Effect.void)
    )
    const started = yield* Clock.currentTimeMillis
    for (let tries = 0; ; tries++) {
      const done = yield* tryOnce
      if (Option.isSome(done)) return done.value
      if ((yield* Clock.currentTimeMillis) - started >= giveUpMs)
        return yield* new LockError({
          reason: "busy",
          message: `${what} is being updated by another process (${lockPath} kept changing hands for ${giveUpMs / 1000}s); try again`
        })
      // Backing off, with jitter, so twenty waiters do not hammer the disk
      // (and starve the holder) in lockstep.
      const backoff = Math.min(retryMs * 1.5 ** tries, LOCK_RETRY_MAX_MS)
      yield* Effect.sleep(Duration.millis(backoff * (0.5 + (yield* Random.next))))
    }
  })

/**
 * Writers in one process queue here, per key, rather than spinning on the
 * lock file against each other; the lock file is what other processes see.
 * Per key, so one record's stuck lock never delays a write to another.
 */
export const makeLocalQueue = () => {
  const queues = new Map<string, { readonly semaphore: Effect.Semaphore; users: number }>()
  return <A, E, R>(key: string, body: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.suspend(() => {
      let entry = queues.get(key)
      if (entry === undefined) {
        entry = { semaphore: Effect.unsafeMakeSemaphore(1), users: 0 }
        queues.set(key, entry)
      }
      const mine = entry
      mine.users++
      return mine.semaphore.withPermits(1)(body).pipe(
        Effect.ensuring(
          Effect.sync(() => {
            if (--mine.users === 0) queues.delete(key)
          })
        )
      )
    })
}
