/**
 * The owner's words to a seat (`magi say`, the run page's box), kept in the
 * run's record, and the one rule that hands them to a turn.
 *
 * A word is written into the run before `magi say` returns, so it survives
 * any process: while the seat's turn runs it stays `queued` (editable,
 * cancellable), and the next turn of that seat takes it. Taking is recorded
 * in the same write that counts the turn, under the seat's lock, before the
 * agent starts (`RunDriver.turn`): a word is given to exactly one turn, and a
 * kill of that turn never gives it again (its prompt artifact keeps it).
 * Pure: values in, values out; the table tests hold every rule.
 */
import { Either, Schema } from "effect"
import * as Q from "../questions/Question.js"
import type { RunStatus } from "./RunStatus.js"

export const SaidState = Schema.Literal("queued", "delivered", "cancelled", "refused")
export type SaidState = typeof SaidState.Type

export const SaidWord = Schema.Struct({
  /** Its number in the run, from 1: what `--edit N` and `--cancel N` name. */
  n: Schema.Number,
  seat: Schema.String,
  text: Schema.String,
  at: Q.Timestamp,
  state: SaidState,
  edited_at: Schema.optional(Q.Timestamp),
  /** When and in which of the seat's turns it was given to the agent. */
  delivered_at: Schema.optional(Q.Timestamp),
  turn: Schema.optional(Schema.Number),
  /** Why it could not be given (the seat cannot be resumed). */
  why: Schema.optional(Schema.String),
  /** Images the owner attached: asset names in the run's `images/` folder (`platform/ImageAssets.ts`). */
  images: Schema.optional(Schema.Array(Schema.String))
})
export type SaidWord = typeof SaidWord.Type

/** The most one word may hold: a message, not a document (16 KiB of characters). */
export const SAID_MAX_CHARS = 16 * 1024
/** The most words waiting at once in one run: the record stays small whatever a script sends. */
export const MAX_QUEUED = 20
/** The most words a run keeps, the oldest settled ones dropped first; queued ones are never dropped. */
export const MAX_KEPT = 200

/** The folder of a run's images, under the run's own folder. */
export const IMAGES_DIR = "images"
/** The most images one word carries. */
export const MAX_IMAGES = 4

/** Seat keys and run ids are parts of paths: only these characters are taken from outside. */
const SAFE_PART = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/
export const safePart = (s: string): boolean => SAFE_PART.test(s)

/** What the rules read of a run. */
export interface RunView {
  readonly id: string
  readonly status: RunStatus
  readonly seats: ReadonlyArray<{ readonly key: string }>
  readonly said?: ReadonlyArray<SaidWord> | undefined
  readonly removed_at?: string | undefined
}

/** Why a run takes no word now, or undefined when it does. */
export const refusal = (run: RunView): string | undefined => {
  const short = Q.shortId(run.id)
  if (run.removed_at !== undefined) return `run ${short} was removed (its worktree and branch are gone), so no seat of it can be resumed`
  switch (run.status) {
    case "superseded":
    case "merged":
    case "closed":
    case "already_in_base":
      return `run ${short} is ${run.status}; it is over, so no seat of it takes words (start a new run with magi run)`
    case "ready":
      return `run ${short} is ready and waits to be landed; a word now would change a branch already reviewed (land it, or start a new run)`
    default:
      return undefined
  }
}

/** Statuses where a word is given at once (a turn is started for it); in the others it waits for the running turn to end. */
export const atRest = (status: RunStatus): boolean =>
  status === "done" || status === "waiting" || status === "stalled" || status === "stopped" || status === "failed" || status === "blocked"

const settled = (w: SaidWord) => w.state !== "queued"

/** Keep the newest `MAX_KEPT`, dropping only settled words. */
const trim = (said: ReadonlyArray<SaidWord>): ReadonlyArray<SaidWord> => {
  let extra = said.length - MAX_KEPT
  return extra <= 0 ? said : said.filter((w) => !(extra > 0 && settled(w) && extra-- > 0))
}

const checkText = (text: string): string | undefined => {
  if (text.trim() === "") return 'the words are empty; say something, in quotes: magi say ID "…"'
  if (text.length > SAID_MAX_CHARS)
    return `the words are ${text.length} characters, over the ${SAID_MAX_CHARS} a word to a seat may hold; put the rest in a file in the worktree and point to it`
  if (text.includes("\u0000")) return "the words hold a NUL character; send plain text"
  return undefined
}

/** Queue `text` for `seat`: the new list and the word's number, or why not. */
export const add = (
  run: RunView,
  seat: string,
  text: string,
  now: Date,
  images: ReadonlyArray<string> = []
): Either.Either<{ readonly said: ReadonlyArray<SaidWord>; readonly word: SaidWord }, string> => {
  const over = refusal(run)
  if (over !== undefined) return Either.left(over)
  if (!safePart(seat) || !run.seats.some((s) => s.key === seat))
    return Either.left(`run ${Q.shortId(run.id)} has no seat ${JSON.stringify(seat)} (its seats: ${run.seats.map((s) => s.key).join(", ")})`)
  const bad = checkText(text)
  if (bad !== undefined) return Either.left(bad)
  const said = run.said ?? []
  if (said.filter((w) => w.state === "queued").length >= MAX_QUEUED)
    return Either.left(`run ${Q.shortId(run.id)} already has ${MAX_QUEUED} words waiting; edit one (--edit N) or wait for them to be delivered`)
  const n = said.reduce((m, w) => Math.max(m, w.n), 0) + 1
  if (images.length > MAX_IMAGES) return Either.left(`a word may carry ${MAX_IMAGES} images at most`)
  const word: SaidWord = { n, seat, text: text.trim(), at: Q.timestamp(now), state: "queued", ...(images.length === 0 ? {} : { images }) }
  return Either.right({ said: trim([...said, word]), word })
}

/** Change a queued word's text (`--edit N`), or `undefined` text to cancel it (`--cancel N`). */
export const change = (run: RunView, n: number, text: string | undefined, now: Date): Either.Either<ReadonlyArray<SaidWord>, string> => {
  const said = run.said ?? []
  const word = said.find((w) => w.n === n)
  const short = Q.shortId(run.id)
  if (word === undefined) return Either.left(`run ${short} has no word ${n} (magi show ${short} lists them)`)
  if (word.state !== "queued")
    return Either.left(
      word.state === "delivered"
        ? `word ${n} was already given to seat ${word.seat} in its turn ${word.turn ?? "?"}; say something new instead`
        : `word ${n} is ${word.state}; say something new instead`
    )
  if (text !== undefined) {
    const bad = checkText(text)
    if (bad !== undefined) return Either.left(bad)
  }
  const at = Q.timestamp(now)
  return Either.right(
    said.map((w): SaidWord => w.n !== n ? w : text === undefined ? { ...w, state: "cancelled", edited_at: at } : { ...w, text: text.trim(), edited_at: at })
  )
}

/** The words waiting for `seat`, oldest first. */
export const queuedFor = (said: ReadonlyArray<SaidWord> | undefined, seat: string): ReadonlyArray<SaidWord> =>
  (said ?? []).filter((w) => w.state === "queued" && w.seat === seat)

/** Seats with a word waiting. */
export const seatsWaiting = (said: ReadonlyArray<SaidWord> | undefined): ReadonlyArray<string> => [
  ...new Set((said ?? []).filter((w) => w.state === "queued").map((w) => w.seat))
]

/**
 * The delivery rule: turn `turn` of `seat` takes every word queued for it,
 * and they are marked given to that turn. Applied to the record under the
 * seat's lock in the write that counts the turn; applied again (a restart
 * after a kill) it takes nothing, since nothing is queued any more.
 */
export const take = (
  said: ReadonlyArray<SaidWord> | undefined,
  seat: string,
  turn: number,
  now: Date
): { readonly said: ReadonlyArray<SaidWord>; readonly taken: ReadonlyArray<SaidWord> } => {
  const taken = queuedFor(said, seat)
  if (taken.length === 0) return { said: said ?? [], taken }
  const at = Q.timestamp(now)
  const ns = new Set(taken.map((w) => w.n))
  return {
    said: (said ?? []).map((w): SaidWord => ns.has(w.n) ? { ...w, state: "delivered", delivered_at: at, turn } : w),
    taken: taken.map((w) => ({ ...w, state: "delivered", delivered_at: at, turn }))
  }
}

/** The seat's waiting words marked refused, with why: the owner sees they went nowhere. */
export const refuseQueued = (said: ReadonlyArray<SaidWord> | undefined, seat: string, why: string): ReadonlyArray<SaidWord> =>
  (said ?? []).map((w): SaidWord => (w.state === "queued" && w.seat === seat ? { ...w, state: "refused", why } : w))

/** One line of a word, for `magi show` and `magi say`. */
export const line = (w: SaidWord): string => {
  const state = w.state === "delivered" ? `delivered in turn ${w.turn ?? "?"}` : w.state === "refused" ? `refused: ${w.why ?? ""}` : w.state
  const first = w.text.split("\n")[0] ?? ""
  return `${w.n}. to ${w.seat}, ${w.at} (${state}${w.edited_at !== undefined && w.state !== "cancelled" ? ", edited" : ""}): ${
    first.length > 100 ? `${first.slice(0, 99)}…` : first
  }`
}

/**
 * Which seats of `run` the loop on host `self` starts a turn for now: its
 * seats with words waiting, on a run of this host, at rest, whose lock is
 * free (`busy` lists the seats with a turn running). A competition's or a
 * verification's seats are driven by their own steps: mid-way their words
 * wait for that seat's next step turn, and only a run they left done or
 * failed is resumed for them here.
 */
export const toStart = (
  run: RunView & { readonly host?: string | undefined; readonly competition?: unknown; readonly verification?: unknown },
  self: string,
  busy: ReadonlySet<string>
): ReadonlyArray<string> => {
  if (run.host !== undefined && run.host !== self) return []
  if (refusal(run) !== undefined || !atRest(run.status)) return []
  const stepped = run.competition !== undefined || run.verification !== undefined
  if (stepped && run.status !== "done" && run.status !== "failed") return []
  // One turn at a time per run: the first seat with words goes, the next after it.
  const first = seatsWaiting(run.said).find((seat) => !busy.has(seat))
  return first === undefined || busy.size > 0 ? [] : [first]
}
