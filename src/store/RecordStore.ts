/**
 * The record store's contract, which every record kind stands on and both
 * backends keep (`files/RecordStore.ts`, `postgres/PgRecordStore.ts`;
 * `test/store/RecordStoreContract.test.ts` holds each to it): what a kind
 * brings (`RecordKind`, `ArchiveOptions`), the errors it fails with (`StoreErrors.ts`), what a store
 * offers (`RecordStore`), and the rules both say in the same words (ids,
 * refusals, decoding).
 */
import { type Effect, Either } from "effect"
import type { ShelfPage, Shelved, ShelvedQuery } from "./ShelfPage.js"
import { AMBIGUOUS_NAMED, RecordNotFound, RecordUnreadable, type WriteError } from "./StoreErrors.js"
import { isNewerSchema, type NewerSchema } from "./VersionedJson.js"

export type { Shelved, ShelvedQuery } from "./ShelfPage.js"

/** What a kind of record brings to the store. */
export interface RecordKind<A> {
  /** How messages name one record: "question", "run", "task". */
  readonly noun: string
  /** How they name several (default: noun + "s"). */
  readonly plural?: string
  /** How messages show an id (default: the id itself), e.g. the short id. */
  readonly label?: (id: string) => string
  /**
   * One file's text to a record, or why not (`source` names the file). The
   * versioned rules live here (see `VersionedJson.parseVersioned`). It may
   * throw: the store turns any throw into "unreadable".
   */
  readonly decode: (body: string, source: string) => Either.Either<A, { readonly message: string }>
  readonly encode: (record: A) => string
  readonly idOf: (record: A) => string
  /**
   * Largest file read as one record. Bigger is skipped and explained: a file
   * the writer of this kind could never have produced is not worth the memory.
   */
  readonly maxBytes: number
}

/** A record was not found (no id matches, or several do). */
export type NotFound = RecordNotFound
/** A record is there but this build cannot read it (or a newer magi wrote it). */
export type Unreadable = RecordUnreadable | NewerSchema
/** The backend said no (the disk, the database, a lock that stayed busy, an id no path is built from). */
export type Failed = WriteError
/** Whatever a store's read or write can fail with: the whole family, for a caller that answers them all alike. */
export type Failure = NotFound | Unreadable | Failed

const FAMILY: ReadonlySet<string> = new Set(["RecordNotFound", "RecordUnreadable", "NewerSchema", "StoreFailed", "LockBusy", "UnsafeId"])

/** Is `e` one of the store's own errors (and not the caller's, passed through a `withLock` or `update`)? */
export const isFailure = (e: unknown): e is Failure => typeof e === "object" && e !== null && FAMILY.has(String((e as { _tag?: unknown })._tag))

export type Layout = { readonly _tag: "flat" } | { readonly _tag: "folder"; readonly file: string }

export interface RecordStoreOptions<A> {
  readonly root: string
  readonly kind: RecordKind<A>
  /** Default flat: `<root>/<id>.json`. */
  readonly layout?: Layout
  /**
   * The lock's file name beside a flat record (default `<id>.lock`), for a
   * kind that keeps something else there (the queue's claim on a task).
   */
  readonly lockName?: (id: string) => string
  /** Other names in `root` a kill can leave behind (e.g. half-built panel folders), swept like scratch files. */
  readonly leftover?: (name: string) => boolean
  /** A second, archived location per record; see the module's comment. */
  readonly archive?: ArchiveOptions<A>
}

/** Where a kind's records go once they are archived, and what a shelf's index keeps of each. */
export interface ArchiveOptions<A> {
  /** The folder inside `root` holding the shelves, e.g. `history`. */
  readonly dir: string
  /**
   * The shelf a record with this id belongs on, from the id alone (so a
   * lookup by id needs no listing); none when the id cannot be archived.
   * A shelf name must be a safe path part, and shelves sort by name the way
   * their ids do (a month, `2026-09`).
   */
  readonly shelfOf: (id: string) => string | undefined
  /** The words a search may match a record on, as kept in its shelf's index (keep it short: it is read per search). */
  readonly digest: (record: A) => string
  /**
   * Where a record stands in the archive's listing, greatest first, kept in
   * its shelf's index beside its words (a question: when it was settled,
   * which its id does not say). The id when not given.
   */
  readonly order?: (record: A) => string
  /** Names beside a hot record that move with it (a question's panel folder), relative to the folder holding it. */
  readonly companions?: (record: A) => ReadonlyArray<string>
  /**
   * Whether a record may stay on its shelf (default: always). A write that
   * makes a shelved record unsettled (a done task released) puts it back
   * hot, where listings look. Flat layout and PostgreSQL.
   */
  readonly settled?: (record: A) => boolean
}

/** A file in the folder that is not a readable record, and why. */
export interface Skipped {
  readonly id: string
  readonly reason: string
}

export interface Scan<A> {
  /** Every readable record, in no particular order. */
  readonly records: ReadonlyArray<A>
  /** Every `<id>.json` that could not be read, by id, with why. */
  readonly skipped: ReadonlyArray<Skipped>
}

/**
 * The record store's contract: what every backend (this module's files,
 * `PgRecordStore`'s rows, the files over `MemoryFileSystem` in tests)
 * promises, saying nothing about where records live. The contract tests
 * (`test/store/RecordStoreContract.test.ts`) hold each backend to it.
 */
export interface RecordStore<A> {
  /** Where the records live, for messages: a folder, or a database with its password masked. */
  readonly root: string
  /** Ids of every stored hot record, readable or not. */
  readonly ids: Effect.Effect<ReadonlyArray<string>, Failed>
  /**
   * The same ids a batch of at most `size` at a time, each batch handed to
   * `each` before the next is read: where the backend can, the whole list is
   * never held (a flat home's first move lists 100,000 names, 1,000,000 at
   * the goal). A record added or removed meanwhile may or may not be seen.
   */
  readonly forEachIdBatch: <E, R>(
    size: number,
    each: (ids: ReadonlyArray<string>) => Effect.Effect<void, E, R>
  ) => Effect.Effect<void, E | Failed, R>
  /** Whether a record with exactly this id is stored, hot or archived. */
  readonly exists: (id: string) => Effect.Effect<boolean, Failed>
  /** One record by its exact id. */
  readonly read: (id: string) => Effect.Effect<A, NotFound | Unreadable | Failed>
  /**
   * Every hot record, plus every stored one that is not readable, explained.
   * Reused while nothing was written (see `revision`).
   */
  readonly scan: Effect.Effect<Scan<A>, Failed>
  /** Expand an id, unique prefix or unique suffix to exactly one stored id. */
  readonly resolve: (wanted: string) => Effect.Effect<string, NotFound | Failed>
  /** `resolve`, then `read`. */
  readonly get: (wanted: string) => Effect.Effect<A, NotFound | Unreadable | Failed>
  /** Write a record whole: atomic and durable. */
  readonly put: (record: A) => Effect.Effect<void, Failed>
  /** Write a new record unless its id is taken (false then): atomic and durable. */
  readonly create: (record: A) => Effect.Effect<boolean, Failed>
  /** Remove a record (hot or archived); fine when there is none. */
  readonly remove: (id: string) => Effect.Effect<void, Failed>
  /**
   * Hold one record's writer claim while `body` runs: no other writer of
   * that record, in this process or another, runs meanwhile.
   */
  readonly withLock: <B, E, R>(id: string, body: Effect.Effect<B, E, R>) => Effect.Effect<B, E | Failed, R>
  /**
   * Read-modify-write under the lock. `change` sees the record as it is
   * stored now; returning the same object writes nothing.
   */
  readonly update: <E, R = never>(
    wanted: string,
    change: (current: A) => Either.Either<A, E> | Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E | NotFound | Unreadable | Failed, R>
  /**
   * Remove leftovers clearly abandoned now, on the shelves too; how many.
   * (A backend whose writes leave nothing behind removes nothing.)
   */
  readonly sweep: Effect.Effect<number>
  /** Changes whenever a record is written; 0 before the first. */
  readonly revision: Effect.Effect<number>
  /**
   * Move one hot record to its shelf, under its lock, if `movable` says so
   * of the record as it is stored then. True when it moved.
   */
  readonly archive: (id: string, movable: (current: A) => boolean) => Effect.Effect<boolean, Failed>
  /** Make the moves onto these shelves so far durable (where a move is not durable by itself). */
  readonly flushShelves: (shelves: Iterable<string>) => Effect.Effect<void>
  /** Records on one shelf by id, in the order given; unreadable ones left out (they are explained when asked for by id). */
  readonly readShelf: (shelf: string, ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<A>>
  /** Shelf names, newest (greatest) first. */
  readonly shelves: Effect.Effect<ReadonlyArray<string>, Failed>
  /** Ids on one shelf, greatest first (newest first for ids that start with their time), without decoding a record. */
  readonly shelfIds: (shelf: string) => Effect.Effect<ReadonlyArray<string>, Failed>
  /**
   * Shelved records whose order key (`ArchiveOptions.order`) is below
   * `before` (from the greatest when none), greatest first across every
   * shelf, at most `limit`, leaving out those `skip` says; with `words`
   * (lowercase), only those whose digest contains every one. What a history
   * page reads, from the shelves' indexes, never whole records.
   */
  readonly shelvedIds: (options: ShelvedQuery) => Effect.Effect<ReadonlyArray<Shelved>, Failed>
  /**
   * For a kind listed by id (no `ArchiveOptions.order`: runs, tasks): up to
   * `limit` records with ids below `before` (from the greatest when none),
   * greatest first, hot and shelved alike; `next` is the id to ask the next
   * page `before`, null at the end. An unreadable hot record takes no slot;
   * an unreadable shelved one costs its slot, not the page. Reads only what
   * it returns: a shelf the page does not reach is not read at all (one
   * query on PostgreSQL).
   */
  readonly pageById: (options: { readonly before?: string | undefined; readonly limit: number }) => Effect.Effect<ShelfPage<A>, Failed>
  /**
   * Each id on the shelf with its digest (the kind's searchable words),
   * every id on the shelf included; `known` hands over records just moved,
   * so they need not be read back.
   */
  readonly shelfIndex: (shelf: string, known?: ReadonlyMap<string, A>) => Effect.Effect<ReadonlyMap<string, string>, Failed>
  /**
   * The shelf's index brought up to date and written, keeping none of it:
   * what a move does after filling a shelf. Where the backend can, in
   * bounded memory (a batch of the shelf's names at a time, written as it
   * goes), however many records the shelf holds.
   */
  readonly indexShelf: (shelf: string) => Effect.Effect<void, Failed>
  /**
   * Shelves with no index written yet. A move indexes the shelves it filled
   * once it is done, so a shelf without one is a move that was stopped
   * before its end (a first move killed half-way): the next command that
   * lists finishes it, as it would have started it.
   */
  readonly unindexedShelves: Effect.Effect<ReadonlyArray<string>, Failed>
}

/** Does a digest (lowercase) contain every word? The one search rule every backend keeps. */
export const digestMatches = (digest: string, words: ReadonlyArray<string>): boolean => words.every((w) => digest.includes(w))

/**
 * The rule for an id that may be joined onto a path: no separator, no leading
 * dot, no `..`. Anything else can still be found by listing, never by path.
 */
export const isSafeId = (id: string): boolean => /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(id) && !id.includes("..")

/** Longest reason kept from a decoder: a message quoting a hostile value can be as big as the file. */
const REASON_MAX_CHARS = 400

export { AMBIGUOUS_NAMED }

export const clip = (text: string) => (text.length > REASON_MAX_CHARS ? `${text.slice(0, REASON_MAX_CHARS)}…` : text)

/** Words for something thrown, that cannot themselves throw. */
export const describeThrown = (thrown: unknown): string => {
  try {
    if (thrown instanceof RangeError) return "it is nested too deeply to decode"
    if (thrown instanceof Error) return clip(`${thrown.name}: ${thrown.message}`)
    return "an unknown failure"
  } catch {
    return "an unknown failure"
  }
}

/**
 * The words every backend says of a stored record, so a record is refused
 * the same way wherever it is kept. `source` names it (a file's path, or
 * `<noun> <id> in PostgreSQL`).
 */
export const reasons = {
  /** Over the kind's cap: never written by magi, so not worth the memory. */
  tooBig: (kind: Pick<RecordKind<unknown>, "noun" | "maxBytes">, source: string, size: number | bigint) =>
    `${source} is ${size} bytes, over the ${kind.maxBytes}-byte cap for a ${kind.noun}; magi never writes one that big, so it is not read`
}

/** Nothing of `kind` matches what was typed (`hits` of them, sorted, do when several). */
export const noneMatch = (
  kind: Pick<RecordKind<unknown>, "noun" | "plural">,
  wanted: string,
  hitsSorted: ReadonlyArray<string> = [],
  total = hitsSorted.length
) =>
  new RecordNotFound({
    kind: kind.noun,
    plural: kind.plural ?? `${kind.noun}s`,
    wanted,
    matches: hitsSorted.slice(0, AMBIGUOUS_NAMED),
    total
  })

/** No record of `kind` with exactly the id `id` at `where`. */
export const missingAt = (kind: Pick<RecordKind<unknown>, "noun" | "plural">, id: string, where: string) =>
  new RecordNotFound({ kind: kind.noun, plural: kind.plural ?? `${kind.noun}s`, wanted: id, matches: [], total: 0, where })

/** A stored record of `kind` at `where` this build cannot read, and why (a sentence naming `where`). */
export const unreadableAt = (kind: Pick<RecordKind<unknown>, "noun">, where: string, reason: string) => new RecordUnreadable({ kind: kind.noun, where, reason })

/**
 * A stored body to a record of `kind`, or why not, in words: total, whatever
 * the decoder does (a throw, or a stack overflow on a record nested 3,000
 * deep, stays this one record's reason). The id inside must be `id`, the one
 * its place names (`mismatch` says what to tell the owner when it is not): a
 * copied or hand-edited record would otherwise be written back (and its
 * lease kept) somewhere else. A record from a newer magi stays that
 * refusal, so the kind's errors can keep its tag.
 */
export const decodeStored = <A>(
  kind: RecordKind<A>,
  id: string,
  source: string,
  body: string,
  mismatch: string
): Either.Either<A, string | NewerSchema> => {
  try {
    const decoded = kind.decode(body, source)
    if (Either.isLeft(decoded)) return Either.left(isNewerSchema(decoded.left) ? decoded.left : clip(String(decoded.left.message)))
    const inside = kind.idOf(decoded.right)
    if (inside !== id) return Either.left(`${source} holds ${kind.noun} \`${clip(String(inside))}\`, not the one ${mismatch}`)
    return Either.right(decoded.right)
  } catch (thrown) {
    return Either.left(`${source} cannot be read: ${describeThrown(thrown)}`)
  }
}

/** What `decodeStored` refused, as the store's error; a newer magi's record keeps its own tag, so callers can say "upgrade magi". */
export const refusedAs = (kind: Pick<RecordKind<unknown>, "noun">, where: string) => (why: string | NewerSchema): Unreadable =>
  typeof why === "string" ? unreadableAt(kind, where, why) : why

/** The reason kept for a listing's skipped record: an error's message, clipped. */
export const reasonOf = (e: unknown) => clip(String((e as { message?: unknown }).message ?? "unreadable"))

/** `all` in slices of at most `size`, in order. */
export const chunksOf = <T>(all: ReadonlyArray<T>, size: number): ReadonlyArray<ReadonlyArray<T>> => {
  const chunks: Array<ReadonlyArray<T>> = []
  for (let i = 0; i < all.length; i += size) chunks.push(all.slice(i, i + size))
  return chunks
}
