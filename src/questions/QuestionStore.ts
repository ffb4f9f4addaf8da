/**
 * The question store: one JSON file per question under a root directory.
 *
 * Files rather than a database because three processes read and write these
 * records (the asking agent's `magi ask`, `magi web` serving the phone, and
 * `magi answer` at a terminal) and a rename is the one cross-process atomic
 * write that needs no server. The files themselves (atomic durable writes,
 * the per-question lock, bounded reads, listing, ids) are the shared
 * `store/files/RecordStore`; this module adds what is a question's own: the
 * listing order, runs' questions, counts and panels.
 *
 * All I/O goes through `@effect/platform`'s `FileSystem`, so the same code
 * runs on a real directory and on the in-memory filesystem.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as PlatformError from "@effect/platform/Error"
import { Chunk, Clock, Data, Effect, Either, Layer, Option, Stream } from "effect"
import * as NodePath from "node:path"
import * as Q from "./Question.js"
import type { Question } from "./Question.js"
import * as History from "./History.js"
import * as Announcements from "./Announcements.js"
import { MagiHome, questionsDir } from "../platform/MagiHome.js"
import * as Claims from "../store/Claims.js"
import * as RecordStore from "../store/files/RecordStore.js"
import * as Postgres from "../store/postgres/Postgres.js"
import * as ShelfPage from "../store/ShelfPage.js"
import * as StoreBackend from "../store/StoreBackend.js"
import * as ConfiguredStore from "../platform/ConfiguredStore.js"
import type { NewerSchema } from "../store/VersionedJson.js"
import type { SqlError } from "@effect/sql/SqlError"

/**
 * Largest panel magi stores, html plus assets, checked as a total before a
 * byte is written: the failure this prevents is a half-copied panel, not a
 * full disk. Eight mebibytes is far more than a diff, a table and a few images
 * need, and small enough for a phone on a hotel link.
 */
export const PANEL_MAX_BYTES = 8 * 1024 * 1024

export { LOCK_GIVE_UP_MS, LOCK_RETRY_MS, LOCK_STALE_MS } from "../store/files/RecordLock.js"

const PANEL_DIR = ".panel"
const PANEL_TMP = ".panel.tmp"
const PANEL_HTML = "index.html"

// ---------------------------------------------------------------------------
// Errors

/** The backend said no (the disk, the database); `cause` is what it said. */
export class StoreError extends Data.TaggedError("StoreError")<{ readonly message: string; readonly cause?: unknown }> {}

/** No question, or more than one, matches what was asked for. */
export class QuestionNotFound extends Data.TaggedError("QuestionNotFound")<{ readonly message: string }> {}

/** A panel that cannot be stored; nothing was written. */
export class PanelRefused extends Data.TaggedError("PanelRefused")<{ readonly message: string }> {}

/** A panel file name that fails the rule: the web answers 400, not 404. */
export class InvalidAssetName extends Data.TaggedError("InvalidAssetName")<{ readonly message: string }> {}

/** A stored question this build cannot read: broken, or written by a newer magi (its own tag). */
export type Unreadable = Q.UnreadableQuestion | NewerSchema

export type ReadError = QuestionNotFound | Unreadable | StoreError

const io = (what: string) => (e: PlatformError.PlatformError) => new StoreError({ message: `${what}: ${e.message}`, cause: e })

const isNotFound = (e: PlatformError.PlatformError) => e._tag === "SystemError" && e.reason === "NotFound"

// ---------------------------------------------------------------------------
// The service

export interface QuestionStoreShape {
  /**
   * This machine's questions folder: the question files on the home-folder
   * backend, and on any backend the leases and notification marks, which
   * belong to the machine the waiting process runs on.
   */
  readonly root: string
  /** Where the questions are, for messages: that folder, or the database with its password masked. */
  readonly where: string
  /**
   * Whether each question was announced (`Announcements`): beside the
   * questions, on the same backend, so the "notified exactly once" claim
   * holds across every host sharing the store.
   */
  readonly announcements: Announcements.AnnouncementStore
  /** Write a question whole, atomically and durably. */
  readonly put: (q: Question) => Effect.Effect<void, StoreError>
  /** Write a new question unless its id is taken (false then: draw another id). */
  readonly create: (q: Question) => Effect.Effect<boolean, StoreError>
  /**
   * File a brand-new question under its id's lock: none when the id is taken
   * (draw another). `prepare` runs first, under the lock, for what must exist
   * before the record claims it (the panel), so two askers that drew the
   * same id never write into each other's panel either.
   */
  readonly fileNew: <E, R>(
    q: Question,
    prepare: (q: Question) => Effect.Effect<Question, E, R>
  ) => Effect.Effect<Option.Option<Question>, E | StoreError, R>
  /** Remove scratch a killed writer left, once clearly abandoned; how many. Listings do it too, now and then. */
  readonly sweep: Effect.Effect<number>
  /** Files in the store that are not readable questions, by id, with why (the listing skips them). */
  readonly skipped: Effect.Effect<ReadonlyArray<RecordStore.Skipped>, StoreError>
  /** Load by id, unique prefix, or short (suffix) id. */
  readonly get: (idOrPrefix: string) => Effect.Effect<Question, ReadError>
  /**
   * Load by its exact id: one look, where `get` first finds the id (a round
   * trip of its own on PostgreSQL). What a waiting asker re-reads with, the
   * owner's answer waiting on it.
   */
  readonly read: (id: string) => Effect.Effect<Question, ReadError>
  /**
   * Every readable question in the hot folder, open first, then newest
   * first: every question anyone can still be waiting on, and what settled
   * recently. Older history is on the month shelves (`historyPage`, `everything`).
   */
  readonly list: Effect.Effect<ReadonlyArray<Question>, StoreError>
  /**
   * Settled questions settled before `before` (the cursor a page gave, the
   * order key `History.orderKey`; none: from the newest), most recently
   * settled first, hot and archived alike, at most `limit`; with `words`,
   * only those containing every word. `next` is the cursor for the page
   * after it, none when there is no more. Reads only the page's files (and,
   * to search, the months' indexes).
   */
  readonly historyPage: (options: {
    readonly before?: string | undefined
    readonly limit: number
    readonly words?: ReadonlyArray<string>
  }) => Effect.Effect<{ readonly questions: ReadonlyArray<Question>; readonly next: string | null }, StoreError>
  /**
   * Every readable question, one at a time: the open ones (newest first),
   * then history, most recently settled first, a page at a time (hot and
   * shelved alike, as `historyPage` reads it). Never holds more than a page
   * of records in memory.
   */
  readonly everything: Stream.Stream<Question, StoreError>
  /**
   * Move every settled question `History.archivable` at the Clock's now to
   * its month's shelf, each under its lock, `batch` at a time (made durable
   * and yielding between batches); how many moved, whether more are waiting,
   * and the months filled.
   */
  readonly archiveSettled: (
    batch: number
  ) => Effect.Effect<{ readonly moved: number; readonly more: boolean; readonly months: ReadonlyArray<string> }, StoreError>
  /**
   * Bring these months' search indexes up to date (reading only the files
   * not in them yet). The archiver runs it after moving, so a search reads
   * index lines rather than the files.
   */
  readonly indexHistory: (months: Iterable<string>) => Effect.Effect<void, StoreError>
  /** Whether any question was ever moved to a month's shelf: a home written before the shelves has none. */
  readonly hasHistory: Effect.Effect<boolean>
  /**
   * Months with no index yet: a move stopped before its end (killed
   * half-way through a first move of 100,000 questions, say). The next
   * command that lists finishes it, as it would have started it, and the
   * archiver indexes them whether or not it moves anything into them.
   */
  readonly unindexedMonths: Effect.Effect<ReadonlyArray<string>>
  /** One run's open questions, newest first. */
  readonly openFor: (run: string) => Effect.Effect<ReadonlyArray<Question>, StoreError>
  /**
   * Read-modify-write one question under its lock. `change` sees the record
   * as it is on disk now, never a stale copy; returning the same object writes
   * nothing.
   */
  readonly update: <E>(
    id: string,
    change: (q: Question) => Either.Either<Question, E>
  ) => Effect.Effect<Question, E | ReadError>
  /** Abandon a run's open questions with `why`; how many were. */
  readonly abandonForRun: (run: string, why: string) => Effect.Effect<number, StoreError>
  /** Expand an id, prefix or short id to exactly one stored id. */
  readonly resolveId: (idOrPrefix: string) => Effect.Effect<string, QuestionNotFound | StoreError>
  /** Changes whenever anything in the store does; 0 before the first write. */
  readonly revision: Effect.Effect<number>
  readonly countOpen: Effect.Effect<number, StoreError>
  /** Open and not waiting on the agent: what a badge should count. */
  readonly countNeedsOwner: Effect.Effect<number, StoreError>
  /**
   * Store a panel: html plus asset files copied in under their base names.
   * Returns the question with `panel` and `assets` set; the caller `put`s it.
   */
  readonly putPanel: (
    q: Question,
    html: string,
    assets: ReadonlyArray<string>
  ) => Effect.Effect<Question, PanelRefused | StoreError>
  /** The panel's html, or none when the question has no panel. */
  readonly panelHtml: (id: string) => Effect.Effect<Option.Option<string>>
  /** One panel file: an error for a bad name, none for a missing file. */
  readonly panelAsset: (id: string, name: string) => Effect.Effect<Option.Option<Uint8Array>, InvalidAssetName | StoreError>
  /** Delete a question's panel and any scratch; fine when there is none. */
  readonly dropPanel: (id: string) => Effect.Effect<void, PanelRefused | StoreError>
  /**
   * Claims on questions (`<key>.claim` beside them, or rows): the waiter's
   * claim on delivering one question's words, so two daemons never resume
   * one seat with the same answer.
   */
  readonly claims: Claims.ClaimsShape
  /**
   * Names of files that changed in the store, as the filesystem reports them.
   * Ends quietly where watching is unavailable: callers poll as well.
   */
  readonly changes: Stream.Stream<string>
}

/**
 * The owner's store on the configured backend: `<home>/questions`, or the
 * database of `[store] url` / `MAGI_STORE_URL`.
 */
export class QuestionStore extends Effect.Service<QuestionStore>()("magi/QuestionStore", {
  effect: Effect.gen(function* () {
    const home = yield* MagiHome
    const shape: QuestionStoreShape = yield* StoreBackend.byBackend({
      files: () => make(questionsDir(home)),
      postgres: (backend) => makeOnPostgres(questionsDir(home), backend)
    })
    return shape
  }),
  dependencies: [ConfiguredStore.layer]
}) {
  /** A store at an explicit root, over whichever `FileSystem` is provided. */
  static at = (root: string) => Layer.effect(QuestionStore, Effect.map(make(root), QuestionStore.make))

  /** The configured store, as every process's layer names it. */
  static layer = QuestionStore.Default
}

/**
 * Largest question file read. A question magi writes is capped at
 * `Q.RECORD_MAX_BYTES`; four times that leaves room for a hand-edited or
 * older one, and still refuses the 100 MiB detail an agent once stored.
 */
export const QUESTION_FILE_MAX_BYTES = 4 * Q.RECORD_MAX_BYTES

const PANEL_SCRATCH = new RegExp(`\\${PANEL_TMP}-[a-z0-9]+$`)

/** Archived questions read per synchronous pass while streaming every question. */
const STREAM_CHUNK = 256

/** Moves in flight at once: libuv's four threads, kept busy, with room to spare. */
const MOVES_IN_FLIGHT = 8

/** The questions' folder in the home, and their key in the database. */
const QUESTIONS_FOLDER = "questions"

/** A delivery claim sits beside its question, `<id>.claim` (where the waiter has always kept it). */
const CLAIM_SUFFIX = ".claim"

/** The question kind, as every backend stores it. */
const questionKind = {
  noun: "question",
  label: Q.shortId,
  decode: Q.decode,
  encode: Q.encode,
  idOf: (q: Question) => q.id,
  maxBytes: QUESTION_FILE_MAX_BYTES
}

const questionErrors: RecordStore.RecordErrors<QuestionNotFound, Unreadable, StoreError> = {
  notFound: (message) => new QuestionNotFound({ message }),
  unreadable: (message) => new Q.UnreadableQuestion({ message }),
  newer: (refusal) => refusal,
  failed: (message, cause) => new StoreError({ message, cause })
}

/** Settled questions move to a shelf per month, searched by their digest. */
const questionShelves = { dir: History.HISTORY_DIR, shelfOf: History.monthOf, digest: History.digest, order: History.orderKey }

/** How a backend keeps a question's panel: the html and its assets, bytes checked and capped before a byte is written. */
interface PanelKeeping {
  /** Replace the panel of `id` with these files (the html first), all or nothing. */
  readonly write: (id: string, html: string, assets: ReadonlyArray<{ readonly name: string; readonly src: string }>) => Effect.Effect<void, StoreError>
  /** One file of the panel, none when it is not there. */
  readonly read: (id: string, name: string) => Effect.Effect<Option.Option<Uint8Array>, StoreError>
  /** The whole panel, and any scratch. */
  readonly drop: (id: string) => Effect.Effect<void, StoreError>
}

/** The folder beside a question's record holding its panel (html and assets): `<id>.panel`. */
export const panelDirName = (id: string) => `${id}${PANEL_DIR}`

/**
 * The question kind in the home folder (`<home>/questions`), as
 * `StoreBackend.records` and `magi store migrate` take a kind: its folder,
 * its record rules and its shelves.
 */
export const questionRecords: StoreBackend.KindOptions<Question, QuestionNotFound, Unreadable, StoreError> = {
  folder: QUESTIONS_FOLDER,
  kind: questionKind,
  errors: questionErrors,
  // A panel being assembled lives in its own scratch folder beside the
  // record until it is renamed into place.
  leftover: (name) => PANEL_SCRATCH.test(name),
  // Settled questions move to a shelf per month, their panel with them
  // (the panel is part of the record of why; a hot folder holding 100,000
  // panel folders would be listed on every change just the same).
  archive: { ...questionShelves, companions: (q) => (q.panel ? [panelDirName(q.id)] : []) }
}

/** Build a store rooted at `root`: the home folder's backend. */
export const make = Effect.fn("QuestionStore.make")(function* (root: string) {
  const fs = yield* FileSystem.FileSystem
  const { folder: _folder, ...options } = questionRecords
  const records = yield* RecordStore.makeKind({ ...options, root })
  const { folder: _announced, ...announcementOptions } = Announcements.announcementRecords
  const announcements = yield* RecordStore.makeKind({ ...announcementOptions, root: NodePath.join(root, NodePath.basename(Announcements.ANNOUNCED_FOLDER)) })
  const panelDir = (id: string) => NodePath.join(root, `${id}${PANEL_DIR}`)
  /** Where the panel is: beside the hot record, else beside the archived one. */
  const panelDirNow = (id: string) =>
    Effect.gen(function* () {
      const hot = panelDir(id)
      const archived = records.archivedPathOf(id)
      // fallback: a hot path that cannot be looked at is used; the read there fails loudly
      if (archived === undefined || (yield* fs.exists(hot).pipe(Effect.orElseSucceed(() => false)))) return hot
      return NodePath.join(NodePath.dirname(archived), `${id}${PANEL_DIR}`)
    })
  const ensureRoot = fs.makeDirectory(root, { recursive: true }).pipe(Effect.mapError(io(`create ${root}`)))

  const clearDir = (path: string) =>
    fs.remove(path, { recursive: true }).pipe(
      Effect.catchIf(isNotFound, () => Effect.void),
      Effect.mapError(io(`remove ${path}`))
    )

  const panels: PanelKeeping = {
    write: (id, html, named) =>
      Effect.gen(function* () {
        // A scratch directory of this call's own: two calls assembling at once
        // must not write into each other's half-built panel.
        const tmp = NodePath.join(root, `${id}${PANEL_TMP}-${Math.random().toString(36).slice(2, 10)}`)
        const dir = panelDir(id)
        yield* ensureRoot
        yield* clearDir(tmp)
        const fill = Effect.gen(function* () {
          yield* fs.makeDirectory(tmp).pipe(Effect.mapError(io(`create ${tmp}`)))
          yield* fs.writeFileString(NodePath.join(tmp, PANEL_HTML), html).pipe(Effect.mapError(io(`write panel html`)))
          for (const { name, src } of named) {
            // Copied, not referenced: the worktree the agent authored it in is
            // deleted later, and the panel is the record of why.
            yield* fs.copyFile(src, NodePath.join(tmp, name)).pipe(Effect.mapError(io(`copy ${src}`)))
          }
        })
        // A copy that dies halfway must neither become the panel nor leave
        // scratch for the next call to inherit.
        // fallback: best-effort removal of a scratch folder; the fill's own failure is reported
        yield* fill.pipe(Effect.tapError(() => clearDir(tmp).pipe(Effect.ignore)))
        yield* clearDir(dir)
        yield* fs.rename(tmp, dir).pipe(Effect.mapError(io(`move panel into ${dir}`)))
      }),
    read: (id, name) =>
      Effect.gen(function* () {
        const path = NodePath.join(yield* panelDirNow(id), name)
        return yield* fs.readFile(path).pipe(
          Effect.map(Option.some),
          Effect.catchIf(isNotFound, () => Effect.succeedNone),
          Effect.mapError(io(`read ${path}`))
        )
      }),
    drop: (id) =>
      Effect.zipRight(
        clearDir(panelDir(id)),
        // Any scratch a killed `putPanel` left behind.
        fs.readDirectory(root).pipe(
          // display: the panel's files listed; none when the folder cannot be read
          Effect.orElseSucceed((): string[] => []),
          Effect.flatMap((names) =>
            Effect.forEach(
              names.filter((n) => n.startsWith(`${id}${PANEL_TMP}`)),
              (n) => clearDir(NodePath.join(root, n)),
              { discard: true }
            )
          )
        )
      )
  }

  const changes = StoreBackend.watchFolder(fs, root)

  const claims = yield* Claims.makeFiles((key) => NodePath.join(root, `${key}${CLAIM_SUFFIX}`))
  return yield* assemble({ root, where: root, records, announcements, panels, changes, claims })
})

/**
 * A store on PostgreSQL: the records and their panels in the database at
 * `url`; `root` is the home's questions folder, for what stays on this
 * machine (the leases a waiting asker beats, the notification marks).
 * Changes are heard through `LISTEN`, as `<id>.json` names like the folder's.
 */
export const makeOnPostgres = Effect.fn("QuestionStore.makeOnPostgres")(function* (
  root: string,
  backend: StoreBackend.PostgresBackend
) {
  const sql = backend.sql
  const fs = yield* FileSystem.FileSystem
  // The records, their change feed and the delivery claims as the backend
  // makes them for every kind.
  const onBackend = <A, E>(effect: Effect.Effect<A, E, StoreBackend.StoreBackend | FileSystem.FileSystem>) =>
    effect.pipe(Effect.provideService(StoreBackend.StoreBackend, backend), Effect.provideService(FileSystem.FileSystem, fs))
  const records = yield* onBackend(StoreBackend.records(questionRecords))
  const announcements = yield* onBackend(StoreBackend.records(Announcements.announcementRecords))
  const claims = yield* onBackend(StoreBackend.claims(QUESTIONS_FOLDER, CLAIM_SUFFIX))
  const failed = (what: string) => (e: SqlError) => new StoreError({ message: `${what} in PostgreSQL at ${backend.where}: ${Postgres.sqlWords(e)}`, cause: e })
  const panels: PanelKeeping = {
    write: (id, html, named) =>
      Effect.gen(function* () {
        // Read before the transaction: a file that cannot be read leaves the old panel as it was.
        const files: Array<{ readonly name: string; readonly bytes: Uint8Array }> = [{ name: PANEL_HTML, bytes: new TextEncoder().encode(html) }]
        for (const { name, src } of named) files.push({ name, bytes: yield* fs.readFile(src).pipe(Effect.mapError(io(`copy ${src}`))) })
        // One transaction: the old panel and the new one never mix, and a
        // failure leaves the old one whole.
        yield* sql
          .withTransaction(
            Effect.zipRight(
              sql`DELETE FROM magi_files WHERE kind = 'questions' AND owner = ${id}`,
              Effect.forEach(files, (file) => sql`INSERT INTO magi_files (kind, owner, name, bytes) VALUES ('questions', ${id}, ${file.name}, ${file.bytes})`, {
                discard: true
              })
            )
          )
          .pipe(Effect.mapError(failed(`store the panel of question ${Q.shortId(id)}`)))
      }),
    read: (id, name) =>
      sql<{ readonly bytes: Uint8Array }>`SELECT bytes FROM magi_files WHERE kind = 'questions' AND owner = ${id} AND name = ${name}`.pipe(
        Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), (r) => new Uint8Array(r.bytes))),
        Effect.mapError(failed(`read the panel of question ${Q.shortId(id)}`))
      ),
    drop: (id) =>
      sql`DELETE FROM magi_files WHERE kind = 'questions' AND owner = ${id}`.pipe(
        Effect.asVoid,
        Effect.mapError(failed(`remove the panel of question ${Q.shortId(id)}`))
      )
  }
  const changes = StoreBackend.changes(QUESTIONS_FOLDER).pipe(
    Stream.provideService(StoreBackend.StoreBackend, backend),
    Stream.provideService(FileSystem.FileSystem, fs)
  )
  return yield* assemble({ root, where: `PostgreSQL at ${backend.where}`, records, announcements, panels, changes, claims })
})

/** What every backend shares: the listing order, runs' questions, counts, panels' rules and history. */
const assemble = Effect.fn("QuestionStore.assemble")(function* (parts: {
  readonly root: string
  readonly where: string
  readonly records: RecordStore.KindRecords<Question, QuestionNotFound, Unreadable, StoreError>
  readonly announcements: Announcements.AnnouncementStore
  readonly panels: PanelKeeping
  readonly changes: Stream.Stream<string>
  readonly claims: Claims.ClaimsShape
}) {
  const fs = yield* FileSystem.FileSystem
  const { root, where, records, announcements, panels, changes, claims } = parts

  const put = records.put

  const byOpenThenNewest = (a: Question, b: Question) => {
    const rank = (q: Question) => (Q.isOpen(q) ? 0 : 1)
    return rank(a) - rank(b) || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0)
  }

  /** Sorted once per listing the record store takes; reused while it reuses it. */
  let sorted: { readonly from: RecordStore.Scan<Question>; readonly questions: ReadonlyArray<Question> } | undefined
  const sortedOf = (scan: RecordStore.Scan<Question>) => {
    if (sorted?.from !== scan) sorted = { from: scan, questions: [...scan.records].sort(byOpenThenNewest) }
    return sorted.questions
  }
  const list = Effect.map(records.scan, sortedOf).pipe(Effect.withSpan("QuestionStore.list"))

  const fileNew = <E, R>(q: Question, prepare: (q: Question) => Effect.Effect<Question, E, R>) =>
    records.withLock(
      q.id,
      Effect.gen(function* () {
        // fallback: a record that cannot be looked at is taken as there, so nothing is filed over it
        if (yield* records.exists(q.id).pipe(Effect.orElseSucceed(() => true))) return Option.none<Question>()
        const ready = yield* prepare(q)
        return (yield* records.create(ready)) ? Option.some(ready) : Option.none<Question>()
      })
    )

  const resolveId = records.resolve
  const get = records.get
  const read = records.read

  const update = <E>(wanted: string, change: (q: Question) => Either.Either<Question, E>) =>
    records.update(wanted, change).pipe(Effect.withSpan("QuestionStore.update", { attributes: { id: wanted } }))

  const openFor = (run: string) => Effect.map(list, (all) => all.filter((q) => Q.isOpen(q) && q.run === run))

  const abandonForRun = (run: string, why: string) =>
    Effect.gen(function* () {
      let abandoned = 0
      const now = new Date(yield* Clock.currentTimeMillis)
      for (const q of yield* openFor(run)) {
        const after = yield* update(q.id, (fresh) => Either.right(Q.abandon(fresh, why, now))).pipe(
          // Gone or unreadable since the listing: nothing left to abandon.
          Effect.catchTags({ QuestionNotFound: () => Effect.succeed(q), UnreadableQuestion: () => Effect.succeed(q), NewerSchema: () => Effect.succeed(q) })
        )
        if (Q.isOpen(q) && after.status === "abandoned") abandoned++
      }
      return abandoned
    })

  const revision = records.revision

  const countOpen = Effect.map(list, (all) => all.filter(Q.isOpen).length)
  const countNeedsOwner = Effect.map(list, (all) => all.filter((q) => Q.isOpen(q) && !Q.waitingOnAgent(q)).length)

  // -- panels ---------------------------------------------------------------

  const badId = (id: string) => new PanelRefused({ message: `question id \`${id}\` is not a name magi will build a panel path from` })

  const putPanel = (q: Question, html: string, assets: ReadonlyArray<string>) =>
    Effect.gen(function* () {
      if (!Q.validAssetName(q.id)) return yield* badId(q.id)
      if (html.trim() === "")
        return yield* new PanelRefused({
          message: `question ${Q.shortId(q.id)} was handed an empty panel; an empty frame reads to the owner as "the agent had nothing to say", which is a lie`
        })
      // Names, then sizes, then writing, so no refusal can leave a partial
      // panel behind.
      const named: Array<{ name: string; src: string }> = []
      for (const src of assets) {
        const name = NodePath.basename(src)
        if (!Q.validAssetName(name))
          return yield* new PanelRefused({
            message: `panel asset \`${src}\` cannot be stored: a panel file name must match ${Q.ASSET_NAME_RULE}`
          })
        const twin = named.find((n) => n.name === name)
        if (twin)
          return yield* new PanelRefused({
            message: `two panel assets are both named \`${name}\` - ${twin.src} and ${src} - and the panel can only show one of them; rename one at the source`
          })
        named.push({ name, src })
      }
      let total = Buffer.byteLength(html, "utf8")
      for (const { src } of named) {
        // `stat` follows links, so the size counted is the size copied.
        const info = yield* fs.stat(src).pipe(
          // A mistyped name is the usual cause: said in one line, not as a stack of errno words.
          Effect.mapError((e) => isNotFound(e) ? new PanelRefused({ message: `panel asset ${src}: there is no such file` }) : io(`stat panel asset ${src}`)(e))
        )
        if (info.type !== "File")
          return yield* new PanelRefused({
            message: `panel asset \`${src}\` is not a file; a panel is html plus files copied beside it`
          })
        total += Number(info.size)
      }
      if (total > PANEL_MAX_BYTES)
        return yield* new PanelRefused({
          message: `panel for question ${Q.shortId(q.id)} is ${total} bytes, over magi's cap of ${PANEL_MAX_BYTES} bytes; nothing was written`
        })

      yield* panels.write(q.id, html, named)
      return { ...q, panel: true, assets: named.map((n) => n.name).sort() }
    }).pipe(Effect.withSpan("QuestionStore.putPanel"))

  const panelHtml = (id: string) =>
    Q.validAssetName(id)
      ? panels.read(id, PANEL_HTML).pipe(
        Effect.map(Option.map((bytes) => new TextDecoder().decode(bytes))),
        // display: a panel that cannot be read is shown as none
        Effect.orElseSucceed(() => Option.none<string>())
      )
      : Effect.succeedNone

  const panelAsset = (id: string, name: string) =>
    Effect.gen(function* () {
      // Refused before the filesystem is touched: the name comes from a URL.
      if (!Q.validAssetName(name))
        return yield* new InvalidAssetName({ message: `\`${name}\` is not a panel file name; it must match ${Q.ASSET_NAME_RULE}` })
      if (!Q.validAssetName(id)) return Option.none<Uint8Array>()
      return yield* panels.read(id, name)
    })

  const dropPanel = (id: string) => (Q.validAssetName(id) ? panels.drop(id) : Effect.fail(badId(id)))

  // -- history --------------------------------------------------------------

  const historyPage = (options: {
    readonly before?: string | undefined
    readonly limit: number
    readonly words?: ReadonlyArray<string>
  }) =>
    Effect.gen(function* () {
      const { before, limit } = options
      const wanted = options.words ?? []
      // Newest settled first: `before` is the order key (`History.orderKey`) of the last one shown.
      const older = (key: string) => before === undefined || key < before
      // One listing for the whole page (one look at the store's revision).
      const scanned = yield* records.scan
      const hotAll = sortedOf(scanned)
      const inHot = new Set(hotAll.map((q) => q.id))
      for (const k of scanned.skipped) inHot.add(k.id)
      const found = yield* ShelfPage.page(records, {
        hot: hotAll.filter((q) => !Q.isOpen(q) && older(History.orderKey(q)) && (wanted.length === 0 || History.matches(History.searchText(q), wanted))),
        inHot,
        before,
        limit,
        words: wanted,
        idOf: (q) => q.id,
        orderOf: History.orderKey,
        shelfOf: History.monthOf
      })
      return { questions: found.records, next: found.next }
    }).pipe(Effect.withSpan("QuestionStore.historyPage"))

  const everything: Stream.Stream<Question, StoreError> = Stream.concat(
    Stream.fromEffect(list).pipe(Stream.mapConcat((qs) => qs.filter(Q.isOpen))),
    // History a page at a time, in the order the page shows it.
    Stream.paginateChunkEffect(undefined as string | undefined, (before) =>
      Effect.map(historyPage({ before, limit: STREAM_CHUNK }), (page) => [
        Chunk.fromIterable(page.questions),
        page.next === null ? Option.none() : Option.some(page.next)
      ]))
  )

  const archiveSettled = (batch: number) =>
    Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      // The hot folder's names a batch at a time, each batch's records
      // judged and moved before the next names are read: never the whole
      // folder in memory, neither its records (a first move of 100,000
      // questions held them all, and the process kept the memory after)
      // nor its names (100,000 ids held through the move were most of what
      // it kept alive, and at 1,000,000 they alone would pass the goal),
      // and never a listing per batch (quadratic). Names the move renames
      // away are behind the cursor; a question written meanwhile may wait
      // for the next round.
      let moved = 0
      const months = new Set<string>()
      yield* records.forEachIdBatch(batch, (chunk) =>
        Effect.gen(function* () {
          // Only the ids of the due ones are kept, each record let go as soon
          // as it is judged: a batch of 500 decoded questions held through the
          // moves' file operations outlived the young generation's collections
          // and was promoted, so the old generation filled with them between
          // full collections (the peak of a first move was that garbage).
          const due = yield* Effect.filter(
            chunk,
            (id) => Effect.map(Effect.option(records.read(id)), (q) => Option.isSome(q) && History.archivable(q.value, now))
          )
          const done = yield* Effect.forEach(
            due,
            (id) =>
              // Judged again under the lock, on the record as it is then: an
              // answer or an abandonment that landed since the read decides.
              records.archive(id, (fresh) => History.archivable(fresh, now)).pipe(
                // One question that cannot move (a lock held past the give-up) waits for the next round.
                // display: a question that could not be moved is logged and stays hot
                Effect.catchAll((e) => Effect.as(Effect.logWarning(`could not move question ${Q.shortId(id)} to history: ${e.message}`), false))
              ),
            // A move is a few file operations, each a round trip through
            // libuv's thread pool; several in flight keep its four threads busy.
            { concurrency: MOVES_IN_FLIGHT }
          )
          moved += done.filter((d) => d).length
          const touched = new Set(due.flatMap((id) => History.monthOf(id) ?? []))
          for (const m of touched) months.add(m)
          yield* records.flushShelves(touched)
          // Between batches the process serves whatever else is waiting.
          yield* Effect.yieldNow()
        }))
      // The months' indexes are the caller's (`indexHistory`), once, after.
      return { moved, more: false, months: [...months] }
    }).pipe(Effect.withSpan("QuestionStore.archiveSettled"))

  return {
    root,
    where,
    announcements,
    put,
    create: records.create,
    fileNew,
    sweep: records.sweep,
    skipped: Effect.map(records.scan, (scan) => scan.skipped),
    get,
    read,
    list,
    historyPage,
    everything,
    archiveSettled,
    // Written as made, one month after another, none kept (`indexShelf`).
    indexHistory: (months: Iterable<string>) => Effect.forEach([...months], (m) => records.indexShelf(m), { discard: true }),
    // display: "has history" errs towards showing the history link
    hasHistory: Effect.map(records.shelves, (s) => s.length > 0).pipe(Effect.orElseSucceed(() => true)),
    // display: months listed for indexing; none when they cannot be read
    unindexedMonths: records.unindexedShelves.pipe(Effect.orElseSucceed((): ReadonlyArray<string> => [])),
    openFor,
    update,
    abandonForRun,
    resolveId,
    revision,
    countOpen,
    countNeedsOwner,
    putPanel,
    panelHtml,
    panelAsset,
    dropPanel,
    claims,
    changes
  } satisfies QuestionStoreShape
})
