/**
 * Whether a question's agent still has something coming from it: a plain
 * function of the record, kept in a module with no dependencies so the phone
 * page can share it without bundling the schema library behind `Question`
 * (three quarters of the page's script, for one boolean).
 */
import type { Question } from "./Question.js"

/**
 * Does the asking agent still have something coming from this question? Open,
 * or answered but the answer never reached it. The run behind it is not
 * finished, the daemon may still carry it, and someone may be holding it.
 */
export const awaitsAgent = (q: Pick<Question, "status" | "answer_delivered">): boolean =>
  q.status === "open" || (q.status === "answered" && !q.answer_delivered)
