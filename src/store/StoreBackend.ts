/**
 * Where a magi installation keeps its records: the home folder (the default,
 * nothing to install) or a PostgreSQL database (`[store] url` in the config,
 * or `MAGI_STORE_URL`, which wins). The stores ask this service for their
 * records (`records`) and never learn which backend answered: both keep the
 * one contract of `RecordStore`.
 *
 * What is local to a machine stays in the home folder whichever backend
 * holds the records: worktrees, agent artifacts, config, and the leases a
 * waiting `magi ask` beats.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as SqlClient from "@effect/sql/SqlClient"
import { Context, Effect, Layer, PubSub, Redacted, Stream } from "effect"
import * as NodePath from "node:path"
import * as Claims from "./Claims.js"
import * as PgRecordStore from "./postgres/PgRecordStore.js"
import * as Postgres from "./postgres/Postgres.js"
import * as PgConnection from "./postgres/PgConnection.js"
import * as RecordStore from "./files/RecordStore.js"
import { type KindRecords, type RecordErrors, withKindErrors } from "./KindErrors.js"
import type { RecordNotFound } from "./StoreErrors.js"

export type Backend =
  | { readonly _tag: "files"; readonly home: string }
  | {
    readonly _tag: "postgres"
    /** The URL with its password masked: the only form that is ever shown. */
    readonly where: string
    readonly url: Redacted.Redacted<string>
    readonly sql: SqlClient.SqlClient
    /**
     * Every write's `<kind>/<id>`, as the database notifies it, from
     * whichever host made it: one listening connection per process, shared
     * by every kind's change feed and opened by the first one read.
     */
    readonly notifications: Stream.Stream<string>
  }

/** The PostgreSQL backend, for a kind with a database implementation of its own (a question's panels, in `magi_files`). */
export type PostgresBackend = Extract<Backend, { readonly _tag: "postgres" }>

export class StoreBackend extends Context.Tag("magi/StoreBackend")<StoreBackend, Backend>() {
  /** The records in the folders of the home `dir`. */
  static filesAt = (dir: string): Layer.Layer<StoreBackend> => Layer.succeed(StoreBackend, { _tag: "files" as const, home: dir })

  /** The records in the database at `url`, its schema migrated first. */
  static postgres = (url: Redacted.Redacted<string>): Layer.Layer<StoreBackend, Postgres.StoreUnavailable> =>
    Layer.scoped(
      StoreBackend,
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        // One `LISTEN` per process, fanned out: a page's five feeds and the
        // waiter's wake-ups cost one connection, not six. A command that
        // never follows changes (`magi answer`) never opens it.
        const hub = yield* PubSub.unbounded<string>()
        yield* Effect.addFinalizer(() => PubSub.shutdown(hub))
        const scope = yield* Effect.scope
        const startListening = yield* Effect.once(
          Effect.forkIn(Stream.runForEach(PgConnection.listen(url, Postgres.CHANGES_CHANNEL), (payload) => PubSub.publish(hub, payload)), scope)
        )
        const notifications = Stream.unwrapScoped(
          Effect.gen(function* () {
            const subscription = yield* PubSub.subscribe(hub)
            yield* startListening
            return Stream.fromQueue(subscription)
          })
        )
        return { _tag: "postgres" as const, where: Postgres.maskUrl(Redacted.value(url)), url, sql, notifications }
      })
    ).pipe(Layer.provide(PgConnection.layer(url)))
}

/**
 * What a kind of record tells the backend; `folder` is its folder in the
 * home (and its key in the database), `errors` the classes its callers
 * still match on (`KindErrors.ts`).
 */
export interface KindOptions<A, NotFound = RecordNotFound, Unreadable = RecordStore.Unreadable, Failed = RecordStore.Failed>
  extends Omit<RecordStore.RecordStoreOptions<A>, "root">
{
  readonly folder: string
  readonly errors: RecordErrors<NotFound, Unreadable, Failed>
}

/** What a kind tells the backend, whatever its errors: its folder and its record options. */
export type KindShape<A> = Omit<RecordStore.RecordStoreOptions<A>, "root"> & { readonly folder: string }

/** One kind's records on whichever backend is configured, failing in the family's errors. */
export const recordsOf = <A>(
  options: KindShape<A>
): Effect.Effect<RecordStore.RecordStore<A>, never, StoreBackend | FileSystem.FileSystem> =>
  Effect.flatMap(StoreBackend, (backend): Effect.Effect<RecordStore.RecordStore<A>, never, FileSystem.FileSystem> =>
    backend._tag === "files"
      ? RecordStore.make({ ...options, root: NodePath.join(backend.home, options.folder) })
      : PgRecordStore.make({
        table: options.folder,
        where: backend.where,
        kind: options.kind,
        ...(options.archive === undefined ? {} : { archive: options.archive })
      }).pipe(Effect.provideService(SqlClient.SqlClient, backend.sql)))

/** One kind's records on whichever backend is configured, failing in the kind's classes. */
export const records = <A, NotFound, Unreadable, Failed>(
  options: KindOptions<A, NotFound, Unreadable, Failed>
): Effect.Effect<KindRecords<A, NotFound, Unreadable, Failed>, never, StoreBackend | FileSystem.FileSystem> =>
  Effect.map(recordsOf(options), (records) => withKindErrors(records, options.errors))

/**
 * Names of what changed among one kind's records, as `<id>.json` on every
 * backend (the folder's own names on the file backend, which may include
 * other files of the folder; `LISTEN` on PostgreSQL). Ends quietly where
 * watching is unavailable: callers poll as well.
 */
export const changes = (folder: string): Stream.Stream<string, never, StoreBackend | FileSystem.FileSystem> =>
  Stream.unwrap(
    Effect.gen(function* () {
      const backend = yield* StoreBackend
      if (backend._tag === "postgres")
        return backend.notifications.pipe(
          Stream.filter((payload) => payload.startsWith(`${folder}/`)),
          Stream.map((payload) => `${payload.slice(folder.length + 1)}.json`)
        )
      return watchFolder(yield* FileSystem.FileSystem, NodePath.join(backend.home, folder))
    })
  )

/**
 * Names of what changed in the folder `dir`, as the filesystem reports them;
 * the folder is made first, so it can be watched before its first record.
 * Ends quietly where watching is unavailable: callers poll as well.
 */
export const watchFolder = (fs: FileSystem.FileSystem, dir: string): Stream.Stream<string> =>
  Stream.unwrap(
    // fallback: the folder is made if it can be; watching it then fails loudly if it is not there
    Effect.as(Effect.ignore(fs.makeDirectory(dir, { recursive: true })), fs.watch(dir).pipe(Stream.map((event) => NodePath.basename(event.path))))
  ).pipe(Stream.catchAll(() => Stream.empty))

/**
 * One kind's claims on the configured backend: files `<home>/<folder>/<key><suffix>`
 * (where magi has always kept them, so a loop of the build before is seen),
 * or rows keyed `<folder>/<key>`.
 */
export const claims = (folder: string, suffix: string): Effect.Effect<Claims.ClaimsShape, never, StoreBackend | FileSystem.FileSystem> =>
  Effect.flatMap(StoreBackend, (backend) =>
    backend._tag === "files"
      ? Claims.makeFiles((key) => NodePath.join(backend.home, folder, `${key}${suffix}`))
      : Claims.makePostgres(backend.sql, `${folder}/`))

/**
 * A kind kept one way on each backend (a run's folder and its file in the
 * home, or a row): the backend runs the implementation that is its own, so
 * no caller asks which backend it has.
 */
export const byBackend = <A1, E1, R1, A2, E2, R2>(cases: {
  readonly files: (home: string) => Effect.Effect<A1, E1, R1>
  readonly postgres: (backend: PostgresBackend) => Effect.Effect<A2, E2, R2>
}): Effect.Effect<A1 | A2, E1 | E2, R1 | R2 | StoreBackend> =>
  Effect.flatMap(
    StoreBackend,
    (backend): Effect.Effect<A1 | A2, E1 | E2, R1 | R2> => backend._tag === "files" ? cases.files(backend.home) : cases.postgres(backend)
  )

/**
 * Names of what changed among one kind's records on any host, as `<id>.json`:
 * the database's notifications. None on the file backend, whose folder is one
 * machine's: what another process there wrote, a caller learns by reading.
 */
export const changesAcrossHosts = (folder: string): Stream.Stream<string, never, StoreBackend | FileSystem.FileSystem> =>
  Stream.unwrap(Effect.map(StoreBackend, (backend) => (backend._tag === "postgres" ? changes(folder) : Stream.empty)))

/** The same store on both sides: the same home folder, or the same database URL. */
export const samePlace = (a: Backend, b: Backend): boolean =>
  a._tag === "files" && b._tag === "files"
    ? NodePath.resolve(a.home) === NodePath.resolve(b.home)
    : a._tag === "postgres" && b._tag === "postgres" && Redacted.value(a.url) === Redacted.value(b.url)

/** How the backend is named to a person: the home's folder, or the database's masked URL. */
export const describe = (backend: Backend): string => backend._tag === "files" ? `the home folder ${backend.home}` : `PostgreSQL at ${backend.where}`
