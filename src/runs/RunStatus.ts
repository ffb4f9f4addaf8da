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
  "stopped",
  "done",
  "failed",
  "superseded",
  /** Reviewed and gated (issue 30): the branch waits to be landed. */
  "ready",
  /** Its change was already in the base branch: nothing to land. */
  "already_in_base",
  /** Landed: merged into the base locally or through its pull request. */
  "merged",
  /** Its pull request was closed without a merge by someone else. */
  "closed"
)
export type RunStatus = typeof RunStatus.Type

/**
 * Can a run in this status still be picked back up with its seats and their
 * sessions? `stalled`, `blocked` and `stopped` (by the owner) can, so a question asked in them may yet
 * get a real answer from a real resume; only the three endings cannot.
 */
export const resumable = (status: RunStatus): boolean =>
  status !== "done" && status !== "failed" && status !== "superseded" && status !== "merged" && status !== "closed" &&
  status !== "already_in_base"

/** Is a turn of the run under way (or about to be)? Every other status is the run at rest, however long ago. */
export const inFlight = (status: RunStatus): boolean => status === "running" || status === "preparing"

/**
 * The reason a run is shown with: a done run has none. A reason is why the
 * run is where it is; one left by an interrupted turn that a later turn went
 * on to finish is history, and shown beside "done" it would contradict it.
 */
export const currentReason = (run: { readonly status: RunStatus; readonly reason: string }): string => run.status === "done" ? "" : run.reason
