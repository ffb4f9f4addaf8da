/**
 * Which questions are history, where history is kept, and how it is searched:
 * the question's own rules for the record store's archive. No I/O here.
 *
 * The hot folder (`<home>/questions/`) is what every listing reads whole: the
 * waiter's tick, `magi answer`, the web's first page. A year of use is
 * 100,000 settled questions, and reading each on every listing is what made
 * the page and the terminal slow. So a question nobody can still be waiting
 * on moves to `<home>/questions/history/<YYYY-MM>/<id>.json`, the month its id
 * names; lookups by id find it there, and the history pages read only the
 * files they show.
 */
import * as Q from "./Question.js"
import type { Question } from "./Question.js"

/** The folder inside the questions folder holding one shelf per month. */
export const HISTORY_DIR = "history"

/**
 * How long a settled question stays hot after its last recorded activity.
 * The page shows "just decided" on the card it answered and the asker reads
 * the answer once more as it finishes; an hour is far beyond both, and hot
 * or archived, a lookup by id finds it either way: the grace only keeps the
 * move away from the moments a record is most likely being read.
 */
export const GRACE_MS = 60 * 60 * 1000

/**
 * An answer the agent never read stays hot this long, since the waiter (which
 * lists only the hot folder) is still trying to carry it. Past it nobody is
 * coming for it: the seat's worktree is long gone and the waiter has given
 * up (its notices say so), so it is history like the rest, and still shown
 * by id with "not delivered".
 */
export const UNDELIVERED_KEPT_MS = 30 * 24 * 60 * 60 * 1000

/** `YYYY-MM` from an id `YYYYMMDD-HHMMSS-xxxx`; none for an id of another shape (it stays hot). */
export const monthOf = (id: string): string | undefined => {
  const m = /^(\d{4})(\d{2})\d{2}-\d{6}-/.exec(id)
  return m === null ? undefined : `${m[1]}-${m[2]}`
}

const at = (stamp: string | null | undefined): number => {
  const ms = stamp === null || stamp === undefined ? Number.NaN : Date.parse(stamp)
  return Number.isNaN(ms) ? Number.NEGATIVE_INFINITY : ms
}

/**
 * The last moment the record says anything happened: asked, answered, or a
 * thread turn. An abandonment carries no time of its own, so it counts from
 * the activity before it; that only makes an abandoned question (whose asker
 * has already gone) move sooner.
 */
export const lastActivity = (q: Question): number => Math.max(at(q.asked_at), at(q.answered_at), ...q.thread.map((t) => at(t.at)))

/**
 * When `q` was settled: answered, or abandoned (a deadline passing is an
 * abandonment). A question abandoned by an older build recorded no moment,
 * so its last activity stands in: the latest it can be known to be settled
 * by. None while open.
 */
export const settledAt = (q: Question): number | undefined => {
  if (Q.isOpen(q)) return undefined
  const recorded = at(q.answered_at ?? q.abandoned_at)
  return recorded === Number.NEGATIVE_INFINITY ? lastActivity(q) : recorded
}

/**
 * Where `q` stands in history, newest settled greatest: the moment it was
 * settled, then its id (two settled in one second keep one order). Keys
 * compare as strings, so a store can keep and sort them without knowing
 * what a question is; they are also the cursor of a history page.
 */
export const orderKey = (q: Question): string => {
  const settled = settledAt(q) ?? at(q.asked_at)
  const stamp = Number.isFinite(settled) ? new Date(settled).toISOString() : "0000-00-00T00:00:00.000Z"
  return `${stamp}_${q.id}`
}

/** May `q` move to history at `now`? Never while open; never while its answer may still be on its way. */
export const archivable = (q: Question, now: number): boolean => {
  if (monthOf(q.id) === undefined || Q.isOpen(q)) return false
  const quiet = now - lastActivity(q)
  if (!Q.owedToAgent(q)) return quiet >= GRACE_MS
  return now - at(q.answered_at) >= UNDELIVERED_KEPT_MS
}

/**
 * Longest digest kept per question in a month's index. The summary, run, id
 * and answer come first and are short; a long detail or thread is cut here,
 * so a month of 10,000 questions stays a few megabytes to read per search.
 * A word only found past the cut is not found in archived questions.
 */
export const DIGEST_MAX_CHARS = 1024

/** Everything a search matches on, lowercased: id, run, status, summary, answer, detail, thread. */
export const searchText = (q: Question): string =>
  [q.id, q.run, q.status, q.summary, Q.resolution(q) ?? "", q.detail, ...q.thread.map((t) => t.body)].join("\n").toLowerCase()

/** What a month's index keeps of one question. */
export const digest = (q: Question): string => searchText(q).slice(0, DIGEST_MAX_CHARS)

/** The words of a search box, lowercased; empty words dropped. */
export const words = (query: string): ReadonlyArray<string> =>
  query
    .toLowerCase()
    .split(/\s+/)
    .filter((w) => w !== "")

/** Does `text` (already lowercased) contain every word? */
export const matches = (text: string, wanted: ReadonlyArray<string>): boolean => wanted.every((w) => text.includes(w))
