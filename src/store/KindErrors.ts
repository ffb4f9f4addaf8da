/**
 * The bridge from the store's one error family (`StoreErrors.ts`) to the
 * error classes a kind's callers still match on (`RunNotFound`,
 * `TaskStoreError`, …), while those move to the family kind by kind (issue
 * 26): a kind that still brings `RecordErrors` gets a store whose every
 * method says its failures in the kind's classes, in the family's words.
 * Errors of the caller's own (a `withLock` body's, an `update` change's)
 * pass through untouched. A kind that takes the family as it is needs none
 * of this.
 */
import { Effect, type Either } from "effect"
import { clip, type RecordStore, type Scan } from "./RecordStore.js"
import type { ShelfPage, Shelved, ShelvedQuery } from "./ShelfPage.js"
import { LockBusy, RecordNotFound, RecordUnreadable, StoreFailed, UnsafeId } from "./StoreErrors.js"
import { isNewerSchema, type NewerSchema } from "./VersionedJson.js"

/** The kind's own errors, made from the family's message (and, for a failure, what the backend said as its cause). */
export interface RecordErrors<NotFound, Unreadable, Failed> {
  /** No such record (or no id matches, or several do). */
  readonly notFound: (message: string) => NotFound
  /** A file is there but is not a record this build can read. */
  readonly unreadable: (message: string) => Unreadable
  /**
   * A record written by a newer magi. By default it is "unreadable" in the
   * same words; a kind whose callers say "upgrade magi" returns it as it is.
   */
  readonly newer?: (refusal: NewerSchema) => Unreadable
  /** The backend said no; `cause` is what it said (the disk's or the database's error), kept for whoever reports it. */
  readonly failed: (message: string, cause?: unknown) => Failed
}

/** A store whose failures are the kind's classes (what `RecordStore<A>` was before the family). */
export interface KindRecords<A, NotFound, Unreadable, Failed> {
  readonly root: string
  readonly ids: Effect.Effect<ReadonlyArray<string>, Failed>
  readonly forEachIdBatch: <E, R>(
    size: number,
    each: (ids: ReadonlyArray<string>) => Effect.Effect<void, E, R>
  ) => Effect.Effect<void, E | Failed, R>
  readonly exists: (id: string) => Effect.Effect<boolean, Failed>
  readonly read: (id: string) => Effect.Effect<A, NotFound | Unreadable | Failed>
  readonly scan: Effect.Effect<Scan<A>, Failed>
  readonly resolve: (wanted: string) => Effect.Effect<string, NotFound | Failed>
  readonly get: (wanted: string) => Effect.Effect<A, NotFound | Unreadable | Failed>
  readonly put: (record: A) => Effect.Effect<void, Failed>
  readonly create: (record: A) => Effect.Effect<boolean, Failed>
  readonly remove: (id: string) => Effect.Effect<void, Failed>
  readonly withLock: <B, E, R>(id: string, body: Effect.Effect<B, E, R>) => Effect.Effect<B, E | Failed, R>
  readonly update: <E, R = never>(
    wanted: string,
    change: (current: A) => Either.Either<A, E> | Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E | NotFound | Unreadable | Failed, R>
  readonly sweep: Effect.Effect<number>
  readonly revision: Effect.Effect<number>
  readonly archive: (id: string, movable: (current: A) => boolean) => Effect.Effect<boolean, Failed>
  readonly flushShelves: (shelves: Iterable<string>) => Effect.Effect<void>
  readonly readShelf: (shelf: string, ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<A>>
  readonly shelves: Effect.Effect<ReadonlyArray<string>, Failed>
  readonly shelfIds: (shelf: string) => Effect.Effect<ReadonlyArray<string>, Failed>
  readonly shelvedIds: (options: ShelvedQuery) => Effect.Effect<ReadonlyArray<Shelved>, Failed>
  readonly pageById: (options: { readonly before?: string | undefined; readonly limit: number }) => Effect.Effect<ShelfPage<A>, Failed>
  readonly shelfIndex: (shelf: string, known?: ReadonlyMap<string, A>) => Effect.Effect<ReadonlyMap<string, string>, Failed>
  readonly indexShelf: (shelf: string) => Effect.Effect<void, Failed>
  readonly unindexedShelves: Effect.Effect<ReadonlyArray<string>, Failed>
}

const isFamily = (e: unknown): e is RecordNotFound | RecordUnreadable | NewerSchema | StoreFailed | LockBusy | UnsafeId =>
  e instanceof RecordNotFound || e instanceof RecordUnreadable || isNewerSchema(e) || e instanceof StoreFailed || e instanceof LockBusy ||
  e instanceof UnsafeId

/** The store of `records`, its failures said as `errors` says. */
export const withKindErrors = <A, NotFound, Unreadable, Failed, S extends RecordStore<A>>(
  records: S,
  errors: RecordErrors<NotFound, Unreadable, Failed>
): Omit<S, keyof RecordStore<A>> & KindRecords<A, NotFound, Unreadable, Failed> => {
  const said = (e: unknown): unknown => {
    if (!isFamily(e)) return e
    if (e instanceof RecordNotFound) return errors.notFound(e.message)
    if (e instanceof RecordUnreadable) return errors.unreadable(e.message)
    if (isNewerSchema(e)) return errors.newer !== undefined ? errors.newer(e) : errors.unreadable(clip(e.message))
    // What the backend said stays the cause, as it was before the family.
    return errors.failed(e.message, e instanceof StoreFailed ? e.cause : undefined)
  }
  const map = <X, E, R>(effect: Effect.Effect<X, E, R>): Effect.Effect<X, any, R> => Effect.mapError(effect, said)
  const wrapped: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(records)) {
    wrapped[key] = Effect.isEffect(value)
      ? map(value)
      : typeof value === "function"
      ? (...args: Array<unknown>) => {
        const out = (value as (...a: Array<unknown>) => unknown)(...args)
        return Effect.isEffect(out) ? map(out) : out
      }
      : value
  }
  return wrapped as any
}
