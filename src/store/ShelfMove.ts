/**
 * Moving a kind's finished records to their month shelves, a batch at a
 * time: runs and tasks move the same way (questions keep their own mover,
 * which also carries panels). Each record is judged again under its lock
 * (`still`), since a write that landed after the listing decides; a record
 * that cannot move is said once and left hot, never lost.
 */
import { Effect } from "effect"

export interface ShelfMoveOptions<A> {
  /** The records found due, in the listing's order. */
  readonly due: ReadonlyArray<A>
  readonly idOf: (record: A) => string
  readonly shelfOf: (id: string) => string | undefined
  /** Whether the record as it is now, under its lock, is still due. */
  readonly still: (fresh: A) => boolean
  /** Records moved between two flushes of their shelves: bounds what one crash can leave to sweep. */
  readonly batch: number
  /** The warning when one cannot move. */
  readonly cannotMove: (id: string, message: string) => string
}

/** Move what is due; how many moved. */
export const moveDue = <A, F extends { readonly message: string }>(
  records: {
    readonly archive: (id: string, movable: (current: A) => boolean) => Effect.Effect<boolean, F>
    readonly flushShelves: (shelves: Iterable<string>) => Effect.Effect<void>
    readonly shelfIndex: (shelf: string, known?: ReadonlyMap<string, A>) => Effect.Effect<ReadonlyMap<string, string>, F>
  },
  options: ShelfMoveOptions<A>
): Effect.Effect<number> =>
  Effect.gen(function* () {
    const { due, idOf, shelfOf } = options
    let moved = 0
    for (let i = 0; i < due.length; i += options.batch) {
      const chunk = due.slice(i, i + options.batch)
      const done = yield* Effect.forEach(
        chunk,
        (r) =>
          records.archive(idOf(r), options.still).pipe(
            // display: a record that could not be moved is logged and stays hot
            Effect.catchAll((e) => Effect.as(Effect.logWarning(options.cannotMove(idOf(r), e.message)), false))
          ),
        { concurrency: 4 }
      )
      moved += done.filter((d) => d).length
      yield* records.flushShelves(chunk.flatMap((r) => shelfOf(idOf(r)) ?? []))
      yield* Effect.yieldNow()
    }
    // Each shelf's index brought up to date from the records in hand, so a search reads index lines, not files.
    const byId = new Map(due.map((r) => [idOf(r), r]))
    // fallback: a shelf's index not brought up to date is rebuilt by the next read of it
    for (const shelf of new Set(due.flatMap((r) => shelfOf(idOf(r)) ?? []))) yield* Effect.ignore(records.shelfIndex(shelf, byId))
    return moved
  })
