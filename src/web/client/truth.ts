/**
 * What a card may claim, from what the page knows besides the question: the
 * waiter's notices, and whether a request failed for want of a network.
 */
import { ApiError, type QuestionView, type WaiterNotice } from "./api.js"
import { owedToAgent } from "../../questions/Owed.js"

/** When the owner last gave the agent something: their answer, or their latest turn. */
const lastOwnerInput = (q: QuestionView): string => {
  const turns = q.thread.filter((t) => t.who === "operator").map((t) => t.at)
  return [q.answered_at ?? "", ...turns].reduce((a, b) => (b > a ? b : a), "")
}

/**
 * The newest notice saying the waiter gave up carrying `q`'s words to its
 * agent, while that is still the last word: the agent has not read them
 * since (it still awaits something), and the owner has said nothing newer
 * (which the waiter would try again with). `notices` is newest first.
 */
export const undeliveredFor = (q: QuestionView, notices: ReadonlyArray<WaiterNotice>): WaiterNotice | undefined => {
  if (!owedToAgent(q)) return undefined
  const last = lastOwnerInput(q)
  return notices.find((n) => n.question === q.id && n.at >= last)
}

/**
 * A failed request in words, for the line next to the control: whether it
 * was refused (and why) or never arrived, and that the draft is still there.
 */
export const failureText = (e: unknown, what: string): string => {
  if (e instanceof ApiError) return `${what}: ${e.message}. It is kept here; change it and try again.`
  const offline = typeof navigator !== "undefined" && navigator.onLine === false
  return offline
    ? `${what}: this phone is offline. It is kept here; send it again once you are back online.`
    : `${what}: magi could not be reached (${e instanceof Error ? e.message : String(e)}). It is kept here; try again.`
}
