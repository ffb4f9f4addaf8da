/**
 * The task store: `<home>/queue/<id>.json`, one task a file, and
 * `<id>.lock`, the claim of the loop working on it.
 *
 * Files for the same reason as questions: `magi task` at a terminal, an
 * agent filing a follow-up from inside a run, `magi web` and the loop all
 * write tasks, and a rename is the one cross-process atomic write that needs
 * no server. The files themselves are the shared `platform/RecordStore`'s
 * (atomic writes, the per-record lock, listings that skip and explain an
 * unreadable file, ids by prefix or suffix); this module adds what is the
 * queue's own: stamping `updated_at`, the list order, filing under a fresh
 * id, removal rules and claims.
 *
 * Two different locks, because they live for different spans: the writer
 * lock (`<id>.write.lock`) for the milliseconds of one update, the claim
 * (`<id>.lock`) for as long as a loop has the task running, hours maybe,
 * during which the owner may still hold or reprioritize it.
 */
import { FileSystem, Error as PlatformError } from "@effect/platform"
import { Clock, Context, Data, Effect, Either, Layer, Option, Random } from "effect"
import * as NodePath from "node:path"
import { createAtomically } from "../platform/AtomicFile.js"
import * as RecordStore from "../platform/RecordStore.js"
import type * as StoreBackend from "../platform/StoreBackend.js"
import { MagiHome } from "../platform/MagiHome.js"
import * as T from "./Task.js"
import type { Task } from "./Task.js"

/**
 * A claim whose content cannot be read is someone's until it is this old: a
 * create-new caught between create and fill on a filesystem without hard
 * links looks the same for an instant.
 */
const UNREADABLE_CLAIM_GRACE_MS = 10_000

/** `<home>/queue`. */
export const queueDir = (home: { readonly dir: string }) => NodePath.join(home.dir, "queue")

// ---------------------------------------------------------------------------
// Errors

export class TaskStoreError extends Data.TaggedError("TaskStoreError")<{ readonly message: string }> {}

/** No task, or more than one, matches what was asked for. */
export class TaskNotFound extends Data.TaggedError("TaskNotFound")<{ readonly message: string }> {}

export type TaskReadError = TaskNotFound | T.UnreadableTask | TaskStoreError

const io = (what: string) => (e: PlatformError.PlatformError) => new TaskStoreError({ message: `${what}: ${e.message}` })

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

/**
 * The largest task file read: an instruction is a task file of a few
 * kilobytes; a megabyte leaves room for a pasted log and refuses nonsense.
 */
export const TASK_MAX_BYTES = 1024 * 1024

/** The task kind in the home folder (`<home>/queue`), as `StoreBackend.records` and `magi store migrate` take a kind. */
export const taskRecords: StoreBackend.KindOptions<Task, TaskNotFound, T.UnreadableTask, TaskStoreError> = {
  folder: "queue",
  kind: { noun: "task", label: T.shortId, decode: T.decode, encode: T.encode, idOf: (t: Task) => t.id, maxBytes: TASK_MAX_BYTES },
  errors: {
    notFound: (message) => new TaskNotFound({ message }),
    unreadable: (message) => new T.UnreadableTask({ message }),
    failed: (message) => new TaskStoreError({ message })
  },
  // `<id>.lock` is the claim, held for a whole run; the writer lock of one
  // update lives beside it under its own name.
  lockName: (id) => `${id}.write.lock`
}

export const make = Effect.fn("TaskStore.make")(function* (root: string, alive: (pid: number) => boolean = pidAlive) {
  const fs = yield* FileSystem.FileSystem
  const { folder: _folder, ...options } = taskRecords
  const records = yield* RecordStore.make({ ...options, root })
  const claimPath = (id: string) => NodePath.join(root, `${id}.lock`)
  const bound = <A, E>(e: Effect.Effect<A, E, FileSystem.FileSystem>) => Effect.provideService(e, FileSystem.FileSystem, fs)
  const nowDate = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

  const stamp = (t: Task) => Effect.map(nowDate, (now): Task => ({ ...t, updated_at: T.timestamp(now) }))

  const put = (t: Task) => Effect.flatMap(stamp(t), (stamped) => Effect.as(records.put(stamped), stamped))

  // The store hands back the same scan while the folder is unchanged; the
  // sorted listing made from it is kept with it, so a warm tick sorts nothing.
  let sortedFor: { readonly scan: RecordStore.Scan<Task>; readonly listing: Listing } | undefined
  const scan = Effect.map(records.scan, (s): Listing => {
    if (sortedFor?.scan === s) return sortedFor.listing
    const listing = { tasks: [...s.records].sort(T.listOrder), unreadable: s.skipped.map((k) => ({ id: k.id, message: k.reason })) }
    sortedFor = { scan: s, listing }
    return listing
  })

  const list = Effect.map(scan, (l) => l.tasks)

  const resolveId = (wanted: string) => records.resolve(wanted)
  const get = (wanted: string) => records.get(wanted)

  const update = <E>(wanted: string, change: (t: Task) => Either.Either<Task, E>) =>
    records.update(wanted, (current) =>
      Effect.gen(function* () {
        const next = yield* change(current)
        return next === current ? current : yield* stamp(next)
      })
    )

  const add = (input: Omit<T.NewTask, "id" | "now">, shape: (t: Task) => Either.Either<Task, T.TaskRefused> = Either.right) =>
    Effect.gen(function* () {
      const now = yield* nowDate
      for (;;) {
        const id = T.makeId(now, yield* Random.nextIntBetween(0, 0x10000))
        const t = yield* shape(T.make({ ...input, id, now }))
        // Create-new: a fresh id that lands on an existing task draws again.
        if (yield* records.create(t)) return t
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
      const id = yield* records.resolve(wanted)
      return yield* records.withLock(
        id,
        Effect.gen(function* () {
          const current = yield* records.read(id)
          yield* T.removable(current)
          const holder = yield* claimant(id)
          if (Option.isSome(holder))
            return yield* new T.TaskRefused({
              reason: "running",
              message: `task ${T.shortId(id)} is claimed by a live magi loop (pid ${holder.value}); hold it, or stop that loop first`
            })
          yield* fs.remove(records.pathOf(id)).pipe(Effect.mapError(io(`remove task ${id}`)))
          return current
        })
      )
    })

  // The folder's mtime, which every write moves (a rename into it); 0 with no task in it.
  const revision = Effect.gen(function* () {
    const ids = yield* records.ids.pipe(Effect.orElseSucceed(() => [] as ReadonlyArray<string>))
    return ids.length === 0 ? 0 : yield* records.revision
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
