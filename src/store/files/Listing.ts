/**
 * Listing the hot records: the ids, the scan (reused while nothing
 * changed, `Memo`), and the stamp a poll reads without reading a record. The
 * folder layout's hot ids are the root's folders on no shelf, kept in
 * `hot.json` so a fresh process need not list every shelf to know them.
 */
import { type Failed } from "../RecordStore.js"
import * as NodePath from "node:path"
import * as Memo from "./Memo.js"
import { Clock, Effect, Either, Option } from "effect"
import { writeAtomically } from "./AtomicFile.js"
import { chunksOf, type Scan, type Skipped } from "../RecordStore.js"
import { type Leftovers } from "./Leftovers.js"
import { type RecordReads } from "./RecordReads.js"
import { type Shelves } from "./Shelves.js"
import { isNotFound, type StoreContext } from "./StoreContext.js"

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

/** The hot records' listing. */
export const make = <A>(
  ctx: StoreContext<A>,
  reads: RecordReads<A>,
  shelfList: Shelves<A>,
  leftovers: Leftovers<A>
) => {
  const { fs, options, root, flat, pathOf, withFs, names, idsIn, forEachNames, archiveRoot, shelfDirOf, isLeftover, failed } = ctx
  const { readAll } = reads
  const { shelves, shelfIds } = shelfList
  const { sweepNames, sweepDue } = leftovers

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
    // fallback: the stamp of the shelves only keys a memo; no shelf listed means it is worked out again
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
      // fallback: a shelf that cannot be listed hides none of the hot ids (they are listed as hot)
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
  const readHotFile = (key: string): Effect.Effect<Option.Option<ReadonlyArray<string>>, Failed> =>
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
        // Missing is "work them out"; a read that failed is the store failing, as the listing's own would.
        Effect.catchIf(isNotFound, () => Effect.succeed(Option.none<ReadonlyArray<string>>())),
        Effect.mapError(failed("read", hotFile))
      )
  const writeHotFile = (key: string, ids: ReadonlyArray<string>): Effect.Effect<void> =>
    // fallback: the hot ids' file is a memo; one not written costs a listing next time
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
        // fallback: the stamp only says whether to look again; an empty one always does
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
      if (sweepDue(now)) yield* sweepNames(stamp.all ?? [], stamp.ids)
      folderListing = Memo.trusted(stamp.newest, takenAt) ? { revision: stamp.revision, scan: result } : undefined
      return result
    }
    const list = Effect.gen(function* () {
      const all = yield* names
      const slots = yield* readAll(idsIn(all))
      const now = yield* Clock.currentTimeMillis
      if (sweepDue(now) && all.some(isLeftover)) yield* sweepNames(all)
      return scanOf(slots)
    })
    return yield* listings.get(root, rootMtime, list)
  }).pipe(Effect.withSpan("RecordStore.scan", { attributes: { root } }))

  const stamp: Effect.Effect<FolderStamp> = flat ? flatStamp : Effect.map(folderStamp, ({ revision, newest }) => ({ revision, newest }))
  const revision = Effect.map(stamp, (s) => s.revision)

  return { ids, forEachIdBatch, scan, stamp, revision }
}

export type Listing<A> = ReturnType<typeof make<A>>
