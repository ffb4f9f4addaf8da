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
 *
 * The backend is assembled here from one module per concept, each built
 * from the one `StoreContext` value: `RecordReads`, `Shelves`, `Leftovers`,
 * `Listing`, `ShelfIndex`, `RecordWrites` and `Archiving`.
 */

import * as FileSystem from "@effect/platform/FileSystem"
import { Effect } from "effect"
import * as Archiving from "./Archiving.js"
import { BoundedReader } from "./BoundedReader.js"
import * as Leftovers from "./Leftovers.js"
import * as Listing from "./Listing.js"
import type { FolderStamp } from "./Listing.js"
import * as RecordReads from "./RecordReads.js"
import * as RecordWrites from "./RecordWrites.js"
import * as ShelfIndex from "./ShelfIndex.js"
import * as Shelves from "./Shelves.js"
import * as StoreContext from "./StoreContext.js"
import type { RecordStore, RecordStoreOptions } from "../RecordStore.js"
import * as ShelfPages from "../ShelfPage.js"
import type { ShelfPage } from "../ShelfPage.js"

// The contract, for whoever reads it through the file backend's module.
export * from "../RecordStore.js"
export { BoundedReader, type BoundedReadRefusal, type NamesCursor } from "./BoundedReader.js"
export { ABANDONED_AFTER_MS, SWEEP_EVERY_MS } from "./Leftovers.js"
export { fnv1a, type FolderStamp, HOT_IDS_FILE } from "./Listing.js"

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

/** Build a store of one kind of record. */
export const make = <A, NotFound, Unreadable, Failed>(
  options: RecordStoreOptions<A, NotFound, Unreadable, Failed>
): Effect.Effect<FileRecordStore<A, NotFound, Unreadable, Failed>, never, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const reader = yield* Effect.serviceOption(BoundedReader)
    const ctx = StoreContext.make(fs, reader, options)
    const { root, kind, archiveOpts, archivedPathOf } = ctx
    // Built bottom up: each module takes the context and the few before it it reads through.
    const reads = RecordReads.make(ctx)
    const shelfList = Shelves.make(ctx, reads)
    const leftovers = Leftovers.make(ctx, shelfList)
    const listing = Listing.make(ctx, reads, shelfList, leftovers)
    const index = ShelfIndex.make(ctx, reads, shelfList)
    const writes = RecordWrites.make(ctx, reads, listing, shelfList, index)
    const archiving = Archiving.make(ctx, reads, writes)
    const { scan } = listing

    const store = {
      archivedPathOf,
      stamp: listing.stamp,
      archive: archiving.archive,
      flushShelves: archiving.flushShelves,
      readShelf: shelfList.readShelf,
      shelves: shelfList.shelves,
      shelfIds: shelfList.shelfIds,
      shelfIndex: index.shelfIndex,
      indexShelf: index.indexShelf,
      unindexedShelves: shelfList.unindexedShelves,
      shelvedIds: index.shelvedIds,
      root,
      ids: listing.ids,
      forEachIdBatch: listing.forEachIdBatch,
      exists: writes.exists,
      remove: writes.remove,
      read: reads.read,
      scan,
      resolve: writes.resolve,
      get: writes.get,
      put: writes.put,
      create: writes.create,
      withLock: writes.withLock,
      update: writes.update,
      sweep: leftovers.sweep,
      revision: listing.revision
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
