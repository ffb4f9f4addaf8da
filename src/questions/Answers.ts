/**
 * What the owner does to a question: decide, or speak back. The CLI's
 * `magi answer` and the web's POST routes both come through here, so the
 * rules (and the lock that keeps concurrent writers from losing each other's
 * change) live in one place.
 */
import { Clock, Effect, Either } from "effect"
import { choicesDigest, type Claim } from "./AnswerLinks.js"
import * as Q from "./Question.js"
import { QuestionStore } from "./QuestionStore.js"

const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

/** Record the owner's decision on `id`, under the question's lock. */
export const answerQuestion = Effect.fn("answerQuestion")(function* (id: string, answer: Q.Answer) {
  const store = yield* QuestionStore
  const at = yield* now
  return yield* store.update(id, (q) => Q.answer(q, answer, at))
})

/** The owner speaking back without deciding; the question stays open. */
export const sayToQuestion = Effect.fn("sayToQuestion")(function* (id: string, body: string) {
  const store = yield* QuestionStore
  const at = yield* now
  return yield* store.update(id, (q) => Q.say(q, body, at))
})

/** The owner withdrawing `id`, with why (may be empty), under the question's lock. */
export const withdrawQuestion = Effect.fn("withdrawQuestion")(function* (id: string, why: string) {
  const store = yield* QuestionStore
  const at = yield* now
  return yield* store.update(id, (q) => Q.withdraw(q, why, at))
})

/**
 * Text typed at a terminal as the answer it stands for: a choice on a
 * multiple-choice question, free text otherwise. `Question.answer` still
 * judges it, so a typo'd choice is refused with the list of real ones.
 */
export const answerFromText = (q: Q.Question, text: string): Q.Answer => Q.isFreeText(q) ? { text } : { choice: text }

/**
 * The question a `magi answer --reply` with no id is about: the only open
 * one. With several open, guessing is refused (it used to pick the oldest
 * while the list shows the newest first, so the owner's "yes" could land on
 * a question they were not reading); the message names every one so the
 * owner can pick by short id.
 */
export const soleOpen = (open: ReadonlyArray<Q.Question>): Either.Either<Q.Question, string> => {
  if (open.length === 1) return Either.right(open[0]!)
  if (open.length === 0) return Either.left("no open question to answer")
  return Either.left(
    `${open.length} questions are open; say which one: ` +
      open.map((q) => `magi answer ${Q.shortId(q.id)} (${Q.headline(q.summary)})`).join(", ")
  )
}

/** The open questions, newest first, as every list shows them. */
export const openQuestions = Effect.map(QuestionStore, (store) => store.list).pipe(
  Effect.flatten,
  Effect.map((all) => all.filter(Q.isOpen))
)

/**
 * Why a process running in an agent's seat (`MAGI_SEAT` set: an agent, a
 * deputy, the conductor) may not decide `q`, if it may not: a tool approval
 * is the owner's alone, so an agent cannot allow its own (or another
 * agent's) tool call by running `magi answer`.
 */
export const seatRefusal = (q: Q.Question, seat: string): Q.QuestionRejected | undefined =>
  seat !== "" && Q.isApproval(q)
    ? new Q.QuestionRejected({
      reason: "not-owner",
      message: `question ${Q.shortId(q.id)} is a tool approval; only the owner decides one, never an agent (this process runs in seat ${seat})`
    })
    : undefined

/**
 * `answerFromText` judged against the record as it is under the lock, from
 * a process in `seat` (`""`: the owner's own terminal).
 */
export const answerWithText = Effect.fn("answerWithText")(function* (id: string, text: string, seat = "") {
  const store = yield* QuestionStore
  const at = yield* now
  return yield* store.update(id, (q) => {
    const refused = seatRefusal(q, seat)
    return refused === undefined ? Q.answer(q, answerFromText(q, text), at) : Either.left(refused)
  })
})

/**
 * The answer a capability link allows, judged against the record under its
 * lock: the choice set must still be the one the link was made for (an
 * agent's reply with other choices voids the buttons already sent), and the
 * question must still be open, the same rule as every other answer, so a
 * press racing the page has exactly one winner. Recorded as given by link.
 */
export const answerByLink = (q: Q.Question, claim: Claim, now: Date): Either.Either<Q.Question, Q.QuestionRejected> => {
  if (Q.isOpen(q) && (choicesDigest(q.choices) !== claim.digest || claim.index >= q.choices.length))
    return Either.left(
      new Q.QuestionRejected({
        reason: "not-offered",
        message: `the choices of question ${
          Q.shortId(q.id)
        } changed since this button was sent, so it no longer says what it would answer; open the page to answer`
      })
    )
  const choice = q.choices[claim.index] ?? ""
  return Either.map(Q.answer(q, { choice }, now), (answered) => ({ ...answered, answered_via: "link" as const }))
}

/** Answer `claim.question` as the link allows, under the question's lock. */
export const answerWithLink = Effect.fn("answerWithLink")(function* (claim: Claim) {
  const store = yield* QuestionStore
  const at = yield* now
  return yield* store.update(claim.question, (q) => answerByLink(q, claim, at))
})
