/**
 * The archive's shelves as names: which shelves there are, each one's record
 * ids and leftovers (kept while its folder is unchanged), and reading a
 * chunk of one shelf's records. Nothing here reads an index or moves a record.
 */
import { type Failed } from "../RecordStore.js"
import * as NodePath from "node:path"
import * as Memo from "./Memo.js"
import { Effect, Either, Option } from "effect"
import { isSafeId } from "../RecordStore.js"
import { type RecordReads } from "./RecordReads.js"
import { INDEX_SUFFIX, isNotFound, NAMES_BATCH, type StoreContext } from "./StoreContext.js"

/** The shelves' listings. */
export const make = <A>(
  ctx: StoreContext<A>,
  reads: RecordReads<A>
) => {
  const { fs, reader, failed, forEachNames, archiveRoot, shelfDirOf, isLeftover } = ctx
  const { readAt, readNow } = reads

  /** The archive folder's names: its shelves, their indexes, scratch files. */
  const archiveNames: Effect.Effect<ReadonlyArray<string>, Failed> = archiveRoot === undefined
    ? Effect.succeed([])
    : fs.readDirectory(archiveRoot).pipe(
      Effect.catchIf(isNotFound, () => Effect.succeed<string[]>([])),
      Effect.mapError(failed("list", `${archiveRoot}`))
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
        Effect.mapError(failed("list", `${dir}`)),
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

  return { shelves, unindexedShelves, shelfIds, leftoversOn, shelfNames, shelfLeftovers, readShelf }
}

export type Shelves<A> = ReturnType<typeof make<A>>
