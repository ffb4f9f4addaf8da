/**
 * Tasks: work filed for magi to do unattended, one after another.
 *
 * This module is the record and its rules only: data, orders and pure
 * transitions. Nothing here touches the disk or the clock; the store stamps
 * `updated_at` when it writes, and every caller (the CLI, the web, the loop,
 * later the conductor and the chat) moves a task by the same functions, so a
 * status can only change the ways written down here.
 */
import { Data, Either, Schema } from "effect"
import { isNewerSchema, type NewerSchema, parseVersioned } from "../store/VersionedJson.js"
import { Timestamp, makeId, shortId, timestamp } from "../questions/Question.js"

export { makeId, shortId, timestamp }

/**
 * On-disk format version. A file is refused only when its `schema` is greater
 * than this; every field but the identity and the status has a default, so an
 * older file reads.
 */
export const TASK_SCHEMA = 1

/** The longest title `titleFrom` makes: one line of a phone held upright. */
export const TITLE_MAX = 72

/**
 * The longest instruction magi files, in UTF-8 bytes: a task file is a few
 * kilobytes, and the stored record (JSON escaping can swell text up to six
 * times) must stay under the store's read cap (`TaskStore.TASK_MAX_BYTES`).
 */
export const INSTRUCTION_MAX_BYTES = 128 * 1024

/** The longest title kept when one is given. */
export const GIVEN_TITLE_MAX = 200

/** What a task whose text has nothing in it is called, rather than nothing. */
export const EMPTY_TITLE = "(empty task)"

// ---------------------------------------------------------------------------
// Shapes

/**
 * Where a task is in its life. `failed` is a failure with attempts left (it
 * runs again); `held` waits for the owner (a manual hold, or the machine
 * giving up); `blocked` waits for other tasks or questions.
 */
export const TaskStatus = Schema.Literal("queued", "running", "done", "failed", "held", "blocked")
export type TaskStatus = typeof TaskStatus.Type

/** Who put a task on hold: the owner, or the loop giving up on it. */
export const HoldSource = Schema.Literal("manual", "machine")
export type HoldSource = typeof HoldSource.Type

/** Who filed the task. */
export const HumanSource = Schema.Struct({ kind: Schema.Literal("human") })
export const AgentSource = Schema.Struct({ kind: Schema.Literal("agent"), run: Schema.String, node: Schema.String })
export const IssueSource = Schema.Struct({ kind: Schema.Literal("issue"), number: Schema.Number, repo: Schema.String })
export const TaskSource = Schema.Union(HumanSource, AgentSource, IssueSource)
export type TaskSource = typeof TaskSource.Type

export const HUMAN: TaskSource = { kind: "human" }

/** A question this task waited on, and what the owner said. */
export const RecordedAnswer = Schema.Struct({ question: Schema.String, answer: Schema.String })
export type RecordedAnswer = typeof RecordedAnswer.Type

/** One piece of filed work. Field names are the JSON names. */
export const Task = Schema.Struct({
  schema: Schema.Number,
  id: Schema.String,
  title: Schema.String,
  /** What the agent is told, verbatim. */
  instruction: Schema.String,
  /**
   * The repository the work happens in (a run branches off its checkout):
   * its folder on the host that filed it, or, filed by a name that host
   * has no clone of, the name.
   */
  repo: Schema.String,
  /**
   * The repository's name (`[repos]`), the same on every host: each host
   * runs the task in its own clone of that name, and a host without one
   * leaves it to the others. Null for a task filed by folder only (no
   * `[repos]` entry names it), which runs at `repo` as before hosts.
   */
  repo_name: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null }),
  source: Schema.optionalWith(TaskSource, { default: () => HUMAN }),
  /** Higher runs first; ties go to the older task. */
  priority: Schema.optionalWith(Schema.Number, { default: () => 0 }),
  status: TaskStatus,
  /** Runs started and not refunded. */
  attempts: Schema.optionalWith(Schema.Number, { default: () => 0 }),
  /** Every run started for it, oldest first. */
  runs: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] }),
  last_error: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null }),
  hold_reason: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null }),
  hold_source: Schema.optionalWith(Schema.NullOr(HoldSource), { default: () => null }),
  /** Task or question ids it waits on. */
  blocked_by: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] }),
  block_reason: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null }),
  /** The status it goes back to once nothing blocks it. */
  blocked_from: Schema.optionalWith(Schema.NullOr(TaskStatus), { default: () => null }),
  /** Answers to the questions it was blocked on, in the order they came. */
  answers: Schema.optionalWith(Schema.Array(RecordedAnswer), { default: () => [] }),
  /** Set when the next run should review this branch rather than start over. */
  review_branch: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null }),
  /** Set when the next run should start over, not carry on from earlier runs. */
  fresh_start: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  /** `magi task add --solo`: one agent works it, whatever `[graph] candidates` says. */
  solo: Schema.optional(Schema.Boolean),
  created_at: Timestamp,
  updated_at: Timestamp
})
export type Task = typeof Task.Type

// ---------------------------------------------------------------------------
// Errors

/**
 * A transition the task's status does not allow, or bad input to one. The
 * message is shown verbatim to whoever asked, so each reads differently.
 */
export class TaskRefused extends Data.TaggedError("TaskRefused")<{
  readonly reason: "running" | "done" | "held" | "empty" | "status"
  readonly message: string
}> {}

/** A file that is not a task this build can read. */
export class UnreadableTask extends Data.TaggedError("UnreadableTask")<{ readonly message: string }> {}

// ---------------------------------------------------------------------------
// Construction, reading, writing

export interface NewTask {
  readonly id: string
  readonly instruction: string
  readonly repo: string
  /** The repository's name (`[repos]`), when it has one. */
  readonly repoName?: string | null | undefined
  readonly now: Date
  readonly title?: string | undefined
  readonly priority?: number | undefined
  readonly source?: TaskSource | undefined
  readonly solo?: boolean | undefined
}

/** A fresh queued task; the title comes from the text unless given. */
export const make = (input: NewTask): Task => ({
  schema: TASK_SCHEMA,
  id: input.id,
  title: input.title !== undefined && input.title.trim() !== "" ? input.title.trim() : titleFrom(input.instruction),
  instruction: input.instruction,
  repo: input.repo,
  repo_name: input.repoName ?? null,
  source: input.source ?? HUMAN,
  priority: input.priority ?? 0,
  status: "queued",
  attempts: 0,
  runs: [],
  last_error: null,
  hold_reason: null,
  hold_source: null,
  blocked_by: [],
  block_reason: null,
  blocked_from: null,
  answers: [],
  review_branch: null,
  fresh_start: false,
  ...(input.solo === true ? { solo: true } : {}),
  created_at: timestamp(input.now),
  updated_at: timestamp(input.now)
})

const decodeShape = Schema.decodeUnknownEither(Task, { errors: "first" })

// -- the fast path ------------------------------------------------------------
// A listing decodes thousands of tasks, and the schema's decode costs several
// times the JSON parse. A file magi wrote has every field, each of the right
// type, so that exact shape is checked by hand and taken as it is; anything
// else (an older file needing defaults, a bad value needing its message)
// goes through the schema, which stays the one definition of a task.

const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/
const STATUSES: ReadonlySet<unknown> = new Set(TaskStatus.literals)
const HOLD_SOURCES: ReadonlySet<unknown> = new Set(HoldSource.literals)
type Raw = { readonly [key: string]: unknown }
const isRaw = (v: unknown): v is Raw => typeof v === "object" && v !== null && !Array.isArray(v)
const str = (v: unknown): v is string => typeof v === "string"
const strOrNull = (v: unknown) => v === null || typeof v === "string"
const stamp = (v: unknown) => typeof v === "string" && TIMESTAMP.test(v) && !Number.isNaN(Date.parse(v))
const keysAre = (o: Raw, n: number) => Object.keys(o).length === n
const strings = (v: unknown) => Array.isArray(v) && v.every(str)
const sourceOk = (s: unknown) =>
  isRaw(s) &&
  ((s.kind === "human" && keysAre(s, 1)) ||
    (s.kind === "agent" && keysAre(s, 3) && str(s.run) && str(s.node)) ||
    (s.kind === "issue" && keysAre(s, 3) && typeof s.number === "number" && str(s.repo)))
const answersOk = (v: unknown) => Array.isArray(v) && v.every((a) => isRaw(a) && keysAre(a, 2) && str(a.question) && str(a.answer))

/** Is `raw` a complete, well-typed task exactly as magi writes one? */
const complete = (raw: Raw): boolean =>
  // `solo` is written only when set, so a plain task has one key fewer.
  keysAre(raw, raw.solo === undefined ? KNOWN_COUNT - 1 : KNOWN_COUNT) &&
  typeof raw.schema === "number" &&
  str(raw.id) &&
  str(raw.title) &&
  str(raw.instruction) &&
  str(raw.repo) &&
  strOrNull(raw.repo_name) &&
  sourceOk(raw.source) &&
  typeof raw.priority === "number" &&
  STATUSES.has(raw.status) &&
  typeof raw.attempts === "number" &&
  strings(raw.runs) &&
  strOrNull(raw.last_error) &&
  strOrNull(raw.hold_reason) &&
  (raw.hold_source === null || HOLD_SOURCES.has(raw.hold_source)) &&
  strings(raw.blocked_by) &&
  strOrNull(raw.block_reason) &&
  (raw.blocked_from === null || STATUSES.has(raw.blocked_from)) &&
  answersOk(raw.answers) &&
  strOrNull(raw.review_branch) &&
  typeof raw.fresh_start === "boolean" &&
  (raw.solo === undefined || typeof raw.solo === "boolean") &&
  stamp(raw.created_at) &&
  stamp(raw.updated_at)
const KNOWN_FIELDS: ReadonlySet<string> = new Set(Object.keys(Task.fields))
const KNOWN_COUNT = KNOWN_FIELDS.size

/**
 * Read one stored task: a newer magi's file refused by name before its shape
 * is judged, an older one read with defaults, an unknown field refused (a
 * typo silently dropped would be data lost at the next write). The key check
 * is by hand because the schema's excess-property mode costs several times a
 * decode, and a listing reads thousands of files.
 */
export const decode = (body: string, source: string): Either.Either<Task, UnreadableTask | NewerSchema> =>
  parseVersioned(body, source, TASK_SCHEMA, (raw) => `task ${typeof raw.id === "string" ? raw.id : source}`).pipe(
    Either.mapLeft((e) => (isNewerSchema(e) ? e : new UnreadableTask({ message: e.message }))),
    Either.flatMap((raw) => {
      if (isRaw(raw)) {
        const unknown = Object.keys(raw).find((k) => !KNOWN_FIELDS.has(k))
        if (unknown !== undefined)
          return Either.left(new UnreadableTask({ message: `${source} is not a task magi can read: unknown field \`${unknown}\`` }))
        if (complete(raw)) return Either.right(raw as unknown as Task)
      }
      return Either.mapLeft(decodeShape(raw), (e) => new UnreadableTask({ message: `${source} is not a task magi can read: ${e.message}` }))
    })
  )

/** The stored form: pretty JSON, every field present. */
export const encode = (t: Task): string => JSON.stringify(t, null, 2) + "\n"

// ---------------------------------------------------------------------------
// Reading a task

/** Why an instruction is too long to file, if it is. */
export const instructionTooLong = (instruction: string): string | undefined => {
  const bytes = Buffer.byteLength(instruction, "utf8")
  return bytes > INSTRUCTION_MAX_BYTES
    ? `the instruction is ${bytes} bytes, over magi's cap of ${INSTRUCTION_MAX_BYTES} bytes for a task; put the long part in a file in the repository and point the task at it`
    : undefined
}

/**
 * The folder a task runs in on a host whose clones are `repos` (`[repos]`):
 * that host's clone of its named repository, or its folder when it was filed
 * by folder only; undefined when it names a repository this host lacks.
 */
export const repoHere = (t: Pick<Task, "repo" | "repo_name">, repos: Readonly<Record<string, string>>): string | undefined =>
  t.repo_name === null ? t.repo : Object.hasOwn(repos, t.repo_name) ? repos[t.repo_name] : undefined

/** The name of the repository at `root` in `repos` (`[repos]`), if one names it. */
export const repoNameOf = (root: string, repos: Readonly<Record<string, string>>): string | undefined =>
  Object.entries(repos).find(([, path]) => path === root)?.[0]

/** How a task's repository reads to a person: its name, else its folder. */
export const repoLabel = (t: Pick<Task, "repo" | "repo_name">): string => t.repo_name ?? t.repo

/** Can the loop start it? Queued, or failed with attempts left. */
export const runnable = (t: Task): boolean => t.status === "queued" || t.status === "failed"

/** Still to be worked on or decided: everything but done. */
export const isOpen = (t: Task): boolean => t.status !== "done"

/** How the source reads in one line: `human`, `impl@9fb7`, `owner/repo#12`. */
export const sourceLabel = (s: TaskSource): string =>
  s.kind === "human" ? "human" : s.kind === "agent" ? `${s.node}@${shortId(s.run)}` : `${s.repo}#${s.number}`

/** The source a process filing work has: the agent of the run it runs in, else the owner. */
export const sourceFromEnv = (env: { readonly MAGI_RUN?: string | undefined; readonly MAGI_NODE?: string | undefined }): TaskSource =>
  env.MAGI_RUN !== undefined && env.MAGI_RUN !== ""
    ? { kind: "agent", run: env.MAGI_RUN, node: env.MAGI_NODE !== undefined && env.MAGI_NODE !== "" ? env.MAGI_NODE : "agent" }
    : HUMAN

/**
 * A title from free text: the first line with anything on it, without the
 * markdown that starts headings, bullets and quotes, cut to `max` characters
 * (code points, so a cut never splits one) with `…` standing for the rest.
 */
export const titleFrom = (text: string, max: number = TITLE_MAX): string => {
  const line = text.split(/\r?\n/).find((l) => l.trim() !== "") ?? ""
  const bare = line.replace(/^[\s#\-*>]+/, "").trim()
  if (bare === "") return EMPTY_TITLE
  const chars = Array.from(bare)
  return chars.length <= max ? bare : chars.slice(0, Math.max(0, max - 1)).join("") + "…"
}

const newestFirst = (a: Task, b: Task) => a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : a.id < b.id ? 1 : a.id > b.id ? -1 : 0

/** The order `magi task list` shows: higher priority first, then newest first. */
export const listOrder = (a: Task, b: Task): number => b.priority - a.priority || newestFirst(a, b)

/**
 * The order the loop takes work in: higher priority first, then *oldest*
 * first, so a burst of new tasks at one priority cannot starve an old one.
 */
export const runOrder = (a: Task, b: Task): number => b.priority - a.priority || newestFirst(b, a)

/** The task the loop should start next, if any. */
export const nextRunnable = (tasks: ReadonlyArray<Task>): Task | undefined => {
  let best: Task | undefined
  for (const t of tasks) if (runnable(t) && (best === undefined || runOrder(t, best) < 0)) best = t
  return best
}

/** Every runnable task, in the order the loop takes them. */
export const runQueue = (tasks: ReadonlyArray<Task>): ReadonlyArray<Task> => tasks.filter(runnable).sort(runOrder)

/**
 * Would making task `id` wait on `blockers` close a circle? The path from
 * `id` back to itself when it would (`[id, …, id]`), else undefined. Only
 * tasks wait on things, so the walk follows `blocked_by` through tasks.
 */
export const circleThrough = (tasks: ReadonlyArray<Task>, id: string, blockers: ReadonlyArray<string>): ReadonlyArray<string> | undefined => {
  const waitsOn = new Map(tasks.map((t) => [t.id, t.blocked_by] as const))
  const seen = new Set<string>()
  const walk = (from: string, path: ReadonlyArray<string>): ReadonlyArray<string> | undefined => {
    if (from === id) return [...path, from]
    if (seen.has(from)) return undefined
    seen.add(from)
    for (const next of waitsOn.get(from) ?? []) {
      const found = walk(next, [...path, from])
      if (found) return found
    }
    return undefined
  }
  for (const b of blockers) {
    const found = walk(b, [id])
    if (found) return found
  }
  return undefined
}

// ---------------------------------------------------------------------------
// Transitions: each returns the new task or why it was refused.

type Result = Either.Either<Task, TaskRefused>

const refuse = (reason: TaskRefused["reason"], message: string): Result => Either.left(new TaskRefused({ reason, message }))

const name = (t: Task) => `task ${shortId(t.id)}`

const refuseRunning = (t: Task, what: string): Result | undefined =>
  t.status === "running"
    ? refuse("running", `${name(t)} is running; ${what} once its run has ended (or hold it and wait)`)
    : undefined

/** Fields every "start over" clears: errors, holds, blocks, the review. */
const cleared = {
  last_error: null,
  hold_reason: null,
  hold_source: null,
  blocked_by: [],
  block_reason: null,
  blocked_from: null,
  review_branch: null
} as const

/** The loop took it: running on `run`, one more attempt spent. */
export const start = (t: Task, run: string): Result => {
  if (!runnable(t))
    return refuse("status", `${name(t)} is ${t.status}, not queued or failed, so it cannot be started`)
  // A parked run picked up again is the same run: listed once.
  const runs = t.runs.at(-1) === run ? t.runs : [...t.runs, run]
  return Either.right({ ...t, status: "running", attempts: t.attempts + 1, runs, fresh_start: false })
}

/**
 * Its run failed. With attempts left it is `failed` (runnable again);
 * once `attempts` reaches `maxAttempts` the machine holds it, so the owner
 * decides what a third try would change.
 */
export const fail = (t: Task, why: string, maxAttempts: number): Result => {
  if (t.status !== "running") return refuse("status", `${name(t)} is ${t.status}, not running, so it cannot fail`)
  if (t.attempts >= maxAttempts)
    return Either.right({
      ...t,
      status: "held",
      last_error: why,
      hold_source: "machine",
      hold_reason: `failed ${t.attempts} of ${maxAttempts} attempts; last: ${why}`
    })
  return Either.right({ ...t, status: "failed", last_error: why })
}

/**
 * Its run stopped through no fault of the task (a usage limit, a loop
 * stopped in order, a run gone idle): failed, with the attempt given back.
 * (A loop that died mid-turn is `fail`: the crash may be the task's own.)
 */
export const stall = (t: Task, why: string): Result => {
  if (t.status !== "running") return refuse("status", `${name(t)} is ${t.status}, not running, so it cannot stall`)
  return Either.right({ ...t, status: "failed", attempts: Math.max(0, t.attempts - 1), last_error: why })
}

/** Finished: done, with every error, hold and block cleared. */
export const succeed = (t: Task): Result => {
  if (t.status === "done") return refuse("done", `${name(t)} is already done`)
  return Either.right({ ...t, ...cleared, status: "done" })
}

/**
 * Hold it until released, whatever else happens: the owner's hold by
 * default; the loop's (`machine`) when it cannot go on without the owner.
 */
export const hold = (t: Task, reason: string, source: HoldSource = "manual"): Result => {
  if (t.status === "done") return refuse("done", `${name(t)} is done; there is nothing left to hold`)
  return Either.right({ ...t, status: "held", hold_source: source, hold_reason: reason.trim() === "" ? null : reason.trim() })
}

/**
 * Wait on other tasks or questions. Remembers where it was blocked from (the
 * first time: blocking a blocked task adds to the list), so `unblock` can put
 * it back.
 */
export const block = (t: Task, ids: ReadonlyArray<string>, reason: string): Result => {
  if (ids.length === 0) return refuse("empty", `${name(t)} needs at least one task or question to wait on`)
  if (t.status === "done") return refuse("done", `${name(t)} is done; it has nothing left to wait for`)
  if (t.status === "held")
    return refuse("held", `${name(t)} is held; release it before making it wait on anything`)
  const waits = [...t.blocked_by, ...ids.filter((id, i) => !t.blocked_by.includes(id) && ids.indexOf(id) === i)]
  return Either.right({
    ...t,
    status: "blocked",
    blocked_by: waits,
    block_reason: reason.trim() === "" ? t.block_reason : reason.trim(),
    blocked_from: t.status === "blocked" ? t.blocked_from : t.status
  })
}

/**
 * One blocker is out of the way. Once none is left the task goes back to
 * where it was blocked from; a task blocked while running comes back queued,
 * since the run it had is gone. An id it never waited on changes nothing.
 */
export const unblock = (t: Task, id: string): Result => {
  if (!t.blocked_by.includes(id)) return Either.right(t)
  const left = t.blocked_by.filter((b) => b !== id)
  if (left.length > 0 || t.status !== "blocked") return Either.right({ ...t, blocked_by: left })
  const back = t.blocked_from === null || t.blocked_from === "running" || t.blocked_from === "blocked" ? "queued" : t.blocked_from
  return Either.right({ ...t, blocked_by: [], block_reason: null, blocked_from: null, status: back })
}

/** Record the answer to a question the task waited on (once per question). */
export const recordAnswer = (t: Task, question: string, answer: string): Task =>
  t.answers.some((a) => a.question === question) ? t : { ...t, answers: [...t.answers, { question, answer }] }

/**
 * Back in the queue as if new: attempts 0, errors, holds, blocks and the
 * review branch cleared. Refused while running: its run is still going.
 */
export const release = (t: Task): Result => {
  const running = refuseRunning(t, "release it")
  if (running) return running
  return Either.right({ ...t, ...cleared, status: "queued", attempts: 0, fresh_start: false })
}

/** `release`, and the next run starts over rather than carrying on. */
export const requeue = (t: Task): Result => Either.map(release(t), (r) => ({ ...r, fresh_start: true }))

/** `release`, and the next run reviews `branch` rather than starting over. */
export const requestReview = (t: Task, branch: string): Result => {
  if (branch.trim() === "") return refuse("empty", `${name(t)} needs a branch to review`)
  return Either.map(release(t), (r) => ({ ...r, review_branch: branch.trim() }))
}

/** A new priority. Refused while running: the order it was started in is history. */
export const reprioritize = (t: Task, priority: number): Result => {
  if (!Number.isSafeInteger(priority))
    return refuse("empty", `a priority is a whole number, not ${priority}`)
  const running = refuseRunning(t, "change its priority")
  if (running) return running
  return Either.right({ ...t, priority })
}

/**
 * New words for the task. Refused while running (the agent is working from
 * the old ones) and when the instruction is empty. The title follows the
 * instruction unless one is given.
 */
export const edit = (t: Task, change: { readonly instruction: string; readonly title?: string | undefined }): Result => {
  const running = refuseRunning(t, "edit it")
  if (running) return running
  if (change.instruction.trim() === "") return refuse("empty", `${name(t)} needs an instruction; an empty one tells the agent nothing`)
  const size = instructionTooLong(change.instruction)
  if (size !== undefined) return refuse("empty", size)
  const title = change.title !== undefined && change.title.trim() !== "" ? change.title.trim() : titleFrom(change.instruction)
  return Either.right({ ...t, instruction: change.instruction, title })
}

/** May the task be deleted? Not while running: a run is still working on it. */
export const removable = (t: Task): Either.Either<Task, TaskRefused> => refuseRunning(t, "remove it") ?? Either.right(t)
