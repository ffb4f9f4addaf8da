/**
 * Notices: what magi tells the owner about its own failures to act, as
 * opposed to the questions agents ask. Today one kind: the waiter could not
 * carry the owner's words to the agent, and why. Each is a record of the
 * configured backend (a file under `<home>/notices/`, or a row in
 * PostgreSQL), for the web's notices page, and goes out through the
 * notification command (so the owner hears it without looking).
 */
import * as FileSystem from "@effect/platform/FileSystem"
import { Clock, Effect, Either, Layer, Option, Random, Schema, Stream } from "effect"
import * as NodePath from "node:path"
import * as RecordStore from "../store/files/RecordStore.js"
import * as StoreBackend from "../store/StoreBackend.js"
import * as ConfiguredStore from "../platform/ConfiguredStore.js"
import { Notifier } from "../questions/Notifier.js"
import * as Q from "../questions/Question.js"

export const Notice = Schema.Struct({
  id: Schema.String,
  at: Q.Timestamp,
  /** The question the notice is about. */
  question: Schema.String,
  run: Schema.String,
  seat: Schema.String,
  /** Which of the owner's inputs it is about (e.g. `Answered@3`): one notice per input and reason. */
  input: Schema.optionalWith(Schema.String, { default: () => "" }),
  /** One line for the phone. */
  summary: Schema.String,
  /** Why magi could not act, in full. */
  reason: Schema.String
})
export type Notice = typeof Notice.Type

export interface NoticesShape {
  /** Where the notices are, for messages: their folder, or the database with its password masked. */
  readonly where: string
  /**
   * Write the notice and send it through the notification command, unless
   * the same notice (question, input, reason) was already raised: a seat that
   * stays unreachable is worth one tap on the shoulder, not one per retry,
   * and a restarted daemon must not repeat it either.
   */
  readonly raise: (about: Q.Question, input: string, summary: string, reason: string) => Effect.Effect<Option.Option<Notice>>
  /** Every readable notice, newest first. */
  readonly list: Effect.Effect<ReadonlyArray<Notice>>
}

/** The owner's notices on the configured backend: `<home>/notices`, or the database. */
export class Notices extends Effect.Service<Notices>()("magi/Notices", {
  effect: Effect.suspend(() => Effect.flatMap(onBackend, make)),
  dependencies: [ConfiguredStore.layer]
}) {
  /** Notices in the folder `root`, over whichever `FileSystem` is provided. */
  static at = (root: string) => Layer.effect(Notices, Effect.suspend(() => Effect.map(Effect.flatMap(recordsAt(root), make), Notices.make)))
  static layer = Notices.Default
}

/** The notices' folder in the home, and their key in the database. */
export const NOTICES_FOLDER = "notices"

export const noticesDir = (home: { readonly dir: string }) => NodePath.join(home.dir, NOTICES_FOLDER)

const decodeNotice = Schema.decodeUnknownEither(Schema.parseJson(Notice), { errors: "first" })

/** Largest notice file read: a summary line and a reason. */
const NOTICE_FILE_MAX_BYTES = 256 * 1024

/** The notice kind in the home folder (`<home>/notices`), as `StoreBackend.records` and `magi store migrate` take a kind. */
export const noticeRecords: StoreBackend.KindShape<Notice> = {
  folder: NOTICES_FOLDER,
  kind: {
    noun: "notice",
    decode: (body: string, source: string) => Either.mapLeft(decodeNotice(body), (e) => ({ message: `${source} is not a notice magi can read: ${e.message}` })),
    encode: (notice: Notice) => JSON.stringify(notice, null, 2) + "\n",
    idOf: (notice: Notice) => notice.id,
    maxBytes: NOTICE_FILE_MAX_BYTES
  }
}

export type NoticeRecords = RecordStore.RecordStore<Notice>

/** The notices folder `root` in the shared record store (atomic writes, bounded reads, skipped files explained). */
const recordsAt = (root: string): Effect.Effect<NoticeRecords, never, FileSystem.FileSystem> => {
  const { folder: _folder, ...options } = noticeRecords
  return RecordStore.make({ ...options, root })
}

/** The notices on the configured backend. */
export const onBackend: Effect.Effect<NoticeRecords, never, StoreBackend.StoreBackend | FileSystem.FileSystem> = StoreBackend.recordsOf(noticeRecords)

/** Names of what changed among the notices on the configured backend (`<id>.json`); ends where watching is unavailable. */
export const changesOnBackend: Stream.Stream<string, never, StoreBackend.StoreBackend | FileSystem.FileSystem> = StoreBackend.changes(NOTICES_FOLDER)

const newestFirst = (notices: ReadonlyArray<Notice>) => [...notices].sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))

/**
 * Every readable notice under `root`, newest first (ids start with their
 * time). Read-only, so the web's notices page can list them without the
 * notification command `raise` needs; an unreadable file is skipped, so one
 * torn write never hides the rest.
 */
export const listIn = Effect.fn("Notices.list")(function* (root: string) {
  return yield* listOf(yield* recordsAt(root))
})

/** Every readable notice of `records`, newest first; none when they cannot be listed. */
export const listOf = (records: NoticeRecords): Effect.Effect<ReadonlyArray<Notice>> =>
  Effect.map(
    // display: the notices as listed for the owner; none when they cannot be read
    records.scan.pipe(Effect.orElseSucceed((): RecordStore.Scan<Notice> => ({ records: [], skipped: [] }))),
    (scan) => newestFirst(scan.records)
  )

export const make = Effect.fn("Notices.make")(function* (records: NoticeRecords) {
  const notifier = yield* Notifier

  const raise = (about: Q.Question, input: string, summary: string, reason: string) =>
    Effect.gen(function* () {
      const earlier = yield* list
      if (earlier.some((n) => n.question === about.id && n.input === input && n.reason === reason)) return Option.none<Notice>()
      const now = new Date(yield* Clock.currentTimeMillis)
      const draw = Effect.map(
        Random.nextIntBetween(0, 0x10000),
        (entropy): Notice => ({
          id: Q.makeId(now, entropy),
          at: Q.timestamp(now),
          question: about.id,
          run: about.run,
          seat: about.seat,
          input,
          summary,
          reason
        })
      )
      // Created new: two notices drawn in the same second with the same
      // random part must not overwrite each other, so a taken id is drawn again.
      let notice = yield* draw
      for (let tries = 0; tries < 16; tries++) {
        const created = yield* records.create(notice).pipe(
          // display: a notice that cannot be written is logged; it is sent anyway
          Effect.catchAll((e) => Effect.as(Effect.logWarning(`could not write the notice ${notice.id}: ${e.message}`), true))
        )
        if (created) break
        notice = yield* draw
      }
      // The notification reuses the question's run so `{run}` still says
      // which run it is about; the summary is the notice's, not the question's.
      yield* notifier
        .notify({ ...about, summary }, { notice: true })
        // display: a notice that cannot be sent is logged
        .pipe(Effect.catchAll((e) => Effect.logWarning(`could not send the notice for ${Q.shortId(about.id)}: ${e.message}`)))
      return Option.some(notice)
    })

  const list = listOf(records)

  return { where: records.root, raise, list } satisfies NoticesShape
})
