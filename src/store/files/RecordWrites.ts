/**
 * Finding a record by a typed id, and every write: create-new, put where
 * the record is, remove, and the locked read-modify-write (`update`), one
 * writer at a time per record across processes.
 */
import { type NotFound, type Unreadable } from "../RecordStore.js"
import * as NodePath from "node:path"
import * as RecordLock from "./RecordLock.js"
import { Effect, Either } from "effect"
import { createAtomically, writeAtomically } from "./AtomicFile.js"
import { type Failed, isSafeId, noneMatch } from "../RecordStore.js"
import { LockBusy, UnsafeId } from "../StoreErrors.js"
import { type Listing } from "./Listing.js"
import { type RecordReads } from "./RecordReads.js"
import { type ShelfIndexes } from "./ShelfIndex.js"
import { type Shelves } from "./Shelves.js"
import { isNotFound, type StoreContext } from "./StoreContext.js"

/** Lookups by id and every write. */
export const make = <A>(
  ctx: StoreContext<A>,
  reads: RecordReads<A>,
  listing: Listing<A>,
  shelfList: Shelves<A>,
  index: ShelfIndexes<A>
) => {
  const { fs, root, kind, errors, label, flat, pathOf, lockOf, failed, ensureRoot, withFs, archiveOpts, archivedPathOf } = ctx
  const { read, locate } = reads
  const { ids } = listing
  const { shelves, shelfIds } = shelfList
  const { forgetDigest } = index

  const resolve = (wanted: string): Effect.Effect<string, NotFound | Failed> =>
    Effect.gen(function* () {
      // The id becomes a path part, so only a name that cannot traverse is
      // ever looked up directly; anything else can only match by listing.
      // fallback: an exact id that cannot be looked at is resolved by the listing instead
      if (isSafeId(wanted) && (yield* fs.exists(pathOf(wanted)).pipe(Effect.orElseSucceed(() => false)))) return wanted
      const archived = archivedPathOf(wanted)
      // fallback: an exact id that cannot be looked at is resolved by the listing instead
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
      return yield* noneMatch(kind, wanted, hits.sort())
    })

  const get = (wanted: string) => Effect.flatMap(resolve(wanted), read)

  // -- writes -------------------------------------------------------------

  const refuseUnsafe = (id: string) => isSafeId(id) ? Effect.void : Effect.fail(new UnsafeId({ kind: kind.noun, id }))

  const putAt = (path: string, record: A) => {
    const id = kind.idOf(record)
    return Effect.zipRight(
      refuseUnsafe(id),
      withFs(writeAtomically(path, kind.encode(record), { durable: true })).pipe(
        Effect.mapError(failed("write", `${kind.noun} ${id}`)),
        Effect.zipRight(path === pathOf(id) ? Effect.void : forgetDigest(id))
      )
    ).pipe(Effect.withSpan("RecordStore.put", { attributes: { id } }))
  }

  /** Where a whole write of this id goes: where the record is, hot unless only its archived copy exists. */
  const homeOf = (id: string) =>
    Effect.gen(function* () {
      const archived = archivedPathOf(id)
      if (archived === undefined) return pathOf(id)
      // A look that failed is the store failing: taken for "no hot copy", the write would land on the shelf's older one.
      const exists = (path: string) => fs.exists(path).pipe(Effect.mapError(failed("read", path)))
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
      Effect.zipRight(fs.remove(path).pipe(Effect.catchIf(isNotFound, () => Effect.void), Effect.mapError(failed("remove", `${path}`)))),
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
        Effect.mapError(failed("create", `${kind.noun} ${id}`))
      )
    )
  }

  const exists = (id: string): Effect.Effect<boolean, Failed> =>
    Effect.gen(function* () {
      if (!isSafeId(id)) return false
      const there = (path: string) => fs.exists(path).pipe(Effect.mapError(failed("look for", `${path}`)))
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
          Effect.mapError(failed("remove", `${kind.noun} ${id}`))
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
            (e): Effect.Effect<never, Failed> =>
              Effect.fail(
                e.reason === "busy"
                  ? new LockBusy({ kind: kind.noun, id, label: label(id), lock: e.lock, waitedMs: e.waitedMs })
                  : errors.failed("lock", lockOf(id), e.message, e)
              )
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

  return { resolve, get, put, create, exists, remove, withLock, update }
}

export type RecordWrites<A> = ReturnType<typeof make<A>>
