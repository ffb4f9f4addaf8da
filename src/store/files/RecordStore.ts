/**
 * The file backend's record store: the contract of `../RecordStore.ts` on a
 * folder of JSON files (atomic durable writes, create-new, the per-record
 * lock, bounded reads, listing, ids, leftovers, the archive's shelves and
 * their indexes; docs/store.md, "The file backend", says how each works).
 * This module only assembles it, from one module per concept, each built
 * from the one `StoreContext` value: `RecordReads`, `Shelves`, `Leftovers`,
 * `Listing`, `ShelfIndex`, `RecordWrites` and `Archiving`.
 */
import { type Failed } from "../RecordStore.js"
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
import { type RecordErrors, withKindErrors } from "../KindErrors.js"

// The contract, for whoever reads it through the file backend's module.
export * from "../KindErrors.js"
export * from "../RecordStore.js"
export { BoundedReader, type BoundedReadRefusal, type NamesCursor } from "./BoundedReader.js"
export { ABANDONED_AFTER_MS, SWEEP_EVERY_MS } from "./Leftovers.js"
export { fnv1a, type FolderStamp, HOT_IDS_FILE } from "./Listing.js"

/** The file backend's store: the contract, plus where a record's shelved file is (a question's panel moves beside it). */
export interface FileRecordStore<A> extends RecordStore<A> {
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
export const make = <A>(
  options: RecordStoreOptions<A>
): Effect.Effect<FileRecordStore<A>, never, FileSystem.FileSystem> =>
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

    return { ...store, pageById } satisfies FileRecordStore<A>
  })

/** `make`, its failures said in the kind's own classes (`KindErrors.ts`). */
export const makeKind = <A, NotFound, Unreadable, Failed>(
  options: RecordStoreOptions<A> & { readonly errors: RecordErrors<NotFound, Unreadable, Failed> }
) => Effect.map(make(options), (store) => withKindErrors<A, NotFound, Unreadable, Failed, FileRecordStore<A>>(store, options.errors))
