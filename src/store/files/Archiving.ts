/**
 * Moving a settled record onto its shelf, under the record's lock, with its
 * companions first; and making a batch of moves durable with one flush per
 * folder.
 */
import { type Failed } from "../RecordStore.js"
import * as NodePath from "node:path"
import { Effect, Option } from "effect"
import { syncDirectory } from "./AtomicFile.js"
import { isSafeId } from "../RecordStore.js"
import { type RecordReads } from "./RecordReads.js"
import { type RecordWrites } from "./RecordWrites.js"
import { isNotFound, type StoreContext } from "./StoreContext.js"

/** The move onto a shelf. */
export const make = <A>(
  ctx: StoreContext<A>,
  reads: RecordReads<A>,
  writes: RecordWrites<A>
) => {
  const { fs, root, pathOf, failed, withFs, archiveOpts, shelfDirOf, archivedPathOf } = ctx
  const { readAt } = reads
  const { withLock } = writes

  const madeShelves = new Set<string>()

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
          yield* fs.makeDirectory(shelfDir, { recursive: true }).pipe(Effect.mapError(failed("create", `${shelfDir}`)))
          madeShelves.add(shelfDir)
        }
        // Companions first, the record last: until the record's own rename
        // it is hot, and a panel is looked up in both places.
        for (const name of archiveOpts?.companions?.(current.value) ?? []) {
          const from = NodePath.join(root, name)
          // fallback: a file that cannot be looked at is not moved this time
          if (!(yield* fs.exists(from).pipe(Effect.orElseSucceed(() => false)))) continue
          const to = NodePath.join(shelfDir, name)
          // One a crash left half-moved before is replaced by the hot one.
          yield* fs.remove(to, { recursive: true }).pipe(Effect.catchIf(isNotFound, () => Effect.void), Effect.mapError(failed("remove", `${to}`)))
          yield* fs.rename(from, to).pipe(Effect.mapError(failed("move", `${from}`)))
        }
        // A rename, not a copy: one atomic step, so the record is never in
        // neither place nor in both, and costs no data written (a durable
        // copy is two flushes per record; `flushShelves` makes a batch of
        // moves durable with one flush per folder).
        yield* fs.rename(pathOf(id), target).pipe(
          // The shelf was removed since it was made: made again, once.
          Effect.catchIf(isNotFound, () => fs.makeDirectory(shelfDir, { recursive: true }).pipe(Effect.zipRight(fs.rename(pathOf(id), target)))),
          Effect.mapError(failed("move", `${pathOf(id)}`))
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

  return { archive, flushShelves }
}

export type Archiving<A> = ReturnType<typeof make<A>>
