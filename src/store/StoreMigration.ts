/**
 * Copying a magi installation's records from one backend to another (the
 * home folder to PostgreSQL, or back): the engine behind `magi store
 * migrate`. It knows kinds only as their options (`MigrationKind`, built
 * from the same `StoreBackend.KindOptions` a store is made with), never a
 * domain: the list of kinds is assembled above the domains (`src/store/`).
 *
 * What it promises:
 *
 * - **Verbatim**: a record's body is copied as stored, not decoded and
 *   encoded again, so an older record stays the older record (the reader
 *   that meets it reads it with defaults, as before) and one that is not
 *   readable stays as unreadable on the other side as it was on this one.
 *   Where a record is (hot, or its shelf) is kept.
 * - **Create-if-absent**: a record already on the target is left as it is,
 *   whatever it holds. Running again copies nothing and changes nothing; a
 *   run killed midway (kill -9 included) is finished by the next.
 * - **Whole records**: a record and its own files (a question's panel) land
 *   together. On PostgreSQL a batch of records and their files is one
 *   transaction; in a folder the files are assembled in scratch and renamed
 *   into place *before* the record is created, and the record's existence is
 *   what says "copied", so a kill between the two is redone from the start.
 * - **Bounded memory**: both sides are read in chunks (a folder's names and
 *   then `CHUNK` records at a time, shelf by shelf; rows by key, a page at a
 *   time), written a chunk per batch; the only thing held whole is the list
 *   of one folder's names.
 * - **Checked**: every kind ends with a checksum of each side (see
 *   `Checksum`), the source's taken as it is copied, the target's read back,
 *   and each source record compared with the target's by its body and files
 *   (not its shelf: the target's stores shelve settled records themselves),
 *   so a difference names the records, and a target used since is no
 *   difference. The comparison holds one digest per record of a kind.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as PlatformError from "@effect/platform/Error"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Chunk, Data, Effect, Either, Option, Stream } from "effect"
import { createHash } from "node:crypto"
import * as NodePath from "node:path"
import { createAtomically } from "./files/AtomicFile.js"
import { CHANGES_CHANNEL, sqlWords } from "./postgres/Postgres.js"
import * as RecordStore from "./files/RecordStore.js"
import type * as StoreBackend from "./StoreBackend.js"

// ---------------------------------------------------------------------------
// Kinds

/** One kind of record as the migration sees it: where its records are on each backend, and what travels with them. */
export interface MigrationKind {
  /** Its folder in the home, and its key in `magi_records.kind`. */
  readonly folder: string
  /** How messages name its records: "questions". */
  readonly plural: string
  readonly layout: RecordStore.Layout
  /** Largest record read: what the kind's own store would read, no more. */
  readonly maxBytes: number
  /** Where archived records are, when the kind archives (flat layout only). */
  readonly archive?: {
    readonly dir: string
    readonly shelfOf: (id: string) => string | undefined
  }
  /**
   * A shelved record's searchable words, from its body (decoded by the
   * kind; "" when it cannot be): kept beside the row on PostgreSQL so a
   * search there never decodes a shelf.
   */
  readonly digest: (id: string, body: string) => string
  /**
   * The folder beside a record that holds the record's own files (a
   * question's panel, `<id>.panel`), named from its id; on PostgreSQL they
   * are rows of `magi_files` with the kind's key and the id as owner.
   */
  readonly filesDir?: (id: string) => string
}

/** A kind's migration entry from the options its store is made with (`StoreBackend.records`), plus its own files, if any. */
export const kindOf = <A>(
  options: StoreBackend.KindShape<A>,
  extras: { readonly filesDir?: (id: string) => string } = {}
): MigrationKind => {
  const { kind, archive } = options
  const layout = options.layout ?? { _tag: "flat" as const }
  return {
    folder: options.folder,
    plural: kind.plural ?? `${kind.noun}s`,
    layout,
    maxBytes: kind.maxBytes,
    ...(archive === undefined || layout._tag !== "flat" ? {} : { archive: { dir: archive.dir, shelfOf: archive.shelfOf } }),
    digest: (id, body) => {
      if (archive === undefined) return ""
      // The decoder and the digest may throw on a hostile body: its words are then none, as the file index would say.
      try {
        const decoded = kind.decode(body, `${kind.noun} ${id}`)
        return Either.isRight(decoded) ? archive.digest(decoded.right) : ""
      } catch {
        return ""
      }
    },
    ...(extras.filesDir === undefined ? {} : { filesDir: extras.filesDir })
  }
}

// ---------------------------------------------------------------------------
// What is copied, and what is said about it

/** A record as it travels: its body as stored, where it is, its own files. */
interface Entry {
  readonly id: string
  /** Its shelf when archived; null when hot. */
  readonly shelf: string | null
  readonly body: string
  readonly files: ReadonlyArray<{ readonly name: string; readonly bytes: Uint8Array }>
  /** Its searchable words, worked out only for a shelved record on its way to PostgreSQL. */
  readonly digest: string | null
}

/** Something on the source that is not copied (a file no store of the kind would read), and why. */
export interface Skipped {
  readonly id: string
  readonly reason: string
}

/**
 * A side's fingerprint of one kind. Each record hashes to
 * sha256(id, shelf, body) and each of its files to sha256(owner, name,
 * bytes); a kind's checksum is the sum of its records' hashes (and its
 * files', apart) modulo 2^256. A sum does not depend on the order, so each
 * side is hashed as it is streamed, in whatever order it lists, with no
 * sort of 100,000 bodies in memory; and unlike an xor, two equal records do
 * not cancel out.
 */
export interface Checksum {
  readonly records: number
  readonly files: number
  /** 64 hex digits over the records. */
  readonly recordsSum: string
  /** 64 hex digits over the files. */
  readonly filesSum: string
}

export interface KindReport {
  readonly kind: string
  readonly plural: string
  /** Records read from the source. */
  readonly read: number
  /** Of those, written to the target now. */
  readonly copied: number
  /** Of those, on the target already (left as they are). */
  readonly present: number
  /** Source files no store would read, so not copied (at most `SKIPPED_NAMED`, and how many in all). */
  readonly skipped: ReadonlyArray<Skipped>
  readonly skippedCount: number
  readonly source: Checksum
  readonly target: Checksum
  /**
   * Whether every record copied is on the target as the source has it
   * (body and files; which shelf it is on is not compared, since the
   * target's own stores move settled records to their shelves). Records
   * only the target has are its own since: not a difference.
   */
  readonly same: boolean
  /** The ids of the source's records the target holds otherwise or lacks (at most `DIFFERING_NAMED`), and how many in all. */
  readonly differing: ReadonlyArray<string>
  readonly differingCount: number
}

/** Differing records named in a report; the rest are counted. */
export const DIFFERING_NAMED = 20

/** A record as the comparison sees it: its body and files, wherever it is shelved. */
const contentOf = (kind: string, e: Entry): string => {
  const h = createHash("sha256").update(e.body).update("\u0000")
  for (const f of [...e.files].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)))
    h.update(kind).update(f.name).update("\u0000").update(f.bytes).update("\u0000")
  return h.digest("hex")
}

/** How far one kind has got: reported after every batch. */
export interface Progress {
  readonly kind: string
  readonly read: number
  readonly copied: number
}

/** The copy could not go on: a side refused a read or a write. */
export class MigrationFailed extends Data.TaggedError("MigrationFailed")<{
  readonly kind: string
  /** The side, as shown: a folder, or a database's masked URL. */
  readonly where: string
  readonly message: string
}> {}

/** Records per chunk read and per batch written (one transaction on PostgreSQL): 500 rows of five values stay far below its 65,535 parameters. */
export const CHUNK = 500

/**
 * Bytes of bodies and files gathered per batch before it is written anyway:
 * a panel is up to 8 MiB, and a chunk of 500 questions with panels must not
 * be 4 GiB in memory.
 */
export const BATCH_BYTES = 16 * 1024 * 1024

/** Skipped files named in a report; the rest are counted. */
export const SKIPPED_NAMED = 20

/** Batches written while the next is read: the disk and the database work while the other side reads. */
const BATCHES_IN_FLIGHT = 2

// ---------------------------------------------------------------------------
// Hashing

const MOD = 1n << 256n

const sha = (...parts: ReadonlyArray<string | Uint8Array>): bigint => {
  const h = createHash("sha256")
  // A separator no id, shelf or name contains: ("ab", "c") and ("a", "bc") hash apart.
  for (const part of parts) h.update(part).update("\u0000")
  return BigInt(`0x${h.digest("hex")}`)
}

class Summer {
  records = 0
  files = 0
  private recordsSum = 0n
  private filesSum = 0n
  add(kind: string, e: Entry) {
    this.records++
    this.recordsSum = (this.recordsSum + sha(e.id, e.shelf ?? "", e.body)) % MOD
    for (const f of e.files) {
      this.files++
      this.filesSum = (this.filesSum + sha(kind, e.id, f.name, f.bytes)) % MOD
    }
  }
  result(): Checksum {
    const hex = (n: bigint) => n.toString(16).padStart(64, "0")
    return { records: this.records, files: this.files, recordsSum: hex(this.recordsSum), filesSum: hex(this.filesSum) }
  }
}

export const sameChecksum = (a: Checksum, b: Checksum) =>
  a.records === b.records && a.files === b.files && a.recordsSum === b.recordsSum && a.filesSum === b.filesSum

// ---------------------------------------------------------------------------
// A side: the records of one kind on one backend, read and written

/** A chunk read: records, and what was not read as one. */
interface Read {
  readonly entries: ReadonlyArray<Entry>
  readonly skipped: ReadonlyArray<Skipped>
}

interface Side {
  /** Every record of the kind, a chunk at a time; `digests` works out shelved records' words. */
  readonly read: (kind: MigrationKind, digests: boolean) => Stream.Stream<Read, MigrationFailed>
  /** Create what is absent, as one batch; how many were created. */
  readonly write: (kind: MigrationKind, entries: ReadonlyArray<Entry>) => Effect.Effect<number, MigrationFailed>
  /** Whether this side wants digests (PostgreSQL keeps them beside shelved rows). */
  readonly keepsDigests: boolean
}

const isNotFound = (e: PlatformError.PlatformError) => e._tag === "SystemError" && e.reason === "NotFound"

const bytesOf = (e: Entry) => e.body.length + e.files.reduce((n, f) => n + f.bytes.length, 0)

/**
 * The home folder's side. Reads the way the kind's store does (hot folder,
 * then each shelf; bounded reads of regular files only), and writes the way
 * it does (atomic, durable, create-new).
 */
const filesSide = (home: string) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const reader = yield* Effect.serviceOption(RecordStore.BoundedReader)

    const fail = (kind: MigrationKind, what: string) => (e: { readonly message: string }) =>
      new MigrationFailed({ kind: kind.folder, where: home, message: `${what}: ${e.message}` })
    const rootOf = (kind: MigrationKind) => NodePath.join(home, kind.folder)
    const shelfDir = (kind: MigrationKind, shelf: string) => NodePath.join(rootOf(kind), kind.archive!.dir, shelf)
    /** Where a record is in a folder: `<dir>/<id>.json`, or `<dir>/<id>/<file>` in the folder layout. */
    const recordPath = (kind: MigrationKind, dir: string, id: string) =>
      kind.layout._tag === "flat" ? NodePath.join(dir, `${id}.json`) : NodePath.join(dir, id, kind.layout.file)
    const names = (kind: MigrationKind, dir: string) =>
      fs.readDirectory(dir).pipe(
        Effect.catchIf(isNotFound, () => Effect.succeed<string[]>([])),
        Effect.mapError(fail(kind, `list ${dir}`))
      )

    /** A record's text, or why it is not read: as the store's own bounded read (`RecordStore`). */
    const readBody = (kind: MigrationKind, path: string): Effect.Effect<Either.Either<string, RecordStore.BoundedReadRefusal>> =>
      Option.isSome(reader)
        ? Effect.sync(() => reader.value.readString(path, kind.maxBytes))
        : Effect.gen(function* () {
          const info = yield* fs.stat(path).pipe(Effect.either)
          if (Either.isLeft(info))
            return Either.left<RecordStore.BoundedReadRefusal>(isNotFound(info.left) ? { _tag: "NotFound" } : { _tag: "Failed", message: info.left.message })
          if (info.right.type !== "File") return Either.left({ _tag: "NotRegular" as const, kind: info.right.type })
          if (Number(info.right.size) > kind.maxBytes) return Either.left({ _tag: "TooBig" as const, size: Number(info.right.size) })
          return yield* fs.readFileString(path).pipe(
            Effect.map((text) => Either.right(text)),
            // display: a record that could not be migrated is reported by id
            Effect.catchAll((e) =>
              Effect.succeed(Either.left<RecordStore.BoundedReadRefusal>(isNotFound(e) ? { _tag: "NotFound" } : { _tag: "Failed", message: e.message }))
            )
          )
        })

    const refusal = (why: RecordStore.BoundedReadRefusal): string | undefined => {
      switch (why._tag) {
        case "NotFound":
          // Listed, then gone (removed, or moved to its shelf since): nothing to copy, nothing to say.
          return undefined
        case "NotRegular":
          return `it is ${why.kind}, not a record file`
        case "TooBig":
          return `it is ${why.size} bytes, over the kind's cap; no store of it would read it`
        case "Failed":
          return why.message
      }
    }

    /** A record's own files, sorted by name; none when it has no such folder. */
    const readFiles = (kind: MigrationKind, dir: string, id: string) =>
      Effect.gen(function* () {
        if (kind.filesDir === undefined) return []
        const at = NodePath.join(dir, kind.filesDir(id))
        const inside = yield* names(kind, at)
        const files: Array<{ readonly name: string; readonly bytes: Uint8Array }> = []
        for (const name of inside.sort()) {
          const path = NodePath.join(at, name)
          const info = yield* fs.stat(path).pipe(Effect.option)
          if (Option.isNone(info) || info.value.type !== "File") continue
          files.push({ name, bytes: yield* fs.readFile(path).pipe(Effect.mapError(fail(kind, `read ${path}`))) })
        }
        return files
      })

    /** One folder's records (the hot folder, or a shelf), a chunk at a time. */
    const readFolder = (
      kind: MigrationKind,
      dir: string,
      shelf: string | null,
      digests: boolean,
      leave: ReadonlySet<string>
    ): Stream.Stream<Read, MigrationFailed> =>
      Stream.unwrap(
        Effect.map(names(kind, dir), (all) => {
          const present = new Set(all)
          const ids = (
            kind.layout._tag === "flat"
              ? all.filter((n) => n.endsWith(".json")).map((n) => n.slice(0, -5))
              : all.filter((n) => !n.startsWith("."))
          )
            .filter((id) => RecordStore.isSafeId(id) && !leave.has(id))
            .sort()
          return Stream.paginateChunkEffect(0, (from: number) =>
            Effect.gen(function* () {
              const entries: Array<Entry> = []
              const skipped: Array<Skipped> = []
              let bytes = 0
              let i = from
              for (; i < ids.length && entries.length < CHUNK && bytes < BATCH_BYTES; i++) {
                const id = ids[i]!
                const got = yield* readBody(kind, recordPath(kind, dir, id))
                if (Either.isLeft(got)) {
                  const reason = refusal(got.left)
                  if (reason !== undefined) skipped.push({ id, reason })
                  continue
                }
                const files = kind.filesDir !== undefined && present.has(kind.filesDir(id)) ? yield* readFiles(kind, dir, id) : []
                const entry: Entry = { id, shelf, body: got.right, files, digest: digests && shelf !== null ? kind.digest(id, got.right) : null }
                bytes += bytesOf(entry)
                entries.push(entry)
              }
              const read: Read = { entries, skipped }
              return [Chunk.of(read), i < ids.length ? Option.some(i) : Option.none()] as const
            }))
        })
      )

    const read = (kind: MigrationKind, digests: boolean): Stream.Stream<Read, MigrationFailed> => {
      const root = rootOf(kind)
      const archive = kind.archive
      // The hot ids, kept to leave out a shelved copy of one: a move a crash
      // cut short leaves a record in both places, and the hot one is newer.
      const hot = new Set<string>()
      const hotRead = readFolder(kind, root, null, digests, new Set()).pipe(Stream.tap((r) => Effect.sync(() => r.entries.forEach((e) => hot.add(e.id)))))
      if (archive === undefined) return hotRead
      const shelves = Stream.unwrap(
        Effect.map(names(kind, NodePath.join(root, archive.dir)), (all) =>
          Stream.fromIterable(
            all.filter((n) => RecordStore.isSafeId(n) && !n.includes(".")).sort()
          ).pipe(
            Stream.flatMap((shelf) => readFolder(kind, shelfDir(kind, shelf), shelf, digests, hot))
          ))
      )
      return Stream.concat(hotRead, shelves)
    }

    const write = (kind: MigrationKind, entries: ReadonlyArray<Entry>): Effect.Effect<number, MigrationFailed> =>
      Effect.gen(function* () {
        const root = rootOf(kind)
        const created = yield* Effect.forEach(
          entries,
          (e) =>
            Effect.gen(function* () {
              const dir = e.shelf === null ? root : shelfDir(kind, e.shelf)
              // Ids and shelves become path parts: one that could leave the folder is refused by the store too.
              if (!RecordStore.isSafeId(e.id) || (e.shelf !== null && (!RecordStore.isSafeId(e.shelf) || e.shelf.includes("."))))
                return yield* new MigrationFailed({ kind: kind.folder, where: home, message: `\`${e.id}\` is not an id magi will build a path from` })
              // Absent means absent from both places: a record the target has hot is not copied again onto its shelf.
              const there = (path: string) => fs.exists(path).pipe(Effect.mapError(fail(kind, `look for ${path}`)))
              if (yield* there(recordPath(kind, root, e.id))) return false
              const shelf = kind.archive?.shelfOf(e.id)
              if (
                kind.archive !== undefined && shelf !== undefined && RecordStore.isSafeId(shelf) &&
                (yield* there(recordPath(kind, shelfDir(kind, shelf), e.id)))
              )
                return false
              if (kind.layout._tag === "folder")
                yield* fs.makeDirectory(NodePath.join(dir, e.id), { recursive: true }).pipe(Effect.mapError(fail(kind, `create ${dir}`)))
              if (e.files.length > 0 && kind.filesDir !== undefined)
                yield* placeFiles(kind, dir, e)
              // The record last, durable: its existence is what says the copy is done.
              return yield* createAtomically(recordPath(kind, dir, e.id), e.body, { durable: true }).pipe(
                Effect.provideService(FileSystem.FileSystem, fs),
                Effect.mapError(fail(kind, `create ${kind.plural} ${e.id}`))
              )
            }),
          // Several in flight: each is a few file operations and two flushes,
          // through libuv's four threads, which overlap.
          { concurrency: 8 }
        )
        return created.filter((c) => c).length
      })

    /**
     * A record's files, whole: written into scratch beside their folder and
     * renamed into place; one a killed copy left there is replaced, since
     * the record itself (written after) is not there yet.
     */
    const placeFiles = (kind: MigrationKind, dir: string, e: Entry) =>
      Effect.gen(function* () {
        const final = NodePath.join(dir, kind.filesDir!(e.id))
        // The store's own scratch name for a panel being assembled (`<id>.panel.tmp-…`), so its sweep removes one a kill left.
        const tmp = `${final}.tmp-${Math.random().toString(36).slice(2, 10)}`
        const step = <B>(what: string, effect: Effect.Effect<B, PlatformError.PlatformError>) => Effect.mapError(effect, fail(kind, what))
        yield* step(`create ${tmp}`, fs.makeDirectory(tmp, { recursive: true }))
        for (const f of e.files) {
          if (!RecordStore.isSafeId(f.name)) continue
          yield* step(`write ${f.name}`, fs.writeFile(NodePath.join(tmp, f.name), f.bytes))
        }
        yield* step(`remove ${final}`, fs.remove(final, { recursive: true }).pipe(Effect.catchIf(isNotFound, () => Effect.void)))
        yield* step(`move ${tmp}`, fs.rename(tmp, final))
      })

    return { read, write, keepsDigests: false } satisfies Side
  })

/** Rows per page read from PostgreSQL: keyset pages by id, so a read never holds more than one. */
const PAGE = CHUNK

/** PostgreSQL's side: `magi_records` and `magi_files`, rows keyed by the kind's folder name. */
const postgresSide = (where: string, sql: SqlClient.SqlClient): Side => {
  const fail = (kind: MigrationKind, what: string) => (e: SqlError) =>
    new MigrationFailed({
      kind: kind.folder,
      where,
      message: `${what} in PostgreSQL at ${where}: ${sqlWords(e)}`
    })

  const read = (kind: MigrationKind, _digests: boolean): Stream.Stream<Read, MigrationFailed> =>
    Stream.paginateChunkEffect("", (after: string) =>
      Effect.gen(function* () {
        const rows = yield* sql<{ readonly id: string; readonly shelf: string | null; readonly body: string }>`
          SELECT id, shelf, body FROM magi_records WHERE kind = ${kind.folder} AND id > ${after} ORDER BY id LIMIT ${PAGE}`
        // Which of them have files, by name only: the bytes are fetched one owner at a time, so a page of panels is never all in memory.
        const owners = kind.filesDir === undefined || rows.length === 0
          ? new Set<string>()
          : new Set(
            (yield* sql<{ readonly owner: string }>`
                  SELECT DISTINCT owner FROM magi_files WHERE kind = ${kind.folder} AND owner IN ${sql.in(rows.map((r) => r.id))}`).map((r) => r.owner)
          )
        const entries: Array<Entry> = []
        for (const row of rows) {
          const files = owners.has(row.id)
            ? (yield* sql<{ readonly name: string; readonly bytes: Uint8Array }>`
                SELECT name, bytes FROM magi_files WHERE kind = ${kind.folder} AND owner = ${row.id} ORDER BY name`).map((f) => ({
              name: f.name,
              bytes: new Uint8Array(f.bytes)
            }))
            : []
          entries.push({ id: row.id, shelf: row.shelf, body: row.body, files, digest: null })
        }
        const last = rows.at(-1)?.id
        return [Chunk.of<Read>({ entries, skipped: [] }), rows.length === PAGE && last !== undefined ? Option.some(last) : Option.none()] as const
      }).pipe(Effect.mapError(fail(kind, `read ${kind.plural}`))))

  const write = (kind: MigrationKind, entries: ReadonlyArray<Entry>): Effect.Effect<number, MigrationFailed> =>
    entries.length === 0
      ? Effect.succeed(0)
      : sql
        .withTransaction(
          Effect.gen(function* () {
            const made = yield* sql<{ readonly id: string }>`
                INSERT INTO magi_records ${
              sql.insert(
                entries.map((e) => ({ kind: kind.folder, id: e.id, body: e.body, shelf: e.shelf, digest: e.shelf === null ? null : e.digest }))
              )
            }
                ON CONFLICT (kind, id) DO NOTHING RETURNING id`
            const created = new Set(made.map((r) => r.id))
            // A record's files come with it, in its transaction: only a record created now brings them.
            const files = entries.flatMap((e) =>
              created.has(e.id) ? e.files.map((f) => ({ kind: kind.folder, owner: e.id, name: f.name, bytes: f.bytes })) : []
            )
            // In groups, so a batch of panels is not one statement of 16 MiB of parameters.
            for (let i = 0; i < files.length; i += 50)
              yield* sql`INSERT INTO magi_files ${sql.insert(files.slice(i, i + 50))} ON CONFLICT (kind, owner, name) DO NOTHING`
            if (created.size > 0) {
              // As every write does: the kind's revision moves (a listing memoised on it lists again) and listeners hear of it.
              yield* sql`INSERT INTO magi_revisions (kind, revision) VALUES (${kind.folder}, 1)
                           ON CONFLICT (kind) DO UPDATE SET revision = magi_revisions.revision + 1`
              yield* sql`SELECT pg_notify(${CHANGES_CHANNEL}, ${`${kind.folder}/${made.at(-1)!.id}`})`
            }
            return created.size
          })
        )
        .pipe(Effect.mapError(fail(kind, `copy ${kind.plural}`)))

  return { read, write, keepsDigests: true }
}

const sideOf = (backend: StoreBackend.Backend): Effect.Effect<Side, never, FileSystem.FileSystem> =>
  backend._tag === "files" ? filesSide(backend.home) : Effect.succeed(postgresSide(backend.where, backend.sql))

// ---------------------------------------------------------------------------
// The copy

/**
 * Copy every kind's records from `from` to `to`, kind after kind, then read
 * each kind back from `to` and compare. Never fails for a difference (the
 * report says which kinds differ); fails when a side refuses a read or write.
 */
export const migrate = (options: {
  readonly kinds: ReadonlyArray<MigrationKind>
  readonly from: StoreBackend.Backend
  readonly to: StoreBackend.Backend
  readonly progress?: (p: Progress) => Effect.Effect<void>
}): Effect.Effect<ReadonlyArray<KindReport>, MigrationFailed, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const source = yield* sideOf(options.from)
    const target = yield* sideOf(options.to)
    const reports: Array<KindReport> = []
    for (const kind of options.kinds) {
      const sum = new Summer()
      const skipped: Array<Skipped> = []
      let skippedCount = 0
      let read = 0
      let copied = 0
      // One digest per source record (64 bytes each), to find the ones the target holds otherwise.
      const wanted = new Map<string, string>()
      yield* source.read(kind, target.keepsDigests).pipe(
        Stream.tap((r) =>
          Effect.sync(() => {
            for (const e of r.entries) {
              sum.add(kind.folder, e)
              wanted.set(e.id, contentOf(kind.folder, e))
            }
            read += r.entries.length
            skippedCount += r.skipped.length
            skipped.push(...r.skipped.slice(0, SKIPPED_NAMED - skipped.length))
          })
        ),
        Stream.mapEffect((r) => target.write(kind, r.entries), { concurrency: BATCHES_IN_FLIGHT }),
        Stream.runForEach((n) =>
          Effect.suspend(() => {
            copied += n
            return options.progress?.({ kind: kind.folder, read, copied }) ?? Effect.void
          })
        ),
        Effect.withSpan("StoreMigration.copy", { attributes: { kind: kind.folder } })
      )
      const back = new Summer()
      const differing: Array<string> = []
      let differingCount = 0
      const differs = (id: string) => {
        differingCount++
        if (differing.length < DIFFERING_NAMED) differing.push(id)
      }
      yield* target.read(kind, false).pipe(Stream.runForEach((r) =>
        Effect.sync(() =>
          r.entries.forEach((e) => {
            back.add(kind.folder, e)
            const expected = wanted.get(e.id)
            if (expected === undefined) return
            wanted.delete(e.id)
            if (expected !== contentOf(kind.folder, e)) differs(e.id)
          })
        )
      ))
      // Read from the source but not on the target: not copied after all.
      for (const id of wanted.keys()) differs(id)
      const sourceSum = sum.result()
      const targetSum = back.result()
      reports.push({
        kind: kind.folder,
        plural: kind.plural,
        read,
        copied,
        present: read - copied,
        skipped,
        skippedCount,
        source: sourceSum,
        target: targetSum,
        same: differingCount === 0,
        differing,
        differingCount
      })
    }
    return reports
  })
