/**
 * The queue loop's decisions, apart from the loop: given what is on disk
 * (a task, its blockers, its run) and the time, what should happen to the
 * task. Pure, so every rule can be read and tested without a process, a
 * clock or a file.
 */
import { Duration, Either } from "effect"
import type { QuestionStatus } from "../questions/Question.js"
import { shortId } from "../questions/Question.js"
import type { RunStatus } from "../runs/RunStatus.js"
import * as T from "../queue/Task.js"

/**
 * A running task whose run has not moved for this long, with no turn in
 * flight and nothing asked of the owner, is given up as stalled: longer than
 * any pause between two writes of a live run, short enough that a dead one
 * does not hold the queue for an afternoon.
 */
export const IDLE_STALL = Duration.minutes(30)

/** How long an agent that hit its usage limit without saying when it resets is left alone. */
export const USAGE_PAUSE = Duration.minutes(15)

/**
 * How long a task whose attempt failed waits before the loop tries it again.
 * A failure that comes back within seconds is nearly always the same one (a
 * missing key, the provider down, a setup the agent cannot fix), and an
 * immediate retry spends the last of the default two attempts on it before
 * the owner has read the first error. Five minutes outlasts a provider's
 * brief outage or rate limit and gives the owner time to hold or edit the
 * task from the phone, yet costs little next to a turn that may run for two
 * hours.
 */
export const RETRY_PAUSE = Duration.minutes(5)

/**
 * Is a failed task still in its pause before a retry? Only an attempt the
 * task spent (its last run failed) pauses it, counted from when it failed
 * (its last write). A run that stalled goes again at once: a usage limit
 * rests the agent instead, and a loop that stopped or died (its attempt
 * counted or not) left nothing to wait out — the pause is for a failure the
 * agent reported, which comes back within seconds.
 */
export const retryPaused = (t: T.Task, lastRunStalled: boolean, nowMs: number): boolean =>
  t.status === "failed" && !lastRunStalled && nowMs - Date.parse(t.updated_at) < Duration.toMillis(RETRY_PAUSE)

/**
 * When the loop starts a failed task again: once its pause has run out, at
 * once when its last run stalled; undefined for a task it will not retry.
 */
export const retryAt = (t: T.Task, lastRunStalled: boolean): number | undefined =>
  t.status !== "failed" || !T.runnable(t) ? undefined : Date.parse(t.updated_at) + (lastRunStalled ? 0 : Duration.toMillis(RETRY_PAUSE))

/** What one blocker id names now. */
export type BlockerState =
  | { readonly kind: "task"; readonly status: T.TaskStatus }
  | { readonly kind: "question"; readonly status: QuestionStatus; readonly answer: string | undefined }
  | { readonly kind: "missing" }

/**
 * Clear what no longer blocks `t`: a task that is done, a question that is
 * answered (its answer recorded on the task, for the next prompt). Once
 * nothing is left the task goes back where it was blocked from. A blocker
 * that no longer exists, or a question abandoned unanswered, can never clear,
 * so the task goes on a machine hold that names it. Only a `blocked` task is
 * touched; the same task comes back when nothing changed.
 */
export const resolveBlockers = (t: T.Task, lookup: (id: string) => BlockerState): T.Task => {
  if (t.status !== "blocked") return t
  let next = t
  for (const id of t.blocked_by) {
    const state = lookup(id)
    if (state.kind === "missing")
      return orSame(T.hold(next, `it waits on ${shortId(id)}, which no longer exists; release it to run anyway, or remove it`, "machine"), t)
    if (state.kind === "question" && state.status === "abandoned")
      return orSame(T.hold(next, `question ${shortId(id)} it waited on was abandoned unanswered; release it to run without the answer`, "machine"), t)
    if (state.kind === "task" && state.status === "done") next = orSame(T.unblock(next, id), next)
    if (state.kind === "question" && state.status === "answered")
      next = orSame(T.unblock(T.recordAnswer(next, id, state.answer ?? ""), id), next)
  }
  return next
}

const orSame = (r: Either.Either<T.Task, T.TaskRefused>, fallback: T.Task): T.Task => Either.getOrElse(r, () => fallback)

/** What a task's run says should happen to the task. */
export type Settlement =
  | { readonly _tag: "Wait" }
  | { readonly _tag: "Succeed" }
  | { readonly _tag: "Fail"; readonly why: string }
  | { readonly _tag: "Stall"; readonly why: string }
  | { readonly _tag: "Hold"; readonly why: string }

/**
 * The task follows its run: done is done; failed (or superseded) spends the
 * attempt; stalled (a usage limit, an interrupted turn) is no fault of the
 * task's and refunds it; stopped by the owner holds it (the owner meant it
 * to stop, so it is not retried until released); anything still going, or waiting on the owner,
 * keeps the task running.
 */
export const settlementFor = (
  run: {
    readonly status: RunStatus
    readonly reason: string
    readonly landing?: { readonly pr?: { readonly number: number; readonly url: string } | undefined } | undefined
  }
): Settlement => {
  switch (run.status) {
    case "ready":
      // The implementation exists and its pull request waits on CI or the owner: held, never competed again.
      return run.landing?.pr !== undefined
        ? { _tag: "Hold", why: `its pull request #${run.landing.pr.number} is open (${run.landing.pr.url}): it waits on CI or the owner` }
        : { _tag: "Succeed" }
    case "done":
    case "merged":
    case "already_in_base":
      return { _tag: "Succeed" }
    case "closed":
      return { _tag: "Hold", why: run.reason || "its pull request was closed without a merge" }
    case "blocked":
      return { _tag: "Hold", why: run.reason || "its run is blocked" }
    case "failed":
    case "superseded":
      return { _tag: "Fail", why: run.reason || `its run ${run.status}` }
    case "stalled":
      return { _tag: "Stall", why: run.reason || "its run stalled" }
    case "stopped":
      return { _tag: "Hold", why: run.reason || "its run was stopped by the owner" }
    default:
      return { _tag: "Wait" }
  }
}

/** Apply a settlement to the task, only while it is still running on `run`; the same task otherwise. */
export const settle = (t: T.Task, run: string, s: Settlement, maxAttempts: number): T.Task => {
  if (t.status !== "running" || t.runs.at(-1) !== run) return t
  switch (s._tag) {
    case "Wait":
      return t
    case "Succeed":
      return orSame(T.succeed(t), t)
    case "Fail":
      return orSame(T.fail(t, s.why, maxAttempts), t)
    case "Stall":
      return orSame(T.stall(t, s.why), t)
    case "Hold":
      return orSame(T.hold(t, s.why), t)
  }
}

export interface StallCheck {
  /** A turn of the run is going on somewhere (this loop, the waiter, `magi run --resume`). */
  readonly turnInFlight: boolean
  /** The run is waiting on the owner: a question of its is open or undelivered. */
  readonly waitingOnOwner: boolean
  /** The latest write of the run or the task, ms. */
  readonly lastMovedMs: number
  readonly nowMs: number
  /** The loop that started it still holds its claim with a live pid. */
  readonly loopAlive: boolean
}

/**
 * What happens to a running task nothing is working on (no turn, no
 * question), if anything yet:
 *
 * - its loop is gone (killed, or its machine went away: its claim went
 *   stale) → `Fail`: the attempt counts, as the attempts rule says, and the
 *   task is retried once on any host with the repository, then held for the
 *   owner. A crash mid-turn is not always the machine's fault: an agent that
 *   runs its host out of memory would, refunded, be tried on every host in
 *   turn for ever; counted, it costs the default two attempts and waits for
 *   the owner;
 * - its loop lives but the run has sat still for `IDLE_STALL` → `Stall`:
 *   the attempt is refunded (the loop is there, so nothing crashed; the run
 *   lost its way) and the task runs again.
 *
 * A loop stopped in order settles its own turns as stalls on the way out
 * (`QueueLoop`), so it never reaches this rule.
 */
export const orphanSettlement = (c: StallCheck): Settlement | undefined => {
  if (c.turnInFlight || c.waitingOnOwner) return undefined
  if (!c.loopAlive) return { _tag: "Fail", why: "the magi loop that ran it is gone and no turn of its run is going on" }
  if (c.nowMs - c.lastMovedMs >= Duration.toMillis(IDLE_STALL))
    return { _tag: "Stall", why: `its run has had no turn and no question for ${Duration.toMinutes(IDLE_STALL)} minutes` }
  return undefined
}

const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

/**
 * When an agent that hit its usage limit may run again: the reset time it
 * reported, read as a full date, epoch seconds, or a clock time (`3pm`,
 * `15:00`, in UTC when it says so, else local) at its next occurrence;
 * `USAGE_PAUSE` from now when it said nothing readable.
 */
export const resetAt = (quota: string | null, now: Date): number => {
  const fallback = now.getTime() + Duration.toMillis(USAGE_PAUSE)
  const text = (quota ?? "").trim()
  if (text === "") return fallback
  if (/^\d{10}$/.test(text)) {
    const ms = Number(text) * 1000
    return ms > now.getTime() ? ms : fallback
  }
  const hasYear = /\b\d{4}\b/.test(text) && (/\d{4}-\d\d-\d\d/.test(text) || MONTHS.some((m) => text.toLowerCase().includes(m)))
  if (hasYear) {
    const ms = Date.parse(text)
    if (!Number.isNaN(ms)) return ms > now.getTime() ? ms : fallback
  }
  const clock = /\b(\d{1,2})(?::(\d{2}))?\s*(am|pm)\b/i.exec(text) ?? /\b(\d{1,2}):(\d{2})\b/.exec(text)
  if (clock) {
    let hours = Number(clock[1])
    const minutes = clock[2] === undefined ? 0 : Number(clock[2])
    const half = clock[3]?.toLowerCase()
    if (half === "pm" && hours < 12) hours += 12
    if (half === "am" && hours === 12) hours = 0
    if (hours > 23 || minutes > 59) return fallback
    const utc = /\b(utc|gmt|z)\b/i.test(text)
    const at = new Date(now.getTime())
    if (utc) at.setUTCHours(hours, minutes, 0, 0)
    else at.setHours(hours, minutes, 0, 0)
    if (at.getTime() <= now.getTime()) at.setTime(at.getTime() + 24 * 60 * 60 * 1000)
    return at.getTime()
  }
  return fallback
}

/**
 * A task's last run that its next start picks up instead of a new run: a
 * competition parked (stalled, resumable) at a step boundary, on this host,
 * with its step not an ending. What it recorded is kept (no implementer
 * re-invoked once implement is recorded, no judge re-asked who answered);
 * a single-seat run starts afresh as before.
 */
export const parkedCompetition = (
  run: { readonly status: RunStatus; readonly host?: string | undefined; readonly competition?: { readonly step: string } | undefined } | undefined,
  host: string
): boolean =>
  run !== undefined && run.competition !== undefined && run.status === "stalled" && (run.host === undefined || run.host === host) &&
  !["elected", "verified_noop", "failed"].includes(run.competition.step)
