/**
 * The conductor's rules, apart from the conductor: when a turn is worth
 * taking, what the agent is shown, and what one of its decisions does to a
 * task as it is now. Pure, so each rule reads and tests without a process,
 * a clock or a file; `Conductor.ts` does the I/O around them.
 *
 * How our queue maps onto the reference's three lists: the loop itself turns
 * a running task nobody works on into `failed` (its attempt refunded, or
 * spent when its loop died) and marks its run `stalled`, so a *stalled* task here is a failed task whose
 * last run stalled; *finished* is every other failed task and every held one;
 * *runnable* is a queued one.
 */
import { Either } from "effect"
import { isApproval } from "../approvals/Approval.js"
import { CONDUCTOR_NODE, shortId } from "../questions/Question.js"
import * as T from "../queue/Task.js"
import type { Decision, Recovery } from "./ConductorVerdict.js"

/** Node and seat name of the conductor, on its questions and in its agent's environment. */
export const NODE = CONDUCTOR_NODE

/**
 * Is `q` a question the conductor filed, and so one it may reuse, list in
 * its prompt, or abandon when no task waits on it? A tool approval its own
 * seat raised carries the same node, but only the owner settles it.
 */
export const isConductorQuestion = (q: { readonly node: string; readonly approval?: unknown }): boolean => q.node === NODE && !isApproval(q)

// ---------------------------------------------------------------------------
// When a turn is worth taking

/** What the conductor last acted on: the queue's revision and the stalled ∪ finished ids. */
export interface Snapshot {
  readonly revision: number
  readonly ids: ReadonlyArray<string>
}

export const snapshotOf = (revision: number, stalled: ReadonlyArray<T.Task>, finished: ReadonlyArray<T.Task>): Snapshot => ({
  revision,
  ids: [...new Set([...stalled, ...finished].map((t) => t.id))].sort()
})

/** Has something changed since `last`? The same snapshot is never shown twice. */
export const worthALook = (last: Snapshot | undefined, now: Snapshot): boolean =>
  last === undefined || last.revision !== now.revision || last.ids.join("\n") !== now.ids.join("\n")

// ---------------------------------------------------------------------------
// Which tasks it is shown

/** How the last run of a task ended, as far as the conductor is told. */
export interface Outcome {
  readonly run: string
  readonly status: string
  /** The task's own last run's branch when it has commits ahead of its base; null when none survived. */
  readonly branch: string | null
  readonly head: string | null
}

export interface Lists {
  readonly runnable: ReadonlyArray<T.Task>
  readonly stalled: ReadonlyArray<T.Task>
  readonly finished: ReadonlyArray<T.Task>
}

/** Sort the queue into what the conductor decides about. `lastRunStalled` says whether a task's last run stalled. */
export const listsOf = (all: ReadonlyArray<T.Task>, lastRunStalled: (t: T.Task) => boolean): Lists => {
  const ordered = [...all].sort(T.runOrder)
  const stalled = ordered.filter((t) => t.status === "failed" && lastRunStalled(t))
  return {
    runnable: ordered.filter((t) => t.status === "queued"),
    stalled,
    finished: ordered.filter((t) => (t.status === "failed" || t.status === "held") && !stalled.includes(t))
  }
}

export const isEmpty = (l: Lists) => l.runnable.length + l.stalled.length + l.finished.length === 0

// ---------------------------------------------------------------------------
// The prompt

/** One task as the agent sees it. */
export const taskBlock = (t: T.Task, maxAttempts: number, outcome?: Outcome | undefined): string => {
  const lines = [
    `### ${t.id}`,
    `title: ${t.title}`,
    `status: ${t.status}`,
    `priority: ${t.priority}`,
    `repo: ${t.repo}`,
    `attempts: ${t.attempts}/${maxAttempts}`
  ]
  if (t.last_error !== null) lines.push(`last error: ${t.last_error}`)
  if (t.status === "held") lines.push(`hold: ${t.hold_source ?? "manual"}${t.hold_reason !== null ? ` — ${t.hold_reason}` : ""}`)
  if (t.blocked_by.length > 0) lines.push(`blocked_by: ${t.blocked_by.join(", ")}`)
  for (const a of t.answers) lines.push(`answered "${a.question}": ${a.answer}`)
  if (outcome !== undefined) {
    lines.push(`last run: ${outcome.run} (${outcome.status})`)
    lines.push(
      outcome.branch !== null
        ? `surviving branch: ${outcome.branch} at ${outcome.head ?? "?"} (commits ahead of its base)`
        : "surviving branch: none survived"
    )
  }
  lines.push("instruction:", ...t.instruction.trim().split("\n").map((l) => `    ${l}`))
  return lines.join("\n")
}

const section = (title: string, blocks: ReadonlyArray<string>) => blocks.length === 0 ? `## ${title}\n\n(none)` : `## ${title}\n\n${blocks.join("\n\n")}`

/** The whole turn's prompt: the rules, then the three lists. */
export const conductorPrompt = (
  lists: Lists,
  maxAttempts: number,
  outcomes: ReadonlyMap<string, Outcome>,
  openQuestions: ReadonlySet<string>
): string =>
  [
    "You are the conductor of magi's task queue. You arrange the queue; you implement nothing.",
    "",
    "## Rules",
    "",
    "- Do not change any file, and never run `magi ask`: it blocks until the owner answers, and would park the whole loop behind one task.",
    "- You cannot change priority, delete a task, or name a branch. Leaving a task out of your decisions means no change.",
    "- Runnable tasks: give `blocked_by` (ids of tasks or questions it must wait for) or a `question` for the owner. A blocker that does not exist or that would close a circle is refused.",
    "- Stalled tasks (their last run stopped through no fault of theirs): `recovery` requeue (a fresh start) or hold.",
    "- Finished tasks (failed or held): `recovery` requeue (fresh attempt), hold (nothing better to say), review (only if a surviving branch is listed and only mergeable fixes remain) or done (only when the owner's own words say the goal is met).",
    "- A manual hold is the owner's: leave that task out.",
    "- To ask the owner, put `question` (and `choices` when there are options) and a `reason` on the decision; magi files it and moves on. Do not ask again while a question for that task is unanswered." +
    (openQuestions.size > 0 ? ` Tasks with a question open now: ${[...openQuestions].join(", ")}.` : ""),
    "- Reply with your reasoning, then exactly one fenced json block, last:",
    "",
    "```json",
    '{"decisions":[{"id":"<task id>","blocked_by":["<id>"],"reason":"…","recovery":"requeue|hold|review|done","question":"…","choices":["…"]}]}',
    "```",
    "",
    '`{"decisions":[]}` is a valid reply.',
    "",
    section("Runnable tasks", lists.runnable.map((t) => taskBlock(t, maxAttempts))),
    "",
    section("Stalled tasks", lists.stalled.map((t) => taskBlock(t, maxAttempts, outcomes.get(t.id)))),
    "",
    section("Finished tasks", lists.finished.map((t) => taskBlock(t, maxAttempts, outcomes.get(t.id))))
  ].join("\n")

// ---------------------------------------------------------------------------
// Applying one decision

/**
 * Why `id` may not wait on `blockers`, if it may not: an id that names no
 * task or question, or a wait that would close a circle (the queue's own
 * check, `Task.circleThrough`, the one `magi task add --after` uses).
 */
export const blockersRefusal = (
  all: ReadonlyArray<T.Task>,
  id: string,
  blockers: ReadonlyArray<string>,
  exists: (id: string) => boolean
): string | undefined => {
  if (blockers.includes(id)) return `task ${shortId(id)} cannot wait on itself`
  const missing = blockers.filter((b) => !exists(b))
  if (missing.length > 0) return `blocked_by names ${missing.join(", ")}, which no task or question has as its id`
  const circle = T.circleThrough(all, id, blockers)
  if (circle !== undefined) return `waiting on ${circle.map(shortId).join(" → ")} would close a circle: none of them could ever run`
  return undefined
}

/** What one decision comes to against the task as it is now. */
export type Plan =
  | { readonly _tag: "Ask"; readonly question: string; readonly choices: ReadonlyArray<string> }
  | { readonly _tag: "Change"; readonly task: T.Task; readonly what: string }
  | { readonly _tag: "Refuse"; readonly why: string }

const refuse = (why: string): Plan => ({ _tag: "Refuse", why })
const change = (r: Either.Either<T.Task, T.TaskRefused>, what: string): Plan =>
  Either.match(r, { onLeft: (e) => refuse(e.message), onRight: (task) => ({ _tag: "Change", task, what }) })

export interface DecideContext {
  readonly all: ReadonlyArray<T.Task>
  readonly exists: (id: string) => boolean
  /** Its last run stalled (a stalled task may only be requeued or held). */
  readonly stalled: boolean
  /** The surviving branch magi found in the task's own last run; never one the model wrote. */
  readonly survivingBranch: string | null
}

/**
 * One decision against the task as it is now. `question` wins over
 * everything; a queued task may be blocked; a stalled one requeued or held; a
 * failed or held one requeued, held, reviewed or done. A manual hold is the
 * owner's and is never touched; priority has no field to touch.
 */
export const planDecision = (t: T.Task, d: Decision, ctx: DecideContext): Plan => {
  if (t.status === "held" && t.hold_source === "manual") return refuse(`task ${shortId(t.id)} is on the owner's manual hold; the conductor leaves it alone`)
  if (d.question !== undefined && d.question.trim() !== "") {
    if (t.status === "done" || t.status === "running") return refuse(`task ${shortId(t.id)} is ${t.status}; there is nothing to ask about`)
    return { _tag: "Ask", question: d.question.trim(), choices: (d.choices ?? []).map((c) => c.trim()).filter((c) => c !== "") }
  }
  const reason = d.reason?.trim() ?? ""
  if (d.blocked_by !== undefined && d.blocked_by.length > 0) {
    if (t.status !== "queued") return refuse(`task ${shortId(t.id)} is ${t.status}, not queued; only a runnable task is given blockers`)
    const blockers = [...new Set(d.blocked_by)]
    const why = blockersRefusal(ctx.all, t.id, blockers, ctx.exists)
    if (why !== undefined) return refuse(why)
    return change(T.block(t, blockers, reason === "" ? "the conductor" : `the conductor: ${reason}`), `blocked on ${blockers.map(shortId).join(", ")}`)
  }
  if (d.recovery === undefined) return refuse("the decision names no blocker, recovery or question")
  return planRecovery(t, d.recovery, reason, ctx)
}

const planRecovery = (t: T.Task, recovery: Recovery, reason: string, ctx: DecideContext): Plan => {
  if (t.status !== "failed" && t.status !== "held")
    return refuse(`task ${shortId(t.id)} is ${t.status}; a recovery is only for a stalled, failed or held task`)
  if (ctx.stalled && recovery !== "requeue" && recovery !== "hold")
    return refuse(`task ${shortId(t.id)} stalled; it may only be requeued or held, not ${recovery}`)
  switch (recovery) {
    case "requeue":
      return change(T.requeue(t), "requeued for a fresh start")
    case "hold":
      if (t.status === "held") return refuse(`task ${shortId(t.id)} is already held`)
      return change(T.hold(t, reason === "" ? "the conductor held it" : `the conductor: ${reason}`, "machine"), "held")
    case "review":
      if (ctx.survivingBranch === null)
        return refuse(`task ${shortId(t.id)}'s last run left no branch with commits ahead of its base; there is nothing to review`)
      return change(T.requestReview(t, ctx.survivingBranch), `requeued to review ${ctx.survivingBranch}`)
    case "done":
      return change(T.succeed(t), "marked done")
  }
}
