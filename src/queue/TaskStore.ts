/**
 * The task store: `<home>/queue/<id>.json`, one task a file, and
 * `<id>.lock`, the claim of the loop working on it.
 *
 * Files for the same reason as questions: `magi task` at a terminal, an
 * agent filing a follow-up from inside a run, `magi web` and the loop all
 * write tasks, and a rename is the one cross-process atomic write that needs
 * no server. Writes go through a temp file and a rename; every
 * read-modify-write holds the task's writer lock, so two writers in the same
 * instant never lose each other's change.
 *
 * Two different locks, because they live for different spans: the writer
 * lock (`<id>.write.lock`) for the milliseconds of one update, the claim
 * (`<id>.lock`) for as long as a loop has the task running, hours maybe,
 * during which the owner may still hold or reprioritize it.
 */
import { FileSystem, Error as PlatformError } from "@effect/platform"
import { Clock, Context, Data, Duration, Effect, Either, Layer, Option, Random, Schedule } from "effect"
import * as NodePath from "node:path"
import { createAtomically, writeAtomically } from "../platform/AtomicFile.js"
import { MagiHome } from "../platform/MagiHome.js"
import * as T from "./Task.js"
import type { Task } from "./Task.js"

/** A writer lock older than this was left by a writer that died mid-update (an update takes milliseconds). */
export const WRITE_LOCK_STALE = Duration.seconds(10)
const WRITE_LOCK_RETRY = Duration.millis(15)
const WRITE_LOCK_GIVE_UP = Duration.seconds(10)

/**
 * A claim whose content cannot be read is someone's until it is this old: a
 * create-new caught between create and fill on a filesystem without hard
 * links looks the same for an instant.
 */
const UNREADABLE_CLAIM_GRACE_MS = 10_000

/** Filesystem timestamps are coarse on some filesystems; a directory mtime older than this is settled. */
const MTIME_SLACK_MS = 50

/** `<home>/queue`. */
export const queueDir = (home: { readonly dir: string }) => NodePath.join(home.dir, "queue")

// ---------------------------------------------------------------------------
// Errors

export class TaskStoreError extends Data.TaggedError("TaskStoreError")<{ readonly message: string }> {}

/** No task, or more than one, matches what was asked for. */
export class TaskNotFound extends Data.TaggedError("TaskNotFound")<{ readonly message: string }> {}

export type TaskReadError = TaskNotFound | T.UnreadableTask | TaskStoreError

const io = (what: string) => (e: PlatformError.PlatformError) => new TaskStoreError({ message: `${what}: ${e.message}` })
const isNotFound = (e: PlatformError.PlatformError) => e._tag === "SystemError" && e.reason === "NotFound"

/** Is the process `pid` alive on this machine? EPERM means alive but not ours. */
export const pidAlive = (pid: number): boolean => {
  if (!Number.isInteger(pid) || pid <= 0) return false
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM"
  }
}

// ---------------------------------------------------------------------------
// The service

/** A listing: every readable task in list order, and why each other file is not one. */
export interface Listing {
  readonly tasks: ReadonlyArray<Task>
  readonly unreadable: ReadonlyArray<{ readonly id: string; readonly message: string }>
}

export interface TaskStoreShape {
  readonly root: string
  /**
   * File a new task under a fresh id (never over an existing one); the task
   * as written. `shape` may change it (block it, say) before the one write.
   */
  readonly add: (
    input: Omit<T.NewTask, "id" | "now">,
    shape?: (t: Task) => Either.Either<Task, T.TaskRefused>
  ) => Effect.Effect<Task, TaskStoreError | T.TaskRefused>
  /** Write a task whole, atomically, stamping `updated_at`; the task as written. */
  readonly put: (t: Task) => Effect.Effect<Task, TaskStoreError>
  /** Load by id, unique prefix, or unique suffix (the short id). */
  readonly get: (idOrPrefix: string) => Effect.Effect<Task, TaskReadError>
  /** Expand an id, prefix or suffix to exactly one stored id; ambiguity is refused naming the matches. */
  readonly resolveId: (idOrPrefix: string) => Effect.Effect<string, TaskNotFound | TaskStoreError>
  /** Every readable task, in list order (priority, then newest). */
  readonly list: Effect.Effect<ReadonlyArray<Task>, TaskStoreError>
  /** `list`, plus the files that could not be read and why. */
  readonly scan: Effect.Effect<Listing, TaskStoreError>
  /**
   * Read-modify-write one task under its writer lock. `change` sees the task
   * as it is on disk now; returning the same object writes nothing.
   */
  readonly update: <E>(idOrPrefix: string, change: (t: Task) => Either.Either<Task, E>) => Effect.Effect<Task, E | TaskReadError>
  /**
   * Delete a task, under its lock, once `T.removable` agrees and no live loop
   * holds its claim; the task as it was.
   */
  readonly remove: (idOrPrefix: string) => Effect.Effect<Task, T.TaskRefused | TaskReadError>
  /** Take the claim on `id` for this process (create-new); false when someone holds it. */
  readonly claim: (id: string) => Effect.Effect<boolean, TaskStoreError>
  /** Give up this process's claim on `id`; another's is left alone. */
  readonly unclaim: (id: string) => Effect.Effect<void>
  /** The pid holding the claim on `id`, if a live one does. */
  readonly claimant: (id: string) => Effect.Effect<Option.Option<number>>
  /** Remove every claim whose process is gone; the ids swept. */
  readonly sweepClaims: Effect.Effect<ReadonlyArray<string>>
  /** Changes whenever a task file is added, removed or rewritten; 0 when there are none. */
  readonly revision: Effect.Effect<number>
}

export class TaskStore extends Context.Tag("magi/TaskStore")<TaskStore, TaskStoreShape>() {
  /** A store at an explicit root, over whichever `FileSystem` is provided. */
  static at = (root: string, alive: (pid: number) => boolean = pidAlive) => Layer.effect(TaskStore, make(root, alive))
  /** The owner's queue, `<home>/queue`. */
  static layer = Layer.effect(
    TaskStore,
    Effect.flatMap(MagiHome, (home) => make(queueDir(home)))
  )
}

/** Ids are path parts: only a name that cannot traverse is ever looked up directly. */
const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/

/** FNV-1a over a string, folded into a positive 31-bit number. */
const fnv = (text: string, seed = 0x811c9dc5): number => {
  let h = seed
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return h >>> 0
}

export const make = Effect.fn("TaskStore.make")(function* (root: string, alive: (pid: number) => boolean = pidAlive) {
  const fs = yield* FileSystem.FileSystem
  const pathOf = (id: string) => NodePath.join(root, `${id}.json`)
  const claimPath = (id: string) => NodePath.join(root, `${id}.lock`)
  const writeLockPath = (id: string) => NodePath.join(root, `${id}.write.lock`)
  // Writers in this process queue here rather than spin on the lock file.
  const localWriters = yield* Effect.makeSemaphore(1)
  const bound = <A, E>(e: Effect.Effect<A, E, FileSystem.FileSystem>) => Effect.provideService(e, FileSystem.FileSystem, fs)
  const nowDate = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

  const write = (t: Task) =>
    bound(writeAtomically(pathOf(t.id), T.encode(t))).pipe(Effect.mapError(io(`write task ${t.id}`)))

  const put = (t: Task) =>
    Effect.gen(function* () {
      const stamped = { ...t, updated_at: T.timestamp(yield* nowDate) }
      yield* write(stamped)
      return stamped
    })

  const readPath = (id: string): Effect.Effect<Task, TaskReadError> =>
    fs.readFileString(pathOf(id)).pipe(
      Effect.mapError((e) =>
        isNotFound(e) ? new TaskNotFound({ message: `no task ${id}` }) : new TaskStoreError({ message: `read ${pathOf(id)}: ${e.message}` })
      ),
      Effect.flatMap((body) => T.decode(body, pathOf(id))),
      // A copied or hand-renamed file would otherwise be written back under
      // another name than the one it was read from.
      Effect.filterOrFail(
        (t) => t.id === id,
        (t) => new T.UnreadableTask({ message: `${pathOf(id)} holds task \`${t.id}\`, not the one its name says; rename it or fix its id` })
      )
    )

  const storedIds = fs.readDirectory(root).pipe(
    Effect.map((names) => names.filter((n) => n.endsWith(".json")).map((n) => n.slice(0, -5))),
    Effect.catchIf(isNotFound, () => Effect.succeed<string[]>([])),
    Effect.mapError(io(`list ${root}`))
  )

  const rootMtime = fs.stat(root).pipe(
    Effect.map((s) => Option.getOrElse(Option.map(s.mtime, (d) => d.getTime()), () => -1)),
    Effect.orElseSucceed(() => -1)
  )

  /**
   * The last full scan, and the directory's mtime when it was taken. Every
   * write lands by a rename into the root, which moves its mtime, so an
   * unchanged mtime (safely older than the scan) means an unchanged queue and
   * the loop's tick reads one stat instead of every task. Wall time, not
   * `Clock`: this compares against the filesystem's own timestamps.
   */
  let cached: { readonly mtime: number; readonly listing: Listing } | undefined

  const scan = Effect.gen(function* () {
    const before = yield* rootMtime
    if (cached !== undefined && before !== -1 && cached.mtime === before) return cached.listing
    const takenAt = Date.now()
    const ids = yield* storedIds
    const read = yield* Effect.forEach(ids, (id) => Effect.either(readPath(id)), { concurrency: 64 })
    const tasks: Task[] = []
    const unreadable: Array<{ id: string; message: string }> = []
    read.forEach((r, i) => {
      if (Either.isRight(r)) tasks.push(r.right)
      // Gone since the directory was read: not a problem, just not there.
      else if (r.left._tag !== "TaskNotFound") unreadable.push({ id: ids[i]!, message: r.left.message })
    })
    tasks.sort(T.listOrder)
    const listing: Listing = { tasks, unreadable }
    const after = yield* rootMtime
    cached = after === before && after !== -1 && after < takenAt - MTIME_SLACK_MS ? { mtime: after, listing } : undefined
    return listing
  }).pipe(Effect.withSpan("TaskStore.scan"))

  const list = Effect.map(scan, (l) => l.tasks)

  const resolveId = (wanted: string) =>
    Effect.gen(function* () {
      if (SAFE_ID.test(wanted) && (yield* fs.exists(pathOf(wanted)).pipe(Effect.orElseSucceed(() => false)))) return wanted
      const hits = wanted === "" ? [] : (yield* storedIds).filter((id) => id.startsWith(wanted) || id.endsWith(wanted))
      if (hits.length === 1) return hits[0]!
      if (hits.length === 0) return yield* new TaskNotFound({ message: `no task matches \`${wanted}\`` })
      return yield* new TaskNotFound({ message: `\`${wanted}\` matches ${hits.length} tasks: ${hits.sort().join(", ")}; give more of the id` })
    })

  const get = (wanted: string) => Effect.flatMap(resolveId(wanted), readPath)

  /** Hold the writer lock on `id` (create-new; one left by a killed writer is broken once stale) while `body` runs. */
  const withWriteLock = <A, E>(id: string, body: Effect.Effect<A, E>) => {
    const lock = writeLockPath(id)
    const token = `${process.pid} ${Math.random().toString(36).slice(2, 12)}\n`
    const create = fs.writeFileString(lock, token, { flag: "wx" }).pipe(
      Effect.as(true),
      Effect.catchIf(
        (e) => e._tag === "SystemError" && e.reason === "AlreadyExists",
        () => Effect.succeed(false)
      ),
      Effect.mapError(io(`lock task ${id}`))
    )
    const tryAcquire = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      if (yield* create) return true
      const since = yield* fs.stat(lock).pipe(
        Effect.map((s) => Option.getOrElse(Option.map(s.mtime, (d) => d.getTime()), () => now)),
        Effect.orElseSucceed(() => now)
      )
      if (now - since <= Duration.toMillis(WRITE_LOCK_STALE)) return false
      yield* fs.remove(lock).pipe(Effect.ignore)
      return yield* create
    })
    const acquire = tryAcquire.pipe(
      Effect.filterOrFail(
        (held) => held,
        () => "held" as const
      ),
      Effect.retry({
        while: (e) => e === "held",
        schedule: Schedule.spaced(WRITE_LOCK_RETRY).pipe(Schedule.upTo(WRITE_LOCK_GIVE_UP))
      }),
      Effect.catchIf(
        (e): e is "held" => e === "held",
        () => new TaskStoreError({ message: `task ${T.shortId(id)} is being updated by another process (${lock} is held); try again` })
      )
    )
    const ensureRoot = fs.makeDirectory(root, { recursive: true }).pipe(Effect.mapError(io(`create ${root}`)))
    return localWriters.withPermits(1)(
      Effect.acquireUseRelease(
        Effect.zipRight(ensureRoot, acquire),
        () => body,
        () =>
          fs.readFileString(lock).pipe(
            Effect.flatMap((held) => (held === token ? fs.remove(lock) : Effect.void)),
            Effect.ignore
          )
      )
    )
  }

  const update = <E>(wanted: string, change: (t: Task) => Either.Either<Task, E>) =>
    Effect.gen(function* () {
      const id = yield* resolveId(wanted)
      return yield* withWriteLock(
        id,
        Effect.gen(function* () {
          const current = yield* readPath(id)
          const next = yield* change(current)
          return next === current ? current : yield* put(next)
        })
      )
    }).pipe(Effect.withSpan("TaskStore.update", { attributes: { id: wanted } }))

  const add = (input: Omit<T.NewTask, "id" | "now">, shape: (t: Task) => Either.Either<Task, T.TaskRefused> = Either.right) =>
    Effect.gen(function* () {
      const now = yield* nowDate
      for (;;) {
        const id = T.makeId(now, yield* Random.nextIntBetween(0, 0x10000))
        const t = yield* shape(T.make({ ...input, id, now }))
        // Create-new: a fresh id that lands on an existing task draws again.
        const created = yield* bound(createAtomically(pathOf(id), T.encode(t))).pipe(Effect.mapError(io(`file task ${id}`)))
        if (created) return t
      }
    })

  // -- claims -------------------------------------------------------------------

  /** Whose the claim on `id` is: none when there is no claim, `unreadable` when it says nothing yet. */
  const claimHolder = (id: string) =>
    fs.readFileString(claimPath(id)).pipe(
      Effect.map((text) => {
        const pid = Number(text.trim().split(/\s+/)[0])
        return Option.some(Number.isInteger(pid) && pid > 0 ? pid : ("unreadable" as const))
      }),
      Effect.orElseSucceed(() => Option.none<number | "unreadable">())
    )

  const claimLive = (id: string) =>
    Effect.gen(function* () {
      const holder = yield* claimHolder(id)
      if (Option.isNone(holder)) return false
      if (holder.value !== "unreadable") return alive(holder.value)
      const mtime = yield* fs.stat(claimPath(id)).pipe(
        Effect.map((s) => Option.getOrElse(Option.map(s.mtime, (d) => d.getTime()), () => 0)),
        Effect.orElseSucceed(() => 0)
      )
      return Date.now() - mtime < UNREADABLE_CLAIM_GRACE_MS
    })

  const claim = (id: string) =>
    Effect.gen(function* () {
      const take = bound(createAtomically(claimPath(id), `${process.pid}\n`)).pipe(Effect.mapError(io(`claim task ${id}`)))
      if (yield* take) return true
      if (yield* claimLive(id)) return false
      // Left by a loop that died: sweep it and take it now.
      yield* fs.remove(claimPath(id)).pipe(Effect.ignore)
      return yield* take
    })

  const unclaim = (id: string) =>
    Effect.gen(function* () {
      const holder = yield* claimHolder(id)
      if (Option.isSome(holder) && holder.value === process.pid) yield* fs.remove(claimPath(id)).pipe(Effect.ignore)
    })

  const claimant = (id: string) =>
    Effect.gen(function* () {
      const holder = yield* claimHolder(id)
      if (Option.isNone(holder) || holder.value === "unreadable" || !alive(holder.value)) return Option.none<number>()
      return Option.some(holder.value)
    })

  const sweepClaims = Effect.gen(function* () {
    const names = yield* fs.readDirectory(root).pipe(Effect.orElseSucceed((): string[] => []))
    const swept: string[] = []
    for (const name of names) {
      if (!name.endsWith(".lock") || name.endsWith(".write.lock")) continue
      const id = name.slice(0, -5)
      if (yield* claimLive(id)) continue
      yield* fs.remove(claimPath(id)).pipe(Effect.ignore)
      swept.push(id)
    }
    return swept
  })

  const remove = (wanted: string) =>
    Effect.gen(function* () {
      const id = yield* resolveId(wanted)
      return yield* withWriteLock(
        id,
        Effect.gen(function* () {
          const current = yield* readPath(id)
          yield* T.removable(current)
          const holder = yield* claimant(id)
          if (Option.isSome(holder))
            return yield* new T.TaskRefused({
              reason: "running",
              message: `task ${T.shortId(id)} is claimed by a live magi loop (pid ${holder.value}); hold it, or stop that loop first`
            })
          yield* fs.remove(pathOf(id)).pipe(Effect.mapError(io(`remove task ${id}`)))
          return current
        })
      )
    })

  const revision = Effect.gen(function* () {
    const names = (yield* fs.readDirectory(root).pipe(Effect.orElseSucceed((): string[] => []))).filter((n) => n.endsWith(".json")).sort()
    if (names.length === 0) return 0
    const stamps = yield* Effect.forEach(
      names,
      (n) =>
        fs.stat(NodePath.join(root, n)).pipe(
          Effect.map((s) => `${n}@${Option.getOrElse(Option.map(s.mtime, (d) => d.getTime()), () => 0)}`),
          Effect.orElseSucceed(() => `${n}@gone`)
        ),
      { concurrency: 64 }
    )
    // Never 0 with files present: 0 means an empty queue.
    return fnv(stamps.join("\n")) || 1
  })

  return {
    root,
    add,
    put,
    get,
    resolveId,
    list,
    scan,
    update,
    remove,
    claim,
    unclaim,
    claimant,
    sweepClaims,
    revision
  } satisfies TaskStoreShape
})
