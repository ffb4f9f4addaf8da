/**
 * The shared record store: the one building block every kind of magi record
 * (questions, runs, tasks, ...) is stored with. A kind brings its decoder,
 * encoder and error constructors; this module brings everything about files:
 *
 * - **Atomic, durable writes**: temp file, `fsync`, rename, `fsync` of the
 *   folder (`AtomicFile`). A reader sees the old record or the new one; a
 *   write that returned survives a power cut.
 * - **Create-new**: `create` never replaces a record that is there (a linked
 *   temp file), so two writers drawing the same id cannot overwrite each other.
 * - **The per-record lock** for read-modify-write (`RecordLock`): exactly one
 *   writer at a time across processes, a crash-left lock broken by one
 *   breaker only, and in-process writers queued per record so one stuck lock
 *   never delays another record.
 * - **Bounded, never-blocking reads**: only a regular file is read (a FIFO, a
 *   device, a directory named `<id>.json` is refused before it is opened), and
 *   only up to the kind's `maxBytes`.
 * - **Versioned decoding** is the kind's (`VersionedJson`: a newer schema
 *   refused by name, an older one read with defaults, unknown fields
 *   refused); this module guards it, so *no* failure of decoding, or of
 *   building its error message (a stack overflow on a record nested 3,000
 *   deep included), escapes the one record it is about.
 * - **Listing** a folder: an unreadable file is skipped and explained by id
 *   (`scan`'s `skipped`), never fatal to the rest.
 * - **Ids**: an exact id, or a unique prefix or suffix; an ambiguous one is
 *   refused naming every match; an id that could leave the folder is never
 *   joined onto a path.
 * - **Leftovers**: scratch files and markers a kill left behind are swept once
 *   they are clearly abandoned (in the folder layout, inside each record's
 *   folder too).
 *
 * Layout: `flat` keeps `<root>/<id>.json` with `<root>/<id>.lock` beside it;
 * `folder` keeps `<root>/<id>/<file>` with its lock in the same folder (a run,
 * whose folder holds its artifacts too).
 *
 * **Archive** (optional): a kind whose records pile up and then
 * never change (settled questions, finished runs and tasks) gives each id a *shelf*, a folder named
 * from the id alone (its month), and the store keeps a second location per
 * record, `<root>/<archive.dir>/<shelf>/<id>.json`. `archive` moves one
 * record there under its lock; `read`, `get`, `update` and `resolve` look in
 * both places (the hot folder first: it is the one a write lands in, so after
 * a move a crash interrupted, the hot copy is the newer one); `scan` lists
 * only the hot folder, which is what keeps it small. Shelves are listed by
 * name without reading a file (`shelves`, `shelfIds`), and each shelf has a
 * small index of the kind's searchable words per record (`shelfIndex`), so
 * a search reads index lines, not every file. The lock stays
 * `<root>/<id>.lock` wherever the record is, so a move and a write to the
 * same record are serialised by the one lock they both take.
 *
 * In the folder layout only the record's file moves (`<root>/<id>/run.json`
 * to `<root>/<archive.dir>/<shelf>/<id>.json`): the record's folder, with
 * whatever else the kind keeps there (a run's artifacts), stays. The hot
 * records are then the folders whose id is on no shelf, and the layout's
 * revision (`stamp`) looks at each hot record's file and at the shelves'
 * folders, never at a shelved record: a listing and a poll cost nothing per
 * settled record. Which folders are hot is kept in `<archive.dir>/hot.json`
 * under the mtimes it was worked out at, so a fresh process lists neither
 * the root (every record's folder, hot or not) nor the shelves to know.
 *
 * A kind whose settled records can come back (a done task released to the
 * queue again) says which are settled (`settled`): a write of a shelved
 * record that is no longer settled puts it back in the hot folder (flat
 * layout), so the hot listing sees it again.
 *
 * All I/O goes through `@effect/platform`'s `FileSystem`, so the same code
 * runs on a real directory and on `MemoryFileSystem`.
 *
 * Usage, for a new kind:
 *
 * ```ts
 * const tasks = yield* RecordStore.make({
 *   root: NodePath.join(home.dir, "tasks"),
 *   kind: { noun: "task", decode: Task.decode, encode: Task.encode, idOf: (t) => t.id, maxBytes: 256 * 1024 },
 *   errors: {
 *     notFound: (message) => new TaskNotFound({ message }),
 *     unreadable: (message) => new TaskUnreadable({ message }),
 *     failed: (message) => new TaskStoreError({ message })
 *   }
 * })
 * yield* tasks.create(task)                       // false: the id is taken, draw another
 * yield* tasks.update(id, (t) => Task.start(t))   // under the lock; Either or Effect
 * const { records, skipped } = yield* tasks.scan
 * ```
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as PlatformError from "@effect/platform/Error"
import { Clock, Context, Effect, Either, Option } from "effect"
import * as NodePath from "node:path"
import { SCRATCH_SUFFIX, createAtomically, syncDirectory, writeAtomically, writeAtomicallyInPieces } from "./AtomicFile.js"
import * as Memo from "./Memo.js"
import * as RecordLock from "./RecordLock.js"
import {
  chunksOf,
  clip,
  decodeStored,
  describeThrown,
  digestMatches,
  isSafeId,
  reasonOf,
  reasons,
  type RecordStore,
  type RecordStoreOptions,
  refusedAs,
  type Scan,
  type Skipped
} from "../RecordStore.js"
import * as ShelfPages from "../ShelfPage.js"
import type { ShelfPage, Shelved, ShelvedQuery } from "../ShelfPage.js"

// The contract, for whoever reads it through the file backend's module.
export * from "../RecordStore.js"

/** What a shelf's index keeps of one record: where it stands in the listing, and its words. */
interface IndexEntry {
  readonly order: string
  readonly digest: string
}

/** A shelf's index, and its ids by order key, greatest first. */
interface ShelfIndex {
  readonly entries: ReadonlyMap<string, IndexEntry>
  readonly greatestFirst: ReadonlyArray<readonly [order: string, id: string]>
}

/** Where the keys below `before` start in a list sorted greatest first (all of it when none). */
const firstBelow = <T>(greatestFirst: ReadonlyArray<T>, keyOf: (entry: T) => string, before: string | undefined): number => {
  if (before === undefined) return 0
  let lo = 0
  let hi = greatestFirst.length
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (keyOf(greatestFirst[mid]!) >= before) lo = mid + 1
    else hi = mid
  }
  return lo
}

/** The file backend's store: the contract, plus where a record's shelved file is (a question's panel moves beside it). */
export interface FileRecordStore<A, NotFound, Unreadable, Failed> extends RecordStore<A, NotFound, Unreadable, Failed> {
  /** The archived file of a record with this id, when the kind archives and the id has a shelf. */
  readonly archivedPathOf: (id: string) => string | undefined
  /**
   * Where the hot records stand without reading one: `revision` moves
   * whenever a hot record is written, created, removed or shelved (0 with
   * none); `newest` is the newest hot record's mtime (a listing is trusted
   * only once it is safely older, see `Memo`). In the folder layout it
   * stats each hot record's file and the shelves' folders, no shelved one.
   */
  readonly stamp: Effect.Effect<FolderStamp>
}

export interface FolderStamp {
  readonly revision: number
  readonly newest: number
}

/**
 * The folder layout's hot ids as last worked out, in the archive's folder
 * (see `hotIdsAndNames`): a cache, safe to delete.
 */
export const HOT_IDS_FILE = "hot.json"

/** FNV-1a, 32 bits: a cheap stable hash of a stamp's parts. */
export const fnv1a = (text: string): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0
  return h
}

/**
 * Scratch left by a kill is removed once it is this old. A write holds its
 * temp file for milliseconds and a panel copy (8 MiB at most) for well under a
 * second; an hour is beyond any writer still alive, even one paused for a
 * while, so what is older has no owner.
 */
export const ABANDONED_AFTER_MS = 60 * 60 * 1000

/** How often a listing looks for leftovers: they are rare, and a sweep stats each one. */
export const SWEEP_EVERY_MS = 10 * 60 * 1000

/** A shelf's index file beside it in the archive folder: `<shelf>.index.json`. */
const INDEX_SUFFIX = ".index.json"

const isPlatformError = (e: unknown): e is PlatformError.PlatformError => typeof e === "object" && e !== null && PlatformError.TypeId in e

const isNotFound = (e: PlatformError.PlatformError) => e._tag === "SystemError" && e.reason === "NotFound"

const mtimeMs = (info: FileSystem.File.Info) => Option.getOrElse(Option.map(info.mtime, (d) => d.getTime()), () => -1)

/** A file type as a person reads it. */
const typeWords = (type: FileSystem.File.Type) =>
  ({
    Directory: "a directory",
    SymbolicLink: "a symbolic link",
    BlockDevice: "a block device",
    CharacterDevice: "a character device",
    FIFO: "a FIFO",
    Socket: "a socket",
    File: "a file",
    Unknown: "not a regular file"
  })[type]

/** Why a bounded read did not return the file's text. */
export type BoundedReadRefusal =
  | { readonly _tag: "NotFound" }
  | { readonly _tag: "NotRegular"; readonly kind: string }
  | { readonly _tag: "TooBig"; readonly size: number }
  | { readonly _tag: "Failed"; readonly message: string }

/** A refusal as words, for an error message. */
const refusalWords = (why: BoundedReadRefusal): string => {
  switch (why._tag) {
    case "NotFound":
      return "not found"
    case "NotRegular":
      return `it is ${why.kind}`
    case "TooBig":
      return `too big (${why.size} bytes)`
    case "Failed":
      return why.message
  }
}

/**
 * Names read from a shelf per batch when indexing or sweeping it: a few
 * hundred kilobytes of index text written at a time, whatever the shelf holds.
 */
const NAMES_BATCH = 500

/**
 * An optional fast path for reading one record file, synchronously and in
 * one step: open without blocking, check on the descriptor that it is a
 * regular file within `maxBytes`, read it. A listing reads thousands of
 * files, and doing the look and the read as separate effects doubles its
 * cost. `LocalContext` provides it on Node; without it (in memory, in tests)
 * the store looks (`stat`) and then reads, through `FileSystem`.
 */
export class BoundedReader extends Context.Tag("magi/BoundedReader")<
  BoundedReader,
  {
    readonly readString: (path: string, maxBytes: number) => Either.Either<string, BoundedReadRefusal>
    /**
     * A folder's names a batch at a time (`opendir`), never the whole folder
     * at once: the first move of a flat home lists 100,000 names, 1,000,000
     * at the goal, and a listing of them all, kept while they move, was the
     * largest part of what the move held. `undefined` when the folder is not
     * there. Names added or removed meanwhile may or may not be seen; the
     * others are seen once each.
     */
    readonly openNames: (path: string) => Either.Either<NamesCursor | undefined, BoundedReadRefusal>
  }
>() {}

/** An open folder read a batch at a time: `next` gives at most `max` names, none once all were given; `close` once done. */
export interface NamesCursor {
  readonly next: (max: number) => ReadonlyArray<string>
  readonly close: () => void
}

/** Build a store of one kind of record. */
export const make = <A, NotFound, Unreadable, Failed>(
  options: RecordStoreOptions<A, NotFound, Unreadable, Failed>
): Effect.Effect<FileRecordStore<A, NotFound, Unreadable, Failed>, never, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const reader = yield* Effect.serviceOption(BoundedReader)
    const { root, kind, errors } = options
    const layout = options.layout ?? { _tag: "flat" as const }
    const plural = kind.plural ?? `${kind.noun}s`
    const label = kind.label ?? ((id: string) => id)
    const flat = layout._tag === "flat"

    const pathOf = (id: string) => (flat ? NodePath.join(root, `${id}.json`) : NodePath.join(root, id, layout.file))
    const lockOf = (id: string) =>
      flat ? NodePath.join(root, options.lockName?.(id) ?? `${id}.lock`) : NodePath.join(root, id, `${NodePath.parse(layout.file).name}.lock`)
    const failed = (what: string) => (e: { readonly message: string }) => errors.failed(`${what}: ${e.message}`, e)
    const ensureRoot = fs.makeDirectory(root, { recursive: true }).pipe(Effect.mapError(failed(`create ${root}`)))
    const withFs = <B, E, R>(effect: Effect.Effect<B, E, R>) => Effect.provideService(effect, FileSystem.FileSystem, fs)

    const names = fs.readDirectory(root).pipe(
      Effect.catchIf(isNotFound, () => Effect.succeed<string[]>([])),
      Effect.mapError(failed(`list ${root}`))
    )
    const idsIn = (all: ReadonlyArray<string>) =>
      flat
        ? all.filter((n) => n.endsWith(".json")).map((n) => n.slice(0, -5))
        : all.filter((n) => !n.startsWith(".") && n !== options.archive?.dir)

    /**
     * `dir`'s names a batch at a time, each handed to `each` before the next
     * is read (`BoundedReader.openNames`); without the bounded reader (in
     * memory, in tests), one listing handed over in batches.
     */
    const forEachNames = <E, R>(
      dir: string,
      size: number,
      each: (names: ReadonlyArray<string>) => Effect.Effect<void, E, R>
    ): Effect.Effect<void, E | Failed, R> => {
      if (Option.isNone(reader)) {
        return Effect.flatMap(
          fs.readDirectory(dir).pipe(
            Effect.catchIf(isNotFound, () => Effect.succeed<string[]>([])),
            Effect.mapError(failed(`list ${dir}`))
          ),
          (all) => Effect.forEach(chunksOf(all, size), each, { discard: true })
        )
      }
      const fast = reader.value
      const listFailed = (message: string) => errors.failed(`list ${dir}: ${message}`)
      return Effect.acquireUseRelease(
        Effect.suspend(() => {
          const opened = fast.openNames(dir)
          return Either.isRight(opened) ? Effect.succeed(opened.right) : Effect.fail(listFailed(refusalWords(opened.left)))
        }),
        (cursor) =>
          Effect.gen(function* () {
            if (cursor === undefined) return
            for (;;) {
              const names = yield* Effect.try({ try: () => cursor.next(size), catch: (e) => listFailed(describeThrown(e)) })
              if (names.length === 0) return
              yield* each(names)
            }
          }),
        (cursor) => Effect.sync(() => cursor?.close())
      )
    }

    const notRegular = (path: string, kind_: string) => errors.unreadable(`${path} is ${kind_}, not a ${kind.noun} file; magi reads only regular files`)
    const tooBig = (path: string, size: number | bigint) => errors.unreadable(reasons.tooBig(kind, path, size))

    /** The text read becomes the record, or the reason it is not one. */
    const fromBody = (id: string, path: string, body: string): Either.Either<A, Unreadable> =>
      Either.mapLeft(decodeStored(kind, id, path, body, "its name says; rename it or fix its id"), refusedAs(errors))

    /** Through `FileSystem`: judged (`stat`) before it is opened, since opening a FIFO blocks and reading a device never ends. */
    const readLooking = (id: string, path: string): Effect.Effect<A, NotFound | Unreadable | Failed> =>
      Effect.gen(function* () {
        const info = yield* fs.stat(path).pipe(
          Effect.mapError((e) => isNotFound(e) ? errors.notFound(`no ${kind.noun} file at ${path}`) : errors.failed(`read ${path}: ${e.message}`, e))
        )
        if (info.type !== "File") return yield* Effect.fail(notRegular(path, typeWords(info.type)))
        if (Number(info.size) > kind.maxBytes) return yield* Effect.fail(tooBig(path, info.size))
        const body = yield* fs.readFileString(path).pipe(
          Effect.mapError((e) =>
            isNotFound(e)
              ? errors.notFound(`no ${kind.noun} file at ${path}`)
              : e._tag === "SystemError" && e.reason === "BadResource"
              ? errors.unreadable(`${path} cannot be read as a ${kind.noun}: ${e.message}`)
              : errors.failed(`read ${path}: ${e.message}`, e)
          )
        )
        // A file that grew after the look is still not read as a record.
        if (body.length > kind.maxBytes) return yield* Effect.fail(tooBig(path, body.length))
        return yield* fromBody(id, path, body)
      })

    /** With the bounded reader: one record, synchronously, as a value. */
    const readNow = (
      fast: BoundedReader["Type"],
      id: string,
      path: string = pathOf(id)
    ): Either.Either<A, NotFound | Unreadable | Failed> => {
      const got = fast.readString(path, kind.maxBytes)
      if (Either.isRight(got)) return fromBody(id, path, got.right)
      const why = got.left
      switch (why._tag) {
        case "NotFound":
          return Either.left(errors.notFound(`no ${kind.noun} file at ${path}`))
        case "NotRegular":
          return Either.left(notRegular(path, why.kind))
        case "TooBig":
          return Either.left(tooBig(path, why.size))
        case "Failed":
          return Either.left(errors.failed(`read ${path}: ${why.message}`))
      }
    }

    const archiveOpts = options.archive
    const archiveRoot = archiveOpts === undefined ? undefined : NodePath.join(root, archiveOpts.dir)
    const shelfDirOf = (shelf: string) => NodePath.join(archiveRoot!, shelf)
    const archivedPathOf = (id: string): string | undefined => {
      if (archiveOpts === undefined || !isSafeId(id)) return undefined
      const shelf = archiveOpts.shelfOf(id)
      // The shelf becomes a path part too.
      if (shelf === undefined || !isSafeId(shelf) || shelf.includes(".")) return undefined
      return NodePath.join(shelfDirOf(shelf), `${id}.json`)
    }

    /** One record at an exact path. */
    const readAt = (id: string, path: string): Effect.Effect<A, NotFound | Unreadable | Failed> =>
      Option.isSome(reader) ? Effect.suspend(() => readNow(reader.value, id, path)) : readLooking(id, path)

    /**
     * Hot first; then, when that fails and its shelf has it, the shelf (a
     * move that landed between the two looks is found there, never lost).
     */
    const locate = (id: string): Effect.Effect<{ readonly record: A; readonly path: string }, NotFound | Unreadable | Failed> => {
      const hot = Effect.map(readAt(id, pathOf(id)), (record) => ({ record, path: pathOf(id) }))
      const archived = archivedPathOf(id)
      if (archived === undefined) return hot
      return Effect.catchAll(hot, (e) =>
        Effect.flatMap(
          fs.exists(archived).pipe(Effect.orElseSucceed(() => false)),
          (there) => there ? Effect.map(readAt(id, archived), (record) => ({ record, path: archived })) : Effect.fail(e)
        ))
    }

    const read = (id: string): Effect.Effect<A, NotFound | Unreadable | Failed> => Effect.map(locate(id), (l) => l.record)

    /**
     * Every slot of a listing, each ending as a record or a reason whatever
     * happens reading it. With the bounded reader the whole listing is one
     * synchronous pass (thousands of files, no effect per file).
     */
    const readAll = (ids: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<Either.Either<A, Skipped>>> => {
      if (Option.isSome(reader)) {
        const fast = reader.value
        return Effect.sync(() =>
          ids.map((id): Either.Either<A, Skipped> => {
            try {
              return Either.mapLeft(readNow(fast, id), (e) => ({ id, reason: reasonOf(e) }))
            } catch (thrown) {
              return Either.left({ id, reason: describeThrown(thrown) })
            }
          })
        )
      }
      return Effect.forEach(ids, slot, { concurrency: 64 })
    }

    /** One listing slot: whatever happens reading it, it ends as a record or a reason. */
    const slot = (id: string): Effect.Effect<Either.Either<A, Skipped>> =>
      read(id).pipe(
        Effect.map((a) => Either.right(a)),
        Effect.catchAll((e) => Effect.succeed(Either.left<Skipped>({ id, reason: reasonOf(e) }))),
        Effect.catchAllDefect((defect) => Effect.succeed(Either.left<Skipped>({ id, reason: describeThrown(defect) })))
      )

    // -- leftovers ----------------------------------------------------------

    const isLeftover = (name: string) => name.endsWith(SCRATCH_SUFFIX) || name.includes(".lock.break-") || (options.leftover?.(name) ?? false)
    let lastSweep = Number.NEGATIVE_INFINITY

    /** Remove the leftovers among `names`, the entries of `dir`, that are clearly abandoned at `now`. */
    const sweepIn = (dir: string, names: ReadonlyArray<string>, now: number) =>
      Effect.gen(function* () {
        let removed = 0
        for (const name of names.filter(isLeftover)) {
          const path = NodePath.join(dir, name)
          const info = yield* Effect.option(fs.stat(path))
          if (Option.isNone(info)) continue
          const at = mtimeMs(info.value)
          // A future mtime (a clock stepped back) is judged as of now: it
          // waits one more full period, never forever.
          if (at < 0 || now - at <= ABANDONED_AFTER_MS) continue
          const gone = yield* fs.remove(path, { recursive: info.value.type === "Directory" }).pipe(Effect.either)
          if (Either.isRight(gone)) removed++
        }
        return removed
      })

    /**
     * The root's leftovers and, in the folder layout, those inside each
     * record's own folder, where its writes happen (`run.json`'s scratch and
     * lock markers; never deeper, where a run keeps its artifacts).
     */
    const sweepNames = (all: ReadonlyArray<string>, inside: ReadonlyArray<string> = idsIn(all)) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        lastSweep = now
        let removed = yield* sweepIn(root, all, now)
        if (!flat) {
          for (const id of inside) {
            const dir = NodePath.join(root, id)
            const inside = yield* fs.readDirectory(dir).pipe(Effect.orElseSucceed((): string[] => []))
            removed += yield* sweepIn(dir, inside, now).pipe(Effect.catchAllCause(() => Effect.succeed(0)))
          }
        }
        return removed
      }).pipe(Effect.catchAllCause(() => Effect.succeed(0)))

    /** Everything: the root, the records' folders, and the shelves. */
    const sweep = Effect.gen(function* () {
      const removed = yield* sweepNames(yield* Effect.orElseSucceed(names, () => [] as string[]))
      return removed + (yield* sweepArchive(yield* Clock.currentTimeMillis))
    })

    // -- listing ------------------------------------------------------------

    /**
     * The last full listing, reused while the folder is unchanged (`Memo`):
     * every write lands by a rename into the root, which moves its mtime.
     * The folder layout, where a rewrite lands in the record's own folder,
     * keys its listing by `stamp` instead.
     */
    const listings = Memo.make<Scan<A>>()
    const rootMtime = Memo.mtimeOf(fs, root)

    /**
     * The shelves and each one's folder mtime, as one key: what the folder
     * layout's hot ids depend on besides the root. One stat per shelf, no
     * listing.
     */
    const shelvesStamp = Effect.gen(function* () {
      if (archiveRoot === undefined) return { key: "", names: [] as ReadonlyArray<string>, newest: 0 }
      const names = yield* shelves.pipe(Effect.orElseSucceed((): ReadonlyArray<string> => []))
      const stamps = yield* Effect.forEach(names, (shelf) => Memo.mtimeOf(fs, shelfDirOf(shelf)))
      return { key: names.map((n, i) => `${n}:${stamps[i]}`).join(";"), names, newest: Math.max(0, ...stamps) }
    })

    /** Every shelved id, as one set, reused while no shelf's folder changed: what the folder layout's hot ids leave out. */
    let shelvedSet: { readonly key: string; readonly ids: ReadonlySet<string> } | undefined
    const shelvedIdSet = (stamp: { readonly key: string; readonly names: ReadonlyArray<string>; readonly newest: number }) =>
      Effect.gen(function* () {
        if (shelvedSet !== undefined && shelvedSet.key === stamp.key) return shelvedSet.ids
        const takenAt = Date.now()
        const ids = new Set<string>()
        for (const shelf of stamp.names) for (const id of yield* shelfIds(shelf).pipe(Effect.orElseSucceed((): ReadonlyArray<string> => []))) ids.add(id)
        shelvedSet = Memo.trusted(stamp.newest, takenAt) ? { key: stamp.key, ids } : undefined
        return ids
      })

    /**
     * The folder layout's hot ids as the last process to work them out left
     * them (`<archive.dir>/hot.json`), with the key they were worked out at:
     * the root's mtime and every shelf's. A run's folder stays in the root
     * after its record is shelved, so the root holds every run there ever
     * was (20,000 names after months of work) and the hot ids are the root's
     * names on no shelf: listing the root and every shelf, each command,
     * for the handful that are hot. The root's mtime moves when a record's
     * folder is made or removed, a shelf's when a record lands on it or
     * leaves it, so while the key reads the same the ids are the same; a
     * key is kept only once its mtimes are safely old (`Memo.trusted`). In
     * the archive's folder, since a write to the root would move its key;
     * a lost or stale file costs one listing, which writes it again.
     */
    const hotFile = archiveRoot === undefined ? undefined : NodePath.join(archiveRoot, HOT_IDS_FILE)
    const readHotFile = (key: string): Effect.Effect<Option.Option<ReadonlyArray<string>>> =>
      hotFile === undefined
        ? Effect.succeed(Option.none())
        : fs.readFileString(hotFile).pipe(
          Effect.map((text) => {
            try {
              const kept: unknown = JSON.parse(text)
              if (typeof kept !== "object" || kept === null) return Option.none()
              const { key: keptKey, ids } = kept as { key?: unknown; ids?: unknown }
              // Names a listing of the root could have given, nothing that leaves it.
              const asListed = (id: unknown) => typeof id === "string" && id !== "" && !/[/\\\0]/.test(id) && !id.startsWith(".") && id !== options.archive?.dir
              return keptKey === key && Array.isArray(ids) && ids.every(asListed)
                ? Option.some(ids as ReadonlyArray<string>)
                : Option.none()
            } catch {
              return Option.none() // torn or hand-edited: worked out again
            }
          }),
          Effect.orElseSucceed(() => Option.none())
        )
    const writeHotFile = (key: string, ids: ReadonlyArray<string>): Effect.Effect<void> =>
      hotFile === undefined ? Effect.void : withFs(writeAtomically(hotFile, JSON.stringify({ key, ids }))).pipe(Effect.ignore)

    /**
     * The folder layout's hot ids: the root's folders whose id is on no
     * shelf, reused while neither the root nor any shelf changed (a new
     * record makes a folder; a move lands on a shelf), in this process or,
     * through the hot ids' file, in the last one. `all` is the root's
     * names, when they were listed.
     */
    let hotFolders: { readonly key: string; readonly ids: ReadonlyArray<string>; readonly all: ReadonlyArray<string> | undefined } | undefined
    const hotIdsAndNames = Effect.gen(function* () {
      const rootStamp = yield* rootMtime
      const shelved = yield* shelvesStamp
      const key = `${rootStamp}|${shelved.key}`
      if (hotFolders !== undefined && hotFolders.key === key) return hotFolders
      const trustedNow = (takenAt: number) => Memo.trusted(rootStamp, takenAt) && Memo.trusted(shelved.newest, takenAt)
      // Written only under a trusted key, so one read back under the same key is as good as a listing.
      if (shelved.names.length > 0 && rootStamp !== -1) {
        const kept = yield* readHotFile(key)
        if (Option.isSome(kept)) {
          hotFolders = { key, ids: kept.value, all: undefined }
          return hotFolders
        }
      }
      const takenAt = Date.now()
      const all = yield* names
      const shelvedIds = yield* shelvedIdSet(shelved)
      const found = { key, all, ids: idsIn(all).filter((id) => !shelvedIds.has(id)) }
      hotFolders = trustedNow(takenAt) ? found : undefined
      if (hotFolders !== undefined && shelved.names.length > 0) yield* writeHotFile(key, found.ids)
      return found
    })

    const ids: Effect.Effect<ReadonlyArray<string>, Failed> = flat ? Effect.map(names, idsIn) : Effect.map(hotIdsAndNames, (h) => h.ids)

    // The folder layout's hot ids are the root's folders less the shelved
    // ones, which takes every name at once; the flat layout's are its
    // names, read a batch at a time.
    const forEachIdBatch = <E, R>(size: number, each: (ids: ReadonlyArray<string>) => Effect.Effect<void, E, R>): Effect.Effect<void, E | Failed, R> =>
      flat
        ? forEachNames(root, size, (batch) => {
          const found = idsIn(batch)
          return found.length === 0 ? Effect.void : each(found)
        })
        : Effect.flatMap(ids, (all) => Effect.forEach(chunksOf(all, size), each, { discard: true }))

    /**
     * The folder layout's stamp: the hot ids and each one's record file
     * mtime, hashed. One stat per hot record plus one per shelf, whatever
     * the shelves hold.
     */
    const folderStamp: Effect.Effect<FolderStamp & { readonly ids: ReadonlyArray<string>; readonly all: ReadonlyArray<string> | undefined }> = Effect.gen(
      function* () {
        const hot = yield* hotIdsAndNames.pipe(
          Effect.orElseSucceed(() => ({ key: "", ids: [] as ReadonlyArray<string>, all: [] as ReadonlyArray<string> | undefined }))
        )
        const mtimes = yield* Effect.forEach(hot.ids, (id) => Memo.mtimeOf(fs, pathOf(id)), { concurrency: 16 })
        const newest = Math.max(0, ...mtimes)
        // A folder with no record in it (one being made) is no record yet: it moves nothing.
        const present = hot.ids.flatMap((id, i) => (mtimes[i]! >= 0 ? [`${id}:${mtimes[i]}`] : []))
        const revision = present.length === 0 ? 0 : fnv1a(present.join(";")) || 1
        return { revision, newest, ids: hot.ids, all: hot.all }
      }
    )

    const flatStamp: Effect.Effect<FolderStamp> = Effect.map(rootMtime, (m) => ({ revision: Math.max(m, 0), newest: Math.max(m, 0) }))

    /** Every slot of a listing turned into the scan. */
    const scanOf = (slots: ReadonlyArray<Either.Either<A, Skipped>>): Scan<A> => ({
      records: slots.flatMap((s) => (Either.isRight(s) ? [s.right] : [])),
      skipped: slots.flatMap((s) => (Either.isLeft(s) ? [s.left] : []))
    })

    /** The folder layout's last listing, by the stamp it was taken at. */
    let folderListing: { readonly revision: number; readonly scan: Scan<A> } | undefined

    const scan: Effect.Effect<Scan<A>, Failed> = Effect.gen(function* () {
      if (!flat) {
        const stamp = yield* folderStamp
        if (folderListing !== undefined && folderListing.revision === stamp.revision && stamp.revision !== 0) return folderListing.scan
        const takenAt = Date.now()
        const result = scanOf(yield* readAll(stamp.ids))
        const now = yield* Clock.currentTimeMillis
        // A folder layout's leftovers are inside the records' folders: only the hot ones are looked in here (the sweep looks in all).
        // (The root's own names only when they were listed: records' writes land in their folders, not the root; `sweep` lists it.)
        if (now - lastSweep > SWEEP_EVERY_MS) yield* sweepNames(stamp.all ?? [], stamp.ids)
        folderListing = Memo.trusted(stamp.newest, takenAt) ? { revision: stamp.revision, scan: result } : undefined
        return result
      }
      const list = Effect.gen(function* () {
        const all = yield* names
        const slots = yield* readAll(idsIn(all))
        const now = yield* Clock.currentTimeMillis
        if (now - lastSweep > SWEEP_EVERY_MS && all.some(isLeftover)) yield* sweepNames(all)
        return scanOf(slots)
      })
      return yield* listings.get(root, rootMtime, list)
    }).pipe(Effect.withSpan("RecordStore.scan", { attributes: { root } }))

    const stamp: Effect.Effect<FolderStamp> = flat ? flatStamp : Effect.map(folderStamp, ({ revision, newest }) => ({ revision, newest }))
    const revision = Effect.map(stamp, (s) => s.revision)

    // -- ids ----------------------------------------------------------------

    const resolve = (wanted: string): Effect.Effect<string, NotFound | Failed> =>
      Effect.gen(function* () {
        // The id becomes a path part, so only a name that cannot traverse is
        // ever looked up directly; anything else can only match by listing.
        if (isSafeId(wanted) && (yield* fs.exists(pathOf(wanted)).pipe(Effect.orElseSucceed(() => false)))) return wanted
        const archived = archivedPathOf(wanted)
        if (archived !== undefined && (yield* fs.exists(archived).pipe(Effect.orElseSucceed(() => false)))) return wanted
        // The short id is the last segment: the owner types what they saw
        // (`ab12`), or the start of it (`ab`).
        const shortStarts = (id: string) => id.slice(id.lastIndexOf("-") + 1).startsWith(wanted)
        const matches = (id: string) => id.startsWith(wanted) || id.endsWith(wanted) || shortStarts(id)
        const found = new Set(wanted === "" ? [] : (yield* ids).filter(matches))
        // A prefix or short id may name an archived record too: every shelf's
        // names are listed (no file is read), since a short id can be on any.
        if (wanted !== "" && archiveOpts !== undefined) {
          for (const shelf of yield* shelves) for (const id of yield* shelfIds(shelf)) if (matches(id)) found.add(id)
        }
        const hits = [...found]
        if (hits.length === 1) return hits[0]!
        if (hits.length === 0) return yield* Effect.fail(errors.notFound(reasons.noMatch(kind, wanted)))
        return yield* Effect.fail(errors.notFound(reasons.ambiguous(wanted, hits.length, plural, hits.sort())))
      })

    const get = (wanted: string) => Effect.flatMap(resolve(wanted), read)

    // -- writes -------------------------------------------------------------

    const refuseUnsafe = (id: string) => isSafeId(id) ? Effect.void : Effect.fail(errors.failed(`\`${clip(id)}\` is not an id magi will build a path from`))

    const putAt = (path: string, record: A) => {
      const id = kind.idOf(record)
      return Effect.zipRight(
        refuseUnsafe(id),
        withFs(writeAtomically(path, kind.encode(record), { durable: true })).pipe(
          Effect.mapError(failed(`write ${kind.noun} ${id}`)),
          Effect.zipRight(path === pathOf(id) ? Effect.void : forgetDigest(id))
        )
      ).pipe(Effect.withSpan("RecordStore.put", { attributes: { id } }))
    }

    /**
     * A shelved record was rewritten: its words in the shelf's index are
     * dropped, so the next search reads the record again rather than
     * matching what it used to say. (A reader rewriting the index at the
     * same moment can put the old words back; the next write drops them
     * again. Shelved records are settled and rarely written.)
     */
    const forgetDigest = (id: string): Effect.Effect<void> => {
      const shelf = archiveOpts?.shelfOf(id)
      if (archiveRoot === undefined || shelf === undefined || !isSafeId(shelf)) return Effect.void
      const file = NodePath.join(archiveRoot, `${shelf}${INDEX_SUFFIX}`)
      return Effect.gen(function* () {
        indexes.forget(shelf)
        const text = yield* fs.readFileString(file)
        const stored: unknown = JSON.parse(text)
        if (typeof stored !== "object" || stored === null || !Object.hasOwn(stored, id)) return
        const { [id]: _dropped, ...rest } = stored as Record<string, unknown>
        yield* withFs(writeAtomically(file, JSON.stringify(rest)))
      }).pipe(
        // No index yet, or a torn one: the next reader builds it from the files.
        Effect.catchAllCause(() => Effect.void)
      )
    }

    /** Where a whole write of this id goes: where the record is, hot unless only its archived copy exists. */
    const homeOf = (id: string) =>
      Effect.gen(function* () {
        const archived = archivedPathOf(id)
        if (archived === undefined) return pathOf(id)
        const exists = (path: string) => fs.exists(path).pipe(Effect.orElseSucceed(() => false))
        return !(yield* exists(pathOf(id))) && (yield* exists(archived)) ? archived : pathOf(id)
      })

    /**
     * Write `record` where it was found (`path`), unless it is shelved and no
     * longer settled: then it is written hot first and its shelved copy
     * removed after, so a crash between leaves the hot copy, which every
     * lookup reads first and the history skips.
     */
    const writeBack = (path: string, record: A): Effect.Effect<void, Failed> => {
      const id = kind.idOf(record)
      const settled = archiveOpts?.settled
      if (!flat || path === pathOf(id) || settled === undefined || safeSettled(settled, record)) return putAt(path, record)
      return putAt(pathOf(id), record).pipe(
        Effect.zipRight(fs.remove(path).pipe(Effect.catchIf(isNotFound, () => Effect.void), Effect.mapError(failed(`remove ${path}`)))),
        Effect.zipRight(forgetDigest(id))
      )
    }

    const safeSettled = (settled: (record: A) => boolean, record: A): boolean => {
      try {
        return settled(record)
      } catch {
        return false
      }
    }

    const put = (record: A) => Effect.flatMap(homeOf(kind.idOf(record)), (path) => writeBack(path, record))

    const create = (record: A) => {
      const id = kind.idOf(record)
      return Effect.zipRight(
        refuseUnsafe(id),
        withFs(createAtomically(pathOf(id), kind.encode(record), { durable: true })).pipe(
          Effect.mapError(failed(`create ${kind.noun} ${id}`))
        )
      )
    }

    const exists = (id: string): Effect.Effect<boolean, Failed> =>
      Effect.gen(function* () {
        if (!isSafeId(id)) return false
        const there = (path: string) => fs.exists(path).pipe(Effect.mapError(failed(`look for ${path}`)))
        if (yield* there(pathOf(id))) return true
        const archived = archivedPathOf(id)
        return archived !== undefined && (yield* there(archived))
      })

    /** The record's file (or, in the folder layout, its whole folder), hot and archived. */
    const remove = (id: string): Effect.Effect<void, Failed> =>
      Effect.gen(function* () {
        yield* refuseUnsafe(id)
        const gone = (path: string) =>
          fs.remove(path, { recursive: !flat }).pipe(
            Effect.catchIf(isNotFound, () => Effect.void),
            Effect.mapError(failed(`remove ${kind.noun} ${id}`))
          )
        yield* gone(flat ? pathOf(id) : NodePath.join(root, id))
        const archived = archivedPathOf(id)
        if (archived !== undefined) yield* gone(archived)
      })

    const queue = RecordLock.makeLocalQueue()

    const withLock = <B, E, R>(id: string, body: Effect.Effect<B, E, R>, rootThere = false): Effect.Effect<B, E | Failed, R> =>
      queue(
        id,
        Effect.gen(function* () {
          yield* refuseUnsafe(id)
          // A flat store makes its folder; a record's own folder must already
          // be there, and its absence is reported as itself, at once. (A move
          // out of the hot folder knows it is there: it just listed it.)
          if (flat && !rootThere) yield* ensureRoot
          return yield* withFs(RecordLock.hold(lockOf(id), `${kind.noun} ${label(id)}`, body)).pipe(
            Effect.catchIf(
              (e): e is RecordLock.LockError => e instanceof RecordLock.LockError,
              (e) => Effect.fail(errors.failed(e.message, e))
            )
          )
        })
      )

    const update = <E, R = never>(
      wanted: string,
      change: (current: A) => Either.Either<A, E> | Effect.Effect<A, E, R>
    ): Effect.Effect<A, E | NotFound | Unreadable | Failed, R> =>
      Effect.gen(function* () {
        const id = yield* resolve(wanted)
        return yield* withLock(
          id,
          Effect.gen(function* () {
            // Written back where it was read: an archived record stays on its shelf.
            const { record: current, path } = yield* locate(id)
            const changed = change(current)
            const next: A = Either.isEither(changed) ? yield* changed : yield* changed
            if (next !== current) yield* writeBack(path, next)
            return next
          })
        )
      }).pipe(Effect.withSpan("RecordStore.update", { attributes: { id: wanted } }))

    // -- the archive ---------------------------------------------------------

    /** The archive folder's names: its shelves, their indexes, scratch files. */
    const archiveNames: Effect.Effect<ReadonlyArray<string>, Failed> = archiveRoot === undefined
      ? Effect.succeed([])
      : fs.readDirectory(archiveRoot).pipe(
        Effect.catchIf(isNotFound, () => Effect.succeed<string[]>([])),
        Effect.mapError(failed(`list ${archiveRoot}`))
      )
    // A shelf is a folder whose name has no dot; its index and scratch files have one.
    const isShelfName = (n: string) => isSafeId(n) && !n.includes(".")

    const shelves: Effect.Effect<ReadonlyArray<string>, Failed> = Effect.map(archiveNames, (all) => all.filter(isShelfName).sort().reverse())

    const unindexedShelves: Effect.Effect<ReadonlyArray<string>, Failed> = Effect.map(archiveNames, (all) => {
      const indexed = new Set(all.filter((n) => n.endsWith(INDEX_SUFFIX)).map((n) => n.slice(0, -INDEX_SUFFIX.length)))
      return all.filter((n) => isShelfName(n) && !indexed.has(n))
    })

    interface ShelfListing {
      /** The records' ids, newest first. */
      readonly ids: ReadonlyArray<string>
      /** Names a killed write left (a shelved record's scratch), for the sweep. */
      readonly leftovers: ReadonlyArray<string>
    }

    /** Each shelf's sorted names, reused while its folder is unchanged (`Memo`): a month is 10,000 names to sort. */
    const shelfNames = Memo.make<ShelfListing>()

    const shelfListing = (shelf: string): Effect.Effect<ShelfListing, Failed> => {
      if (archiveRoot === undefined || !isSafeId(shelf)) return Effect.succeed({ ids: [], leftovers: [] })
      const dir = shelfDirOf(shelf)
      return shelfNames.get(
        shelf,
        Memo.mtimeOf(fs, dir),
        fs.readDirectory(dir).pipe(
          Effect.catchIf(isNotFound, () => Effect.succeed<string[]>([])),
          Effect.mapError(failed(`list ${dir}`)),
          Effect.map((all) => ({
            ids: all.filter((n) => n.endsWith(".json")).map((n) => n.slice(0, -5)).sort().reverse(),
            leftovers: all.filter(isLeftover)
          }))
        )
      )
    }

    const shelfIds = (shelf: string): Effect.Effect<ReadonlyArray<string>, Failed> => Effect.map(shelfListing(shelf), (l) => l.ids)

    /**
     * Each shelf's leftovers, reused while its folder is unchanged (`Memo`),
     * read a batch of names at a time: only the few leftovers are kept, never
     * the shelf's names (the sweep after a first move of 1,000,000 questions
     * would otherwise hold them all).
     */
    const shelfLeftovers = Memo.make<ReadonlyArray<string>>()

    const leftoversOn = (shelf: string): Effect.Effect<ReadonlyArray<string>, Failed> => {
      const dir = shelfDirOf(shelf)
      return shelfLeftovers.get(
        shelf,
        Memo.mtimeOf(fs, dir),
        Effect.suspend(() => {
          const found: Array<string> = []
          return Effect.as(
            forEachNames(dir, NAMES_BATCH, (names) => Effect.sync(() => found.push(...names.filter(isLeftover)))),
            found
          )
        })
      )
    }

    /**
     * The leftovers beside the shelves (a month index's scratch) and on them
     * (a write to a shelved record killed midway). A shelf's leftovers come
     * from their memo while it is unchanged, so a sweep reads no shelf of
     * 10,000 names that nothing wrote to.
     */
    const sweepArchive = (now: number): Effect.Effect<number> =>
      archiveRoot === undefined
        ? Effect.succeed(0)
        : Effect.gen(function* () {
          const beside = yield* fs.readDirectory(archiveRoot).pipe(Effect.orElseSucceed((): string[] => []))
          let removed = yield* sweepIn(archiveRoot, beside, now)
          for (const shelf of yield* shelves) {
            const leftovers = yield* leftoversOn(shelf)
            if (leftovers.length === 0) continue
            removed += yield* sweepIn(shelfDirOf(shelf), leftovers, now)
            shelfLeftovers.forget(shelf)
            shelfNames.forget(shelf)
          }
          return removed
        }).pipe(Effect.catchAllCause(() => Effect.succeed(0)))

    const madeShelves = new Set<string>()

    /**
     * Records on one shelf, in the order given, each read or skipped; with the
     * bounded reader a whole chunk is one synchronous pass, as in `scan`.
     */
    const readShelf = (shelf: string, ids: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<A>> => {
      if (archiveRoot === undefined || !isSafeId(shelf)) return Effect.succeed([])
      const dir = shelfDirOf(shelf)
      const pathIn = (id: string) => NodePath.join(dir, `${id}.json`)
      if (Option.isSome(reader)) {
        const fast = reader.value
        return Effect.sync(() =>
          ids.flatMap((id) => {
            try {
              const got = readNow(fast, id, pathIn(id))
              return Either.isRight(got) ? [got.right] : []
            } catch {
              return []
            }
          })
        )
      }
      return Effect.map(
        Effect.forEach(ids, (id) => Effect.option(readAt(id, pathIn(id))), { concurrency: 64 }),
        (got) => got.flatMap((o) => (Option.isSome(o) ? [o.value] : []))
      )
    }

    const archive = (id: string, movable: (current: A) => boolean): Effect.Effect<boolean, Failed> => {
      const target = archivedPathOf(id)
      if (target === undefined) return Effect.succeed(false)
      const shelfDir = NodePath.dirname(target)
      return withLock(
        id,
        Effect.gen(function* () {
          // As it is on disk now, under the lock: a write that landed since
          // the caller looked decides, not the caller's copy.
          const current = yield* Effect.option(readAt(id, pathOf(id)))
          if (Option.isNone(current) || !movable(current.value)) return false
          // Made once per shelf per process: a move is otherwise a handful of
          // file operations, and a migration does 100,000 of them.
          if (!madeShelves.has(shelfDir)) {
            yield* fs.makeDirectory(shelfDir, { recursive: true }).pipe(Effect.mapError(failed(`create ${shelfDir}`)))
            madeShelves.add(shelfDir)
          }
          // Companions first, the record last: until the record's own rename
          // it is hot, and a panel is looked up in both places.
          for (const name of archiveOpts?.companions?.(current.value) ?? []) {
            const from = NodePath.join(root, name)
            if (!(yield* fs.exists(from).pipe(Effect.orElseSucceed(() => false)))) continue
            const to = NodePath.join(shelfDir, name)
            // One a crash left half-moved before is replaced by the hot one.
            yield* fs.remove(to, { recursive: true }).pipe(Effect.catchIf(isNotFound, () => Effect.void), Effect.mapError(failed(`remove ${to}`)))
            yield* fs.rename(from, to).pipe(Effect.mapError(failed(`move ${from}`)))
          }
          // A rename, not a copy: one atomic step, so the record is never in
          // neither place nor in both, and costs no data written (a durable
          // copy is two flushes per record; `flushShelves` makes a batch of
          // moves durable with one flush per folder).
          yield* fs.rename(pathOf(id), target).pipe(
            // The shelf was removed since it was made: made again, once.
            Effect.catchIf(isNotFound, () => fs.makeDirectory(shelfDir, { recursive: true }).pipe(Effect.zipRight(fs.rename(pathOf(id), target)))),
            Effect.mapError(failed(`move ${pathOf(id)}`))
          )
          return true
        }),
        true
      ).pipe(Effect.withSpan("RecordStore.archive", { attributes: { id } }))
    }

    const flushShelves = (names: Iterable<string>) =>
      withFs(
        Effect.forEach([...new Set(names)].filter(isSafeId), (shelf) => syncDirectory(shelfDirOf(shelf)), { discard: true }).pipe(
          Effect.zipRight(syncDirectory(root))
        )
      )

    /** Parsed indexes, reused while their shelf's folder is unchanged (`Memo`). */
    const indexes = Memo.make<ShelfIndex>()

    const NO_INDEX: ShelfIndex = { entries: new Map(), greatestFirst: [] }

    const shelfEntries = (shelf: string, given?: ReadonlyMap<string, A>): Effect.Effect<ShelfIndex, Failed> =>
      archiveOpts === undefined || archiveRoot === undefined || !isSafeId(shelf)
        ? Effect.succeed(NO_INDEX)
        : indexes
          .get(shelf, Memo.mtimeOf(fs, shelfDirOf(shelf)), buildIndex(shelf, archiveRoot, given))
          .pipe(Effect.withSpan("RecordStore.shelfIndex", { attributes: { shelf } }))

    /**
     * Brought up to date and written, but not kept: the move indexes every
     * month it filled, and holding each month's parsed index after it grew
     * with the home (455 MiB at the first move of 300,000 questions). A page
     * or a search reads the written index when it needs it, and keeps that.
     */
    const shelfIndex = (shelf: string, given?: ReadonlyMap<string, A>): Effect.Effect<ReadonlyMap<string, string>, Failed> =>
      archiveOpts === undefined || archiveRoot === undefined || !isSafeId(shelf)
        ? Effect.succeed(new Map())
        : buildIndex(shelf, archiveRoot, given).pipe(
          Effect.map((index) => new Map([...index.entries].map(([id, e]) => [id, e.digest]))),
          Effect.ensuring(Effect.sync(() => indexes.forget(shelf))),
          Effect.withSpan("RecordStore.shelfIndex", { attributes: { shelf } })
        )

    /** The stored index file of a shelf, parsed; empty when missing, torn or hand-edited (rebuilt from the files then). */
    const storedIndex = (file: string): Effect.Effect<Record<string, unknown>> =>
      fs.readFileString(file).pipe(
        Effect.map((text): Record<string, unknown> => {
          try {
            const parsed: unknown = JSON.parse(text)
            return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {}
          } catch {
            return {}
          }
        }),
        Effect.orElseSucceed((): Record<string, unknown> => ({}))
      )

    /**
     * What `shelfIndex` writes, written as it is made: the shelf's names a
     * batch at a time, each entry taken from the stored index or from its
     * record (read and let go), and the file written a batch of entries at a
     * time. Nothing grows with the shelf but the stored index read at the
     * start (none at a first move); building the whole index as a map and
     * then as one string was the peak of a first move (the month indexes of
     * 100,000 questions, one after another, at its very end).
     */
    const indexShelf = (shelf: string): Effect.Effect<void, Failed> => {
      if (archiveOpts === undefined || archiveRoot === undefined || !isSafeId(shelf)) return Effect.void
      const dir = shelfDirOf(shelf)
      const file = NodePath.join(archiveRoot, `${shelf}${INDEX_SUFFIX}`)
      return Effect.gen(function* () {
        const stored = yield* storedIndex(file)
        let changed = false
        let count = 0
        yield* withFs(writeAtomicallyInPieces(file, (write) =>
          Effect.gen(function* () {
            yield* write("{")
            yield* forEachNames(dir, NAMES_BATCH, (names) =>
              Effect.gen(function* () {
                let piece = ""
                for (const name of names) {
                  if (!name.endsWith(".json")) continue
                  const id = name.slice(0, -5)
                  let entry = Object.hasOwn(stored, id) ? storedEntry(id, stored[id]) : undefined
                  if (entry === undefined) {
                    changed = true
                    const record = yield* Effect.either(readAt(id, NodePath.join(dir, name)))
                    // An unreadable file is indexed with no words, as `buildIndex` does.
                    entry = Either.isRight(record) ? entryOf(id, record.right) : { order: id, digest: "" }
                  }
                  piece += `${count === 0 ? "" : ","}${JSON.stringify(id)}:${JSON.stringify([entry.order, entry.digest])}`
                  count++
                }
                if (piece !== "") yield* write(piece)
              }))
            yield* write("}")
            // Unchanged (every entry was stored, none gone): the scratch is dropped, the file left as it was.
            return changed || Object.keys(stored).length !== count
          }))).pipe(Effect.mapError((e): Failed => (isPlatformError(e) ? failed(`index ${dir}`)(e) : e)))
        indexes.forget(shelf)
      }).pipe(Effect.withSpan("RecordStore.indexShelf", { attributes: { shelf } }))
    }

    /**
     * An entry as the index file keeps it: `[order, words]`. A bare string is
     * an index written before order keys: its words, and the id for the
     * order, which is right for a kind that orders by id and read again
     * from the record for one that does not.
     */
    const storedEntry = (id: string, value: unknown): IndexEntry | undefined => {
      if (Array.isArray(value) && value.length === 2 && typeof value[0] === "string" && typeof value[1] === "string")
        return { order: value[0], digest: value[1] }
      return typeof value === "string" && archiveOpts?.order === undefined ? { order: id, digest: value } : undefined
    }

    /** A shelf's index from its stored file, checked against its listing, and written back if it changed. */
    const buildIndex = (shelf: string, archiveDir: string, given?: ReadonlyMap<string, A>): Effect.Effect<ShelfIndex, Failed> =>
      Effect.gen(function* () {
        const dir = shelfDirOf(shelf)
        const file = NodePath.join(archiveDir, `${shelf}${INDEX_SUFFIX}`)
        const stored = yield* storedIndex(file)
        const index = new Map<string, IndexEntry>()
        let changed = false
        for (const id of yield* shelfIds(shelf)) {
          const known = Object.hasOwn(stored, id) ? storedEntry(id, stored[id]) : undefined
          if (known !== undefined) {
            index.set(id, known)
            continue
          }
          changed = true
          // The mover hands over what it just moved: no need to read it back.
          const inHand = given?.get(id)
          if (inHand !== undefined) {
            index.set(id, entryOf(id, inHand))
            continue
          }
          const record = yield* Effect.either(readAt(id, NodePath.join(dir, `${id}.json`)))
          // An unreadable file is indexed with no words (it matches no search)
          // in its id's place, and is not read again on every one.
          index.set(id, Either.isRight(record) ? entryOf(id, record.right) : { order: id, digest: "" })
        }
        if (changed || Object.keys(stored).length !== index.size)
          yield* withFs(writeAtomically(file, JSON.stringify(Object.fromEntries([...index].map(([id, e]) => [id, [e.order, e.digest]]))))).pipe(
            Effect.ignore
          )
        const greatestFirst = [...index].map(([id, e]) => [e.order, id] as const).sort(([a], [b]) => (a < b ? 1 : a > b ? -1 : 0))
        return { entries: index, greatestFirst }
      })

    const shelvedIds = (query: ShelvedQuery): Effect.Effect<ReadonlyArray<Shelved>, Failed> =>
      Effect.gen(function* () {
        const { before, limit } = query
        const words = query.words ?? []
        const found: Array<Shelved> = []
        // A record's order need not follow its shelf (a question asked in
        // one month may be settled in the next), so every shelf offers its
        // greatest `limit` below the cursor, from its index, sorted once
        // per change of the shelf; the page is the greatest of those.
        // Ordered by id with no words to match, a shelf's listing is all a
        // page needs: its index (230 KB of JSON for a month of runs) is read
        // only by a search or a kind with an order of its own.
        const byIdOnly = archiveOpts?.order === undefined && words.length === 0
        // A shelf that cannot be read costs its records, not the page, as an
        // unreadable record costs its slot: said, and passed over.
        const orPassedOver = <B>(shelf: string, empty: B, read: Effect.Effect<B, Failed>) =>
          Effect.catchAll(read, (e) => Effect.as(Effect.logWarning(`${reasonOf(e)}; the ${plural} on shelf ${shelf} are left out`), empty))
        for (const shelf of yield* shelves) {
          let taken = 0
          if (byIdOnly) {
            const ids = yield* orPassedOver(shelf, [] as ReadonlyArray<string>, shelfIds(shelf))
            for (let k = firstBelow(ids, (id) => id, before); k < ids.length && taken < limit; k++) {
              const id = ids[k]!
              if (query.skip?.(id) ?? false) continue
              found.push({ id, order: id })
              taken++
            }
            // A full page: the older shelves cannot add to it (below).
            if (found.length >= limit) break
            continue
          }
          const index = yield* orPassedOver(shelf, NO_INDEX, shelfEntries(shelf))
          for (let k = firstBelow(index.greatestFirst, ([order]) => order, before); k < index.greatestFirst.length; k++) {
            const [order, id] = index.greatestFirst[k]!
            if (taken >= limit) break
            if (query.skip?.(id) ?? false) continue
            if (words.length > 0 && !digestMatches(index.entries.get(id)?.digest ?? "", words)) continue
            found.push({ id, order })
            taken++
          }
          // Ordered by id, a newer shelf's every record is greater than an
          // older one's (shelves sort as their ids do): once a page is full,
          // the older shelves cannot add to it, and stay unread, unlisted.
          if (archiveOpts?.order === undefined && found.length >= limit) break
        }
        return found.sort((a, b) => (a.order < b.order ? 1 : a.order > b.order ? -1 : 0)).slice(0, limit)
      })

    const entryOf = (id: string, record: A): IndexEntry => {
      try {
        return { order: archiveOpts?.order?.(record) ?? id, digest: safeDigest(record) }
      } catch {
        return { order: id, digest: safeDigest(record) }
      }
    }

    const safeDigest = (record: A): string => {
      try {
        return archiveOpts?.digest(record) ?? ""
      } catch {
        return ""
      }
    }

    const store = {
      archivedPathOf,
      stamp,
      archive,
      flushShelves,
      readShelf,
      shelves,
      shelfIds,
      shelfIndex,
      indexShelf,
      unindexedShelves,
      shelvedIds,
      root,
      ids,
      forEachIdBatch,
      exists,
      remove,
      read,
      scan,
      resolve,
      get,
      put,
      create,
      withLock,
      update,
      sweep,
      revision
    }

    /**
     * The hot records (the listing, reused while nothing changed) merged with
     * the shelves' names, newest shelf first (`shelvedIds` stops once the
     * page is full), and only the page's shelved records read.
     */
    const pageById = (query: { readonly before?: string | undefined; readonly limit: number }): Effect.Effect<ShelfPage<A>, Failed> =>
      Effect.gen(function* () {
        const { records: hot } = yield* scan
        return yield* ShelfPages.page(store, {
          hot: hot.filter((r) => query.before === undefined || kind.idOf(r) < query.before),
          inHot: new Set(hot.map(kind.idOf)),
          before: query.before,
          limit: query.limit,
          idOf: kind.idOf,
          orderOf: kind.idOf,
          shelfOf: (id) => archiveOpts?.shelfOf(id)
        })
      })

    return { ...store, pageById } satisfies FileRecordStore<A, NotFound, Unreadable, Failed>
  })
