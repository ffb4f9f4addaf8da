/**
 * The waiter's whole decision about one question, with no I/O: a question,
 * its lease, whether its seat is busy, the default deadline and the time in;
 * what to do this tick out. Every effect lives in `Waiter.tick`, so each rule
 * here is checked by a table test at any instant.
 */
import { Data, Option } from "effect"
import * as Lease from "../questions/Leases.js"
import type { Question } from "../questions/Question.js"
import * as Q from "../questions/Question.js"

/** What the agent has not read yet. */
export type Word = Data.TaggedEnum<{
  /** The owner spoke back without deciding; the question stays open. */
  Said: { readonly text: string }
  /** The owner decided. */
  Answered: { readonly text: string }
  /** The owner's ask-back again, once: the agent was shown it and its turn ended without a reply. */
  Resent: { readonly text: string }
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

// The rules on what is unread and when a question expires are the
// question's own, shared with the asker (`magi ask`), so the two never
// disagree about whether a question is alive.
export const { unreadOwnerTurns, deadlineMs, expiryReason, timeoutSecs } = Q

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
  // Asked outside any magi run: there is no session to resume, and the
  // owner's words are kept for the agent's next `magi ask --wait`, which
  // reads them whenever it comes. Only once the deadline has passed with
  // them unread is there something to tell the owner (the delivery is then
  // refused, with a notice).
  const keptForWait = Q.keptForNextWait(q) && now.getTime() <= deadlineMs(q, defaultTimeoutSecs)
  // 4. Answered but the agent never read it.
  if (q.status === "answered") {
    const answer = Q.resolution(q)
    return answer !== undefined && !q.answer_delivered && !seatBusy && !keptForWait
      ? Action.Deliver({ word: Word.Answered({ text: answer }) })
      : Action.Idle()
  }
  // 5. Open. Words said in time are delivered even if the deadline passed
  //    since, so the owner's word is checked before the clock.
  const said = unreadOwnerTurns(q)
  if (said !== undefined) return seatBusy || keptForWait ? Action.Idle() : Action.Deliver({ word: Word.Said({ text: said }) })
  // 6. Shown the ask-back, the agent ended its turn without a reply and its
  //    asker is gone: nothing would ever bring it back, so its seat gets the
  //    owner's words once more (once: `resent_turns` is recorded first).
  const owed = Q.owedUnprompted(q)
  if (owed !== undefined && !keptForWait) return seatBusy ? Action.Idle() : Action.Deliver({ word: Word.Resent({ text: owed }) })
  return now.getTime() > deadlineMs(q, defaultTimeoutSecs)
    ? Action.Expire({ reason: expiryReason(q, defaultTimeoutSecs) })
    : Action.Idle()
}
