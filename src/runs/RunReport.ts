/**
 * What a run did and what the owner can do with it next: its commits and
 * diffstat off the base, how long it took, and the next commands. `magi
 * show` prints it; the rules live here so any other view says the same.
 */
import { Effect } from "effect"
import { shellWord } from "../questions/AgentHints.js"
import { inFlight } from "./RunStatus.js"
import type { Run } from "./Runs.js"
import { git } from "./Worktree.js"

export interface Changes {
  /** `abc1234 subject`, newest first. */
  readonly commits: ReadonlyArray<string>
  /** `git diff --stat`'s lines, the summary line last. */
  readonly diffstat: ReadonlyArray<string>
}

/** Commits shown before "and N more": a long run's log would bury the rest of the report. */
export const COMMITS_SHOWN = 20

/**
 * The run's branch against the commit it started from, read from the
 * repository; `undefined` when git cannot say (the branch or repo is gone).
 */
export const changesOf = (run: Run) =>
  Effect.gen(function* () {
    const range = `${run.base_commit}..${run.branch}`
    const log = yield* git(run.repo, "log", "--format=%h %s", range)
    const stat = yield* git(run.repo, "diff", "--stat=100", run.base_commit, run.branch)
    const lines = (text: string) => text.split("\n").filter((l) => l.trim() !== "")
    return { commits: lines(log), diffstat: lines(stat).map((l) => l.trim()) } satisfies Changes
    // display: the run's report; none when it cannot be read
  }).pipe(Effect.orElseSucceed(() => undefined))

/**
 * How long a run has worked: to `now` while a turn is under way, else to its
 * last update. A stalled, waiting or stopped run is not "running" while it
 * sits: its clock stopped when its last turn did.
 */
export const durationMs = (run: Run, now: Date): number => {
  const end = inFlight(run.status) ? now.getTime() : Date.parse(run.updated_at)
  return Math.max(0, end - Date.parse(run.created_at))
}

/**
 * The words for a run's time, `took` its duration already formatted and
 * `at` a local time formatter: running for it, took it, or at rest since its
 * last turn (`stalled since 14:05, after 24s`).
 */
export const timeWords = (run: Run, took: string, at: (d: Date) => string): string =>
  inFlight(run.status)
    ? `running for ${took}`
    : run.status === "done" || run.status === "failed" || run.status === "superseded"
    ? `took ${took}`
    : `${run.status} since ${at(new Date(run.updated_at))}, after ${took}`

/**
 * The commands that move a run on from where it is, each with why. `changes`
 * is what `changesOf` read: a diff and a merge are offered only for a branch
 * with commits on it, since of a branch with none (a run that failed before
 * committing anything) they show nothing and merge nothing.
 */
export const nextSteps = (run: Run, changes: Changes | undefined): ReadonlyArray<readonly [string, string]> => {
  if (run.removed_at !== undefined) return []
  const repo = shellWord(run.repo)
  const branch = shellWord(run.branch)
  const review: Array<readonly [string, string]> = changes === undefined || changes.commits.length === 0
    ? []
    : [
      [`git -C ${repo} diff ${shellWord(run.base)}...${branch}`, "see what it changed"],
      [`git -C ${repo} merge ${branch}`, `take the work into ${run.base} (from a checkout of it)`]
    ]
  switch (run.status) {
    case "done":
    case "failed":
    case "superseded":
      return [...review, [`magi run rm ${run.id}`, "remove its worktree and branch once you are done with them"]]
    case "waiting":
      return [["magi answer", "answer what it asked; magi serve (or magi web) resumes it with the answer"], ...review]
    case "stalled":
    case "blocked":
    case "stopped":
      return [[`magi run --resume ${run.id}`, "continue it in the same seat"], ...review]
    default:
      return review
  }
}
