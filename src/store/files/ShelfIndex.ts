/**
 * Each shelf's index of the kind's searchable words and order per record,
 * so a page or a search of the archive reads index lines, not every file;
 * built a batch at a time, reused while its shelf is unchanged, and dropped
 * for a record that is rewritten.
 */
import { type Failed } from "../RecordStore.js"
import * as NodePath from "node:path"
import * as Memo from "./Memo.js"
import { Effect, Either } from "effect"
import { writeAtomically, writeAtomicallyInPieces } from "./AtomicFile.js"
import { digestMatches, isSafeId, reasonOf } from "../RecordStore.js"
import { type Shelved, type ShelvedQuery } from "../ShelfPage.js"
import { type RecordReads } from "./RecordReads.js"
import { type Shelves } from "./Shelves.js"
import { INDEX_SUFFIX, isNotFound, isPlatformError, NAMES_BATCH, type StoreContext } from "./StoreContext.js"

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

/** The shelves' indexes. */
export const make = <A>(
  ctx: StoreContext<A>,
  reads: RecordReads<A>,
  shelfList: Shelves<A>
) => {
  const { fs, plural, failed, withFs, forEachNames, archiveOpts, archiveRoot, shelfDirOf } = ctx
  const { readAt } = reads
  const { shelves, shelfIds } = shelfList

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
      // fallback: the in-memory index is a cache; a failed fill reads the file next time
      Effect.catchAllCause(() => Effect.void)
    )
  }

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

  /**
   * The stored index file of a shelf, parsed; empty when missing, torn or
   * hand-edited (rebuilt from the files then). A read that failed is the
   * store failing, not "no index": the index is written next.
   */
  const storedIndex = (file: string): Effect.Effect<Record<string, unknown>, Failed> =>
    fs.readFileString(file).pipe(
      Effect.map((text): Record<string, unknown> => {
        try {
          const parsed: unknown = JSON.parse(text)
          return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {}
        } catch {
          return {}
        }
      }),
      Effect.catchIf(isNotFound, () => Effect.succeed<Record<string, unknown>>({})),
      Effect.mapError(failed("read", file))
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
        }))).pipe(Effect.mapError((e): Failed => (isPlatformError(e) ? failed("index", `${dir}`)(e) : e)))
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
          // fallback: the index is rebuilt by the next read if this write is lost
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
        // display: a shelf that cannot be read is left out of the page, saying so
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

  return { forgetDigest, shelfIndex, indexShelf, shelvedIds }
}

export type ShelfIndexes<A> = ReturnType<typeof make<A>>
