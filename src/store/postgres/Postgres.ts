/**
 * The PostgreSQL connection magi's stores share: one pool per process, the
 * schema brought up to date by migrations before any store uses it, and
 * change notifications on a connection of their own.
 *
 * Credentials come only from the URL (`[store] url` or `MAGI_STORE_URL`) and
 * are never printed: every message names the database by `maskUrl`, and the
 * URL itself travels as a `Redacted`. `sslmode` in the URL is honoured by
 * `pg`'s own connection-string parser.
 */
import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Data, Duration, Effect, Redacted, Schedule } from "effect"

/** The backend could not be reached or set up; `where` is the masked URL. */
export class StoreUnavailable extends Data.TaggedError("StoreUnavailable")<{
  readonly where: string
  readonly message: string
  readonly cause?: unknown
}> {}

/** The store URL is not one magi can use; nothing was connected. */
export class StoreUrlInvalid extends Data.TaggedError("StoreUrlInvalid")<{
  readonly url: string
  readonly message: string
}> {}

/** The URL with its password (and any `password=` parameter) replaced by `***`. */
export const maskUrl = (url: string): string => {
  try {
    const u = new URL(url)
    if (u.password !== "") u.password = "***"
    if (u.searchParams.has("password")) u.searchParams.set("password", "***")
    return u.toString()
  } catch {
    // Not a URL at all: nothing of it is shown but its scheme, if any.
    const scheme = /^[a-z][a-z0-9+.-]*:/i.exec(url)?.[0]
    return scheme === undefined ? "(not a URL)" : `${scheme}… (not a valid URL)`
  }
}

/** The URL, checked to be a PostgreSQL one. */
export const parseUrl = (url: string): Effect.Effect<Redacted.Redacted<string>, StoreUrlInvalid> => {
  const masked = maskUrl(url)
  let u: URL
  try {
    u = new URL(url)
  } catch {
    return Effect.fail(
      new StoreUrlInvalid({ url: masked, message: `the store URL ${masked} is not a URL; write it as postgres://user:password@host:5432/database` })
    )
  }
  if (u.protocol !== "postgres:" && u.protocol !== "postgresql:")
    return Effect.fail(
      new StoreUrlInvalid({
        url: masked,
        message: `the store URL ${masked} is not a PostgreSQL URL; magi keeps records in the home folder or in PostgreSQL (postgres://…)`
      })
    )
  return Effect.succeed(Redacted.make(url))
}

/**
 * How long a first connection may take before the store is reported
 * unavailable: a database across a VPN answers in well under a second, and
 * a command that hangs for longer on a wrong address helps nobody.
 */
export const CONNECT_TIMEOUT = Duration.seconds(10)

/**
 * Connections per process. A process runs a handful of queries at once (a
 * page's requests, the waiter, the loop); the server's default limit of 100
 * leaves room for a dozen magi processes.
 */
export const POOL_SIZE = 8

/** The channel every write notifies, with `<kind>/<id>` as its payload. */
export const CHANGES_CHANNEL = "magi_changes"

/**
 * The schema, one migration per step, never edited once released: a
 * database written by this build is read by the next. Each record keeps its
 * body exactly as the file backend writes it (the kind's JSON, with its
 * `schema` number inside), so the same versioned decoding applies: a row
 * written by a newer magi is refused with the words a newer file gets.
 */
const migrations = {
  "0001_records": Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.all(
      [
        sql`CREATE TABLE IF NOT EXISTS magi_records (
          kind text NOT NULL,
          id text NOT NULL,
          body text NOT NULL,
          shelf text,
          digest text,
          PRIMARY KEY (kind, id)
        )`,
        sql`CREATE INDEX IF NOT EXISTS magi_records_shelf ON magi_records (kind, shelf, id)`,
        // One row per kind, bumped by every write of that kind in the same
        // transaction: the revision a listing is memoised on.
        sql`CREATE TABLE IF NOT EXISTS magi_revisions (kind text PRIMARY KEY, revision bigint NOT NULL)`,
        // A record's files (a question's panel: html and assets), bytes capped by the kind.
        sql`CREATE TABLE IF NOT EXISTS magi_files (
          kind text NOT NULL,
          owner text NOT NULL,
          name text NOT NULL,
          bytes bytea NOT NULL,
          PRIMARY KEY (kind, owner, name)
        )`
      ],
      { discard: true }
    )),
  // Claims (`Claims.postgres`): a row per key, judged stale on the
  // database's clock, the one clock every host shares.
  "0002_claims": Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.asVoid(
      sql`CREATE TABLE IF NOT EXISTS magi_claims (
        key text PRIMARY KEY,
        host text NOT NULL,
        pid integer NOT NULL,
        token text NOT NULL,
        renewed_at timestamptz NOT NULL,
        detail text NOT NULL DEFAULT '{}'
      )`
    )),
  // A shelved record's place in the archive's listing (`ArchiveOptions.order`:
  // a question's settling), kept beside its words; filled in for rows shelved
  // before it by the first history page that finds them without one.
  "0003_sort_key": Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.all(
      [
        sql`ALTER TABLE magi_records ADD COLUMN IF NOT EXISTS sort_key text`,
        sql`CREATE INDEX IF NOT EXISTS magi_records_sort ON magi_records (kind, sort_key) WHERE shelf IS NOT NULL`
      ],
      { discard: true }
    ))
} satisfies Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>>

/** PostgreSQL's SQLSTATE for a table that does not exist. */
const UNDEFINED_TABLE = "42P01"

/** The SQLSTATE of a driver error, if it has one. */
const codeOf = (cause: unknown): string | undefined =>
  typeof cause === "object" && cause !== null && "code" in cause && typeof cause.code === "string" ? cause.code : undefined

/** The migrations table's name: ours, so a database shared with another app stays readable. */
export const MIGRATIONS_TABLE = "magi_migrations"

/** Bring the schema up to date; two processes starting at once take turns (the migrator locks its table). */
export const migrate = Migrator.make({})({ loader: Migrator.fromRecord(migrations), table: MIGRATIONS_TABLE }).pipe(
  // Two first starts racing on `CREATE TABLE IF NOT EXISTS` can see a
  // duplicate-type error from the loser: the second try finds it done.
  Effect.retry(Schedule.intersect(Schedule.exponential("50 millis"), Schedule.recurs(4)))
)

/** The latest migration this build knows; `magi doctor` compares it with the database's. */
export const LATEST_MIGRATION = Object.keys(migrations).length

/**
 * The schema brought up to date at a process's start, at the cost of one
 * round trip when it is already: the newest applied migration is read
 * first, and only a database behind this build (or never used by magi: no
 * migrations table, so the read fails) goes through `migrate`, which takes
 * the migrations table's lock and reads it again inside its transaction.
 * The migrator's own run is six round trips (a table check, BEGIN, LOCK, two
 * reads, COMMIT) on every start, a good part of a listing's time
 * (docs/benchmarks.md, start-up). Migrations are applied and recorded in one
 * transaction, so a recorded step is a step done. A database migrated by a
 * newer magi is left as it is, as the migrator leaves it (its records are
 * refused one by one by their schema; `magi doctor` says to upgrade).
 */
export const migrateIfBehind = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) =>
    sql<{ readonly latest: number | null }>`SELECT max(migration_id) AS latest FROM ${sql(MIGRATIONS_TABLE)}`.pipe(
      Effect.map((rows) => Number(rows[0]?.latest ?? 0)),
      // No migrations table: a database magi never used, migrated from the start.
      // Any other failure (unreachable, refused) is the store's, said once.
      Effect.catchIf((e) => codeOf(e.cause) === UNDEFINED_TABLE, () => Effect.succeed(0)),
      Effect.flatMap((latest) => latest >= LATEST_MIGRATION ? Effect.void : Effect.asVoid(migrate))
    )
)

/** The migrations applied to the database, by id. */
export const appliedMigrations = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) =>
    sql<{ readonly migration_id: number }>`SELECT migration_id FROM ${sql(MIGRATIONS_TABLE)} ORDER BY migration_id`.pipe(
      Effect.map((rows) => rows.map((r) => Number(r.migration_id)))
    )
)

/** A failure to reach or set up the database at `where` (masked), in words. */
export const unavailable = (where: string) => (e: SqlError | Migrator.MigrationError) =>
  new StoreUnavailable({ where, message: `PostgreSQL at ${where}: ${sqlWords(e)}`, cause: e })

/**
 * A database failure in words: the wrapper's message and the driver's own
 * (connection refused, auth failed, no such table), which the wrapper's
 * leaves out. Never the URL: callers name the database by `maskUrl`.
 */
/**
 * Whether a statement failed because the server went away (terminated,
 * shut down, unreachable) rather than refusing the statement: said as
 * "stopped answering", with what to do, since nothing is wrong with the
 * command itself.
 */
export const lostConnection = (e: { readonly message: string; readonly cause?: unknown }): boolean => {
  const cause = e.cause as { readonly code?: unknown; readonly message?: unknown } | undefined
  const code = typeof cause?.code === "string" ? cause.code : ""
  const words = `${e.message} ${typeof cause?.message === "string" ? cause.message : ""}`
  return /^(08|57P0)/.test(code) || /^(ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENOTFOUND)$/.test(code) ||
    /Connection terminated|connection error|Failed to acquire connection|not queryable|Connection ended/i.test(words)
}

export const sqlWords = (e: { readonly message: string; readonly cause?: unknown }): string => {
  const driver = e.cause instanceof Error ? e.cause.message : undefined
  return driver === undefined || driver === "" ? e.message : `${e.message} (${driver})`
}

/** What `magi doctor` learns of a database, without changing it. */
export interface Probe {
  /** Migration ids applied there (none: never used by magi). */
  readonly applied: ReadonlyArray<number>
  /** Round trips of `SELECT 1`, in milliseconds. */
  readonly roundTripsMs: ReadonlyArray<number>
}
