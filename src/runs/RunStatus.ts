/**
 * Where one of magi's runs is in its life. Questions only need to know which
 * of these can still come back: a question whose run cannot is abandoned,
 * because nobody is left to read its answer.
 */
import { Schema } from "effect"

export const RunStatus = Schema.Literal(
  "preparing",
  "running",
  "waiting",
  "stalled",
  "blocked",
  "done",
  "failed",
  "superseded"
)
export type RunStatus = typeof RunStatus.Type

/**
 * Can a run in this status still be picked back up with its seats and their
 * sessions? `stalled` and `blocked` can, so a question asked in them may yet
 * get a real answer from a real resume; only the three endings cannot.
 */
export const resumable = (status: RunStatus): boolean => status !== "done" && status !== "failed" && status !== "superseded"
