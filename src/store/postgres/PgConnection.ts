/**
 * Where the PostgreSQL driver is loaded: the pool, the listening connection
 * and the doctor's probe, each reached through one deferred import of
 * PostgresDriver.ts. Apart from Postgres.ts (the schema, URLs and errors,
 * which the driver itself uses) so the two do not import each other.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Layer, type Redacted, Stream } from "effect"
import type { Probe, StoreUnavailable } from "./Postgres.js"

/**
 * The driver (`pg` and @effect/sql-pg, in PostgresDriver.ts), evaluated the
 * first time a database is used: a home-folder store never needs it, and it
 * was a good part of every command's start (docs/benchmarks.md, start-up).
 * Within the one-file bundle this is a deferred evaluation, not a second
 * file: the launcher's code cache covers it once a process has loaded it.
 */
const driver = Effect.promise(() => import("./PostgresDriver.js")).pipe(
  // For the launcher (scripts/launcher.cjs): this process compiled the
  // driver, so the code cache it writes as it ends may hold it for the next.
  Effect.tap(() => Effect.sync(() => Object.assign(globalThis, { [Symbol.for("magi.driverLoaded")]: true })))
)

/** The pool for `url`, its schema migrated; fails with `StoreUnavailable` naming the masked URL. */
export const layer = (url: Redacted.Redacted<string>): Layer.Layer<SqlClient.SqlClient, StoreUnavailable> =>
  Layer.unwrapEffect(Effect.map(driver, (d) => d.layer(url)))

/**
 * Notifications on `channel`, each payload once, on a connection of this
 * stream's own; reconnected after a drop (see PostgresDriver.listen).
 */
export const listen = (url: Redacted.Redacted<string>, channel: string): Stream.Stream<string> =>
  Stream.unwrap(Effect.map(driver, (d) => d.listen(url, channel)))

/** Connect to `url` (no migration), time a few round trips and read which migrations are applied. */
export const probe = (url: Redacted.Redacted<string>): Effect.Effect<Probe, StoreUnavailable> => Effect.flatMap(driver, (d) => d.probe(url))
