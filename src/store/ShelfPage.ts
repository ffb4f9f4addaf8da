/**
 * One page of a kind's history, newest first, from its two places: the hot
 * records in hand and the month shelves. Questions, runs and tasks page the
 * same way; they differ only in what a record's place in the order is (a
 * question's settle time, a run's id).
 */
import { Effect, Either } from "effect"

export interface ShelfPage<A> {
  readonly records: ReadonlyArray<A>
  /** The order key of the last one given, for the next page's `before`; null when nothing older is left. */
  readonly next: string | null
}

export interface ShelfPageQuery<A> {
  /** Hot records that belong on this page's list (before `before`, matching the search), in any order. */
  readonly hot: ReadonlyArray<A>
  /** Every id in the hot folder, listed or not: a move a crash cut short leaves a record in both places, and the hot copy is the one shown. */
  readonly inHot: ReadonlySet<string>
  readonly before?: string | undefined
  readonly limit: number
  readonly words?: ReadonlyArray<string> | undefined
  readonly idOf: (record: A) => string
  /** Its place in the order, greatest first: what the shelves' `order` says of a shelved one. */
  readonly orderOf: (record: A) => string
  /** The shelf a record's id files it under. */
  readonly shelfOf: (id: string) => string | undefined
}

/** A shelved record's id and its order key. */
export interface Shelved {
  readonly id: string
  readonly order: string
}

export interface ShelvedQuery {
  readonly before?: string | undefined
  readonly limit: number
  readonly words?: ReadonlyArray<string> | undefined
  readonly skip?: ((id: string) => boolean) | undefined
}

/**
 * What a page reads of a kind's store: both backends' stores are one, and
 * this module names only what it uses, so the store can build its `pageById`
 * on it without the two importing each other.
 */
export interface ShelfReader<A, Failed> {
  readonly shelvedIds: (options: ShelvedQuery) => Effect.Effect<ReadonlyArray<Shelved>, Failed>
  readonly readShelf: (shelf: string, ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<A>>
  readonly read: (id: string) => Effect.Effect<A, unknown>
}

const newestFirst = (a: string, b: string) => (a < b ? 1 : a > b ? -1 : 0)

export const page = <A, Failed>(
  records: ShelfReader<A, Failed>,
  query: ShelfPageQuery<A>
): Effect.Effect<ShelfPage<A>, Failed> =>
  Effect.gen(function* () {
    const { limit } = query
    const hot = query.hot.map((record) => ({ record, order: query.orderOf(record) })).sort((a, b) => newestFirst(a.order, b.order))
    // One more than a page from each side, to know whether there is a next.
    const shelved = yield* records.shelvedIds({ before: query.before, limit: limit + 1, words: query.words, skip: (id) => query.inHot.has(id) })
    const merged: Array<{ readonly id: string; readonly order: string; readonly hot?: A }> = []
    let h = 0
    let s = 0
    while (merged.length <= limit && (h < hot.length || s < shelved.length)) {
      const nextHot = hot[h]
      const nextShelved = shelved[s]
      if (nextShelved === undefined || (nextHot !== undefined && nextHot.order > nextShelved.order)) {
        merged.push({ id: query.idOf(nextHot!.record), order: nextHot!.order, hot: nextHot!.record })
        h++
      } else {
        merged.push(nextShelved)
        s++
      }
    }
    const slots = merged.slice(0, limit)
    // The shelved ones a shelf at a time: one read per shelf (a query on PostgreSQL), not one per record.
    const byShelf = new Map<string, Array<string>>()
    for (const slot of slots) {
      const shelf = slot.hot === undefined ? query.shelfOf(slot.id) : undefined
      if (shelf !== undefined) byShelf.set(shelf, [...(byShelf.get(shelf) ?? []), slot.id])
    }
    const fromShelves = new Map<string, A>()
    for (const [shelf, ids] of byShelf) for (const r of yield* records.readShelf(shelf, ids)) fromShelves.set(query.idOf(r), r)
    const found: Array<A> = []
    for (const slot of slots) {
      const record = slot.hot ?? fromShelves.get(slot.id)
      if (record !== undefined) found.push(record)
      else {
        // Not on the shelf its id names (moved back by hand), or unreadable:
        // looked up by id, and one unreadable record costs its slot, not the page.
        const got = yield* Effect.either(records.read(slot.id))
        if (Either.isRight(got)) found.push(got.right)
      }
    }
    return { records: found, next: merged.length > limit ? (slots.at(-1)?.order ?? null) : null }
  })
