/**
 * What a task's run is told besides the instruction itself: the owner's
 * answers to the questions it waited on, and, for a review, the branch to
 * start from. Words only; `agents/Prompts.runPrompt` wraps them with where
 * the agent works and how it asks.
 */
import { shortId } from "../questions/Question.js"
import type { Task } from "./Task.js"

/** The instruction a task's next run works from. */
export const taskInstruction = (t: Task): string => {
  const parts = [t.instruction.trim()]
  if (t.answers.length > 0)
    parts.push(
      `## The owner's answers\n\nBefore this task ran, the owner answered questions it was waiting on:\n\n${
        t.answers
          .map((a) => `- question ${shortId(a.question)}: ${a.answer}`)
          .join("\n")
      }`
    )
  if (t.review_branch !== null)
    parts.push(
      `## Start from earlier work\n\nEarlier work on this task is on branch \`${t.review_branch}\`. Review it (its log and its diff against your base), bring it onto your branch if it is sound, and finish or fix what remains rather than starting over.`
    )
  else if (!t.fresh_start && t.last_error !== null && t.runs.length > 0)
    parts.push(`## The last attempt\n\nThe last attempt at this task stopped: ${t.last_error}`)
  return parts.join("\n\n")
}
