/**
 * The record store's contract (`RecordStore.RecordStore`) on PostgreSQL: one
 * row per record in `magi_records`, keyed by kind and id, holding the
 * record's JSON exactly as the file backend writes it.
 *
 * - **Writes** are single statements or transactions: a reader sees the old
 *   record or the new one, and a write that returned is committed (the
 *   server's `fsync`).
 * - **The writer claim** of one record is a transaction-scoped advisory lock
 *   on (kind, id): exactly one writer at a time across every process and
 *   host on the database, and a writer killed mid-update loses it with its
 *   connection, so there is no stale lock to break. A claim that stays busy
 *   past `RecordLock.LOCK_GIVE_UP_MS` is reported, as the file lock does.
 * - **Versioned decoding** is the kind's, unchanged; the "source" a message
 *   names is `<noun> <id> in PostgreSQL`.
 * - **Listing** decodes every hot row, memoised while the kind's revision
 *   (bumped in every write's transaction) is unchanged.
 * - **Archive**: a shelf is a column; a row moves by one update, so it is
 *   never in neither place nor in both, and its digest is kept beside it.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type * as Statement from "@effect/sql/Statement"
import { SqlError } from "@effect/sql/SqlError"
import { Effect, Either, Option } from "effect"
import { LOCK_GIVE_UP_MS } from "../files/RecordLock.js"
import {
  AMBIGUOUS_NAMED,
  chunksOf,
  decodeStored,
  type Failed,
  missingAt,
  noneMatch,
  type NotFound,
  reasonOf,
  refusedAs,
  reasons,
  type RecordKind,
  type RecordStore,
  type Scan,
  type Shelved,
  type ShelvedQuery,
  type Skipped,
  type Unreadable,
  unreadableAt
} from "../RecordStore.js"
import { StoreFailed } from "../StoreErrors.js"
import { CHANGES_CHANNEL, lostConnection, sqlWords } from "./Postgres.js"
import type { ShelfPage } from "../ShelfPage.js"

export interface PgRecordStoreOptions<A> {
  /** The kind's key in the table: the file backend's folder name ("questions", "tasks"). */
  readonly table: string
  /** Where, for messages: the masked URL. */
  readonly where: string
  readonly kind: RecordKind<A>
  /** The kind archives: its shelf per id and its searchable words. */
  readonly archive?: {
    readonly shelfOf: (id: string) => string | undefined
    readonly digest: (record: A) => string
    readonly order?: (record: A) => string
    /** Whether a record may stay on its shelf (default: always); one no longer settled is written back hot. */
    readonly settled?: (record: A) => boolean
  }
}

/** `LIKE` takes `%` and `_` as wildcards; an id typed by a person is matched as written. */
const likeEscaped = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`)

interface Row {
  readonly id: string
  readonly body: string
}

export const make = <A>(
  options: PgRecordStoreOptions<A>
): Effect.Effect<RecordStore<A>, never, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const { kind, table } = options
    const plural = kind.plural ?? `${kind.noun}s`
    const root = `${options.where} (${table})`
    const failed = (what: string) => (e: SqlError) =>
      new StoreFailed({ kind: kind.noun, op: what, where: options.where, reason: sqlWords(e), backend: "postgres", lost: lostConnection(e), cause: e })
    const run = <B>(what: string, effect: Effect.Effect<B, SqlError>) => Effect.mapError(effect, failed(what))

    const sourceOf = (id: string) => `${kind.noun} ${id} in PostgreSQL`

    /** A row to a record, or why not, in the words the file backend uses. */
    const fromRow = (row: Row): Either.Either<A, Unreadable> => {
      const source = sourceOf(row.id)
      if (row.body.length > kind.maxBytes) return Either.left(unreadableAt(kind, source, reasons.tooBig(kind, source, row.body.length)))
      return Either.mapLeft(decodeStored(kind, row.id, source, row.body, "its row says"), refusedAs(kind, source))
    }

    /**
     * `write` (an INSERT, UPDATE or DELETE on the record's row), the kind's
     * revision bumped and listeners told, as one statement: atomic on its
     * own (data-modifying CTEs all run, in one snapshot), and one round trip
     * where it took five (BEGIN, write, bump, notify, COMMIT). Every write
     * is on the path between an owner's answer and the agent hearing it, on
     * a machine where each round trip waits for a busy CPU.
     */
    const touching = (id: string, write: Statement.Statement<unknown>) =>
      sql`WITH written AS (${write}),
               bumped AS (INSERT INTO magi_revisions (kind, revision) VALUES (${table}, 1)
                          ON CONFLICT (kind) DO UPDATE SET revision = magi_revisions.revision + 1)
          SELECT pg_notify(${CHANGES_CHANNEL}, ${`${table}/${id}`})`

    const readRow = (id: string) =>
      Effect.map(sql<Row>`SELECT id, body FROM magi_records WHERE kind = ${table} AND id = ${id}`, (rows) => Option.fromNullable(rows[0]))

    const read = (id: string): Effect.Effect<A, NotFound | Unreadable | Failed> =>
      Effect.flatMap(run(`read ${kind.noun} ${id}`, readRow(id)), (row) =>
        Option.isNone(row)
          ? Effect.fail<NotFound | Unreadable>(missingAt(kind, id, `PostgreSQL at ${options.where}`))
          : fromRow(row.value))

    const exists = (id: string) =>
      run(
        `look for ${kind.noun} ${id}`,
        Effect.map(sql`SELECT 1 FROM magi_records WHERE kind = ${table} AND id = ${id}`, (rows) => rows.length > 0)
      )

    const ids = run(
      `list ${plural}`,
      Effect.map(sql<{ readonly id: string }>`SELECT id FROM magi_records WHERE kind = ${table} AND shelf IS NULL`, (rows) => rows.map((r) => r.id))
    )

    const revisionNow = Effect.map(
      sql<{ readonly revision: string }>`SELECT revision FROM magi_revisions WHERE kind = ${table}`,
      (rows) => Number(rows[0]?.revision ?? 0)
    )
    // display: the revision only wakes watchers; a failed read shows no change
    const revision = revisionNow.pipe(Effect.orElseSucceed(() => 0))

    /** The last listing and the revision it was read at: reused while the revision is unchanged. */
    let cached: { readonly revision: number; readonly scan: Scan<A> } | undefined
    const scan: Effect.Effect<Scan<A>, Failed> = run(
      `list ${plural}`,
      Effect.gen(function* () {
        // One round trip: the kind's revision in the first row, and the hot
        // rows after it only when the revision is not the one listed last
        // (a one-time filter: unchanged, the rows are never read). One
        // statement reads one snapshot, so the rows are those of that
        // revision. Two statements were a round trip more on every listing,
        // which a database across a VPN pays in tens of milliseconds.
        const known = cached?.revision ?? -1
        const rows = yield* sql<{ readonly id: string | null; readonly body: string | null; readonly revision: string | null }>`
          SELECT NULL AS id, NULL AS body, coalesce((SELECT revision FROM magi_revisions WHERE kind = ${table}), 0) AS revision
          UNION ALL
          SELECT id, body, NULL FROM magi_records
          WHERE kind = ${table} AND shelf IS NULL
            AND coalesce((SELECT revision FROM magi_revisions WHERE kind = ${table}), 0) <> ${known}`
        const revision = Number(rows.find((r) => r.id === null)?.revision ?? 0)
        if (cached !== undefined && cached.revision === revision) return cached.scan
        const records: Array<A> = []
        const skipped: Array<Skipped> = []
        for (const row of rows) {
          if (row.id === null || row.body === null) continue
          const got = fromRow({ id: row.id, body: row.body })
          if (Either.isRight(got)) records.push(got.right)
          else skipped.push({ id: row.id, reason: reasonOf(got.left) })
        }
        const result: Scan<A> = { records, skipped }
        cached = { revision, scan: result }
        return result
      })
    )

    const resolve = (wanted: string): Effect.Effect<string, NotFound | Failed> =>
      Effect.gen(function* () {
        if (wanted === "") return yield* noneMatch(kind, wanted)
        if (yield* exists(wanted)) return wanted
        // The short id is the last segment: the owner types what they saw
        // (`ab12`), or the start of it (`ab`). Hot and shelved alike.
        const like = likeEscaped(wanted)
        const hits = yield* run(
          `look up ${kind.noun} ${wanted}`,
          sql<{ readonly id: string; readonly total: string }>`
            SELECT id, count(*) OVER () AS total FROM magi_records
            WHERE kind = ${table}
              AND (id LIKE ${`${like}%`} OR id LIKE ${`%${like}`} OR regexp_replace(id, '^.*-', '') LIKE ${`${like}%`})
            ORDER BY id LIMIT ${AMBIGUOUS_NAMED}`
        )
        const total = Number(hits[0]?.total ?? 0)
        if (total === 1) return hits[0]!.id
        return yield* noneMatch(kind, wanted, total === 0 ? [] : hits.map((h) => h.id), total)
      })

    const get = (wanted: string) => Effect.flatMap(resolve(wanted), read)

    const put = (record: A) => {
      const id = kind.idOf(record)
      const words = digestOf(record)
      const order = orderOf(record)
      const back = unsettled(record)
      return run(
        `write ${kind.noun} ${id}`,
        touching(
          id,
          // Written where it is: an archived record stays on its shelf, unless it is no longer settled.
          sql`INSERT INTO magi_records (kind, id, body) VALUES (${table}, ${id}, ${kind.encode(record)})
              ON CONFLICT (kind, id) DO UPDATE SET body = EXCLUDED.body,
                digest = CASE WHEN magi_records.shelf IS NULL OR ${back} THEN NULL ELSE ${words} END,
                sort_key = CASE WHEN magi_records.shelf IS NULL OR ${back} THEN NULL ELSE ${order} END,
                shelf = CASE WHEN ${back} THEN NULL ELSE magi_records.shelf END`
        ).pipe(Effect.asVoid)
      )
    }

    const create = (record: A) => {
      const id = kind.idOf(record)
      return run(
        `create ${kind.noun} ${id}`,
        // One statement: the revision is bumped and listeners told only
        // when the row was made (an id taken already changes nothing).
        Effect.map(
          sql<{ readonly id: string }>`
            WITH made AS (INSERT INTO magi_records (kind, id, body) VALUES (${table}, ${id}, ${kind.encode(record)})
                          ON CONFLICT (kind, id) DO NOTHING RETURNING id),
                 bumped AS (INSERT INTO magi_revisions (kind, revision) SELECT ${table}, 1 FROM made
                            ON CONFLICT (kind) DO UPDATE SET revision = magi_revisions.revision + 1)
            SELECT id, pg_notify(${CHANGES_CHANNEL}, ${`${table}/${id}`}) FROM made`,
          (made) => made.length > 0
        )
      )
    }

    const remove = (id: string) =>
      run(`remove ${kind.noun} ${id}`, touching(id, sql`DELETE FROM magi_records WHERE kind = ${table} AND id = ${id}`).pipe(Effect.asVoid))

    /**
     * The claim: a transaction holding the advisory lock of (kind, id) for
     * `body`, which runs inside it (its own statements included). The lock
     * timeout turns a claim held by a live writer for too long into "busy".
     */
    const withLock = <B, E, R>(id: string, body: Effect.Effect<B, E, R>): Effect.Effect<B, E | Failed, R> => {
      // One round trip: the CASE sets the timeout before it waits for the
      // lock (a CASE evaluates its condition first). The read that follows
      // stays a statement of its own: it must take its snapshot after the
      // lock is held, or it could miss the write of the writer it waited on.
      const claim = run(
        `hold ${kind.noun} ${id}`,
        sql`SELECT CASE WHEN set_config('lock_timeout', ${`${LOCK_GIVE_UP_MS}ms`}, true) IS NOT NULL
                   THEN pg_advisory_xact_lock(hashtextextended(${`${table}/${id}`}, 0)) END`
      )
      // BEGIN and COMMIT can fail too (the connection dropped): said as the store's failure.
      // The transaction's ROLLBACK on a connection the server dropped dies
      // (@effect/sql treats a failed rollback as a defect): it is the same
      // store failure as the statement's, and said so, not as a crash.
      return sql
        .withTransaction(Effect.zipRight(claim, body))
        .pipe(
          Effect.catchIf((e): e is SqlError => e instanceof SqlError, (e) => Effect.fail(failed(`hold ${kind.noun} ${id}`)(e))),
          Effect.catchSomeDefect((d) => d instanceof SqlError ? Option.some(Effect.fail(failed(`hold ${kind.noun} ${id}`)(d))) : Option.none())
        )
    }

    const update = <E, R = never>(
      wanted: string,
      change: (current: A) => Either.Either<A, E> | Effect.Effect<A, E, R>
    ): Effect.Effect<A, E | NotFound | Unreadable | Failed, R> => {
      /** The update of the record named exactly `id`, under its claim; none when there is no such record. */
      const exactly = (id: string) =>
        withLock(
          id,
          Effect.gen(function* () {
            const row = yield* run(`read ${kind.noun} ${id}`, readRow(id))
            if (Option.isNone(row)) return Option.none<A>()
            const current = yield* fromRow(row.value)
            const changed = change(current)
            const next: A = Either.isEither(changed) ? yield* changed : yield* changed
            if (next !== current)
              yield* run(
                `write ${kind.noun} ${id}`,
                touching(
                  id,
                  sql`UPDATE magi_records SET body = ${kind.encode(next)},
                        digest = CASE WHEN shelf IS NULL OR ${unsettled(next)} THEN NULL ELSE ${digestOf(next)} END,
                        sort_key = CASE WHEN shelf IS NULL OR ${unsettled(next)} THEN NULL ELSE ${orderOf(next)} END,
                        shelf = CASE WHEN ${unsettled(next)} THEN NULL ELSE shelf END
                      WHERE kind = ${table} AND id = ${id}`
                )
              )
            return Option.some(next)
          })
        )
      const missing = (id: string) => Effect.fail<NotFound>(missingAt(kind, id, `PostgreSQL at ${options.where}`))
      // The exact id first, with no look-up before it: nearly every caller
      // (the page, the waiter, an asker) names the record exactly. A short
      // or partial id is resolved only when no record has it as its id.
      return exactly(wanted).pipe(
        Effect.flatMap((done) =>
          Option.isSome(done) ?
            Effect.succeed(done.value) :
            Effect.flatMap(resolve(wanted), (id) => Effect.flatMap(exactly(id), (again) => (Option.isSome(again) ? Effect.succeed(again.value) : missing(id))))
        ),
        Effect.withSpan("PgRecordStore.update", { attributes: { id: wanted } })
      )
    }

    // -- the archive -----------------------------------------------------------

    const archiveOpts = options.archive

    /** A shelved record no longer settled goes back hot (a done task released). */
    const unsettled = (record: A): boolean => {
      const settled = archiveOpts?.settled
      if (settled === undefined) return false
      try {
        return !settled(record)
      } catch {
        return true
      }
    }

    const digestOf = (record: A): string => {
      try {
        return archiveOpts?.digest(record) ?? ""
      } catch {
        return ""
      }
    }

    /** Where a record stands in the archive's listing (`ArchiveOptions.order`); its id when the kind gives no order. */
    const orderOf = (record: A): string => {
      try {
        return archiveOpts?.order?.(record) ?? kind.idOf(record)
      } catch {
        return kind.idOf(record)
      }
    }

    const archive = (id: string, movable: (current: A) => boolean): Effect.Effect<boolean, Failed> => {
      const shelf = archiveOpts?.shelfOf(id)
      if (archiveOpts === undefined || shelf === undefined) return Effect.succeed(false)
      return withLock(
        id,
        Effect.gen(function* () {
          const row = yield* run(
            `read ${kind.noun} ${id}`,
            sql<Row>`SELECT id, body FROM magi_records WHERE kind = ${table} AND id = ${id} AND shelf IS NULL`
          )
          if (row[0] === undefined) return false
          const current = fromRow(row[0])
          if (Either.isLeft(current) || !movable(current.right)) return false
          yield* run(
            `move ${kind.noun} ${id}`,
            touching(
              id,
              sql`UPDATE magi_records SET shelf = ${shelf}, digest = ${digestOf(current.right)}, sort_key = ${orderOf(current.right)}
                  WHERE kind = ${table} AND id = ${id}`
            )
          )
          return true
        })
      )
    }

    // A skip through the (kind, shelf, id) index, one probe per shelf, newest
    // first: `SELECT DISTINCT` read every shelved row's entry to find a few
    // dozen months, 30–70 ms at 100,000 questions, and every listing asks
    // (`hasHistory`, before `magi answer` lists).
    const shelves = run(
      `list ${plural}' shelves`,
      Effect.map(
        sql<{ readonly shelf: string }>`
          WITH RECURSIVE found (shelf) AS (
            (SELECT shelf FROM magi_records WHERE kind = ${table} AND shelf IS NOT NULL ORDER BY shelf DESC LIMIT 1)
            UNION ALL
            SELECT (SELECT r.shelf FROM magi_records r WHERE r.kind = ${table} AND r.shelf < found.shelf ORDER BY r.shelf DESC LIMIT 1)
            FROM found WHERE found.shelf IS NOT NULL
          )
          SELECT shelf FROM found WHERE shelf IS NOT NULL`,
        (rows) => rows.map((r) => r.shelf)
      )
    )

    const shelfIds = (shelf: string) =>
      run(
        `list shelf ${shelf}`,
        Effect.map(
          sql<{ readonly id: string }>`SELECT id FROM magi_records WHERE kind = ${table} AND shelf = ${shelf} ORDER BY id DESC`,
          (rows) => rows.map((r) => r.id)
        )
      )

    const readShelf = (shelf: string, wantedIds: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<A>> =>
      wantedIds.length === 0
        ? Effect.succeed([])
        : sql<Row>`SELECT id, body FROM magi_records WHERE kind = ${table} AND shelf = ${shelf} AND id IN ${sql.in(wantedIds)}`.pipe(
          Effect.map((rows) => {
            const byId = new Map(rows.map((r) => [r.id, r]))
            return wantedIds.flatMap((id) => {
              const row = byId.get(id)
              const got = row === undefined ? undefined : fromRow(row)
              return got !== undefined && Either.isRight(got) ? [got.right] : []
            })
          }),
          // display: the search results; none when it fails
          Effect.orElseSucceed((): ReadonlyArray<A> => [])
        )

    const shelfIndex = (shelf: string, known?: ReadonlyMap<string, A>) =>
      run(
        `read shelf ${shelf}'s index`,
        Effect.gen(function* () {
          const rows = yield* sql<{ readonly id: string; readonly digest: string | null; readonly body: string }>`
            SELECT id, digest, CASE WHEN digest IS NULL THEN body ELSE '' END AS body
            FROM magi_records WHERE kind = ${table} AND shelf = ${shelf} ORDER BY id DESC`
          const index = new Map<string, string>()
          for (const row of rows) {
            if (row.digest !== null) {
              index.set(row.id, row.digest)
              continue
            }
            // A row shelved without its words (by hand, or an older build): worked out now.
            const inHand = known?.get(row.id)
            const record = inHand !== undefined ? Either.right(inHand) : fromRow(row)
            index.set(row.id, Either.isRight(record) ? digestOf(record.right) : "")
          }
          return index as ReadonlyMap<string, string>
        })
      )

    /** Rows per round trip of a history page: a page and its look-ahead, plus room for a few skipped. */
    const SHELVED_BATCH_MIN = 64

    /** Rows given their order key per round trip when rows shelved before order keys are found. */
    const BACKFILL_BATCH = 2_000
    // Pages asked for at once would each work through the same rows.
    const backfilling = yield* Effect.makeSemaphore(1)

    /**
     * Rows shelved by a build before order keys (or copied in without one)
     * get theirs, worked out from the record: once, by the first history
     * page that finds them.
     */
    const backfillOrder = backfilling.withPermits(1)(
      Effect.gen(function* () {
        for (;;) {
          const rows = yield* sql<Row>`SELECT id, body FROM magi_records
            WHERE kind = ${table} AND shelf IS NOT NULL AND sort_key IS NULL LIMIT ${BACKFILL_BATCH}`
          if (rows.length === 0) return
          const keys = rows.map((row) => {
            const record = fromRow(row)
            return { id: row.id, sort_key: Either.isRight(record) ? orderOf(record.right) : row.id }
          })
          // One statement per batch, the keys as one JSON parameter: a row
          // at a time was a round trip each, minutes for the first page over
          // 100,000 rows copied in bare.
          yield* sql`UPDATE magi_records AS r SET sort_key = v.sort_key
            FROM json_to_recordset(${JSON.stringify(keys)}::json) AS v(id text, sort_key text)
            WHERE r.kind = ${table} AND r.id = v.id AND r.sort_key IS NULL`
          if (rows.length < BACKFILL_BATCH) return
        }
      })
    )

    const shelvedIds = (query: ShelvedQuery) =>
      run(
        `page through ${plural}' shelves`,
        Effect.gen(function* () {
          yield* backfillOrder
          const words = query.words ?? []
          const found: Array<Shelved> = []
          let before = query.before
          const batch = Math.max(SHELVED_BATCH_MIN, query.limit + 1)
          // Greatest order first, by its index; a row shelved without its
          // words (an older build, a copy) is searched by its whole body, lowercased.
          for (;;) {
            const rows = yield* sql<{ readonly id: string; readonly sort_key: string }>`
              SELECT id, sort_key FROM magi_records
              WHERE kind = ${table} AND shelf IS NOT NULL
                ${before === undefined ? sql`` : sql`AND sort_key < ${before}`}
                ${
              words.length === 0
                ? sql``
                : sql`AND NOT EXISTS (SELECT 1 FROM json_array_elements_text(${
                  JSON.stringify(words)
                }::json) AS w(word) WHERE strpos(coalesce(digest, lower(body)), w.word) = 0)`
            }
              ORDER BY sort_key DESC LIMIT ${batch}`
            for (const { id, sort_key } of rows) {
              if (found.length >= query.limit) break
              if (!(query.skip?.(id) ?? false)) found.push({ id, order: sort_key })
            }
            if (found.length >= query.limit || rows.length < batch) return found
            before = rows[rows.length - 1]!.sort_key
          }
        })
      )

    /**
     * One query, newest id first, hot and shelved rows alike, for as many
     * rows as a page and its look-ahead take (another only when unreadable
     * hot rows, which take no slot, leave it short).
     */
    const pageById = (query: { readonly before?: string | undefined; readonly limit: number }): Effect.Effect<ShelfPage<A>, Failed> =>
      run(
        `page through ${plural}`,
        Effect.gen(function* () {
          const slots: Array<{ readonly id: string; readonly record: A | undefined }> = []
          const batch = Math.max(SHELVED_BATCH_MIN, query.limit + 1)
          let before = query.before
          for (;;) {
            const rows = yield* sql<Row & { readonly hot: boolean }>`
              SELECT id, body, shelf IS NULL AS hot FROM magi_records
              WHERE kind = ${table} ${before === undefined ? sql`` : sql`AND id < ${before}`}
              ORDER BY id DESC LIMIT ${batch}`
            for (const row of rows) {
              if (slots.length > query.limit) break
              const got = fromRow(row)
              // An unreadable hot record is no slot (the hot listing leaves it out);
              // an unreadable shelved one costs its slot, as on the shelves of files.
              if (Either.isRight(got)) slots.push({ id: row.id, record: got.right })
              else if (!row.hot) slots.push({ id: row.id, record: undefined })
            }
            if (slots.length > query.limit || rows.length < batch) break
            before = rows[rows.length - 1]!.id
          }
          const page = slots.slice(0, query.limit)
          return {
            records: page.flatMap((s) => (s.record === undefined ? [] : [s.record])),
            next: slots.length > query.limit ? (page.at(-1)?.id ?? null) : null
          }
        })
      )

    return {
      root,
      ids,
      // The hot ids are one query's rows (a first move from files is the file store's).
      forEachIdBatch: <E, R>(size: number, each: (ids: ReadonlyArray<string>) => Effect.Effect<void, E, R>) =>
        Effect.flatMap(ids, (all) => Effect.forEach(chunksOf(all, size), each, { discard: true })),
      exists,
      read,
      scan,
      resolve,
      get,
      put,
      create,
      remove,
      withLock,
      update,
      // Every write is one transaction: nothing is left behind to sweep.
      sweep: Effect.succeed(0),
      revision,
      archive,
      // A committed move is durable already.
      flushShelves: () => Effect.void,
      readShelf,
      shelves,
      shelfIds,
      shelfIndex,
      // The index is made by the query that reads it (its digests are a column): nothing to write.
      indexShelf: (shelf: string) => Effect.asVoid(shelfIndex(shelf)),
      // A move is one transaction per record and needs no index written after it.
      unindexedShelves: Effect.succeed([]),
      shelvedIds,
      pageById
    } satisfies RecordStore<A>
  })
