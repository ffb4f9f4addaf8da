/**
 * Whether the owner was told about a question: one record per question, in
 * the store every host shares, so a question is notified exactly once
 * installation-wide even when its asker could not do it.
 *
 * The asker notifies (it knows first), but an agent in a network-less
 * sandbox cannot reach ntfy or a webhook, and an asker can be killed in the
 * middle of the twenty seconds a notification may take. So the asker writes
 * what happened: `sending` before it tries, then `sent` or `failed`. A loop
 * (`magi serve`, `magi web`, on any host), which runs outside any sandbox,
 * notifies the questions whose asker failed, or whose `sending` is older than
 * any notification can take (the asker died trying), and records its own
 * attempt, so it never tries twice and never repeats an asker's success.
 *
 * Every `sending` is a claim (`claim`): taken under the record's writer
 * claim against the record as it is then, so of two processes — two askers
 * of one thread length, or two hosts' loops seeing the same failure — exactly
 * one is told to send. The record is a kind of its own
 * (`questions/announced/<id>.json` in the home, rows of that kind in
 * PostgreSQL): writing one is not a change to the question.
 */
import { Clock, Data, Duration, Effect, Either, Option, Schema } from "effect"
import * as NodePath from "node:path"
import type * as RecordStore from "../store/files/RecordStore.js"
import { parseVersioned } from "../store/VersionedJson.js"
import * as Q from "./Question.js"
import { NOTIFY_TIMEOUT } from "./Notifier.js"

/** The kind's folder in the home (where the per-home marks always were) and its key in the database. */
export const ANNOUNCED_FOLDER = "questions/announced"

/** A `sending` older than this was left by an asker that died mid-notification: the notifier's own limit, and room to write. */
export const SENDING_STALE = Duration.sum(NOTIFY_TIMEOUT, Duration.seconds(10))

export const ANNOUNCEMENT_SCHEMA = 1

export const Announcement = Schema.Struct({
  schema: Schema.optionalWith(Schema.Number, { default: () => ANNOUNCEMENT_SCHEMA }),
  /** The question's id (a mark written before the store kept them has none: its file name says it). */
  question: Schema.optionalWith(Schema.String, { default: () => "" }),
  /** The thread length announced: a reply on the thread is a new announcement. */
  turns: Schema.Number,
  state: Schema.Literal("sending", "sent", "failed"),
  by: Schema.Literal("asker", "loop"),
  at: Q.Timestamp,
  /** Which claim wrote it: a late `sent` from a claim taken over since changes nothing. */
  token: Schema.optionalWith(Schema.String, { default: () => "" }),
  /** The host that sent (or tried), for the owner reading the record. */
  host: Schema.optionalWith(Schema.String, { default: () => "" }),
  /** Why it failed, for the owner reading the record. */
  reason: Schema.optionalWith(Schema.String, { default: () => "" })
})
export type Announcement = typeof Announcement.Type

export class AnnouncementError extends Data.TaggedError("AnnouncementError")<{ readonly message: string; readonly cause?: unknown }> {}

const decodeStrict = Schema.decodeUnknownEither(Announcement, { onExcessProperty: "ignore", errors: "first" })

export const decode = (body: string, source: string): Either.Either<Announcement, AnnouncementError> =>
  parseVersioned(body, source, ANNOUNCEMENT_SCHEMA, () => `announcement ${source}`).pipe(
    Either.mapLeft((e) => new AnnouncementError({ message: e.message, cause: e })),
    Either.flatMap((raw) =>
      Either.mapLeft(decodeStrict(raw), (e) => new AnnouncementError({ message: `${source} is not an announcement magi can read: ${e.message}` }))
    ),
    // A mark from before the store kept them is named by its file only.
    Either.map((a) => (a.question !== "" || !source.endsWith(".json") ? a : { ...a, question: NodePath.basename(source, ".json") }))
  )

export const encode = (a: Announcement): string => JSON.stringify(a) + "\n"

/** The kind, as `StoreBackend.records` and `RecordStore.make` take it. */
export const announcementRecords = {
  folder: ANNOUNCED_FOLDER,
  kind: { noun: "announcement", decode, encode, idOf: (a: Announcement) => a.question, maxBytes: 64 * 1024 },
  errors: {
    notFound: (message: string) => new AnnouncementError({ message }),
    unreadable: (message: string) => new AnnouncementError({ message }),
    failed: (message: string, cause?: unknown) => new AnnouncementError({ message, cause })
  }
} as const

export type AnnouncementStore = RecordStore.KindRecords<Announcement, AnnouncementError, AnnouncementError, AnnouncementError>

/**
 * Should the loop notify `q` now? Only an open question whose current
 * announcement the asker started and did not finish: it failed, or it has
 * been `sending` for longer than a notification can take. Anything a loop
 * itself tried, anything sent, anything never started (a reply inside the
 * quiet window, a question from an older magi) is left alone.
 */
export const loopShouldNotify = (q: Q.Question, record: Option.Option<Announcement>, now: Date): boolean => {
  if (!Q.isOpen(q) || Option.isNone(record)) return false
  const r = record.value
  if (r.by !== "asker" || r.turns !== q.thread.length) return false
  if (r.state === "failed") return true
  return r.state === "sending" && now.getTime() - Date.parse(r.at) > Duration.toMillis(SENDING_STALE)
}

/** The asker announces a thread length nobody announced yet: a second asker of the same turn (a retried call) stays quiet. */
export const askerShouldNotify = (q: Q.Question, record: Option.Option<Announcement>): boolean => Option.isNone(record) || record.value.turns < q.thread.length

/** The record of `id`, or none (never written, or unreadable: nobody claimed it in a way this build reads). */
export const read = (records: AnnouncementStore, id: string): Effect.Effect<Option.Option<Announcement>> =>
  records.read(id).pipe(
    Effect.map(Option.some),
    // fallback: an announcement that cannot be read is "none yet"; the claim on it decides who sends
    Effect.catchAll((e) => Effect.as(Effect.logDebug(`no readable announcement of ${id}: ${e.message}`), Option.none<Announcement>()))
  )

class NotYours extends Data.TaggedError("NotYours")<{}> {}

/**
 * Take `q`'s announcement for `by` when `eligible` holds of the record as it
 * is at that instant (under its writer claim): the `sending` record this
 * process now owns, or none when another process has it or had it. Fails
 * when the store cannot be reached.
 */
export const claim = (
  records: AnnouncementStore,
  q: Q.Question,
  by: Announcement["by"],
  host: string,
  eligible: (current: Option.Option<Announcement>) => boolean
): Effect.Effect<Option.Option<Announcement>, AnnouncementError> =>
  Effect.gen(function* () {
    const mine: Announcement = {
      schema: ANNOUNCEMENT_SCHEMA,
      question: q.id,
      turns: q.thread.length,
      state: "sending",
      by,
      at: Q.timestamp(new Date(yield* Clock.currentTimeMillis)),
      token: Math.random().toString(36).slice(2, 12),
      host,
      reason: ""
    }
    if (!(yield* records.exists(q.id))) {
      if (!eligible(Option.none())) return Option.none()
      // The first announcement: a create, which exactly one writer wins.
      if (yield* records.create(mine)) return Option.some(mine)
    }
    return yield* records.update(q.id, (current) => (eligible(Option.some(current)) ? Either.right(mine) : Either.left(new NotYours()))).pipe(
      Effect.map(Option.some),
      Effect.catchTag("NotYours", () => Effect.succeed(Option.none<Announcement>()))
    )
  }).pipe(
    // A connection lost mid-transaction can surface as a defect of the
    // driver: still only "the store could not say", never a crash of the ask.
    Effect.catchAllDefect((defect) => Effect.fail(new AnnouncementError({ message: `the store failed: ${String(defect)}`, cause: defect })))
  )

/** Record how the claimed attempt ended, unless another process has taken the announcement over since. Best effort. */
export const finish = (
  records: AnnouncementStore,
  claimed: Announcement,
  state: "sent" | "failed",
  reason = ""
): Effect.Effect<void> =>
  Effect.gen(function* () {
    const at = Q.timestamp(new Date(yield* Clock.currentTimeMillis))
    yield* records.update(claimed.question, (current) =>
      current.token === claimed.token ? Either.right({ ...current, state, reason, at }) : Either.left(new NotYours()))
    // display: a failed announcement is logged; the claim lets another try
  }).pipe(Effect.catchAllCause((cause) =>
    Effect.logDebug(`could not record the announcement of ${claimed.question}`, cause)
  ))
