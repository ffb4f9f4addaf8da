/**
 * The deputy's one power over a conductor question: settling it with a
 * choice the owner's own words picked. Nobody waits on a conductor question
 * (the conductor moved on), so a short-lived deputy seat keeps the owner
 * company on it; when the owner answers in free text rather than by tapping
 * a choice, the deputy may settle the question with `magi ask --settle ID
 * --choice LABEL --quote '<the owner's words>'`. It is refused unless it
 * comes from that question's own deputy seat, names an offered label, and
 * quotes an owner turn verbatim, so a deputy can only carry the owner's
 * decision, never make one. It applies nothing to the task: the loop's
 * blocker resolution does, as for any answer.
 */
import { Either } from "effect"
import * as Q from "../questions/Question.js"
import { NODE as CONDUCT } from "./ConductorDecide.js"

/** The seat of the deputy for question `id`: `deputy-<short id>`. */
export const deputySeat = (id: string): string => `deputy-${Q.shortId(id)}`

export interface SettleRequest {
  /** `MAGI_SEAT` of the process asking to settle. */
  readonly seat: string
  readonly choice: string
  readonly quote: string
}

/** Why `req` may not settle `q`, if it may not. */
export const settleRefusal = (q: Q.Question, req: SettleRequest): string | undefined => {
  const short = Q.shortId(q.id)
  if (q.node !== CONDUCT) return `question ${short} is not a conductor question; only a conductor question's deputy settles one`
  if (!Q.isOpen(q)) return `question ${short} is ${q.status}; there is nothing left to settle`
  if (req.seat !== deputySeat(q.id))
    return `only seat ${deputySeat(q.id)} may settle question ${short}, not ${req.seat === "" ? "a process outside any seat" : `seat ${req.seat}`}`
  if (!q.choices.includes(req.choice))
    return `\`${req.choice}\` is not one of the choices question ${short} offers: ${q.choices.join(", ") || "(none: it asks for free text)"}`
  const quote = req.quote.trim()
  if (quote === "") return "--quote needs the owner's own words that pick the choice"
  if (!q.thread.some((t) => t.who === "operator" && t.body.includes(quote)))
    return `the owner never said "${quote}" on question ${short}; quote their words exactly as they wrote them`
  return undefined
}

/** Settle `q` with the owner's choice, or why not. */
export const settle = (q: Q.Question, req: SettleRequest, now: Date): Either.Either<Q.Question, string> => {
  const why = settleRefusal(q, req)
  if (why !== undefined) return Either.left(why)
  return Either.mapLeft(Q.answer(q, { choice: req.choice }, now), (e) => e.message)
}
