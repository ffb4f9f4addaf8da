/**
 * The waiter's whole decision about one question, with no I/O: a question,
 * its lease, whether its seat is busy, the default deadline and the time in;
 * what to do this tick out. Every effect lives in `Waiter.tick`, so each rule
 * here is checked by a table test at any instant.
 */
import { Data, Option } from "effect"
import * as Lease from "./Lease.js"
import type { Question } from "./Question.js"
import * as Q from "./Question.js"

/** What the agent has not read yet. */
export type Word = Data.TaggedEnum<{
  /** The owner spoke back without deciding; the question stays open. */
  Said: { readonly text: string }
  /** The owner decided. */
  Answered: { readonly text: string }
}>
export const Word = Data.taggedEnum<Word>()

/** What to do about one question, this tick. */
export type Action = Data.TaggedEnum<{
  Idle: {}
  /** The deadline passed with nothing said: abandon it. */
  Expire: { readonly reason: string }
  /** Carry the owner's word to the seat. */
  Deliver: { readonly word: Word }
}>
export const Action = Data.taggedEnum<Action>()

/**
 * The owner's turns the agent has not been shown: every operator turn at or
 * after `delivered_turns`, joined by a blank line. Undefined when there are
 * none.
 */
export const unreadOwnerTurns = (q: Question): string | undefined => {
  const unread = q.thread.slice(q.delivered_turns).filter((t) => t.who === "operator")
  return unread.length === 0 ? undefined : unread.map((t) => t.body).join("\n\n")
}

/** The question's deadline in seconds: as recorded, else the configured default. */
export const timeoutSecs = (q: Question, defaultTimeoutSecs: number): number =>
  q.answer_timeout > 0 ? q.answer_timeout : defaultTimeoutSecs

/**
 * When the question expires: its last activity (the ask or any turn, the
 * latest) plus its timeout. Counted from the last activity, not the ask,
 * because a conversation still going is not one nobody answered.
 */
export const deadlineMs = (q: Question, defaultTimeoutSecs: number): number => {
  const last = Math.max(Date.parse(q.asked_at), ...q.thread.map((t) => Date.parse(t.at)))
  return last + timeoutSecs(q, defaultTimeoutSecs) * 1000
}

/** The words an expired question is abandoned with; the same the asker uses. */
export const expiryReason = (q: Question, defaultTimeoutSecs: number): string =>
  `no answer within ${timeoutSecs(q, defaultTimeoutSecs)}s of asking`

/** The whole decision, in the reference's order. */
export const decide = (
  q: Question,
  lease: Option.Option<Lease.Lease>,
  seatBusy: boolean,
  defaultTimeoutSecs: number,
  now: Date
): Action => {
  // 1. Filed by a flow with no asking seat: nobody to resume.
  if (q.cwd === "") return Action.Idle()
  // 2. The asker is still there; a second agent must never start beside it.
  if (Option.isSome(Lease.heldAt(lease, now))) return Action.Idle()
  // 3. Nothing left to carry.
  if (q.status === "abandoned") return Action.Idle()
  // 4. Answered but the agent never read it.
  if (q.status === "answered") {
    const answer = Q.resolution(q)
    return answer !== undefined && !q.answer_delivered && !seatBusy
      ? Action.Deliver({ word: Word.Answered({ text: answer }) })
      : Action.Idle()
  }
  // 5. Open. Words said in time are delivered even if the deadline passed
  //    since, so the owner's word is checked before the clock.
  const said = unreadOwnerTurns(q)
  if (said !== undefined) return seatBusy ? Action.Idle() : Action.Deliver({ word: Word.Said({ text: said }) })
  return now.getTime() > deadlineMs(q, defaultTimeoutSecs)
    ? Action.Expire({ reason: expiryReason(q, defaultTimeoutSecs) })
    : Action.Idle()
}
