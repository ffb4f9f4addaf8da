/**
 * Whether the owner was told about a question: one record per question, so
 * a question is notified exactly once even when its asker could not do it.
 *
 * The asker notifies (it knows first), but an agent in a network-less
 * sandbox cannot reach ntfy or a webhook, and an asker can be killed in the
 * middle of the twenty seconds a notification may take. So the asker writes
 * what happened: `sending` before it tries, then `sent` or `failed`. The loop
 * (`magi serve`, `magi web`), which runs outside any sandbox, notifies the
 * questions whose asker failed, or whose `sending` is older than any
 * notification can take (the asker died trying), and records its own
 * attempt, so it never tries twice and never repeats an asker's success.
 *
 * Records live in `questions/announced/<id>.json`: a folder of its own, like
 * the leases, so writing one is not a change to the questions.
 */
import { FileSystem } from "@effect/platform"
import { Clock, Duration, Effect, Option, Schema } from "effect"
import * as NodePath from "node:path"
import { writeAtomically } from "../platform/AtomicFile.js"
import * as Q from "./Question.js"
import { NOTIFY_TIMEOUT } from "./Notifier.js"

export const ANNOUNCED_DIR = "announced"

/** A `sending` older than this was left by an asker that died mid-notification: the notifier's own limit, and room to write. */
export const SENDING_STALE = Duration.sum(NOTIFY_TIMEOUT, Duration.seconds(10))

export const Announcement = Schema.Struct({
  /** The thread length announced: a reply on the thread is a new announcement. */
  turns: Schema.Number,
  state: Schema.Literal("sending", "sent", "failed"),
  by: Schema.Literal("asker", "loop"),
  at: Q.Timestamp,
  /** Why it failed, for the owner reading the file. */
  reason: Schema.optionalWith(Schema.String, { default: () => "" })
})
export type Announcement = typeof Announcement.Type

const decode = Schema.decodeUnknownOption(Schema.parseJson(Announcement))

export const announcementPath = (root: string, id: string) => NodePath.join(root, ANNOUNCED_DIR, `${id}.json`)

/**
 * Should the loop notify `q` now? Only an open question whose current
 * announcement the asker started and did not finish: it failed, or it has
 * been `sending` for longer than a notification can take. Anything the loop
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

/** Write what happened to `id`'s announcement. Best effort: a lost record costs at most a second notification. */
export const write = Effect.fn("Announcements.write")(function* (
  root: string,
  id: string,
  record: Omit<Announcement, "at" | "reason"> & { readonly reason?: string }
) {
  const at = Q.timestamp(new Date(yield* Clock.currentTimeMillis))
  const body: Announcement = { reason: "", ...record, at }
  yield* writeAtomically(announcementPath(root, id), JSON.stringify(body) + "\n").pipe(
    Effect.catchAll((e) => Effect.logDebug(`could not record the announcement of ${id}: ${e.message}`))
  )
})

export const read = Effect.fn("Announcements.read")(function* (root: string, id: string) {
  const fs = yield* FileSystem.FileSystem
  const body = yield* fs.readFileString(announcementPath(root, id)).pipe(Effect.option)
  return Option.flatMap(body, decode)
})
