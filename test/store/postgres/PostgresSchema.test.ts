/**
 * The PostgreSQL schema at a process's start, on the real server of the test
 * run: a start on an up-to-date database reads one row of the migrations
 * table and goes on (docs/benchmarks.md, start-up), so what must still
 * happen is checked here: a new database gets every step, one an older magi
 * left behind gets the rest, and one a newer magi migrated further is left
 * as it is.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import * as Postgres from "../../../src/store/postgres/Postgres.js"
import { StoreBackend } from "../../../src/store/StoreBackend.js"
import { freshDatabase, query } from "../../pgSupport.js"

/** A process's start on `url`: the backend built (and its pool closed again), as every command builds it. */
const start = (url: string) => Effect.scoped(Layer.build(StoreBackend.postgres(Redacted.make(url))))

const steps = (url: string) =>
  Effect.map(query(url, "SELECT migration_id FROM magi_migrations ORDER BY migration_id"), (rows) => rows.map((r) => Number(r.migration_id)))

const hasColumn = (url: string, column: string) =>
  Effect.map(
    query(url, "SELECT 1 FROM information_schema.columns WHERE table_name = 'magi_records' AND column_name = $1", [column]),
    (rows) => rows.length === 1
  )

const every = Array.from({ length: Postgres.LATEST_MIGRATION }, (_, i) => i + 1)

describe("the PostgreSQL schema at start", () => {
  it.scopedLive("is made whole on a database magi never used", () =>
    Effect.gen(function* () {
      const db = yield* freshDatabase
      yield* start(db.url)
      expect(yield* steps(db.url)).toEqual(every)
      expect(yield* hasColumn(db.url, "sort_key")).toBe(true)
    }), { timeout: 60_000 })

  it.scopedLive("is brought up to date on a database an older magi left behind", () =>
    Effect.gen(function* () {
      const db = yield* freshDatabase
      yield* start(db.url)
      // As the build before the order keys left it: two steps, no column.
      yield* query(db.url, "DELETE FROM magi_migrations WHERE migration_id = 3")
      yield* query(db.url, "DROP INDEX magi_records_sort")
      yield* query(db.url, "ALTER TABLE magi_records DROP COLUMN sort_key")
      yield* start(db.url)
      expect(yield* steps(db.url)).toEqual(every)
      expect(yield* hasColumn(db.url, "sort_key")).toBe(true)
    }), { timeout: 60_000 })

  it.scopedLive("is migrated from the start when its migrations table is there but empty", () =>
    Effect.gen(function* () {
      const db = yield* freshDatabase
      yield* query(db.url, "CREATE TABLE magi_migrations (migration_id integer primary key, created_at timestamptz not null default now(), name text not null)")
      yield* start(db.url)
      expect(yield* steps(db.url)).toEqual(every)
    }), { timeout: 60_000 })

  it.scopedLive("is left as it is on a database a newer magi migrated further", () =>
    Effect.gen(function* () {
      const db = yield* freshDatabase
      yield* start(db.url)
      const future = Postgres.LATEST_MIGRATION + 1
      yield* query(db.url, "INSERT INTO magi_migrations (migration_id, name) VALUES ($1, 'from_a_newer_magi')", [future])
      yield* start(db.url)
      // Nothing re-run, nothing removed: its records are judged one by one by their schema.
      expect(yield* steps(db.url)).toEqual([...every, future])
    }), { timeout: 60_000 })
})
