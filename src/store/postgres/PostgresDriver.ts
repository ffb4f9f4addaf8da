/**
 * What of the PostgreSQL connection needs the driver (`pg`, through
 * @effect/sql-pg): the pool, the listening connection and the doctor's
 * probe. Only PgConnection.ts imports this module, and only dynamically, so a
 * process on the home-folder store never evaluates the driver (see
 * `driver` there); everything else about the database lives in Postgres.ts.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as PgClient from "@effect/sql-pg/PgClient"
import { Data, Duration, Effect, Layer, Redacted, Schedule, Stream } from "effect"
import Pg from "pg"
import {
  appliedMigrations,
  CONNECT_TIMEOUT,
  maskUrl,
  migrateIfBehind,
  MIGRATIONS_TABLE,
  POOL_SIZE,
  type Probe,
  type StoreUnavailable,
  unavailable
} from "./Postgres.js"

/** The listening connection failed or closed; `listen` reconnects after it. */
class ListenLost extends Data.TaggedError("ListenLost")<{
  readonly message: string
  readonly cause?: unknown
}> {}

/** A connection's socket, which pg keeps as `client.connection.stream`. */
const socketOf = (client: Pg.PoolClient): { readonly unref: () => unknown } | undefined => {
  const stream: unknown = (client as unknown as { readonly connection?: { readonly stream?: unknown } }).connection?.stream
  return typeof stream === "object" && stream !== null && "unref" in stream && typeof stream.unref === "function"
    ? (stream as { readonly unref: () => unknown })
    : undefined
}

/** The pool for `url`, its schema migrated; fails with `StoreUnavailable` naming the masked URL. */
export const layer = (url: Redacted.Redacted<string>): Layer.Layer<SqlClient.SqlClient, StoreUnavailable> => {
  const where = maskUrl(Redacted.value(url))
  // The pool made here rather than by `PgClient.layer`, which sends a
  // `SELECT 1` before anything else: the schema check below is the first
  // statement instead, one round trip fewer on every start. A database that
  // cannot be reached fails that check, within `CONNECT_TIMEOUT` (the pool's
  // connection timeout covers the whole handshake), with the same words.
  const pool = Effect.acquireRelease(
    Effect.sync(() => {
      const made = new Pg.Pool({
        connectionString: Redacted.value(url),
        max: POOL_SIZE,
        connectionTimeoutMillis: Duration.toMillis(CONNECT_TIMEOUT),
        // Idle connections are closed, so an idle `magi web` holds one, not eight.
        idleTimeoutMillis: Duration.toMillis(Duration.seconds(30)),
        application_name: "magi"
      })
      // A pooled connection that drops while idle is replaced by the next query; the error itself is no one's to handle.
      made.on("error", () => {})
      const open = new Set<Pg.PoolClient>()
      made.on("connect", (c) => open.add(c))
      made.on("remove", (c) => open.delete(c))
      return { made, open }
    }),
    // Each connection says goodbye (pg's Terminate) and is let go at once:
    // waiting for the server to close its end held every command's exit
    // for the server's backend to wind down (10–30 ms under load), and a
    // closed pool's sockets are nobody's to wait for. The goodbye is on the
    // wire before the process ends, so the server sees a clean close.
    ({ made, open }) =>
      Effect.sync(() => {
        made.end().catch(() => undefined)
        for (const c of open) socketOf(c)?.unref()
      })
  ).pipe(Effect.map(({ made }) => made))
  const client = PgClient.layerFromPool({ acquire: pool, applicationName: "magi" }).pipe(Layer.mapError(unavailable(where)))
  const migrated = Layer.effectDiscard(migrateIfBehind.pipe(Effect.mapError(unavailable(where))))
  return Layer.provideMerge(migrated, client)
}

/**
 * Notifications on `channel`, each payload once, on a connection of this
 * stream's own. A dropped connection is reconnected (with backoff), so a
 * listener outlives a database restart; what was notified while it was
 * down is missed, which is why every listener also polls.
 */
export const listen = (url: Redacted.Redacted<string>, channel: string): Stream.Stream<string> =>
  Stream.asyncPush<string, ListenLost>((emit) =>
    Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          const client = new Pg.Client({ connectionString: Redacted.value(url), connectionTimeoutMillis: Duration.toMillis(CONNECT_TIMEOUT) })
          client.on("notification", (msg: Pg.Notification) => {
            if (msg.channel === channel && msg.payload !== undefined) emit.single(msg.payload)
          })
          client.on("error", (e: Error) => emit.fail(new ListenLost({ message: e.message, cause: e })))
          client.on("end", () => emit.fail(new ListenLost({ message: "the listening connection closed" })))
          await client.connect()
          await client.query(`LISTEN ${Pg.escapeIdentifier(channel)}`)
          return client
        },
        catch: (e) => new ListenLost({ message: e instanceof Error ? e.message : String(e), cause: e })
      }),
      (client) =>
        Effect.promise(() => {
          client.removeAllListeners("end")
          client.removeAllListeners("error")
          client.on("error", () => {})
          return client.end().catch(() => undefined)
        })
    )
  ).pipe(
    // Backoff from 200 ms, never more than 5 s apart: a database back from a
    // restart is heard from again within seconds.
    Stream.retry(Schedule.exponential("200 millis").pipe(Schedule.union(Schedule.spaced("5 seconds")))),
    Stream.orDie
  )

/** Round trips timed by the doctor: enough for a median that one slow packet does not move. */
const PROBE_ROUND_TRIPS = 5

/** Connect to `url` (no migration), time a few round trips and read which migrations are applied. */
export const probe = (url: Redacted.Redacted<string>): Effect.Effect<Probe, StoreUnavailable> => {
  const where = maskUrl(Redacted.value(url))
  return Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const roundTripsMs: Array<number> = []
    for (let i = 0; i < PROBE_ROUND_TRIPS; i++) {
      const t0 = performance.now()
      yield* sql`SELECT 1`
      roundTripsMs.push(performance.now() - t0)
    }
    const table = yield* sql<{ readonly present: boolean }>`SELECT to_regclass(${MIGRATIONS_TABLE}) IS NOT NULL AS present`
    const applied = table[0]?.present === true ? yield* appliedMigrations : []
    return { applied, roundTripsMs }
  }).pipe(
    Effect.provide(PgClient.layer({ url, maxConnections: 1, connectTimeout: CONNECT_TIMEOUT, applicationName: "magi doctor" })),
    Effect.mapError(unavailable(where))
  )
}
