/**
 * The task store: `<home>/queue/<id>.json`, one task a file, and
 * `<id>.lock`, the claim of the loop working on it.
 *
 * Files for the same reason as questions: `magi task` at a terminal, an
 * agent filing a follow-up from inside a run, `magi web` and the loop all
 * write tasks, and a rename is the one cross-process atomic write that needs
 * no server. The files themselves are the shared `store/files/RecordStore`'s
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
import * as FileSystem from "@effect/platform/FileSystem"
import { Clock, Data, Effect, Either, FiberMap, Layer, Option, Random, Schedule, Stream } from "effect"
import * as NodePath from "node:path"
import { untilStoreAnswers } from "../store/StoreWait.js"
import * as Claims from "../store/Claims.js"
import * as ShelfMove from "../store/ShelfMove.js"
import * as StoreBackend from "../store/StoreBackend.js"
import * as ConfiguredStore from "../platform/ConfiguredStore.js"
import * as RecordStore from "../store/files/RecordStore.js"
import { MagiHome } from "../platform/MagiHome.js"
import { DEFAULT_CLAIM_TTL_SECS, MagiConfig } from "../platform/MagiConfig.js"
import * as T from "./Task.js"
import type { Task } from "./Task.js"
import { monthOf } from "../questions/History.js"

/** The queue's folder in the home, and its key in the database. */
const QUEUE_FOLDER = "queue"

/** `<home>/queue`. */
export const queueDir = (home: { readonly dir: string }) => NodePath.join(home.dir, QUEUE_FOLDER)

/**
 * A task's claim is the loop's for as long as it renews it: `[host]
 * claim_ttl` (two minutes unless set), which survives a stalled disk or a
 * busy database without two loops running one task, while a loop on a
 * machine that went away is replaced within it; a loop that died on this
 * machine is replaced at once (its pid). This is the default's rule.
 */
export const TASK_CLAIM = Claims.acrossHosts(DEFAULT_CLAIM_TTL_SECS)

// ---------------------------------------------------------------------------
// Errors

/** The backend said no (the disk, the database); `cause` is what it said. */
export class TaskStoreError extends Data.TaggedError("TaskStoreError")<{ readonly message: string; readonly cause?: unknown }> {}

/** No task, or more than one, matches what was asked for. */
export class TaskNotFound extends Data.TaggedError("TaskNotFound")<{ readonly message: string }> {}

export type TaskReadError = TaskNotFound | T.UnreadableTask | TaskStoreError

/** Is the process `pid` alive on this machine? (The claims' rule, here for the queue's callers.) */
export const pidAlive = Claims.pidAlive

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
  /**
   * Take the claim on `id` for this process, kept fresh until `unclaim`;
   * false when a live holder has it. A holder is gone once its renewals
   * stop for `[host] claim_ttl`, or at once when its process is dead on this
   * machine.
   */
  readonly claim: (id: string) => Effect.Effect<boolean, TaskStoreError>
  /** Give up this process's claim on `id`; another's is left alone. */
  readonly unclaim: (id: string) => Effect.Effect<void>
  /** The pid holding the claim on `id`, if a live one does. */
  readonly claimant: (id: string) => Effect.Effect<Option.Option<number>, TaskStoreError>
  /** Changes whenever a task file is added, removed or rewritten; 0 when there are none. */
  readonly revision: Effect.Effect<number>
  /** Names of what changed among the tasks (`<id>.json` among them); ends where watching is unavailable, so callers poll too. */
  readonly changes: Stream.Stream<string>
  /**
   * Move the tasks done more than `DONE_GRACE_MS` ago to their month's
   * shelf, `batch` at a time; how many moved. `list` no longer reads them;
   * `get` and `update` still find them, and a shelved task released to the
   * queue again comes back hot.
   */
  readonly archiveDone: (batch: number) => Effect.Effect<number, TaskStoreError>
  /** Whether any task was ever moved to a month's shelf: a home written before the shelves has none. */
  readonly hasHistory: Effect.Effect<boolean>
  /** Shelved (done) tasks older than `before`, newest first, `limit` at most; `next` for the page after, null at the end. */
  readonly history: (options: { readonly before?: string | undefined; readonly limit: number }) => Effect.Effect<TaskHistoryPage, TaskStoreError>
  /** The task whose runs include `run`, hot or shelved. */
  readonly ofRun: (run: string) => Effect.Effect<Option.Option<Task>, TaskStoreError>
}

export interface TaskHistoryPage {
  readonly tasks: ReadonlyArray<Task>
  readonly next: string | null
}

/**
 * How long a done task stays hot after its last write: the Queue page shows
 * it under Done meanwhile, and `magi task list` lists it. Past it, it is
 * history (`history`), still found by id.
 */
export const DONE_GRACE_MS = 60 * 60 * 1000

/** The folder inside the queue folder holding one shelf of done tasks per month. */
export const HISTORY_DIR = "history"

/** May this task move to its month's shelf at `now`? Done, and quiet a while. */
export const archivable = (t: Task, now: number): boolean => {
  if (t.status !== "done" || monthOf(t.id) === undefined) return false
  const at = Date.parse(t.updated_at)
  return Number.isNaN(at) || now - at >= DONE_GRACE_MS
}

/** What a shelf's index keeps of a task: its id, runs, status, repo and title, lowercased. */
export const digest = (t: Task): string => [t.id, ...t.runs, t.status, t.repo, t.title].join("\n").toLowerCase()

/** The owner's queue on the configured backend: `<home>/queue`, or the database of `[store] url`. */
export class TaskStore extends Effect.Service<TaskStore>()("magi/TaskStore", {
  scoped: Effect.suspend(() => onBackend),
  dependencies: [ConfiguredStore.layer]
}) {
  /** A store at an explicit root, over whichever `FileSystem` is provided. */
  static at = (root: string, alive: (pid: number) => boolean = pidAlive, rule: Claims.AcrossHosts = TASK_CLAIM) =>
    Layer.scoped(TaskStore, Effect.map(make(root, alive, rule), TaskStore.make))

  /** The configured store, as every process's layer names it. */
  static layer = TaskStore.Default
}

/**
 * The largest task file read: an instruction is a task file of a few
 * kilobytes; a megabyte leaves room for a pasted log and refuses nonsense.
 */
export const TASK_MAX_BYTES = 1024 * 1024

/** The task kind in the home folder (`<home>/queue`), as `StoreBackend.records` and `magi store migrate` take a kind. */
export const taskRecords: StoreBackend.KindOptions<Task, TaskNotFound, T.UnreadableTask, TaskStoreError> = {
  folder: QUEUE_FOLDER,
  kind: { noun: "task", label: T.shortId, decode: T.decode, encode: T.encode, idOf: (t: Task) => t.id, maxBytes: TASK_MAX_BYTES },
  errors: {
    notFound: (message) => new TaskNotFound({ message }),
    unreadable: (message) => new T.UnreadableTask({ message }),
    failed: (message, cause) => new TaskStoreError({ message, cause })
  },
  // `<id>.lock` is the claim, held for a whole run; the writer lock of one
  // update lives beside it under its own name.
  lockName: (id) => `${id}.write.lock`,
  // Done tasks, an hour on, in `<home>/queue/history/<YYYY-MM>/`; one
  // released to the queue again is written back hot.
  archive: { dir: HISTORY_DIR, shelfOf: (id) => monthOf(id), digest, settled: (t: Task) => t.status === "done" }
}

/** The store in the folder `root`, its claims beside the tasks; `alive` judges a claim's pid on this machine. */
export const make = Effect.fn("TaskStore.make")(function* (
  root: string,
  alive: (pid: number) => boolean = pidAlive,
  rule: Claims.AcrossHosts = TASK_CLAIM
) {
  const { folder: _folder, ...options } = taskRecords
  const records = yield* RecordStore.makeKind({ ...options, root })
  const claims = yield* Claims.makeFiles((id) => NodePath.join(root, `${id}.lock`), alive)
  return yield* assemble(root, records, claims, rule, folderRevision(records), StoreBackend.watchFolder(yield* FileSystem.FileSystem, root))
})

/** The folder's mtime, which every write moves (a rename into it); 0 with no task in it. */
const folderRevision = (records: RecordStore.KindRecords<Task, TaskNotFound, T.UnreadableTask, TaskStoreError>) =>
  Effect.gen(function* () {
    // display: ids offered in a "did you mean"; none when they cannot be read
    const ids = yield* records.ids.pipe(Effect.orElseSucceed(() => [] as ReadonlyArray<string>))
    return ids.length === 0 ? 0 : yield* records.revision
  })

/** The owner's queue on the configured backend: `<home>/queue`, or the database. */
const onBackend = Effect.gen(function* () {
  const home = yield* MagiHome
  const records = yield* StoreBackend.records(taskRecords)
  const claims = yield* StoreBackend.claims(QUEUE_FOLDER, ".lock")
  const backend = yield* StoreBackend.StoreBackend
  const fs = yield* FileSystem.FileSystem
  const changes = StoreBackend.changes(QUEUE_FOLDER).pipe(
    Stream.provideService(StoreBackend.StoreBackend, backend),
    Stream.provideService(FileSystem.FileSystem, fs)
  )
  // The config's claim lifetime where the process has read one (every loop has).
  const rule = Claims.acrossHosts(
    Option.match(yield* Effect.serviceOption(MagiConfig), { onNone: () => DEFAULT_CLAIM_TTL_SECS, onSome: (c) => c.claimTtlSecs })
  )
  // A database's revision is exact, and listing every task's id each poll would cost a query of them all.
  const revision = yield* StoreBackend.byBackend({ files: () => Effect.succeed(folderRevision(records)), postgres: () => Effect.succeed(records.revision) })
  return yield* assemble(queueDir(home), records, claims, rule, revision, changes)
})

const assemble = Effect.fn("TaskStore.assemble")(function* (
  root: string,
  records: RecordStore.KindRecords<Task, TaskNotFound, T.UnreadableTask, TaskStoreError>,
  claims: Claims.ClaimsShape,
  rule: Claims.AcrossHosts,
  revision: Effect.Effect<number>,
  changes: Stream.Stream<string>
) {
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
      }))

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

  /** This process's claims, each kept fresh by a fiber of its own until it is given up. */
  const held = new Map<string, Claims.Claim>()
  const renewals = yield* FiberMap.make<string>()

  const keepFresh = (id: string, mine: Claims.Claim) =>
    untilStoreAnswers(`queue: renewing the claim on task ${T.shortId(id)}`, claims.renew(mine)).pipe(
      Effect.flatMap((still) =>
        still
          ? Effect.void
          // Taken over (this process was paused past the ttl): the next
          // loop to look finds the task run by the new holder.
          : Effect.zipRight(
            Effect.logWarning(`queue: the claim on task ${T.shortId(id)} was taken over while this loop was not renewing it`),
            Effect.fail("lost" as const)
          )
      ),
      Effect.catchTag("ClaimsError", (e) => Effect.logWarning(`queue: could not renew the claim on task ${T.shortId(id)}: ${e.message}`)),
      Effect.repeat(Schedule.spaced(rule.renewEvery)),
      // fallback: best-effort removal of a claim file that may be gone
      Effect.ignore
    )

  const claim = (id: string) =>
    Effect.gen(function* () {
      const got = yield* claims.acquire(id, rule).pipe(Effect.mapError((e) => new TaskStoreError({ message: e.message, cause: e })))
      if (Either.isLeft(got)) return false
      held.set(id, got.right)
      yield* FiberMap.run(renewals, id, Effect.delay(keepFresh(id, got.right), rule.renewEvery))
      return true
    })

  const unclaim = (id: string) =>
    Effect.gen(function* () {
      const mine = held.get(id)
      if (mine === undefined) return
      held.delete(id)
      yield* FiberMap.remove(renewals, id)
      yield* claims.release(mine)
    })

  const claimant = (id: string) =>
    claims.holder(id, rule).pipe(
      Effect.map(Option.map((h) => h.owner.pid)),
      // Unreadable is not free: someone may be in the middle of taking it,
      // or the store is away and the holder is this very loop.
      Effect.mapError((e) => new TaskStoreError({ message: e.message, cause: e }))
    )

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
          yield* records.remove(id)
          return current
        })
      )
    })

  const archiveDone = (batch: number) =>
    Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      return yield* ShelfMove.moveDue(records, {
        due: (yield* list).filter((t) => archivable(t, now)),
        idOf: (t) => t.id,
        shelfOf: monthOf,
        // Judged again under the lock: a release that landed since the listing decides.
        still: (fresh) => archivable(fresh, now),
        batch,
        cannotMove: (id, message) => `could not move task ${T.shortId(id)} to history: ${message}`
      })
    }).pipe(Effect.withSpan("TaskStore.archiveDone"))

  const readShelved = (ids: ReadonlyArray<string>) =>
    Effect.gen(function* () {
      const byMonth = new Map<string, Array<string>>()
      for (const id of ids) {
        const month = monthOf(id)
        if (month !== undefined) byMonth.set(month, [...(byMonth.get(month) ?? []), id])
      }
      const found = new Map<string, Task>()
      for (const [month, some] of byMonth) for (const t of yield* records.readShelf(month, some)) found.set(t.id, t)
      return ids.flatMap((id) => {
        const t = found.get(id)
        return t === undefined ? [] : [t]
      })
    })

  const history = (options: { readonly before?: string | undefined; readonly limit: number }) =>
    Effect.gen(function* () {
      // A move a crash cut short leaves a task in both places: the hot one is listed, not this.
      const hot = new Set((yield* scan).tasks.map((t) => t.id))
      // Tasks keep no order of their own on the shelves: the key is the id, so the cursor is one.
      const ids = (yield* records.shelvedIds({ before: options.before, limit: options.limit + 1, skip: (id) => hot.has(id) })).map((s) => s.id)
      const shown = ids.slice(0, options.limit)
      return { tasks: yield* readShelved(shown), next: ids.length > options.limit ? (shown.at(-1) ?? null) : null } satisfies TaskHistoryPage
    })

  const ofRun = (run: string) =>
    Effect.gen(function* () {
      const hot = (yield* list).find((t) => t.runs.includes(run))
      if (hot !== undefined) return Option.some(hot)
      // The shelves' indexes hold each task's runs: one search, no file read but the match.
      const ids = (yield* records.shelvedIds({ limit: 8, words: [run.toLowerCase()] })).map((s) => s.id)
      return Option.fromNullable((yield* readShelved(ids)).find((t) => t.runs.includes(run)))
    })

  return {
    root,
    archiveDone,
    // display: "has history" errs towards showing the history link
    hasHistory: Effect.map(records.shelves, (s) => s.length > 0).pipe(Effect.orElseSucceed(() => true)),
    history,
    ofRun,
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
    revision,
    changes
  } satisfies TaskStoreShape
})
