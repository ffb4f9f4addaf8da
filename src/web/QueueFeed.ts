/**
 * The queue as the web serves it: every task with what the owner needs to
 * act on it from a phone (what it waits on, by name; which of its run's
 * questions are still outstanding), serialised once per change rather than once
 * per request.
 *
 * The store already keeps its listing while the queue folder is unchanged,
 * and the question snapshot keeps its own, so the rendered list is kept for
 * as long as both are the same objects: a thousand tasks cost one stat per
 * request, not a thousand reads and a megabyte of JSON.
 *
 * Also the few things the web needs that the queue knows: which task a run
 * works, which repositories this home has seen, and which one `magi web` was
 * started in (where a task filed from the phone goes by default).
 */
import * as CommandExecutor from "@effect/platform/CommandExecutor"
import { Context, Effect, Layer, Option, Ref } from "effect"
import * as NodeZlib from "node:zlib"
import { ConductorLog, type DecisionRecord } from "../daemon/ConductorLog.js"
import { retryAt } from "../daemon/QueueDecide.js"
import * as Q from "../questions/Question.js"
import type { Question } from "../questions/Question.js"
import * as T from "../queue/Task.js"
import type { Task } from "../queue/Task.js"
import { TaskStore, type TaskStoreError } from "../queue/TaskStore.js"
import { git } from "../runs/Worktree.js"
import { QuestionStore, type StoreError } from "../questions/QuestionStore.js"
import type * as RecordStore from "../store/RecordStore.js"
import { RunFeed } from "./RunFeed.js"
import { Snapshots } from "./Snapshot.js"

/** One thing a task waits on, by name, so the page need not look it up. */
export interface Blocker {
  readonly id: string
  /** `missing`: neither a task nor a question has that id any more. */
  readonly kind: "task" | "question" | "missing"
  /** The task's title or the question's summary; empty when missing. */
  readonly title: string
  readonly status: string
}

/**
 * A question the task's running run still waits on: open, or answered and
 * not yet delivered to its agent (the run is not over until it is).
 */
export interface RunQuestion {
  readonly id: string
  readonly summary: string
  readonly status: Q.QuestionStatus
  /** Open, and the owner asked back: the agent owes a reply, not the owner. */
  readonly waiting_on_agent: boolean
}

/** A task as the API shows it: the record, its blockers by name, and what its running run waits on. */
export type TaskView = Task & {
  readonly blockers: ReadonlyArray<Blocker>
  readonly run_questions: ReadonlyArray<RunQuestion>
  /** Can the loop start it now: queued, or failed with attempts left. */
  readonly runnable: boolean
  /** The conductor's latest decision about this task, applied or refused; null when it never decided one. */
  readonly conductor: DecisionRecord | null
  /** When a failed task goes again (after the loop's pause), as an ISO time; null for any other. */
  readonly retry_at: string | null
}

/** A reference to the task a run works, for the run's page. */
export interface TaskRef {
  readonly id: string
  readonly title: string
  readonly status: string
}

/** Open first (in the store's order: priority, then newest), then history, newest first. */
export const queueOrder = (tasks: ReadonlyArray<Task>): ReadonlyArray<Task> => [
  ...tasks.filter(T.isOpen),
  ...tasks.filter((t) => !T.isOpen(t)).sort((a, b) => b.updated_at.localeCompare(a.updated_at) || b.id.localeCompare(a.id))
]

/** Each task's latest decision, from the log read newest first: one pass, not one search per task. */
export const latestDecisions = (records: ReadonlyArray<DecisionRecord>): ReadonlyMap<string, DecisionRecord> => {
  const latest = new Map<string, DecisionRecord>()
  for (const r of records) if (!latest.has(r.task)) latest.set(r.task, r)
  return latest
}

/** The views of `tasks` against the questions and the conductor's latest decisions: pure, so a test can call it. */
export const views = (
  tasks: ReadonlyArray<Task>,
  questions: ReadonlyArray<Question>,
  decisions: ReadonlyMap<string, DecisionRecord> = new Map(),
  /** Tasks named as blockers but not listed (done and shelved): for their names only. */
  shelvedTasks: ReadonlyArray<Task> = []
): ReadonlyArray<TaskView> => {
  const taskById = new Map([...shelvedTasks, ...tasks].map((t) => [t.id, t]))
  const questionById = new Map(questions.map((q) => [q.id, q]))
  const awaitedByRun = new Map<string, Array<Question>>()
  for (const q of questions) {
    if (!Q.owedToAgent(q) || q.run === "") continue
    const list = awaitedByRun.get(q.run) ?? []
    list.push(q)
    awaitedByRun.set(q.run, list)
  }
  const blocker = (id: string): Blocker => {
    const t = taskById.get(id)
    if (t !== undefined) return { id, kind: "task", title: t.title, status: t.status }
    const q = questionById.get(id)
    if (q !== undefined) return { id, kind: "question", title: q.summary, status: q.status }
    return { id, kind: "missing", title: "", status: "missing" }
  }
  return queueOrder(tasks).map((t): TaskView => {
    const lastRun = t.runs.at(-1)
    const awaited = t.status === "running" && lastRun !== undefined ? (awaitedByRun.get(lastRun) ?? []) : []
    return {
      ...t,
      blockers: t.blocked_by.map(blocker),
      run_questions: awaited.map((q) => ({ id: q.id, summary: q.summary, status: q.status, waiting_on_agent: Q.waitingOnAgent(q) })),
      runnable: T.runnable(t),
      conductor: decisions.get(t.id) ?? null,
      // Its last run's status is not read here: a usage limit's error names it, and such a task goes at once.
      retry_at: Option.match(Option.fromNullable(retryAt(t, t.last_error?.includes("usage limit") === true)), {
        onNone: () => null,
        onSome: (ms) => new Date(ms).toISOString()
      })
    }
  })
}

export interface QueueSnapshot {
  readonly tasks: ReadonlyArray<TaskView>
  /** `GET /api/queue`, serialised once per change. */
  readonly body: Uint8Array
  readonly gzipped: Uint8Array
}

const render = (tasks: ReadonlyArray<TaskView>): QueueSnapshot => {
  const body = Buffer.from(JSON.stringify(tasks), "utf8")
  return { tasks, body, gzipped: NodeZlib.gzipSync(body) }
}

export class QueueFeed extends Context.Tag("magi/web/QueueFeed")<
  QueueFeed,
  {
    /** The queue as it is now, cached while neither the tasks nor the questions moved. */
    readonly current: Effect.Effect<QueueSnapshot, TaskStoreError | StoreError>
    /** One task's view, as a write answers with. */
    readonly viewOf: (t: Task) => Effect.Effect<TaskView, TaskStoreError | StoreError>
    /** Done tasks moved to the month shelves, older than `before`, newest first; `next` for the page after, null at the end. */
    readonly history: (options: {
      readonly before?: string | undefined
      readonly limit: number
    }) => Effect.Effect<{ readonly tasks: ReadonlyArray<TaskView>; readonly next: string | null }, TaskStoreError>
    /** The task whose runs include `run`, if any. */
    readonly taskOfRun: (run: string) => Effect.Effect<Option.Option<TaskRef>>
    /** The git root `magi web` was started in, if it was started in one. */
    readonly startedIn: Option.Option<string>
    /** Repositories tasks and runs of this home name, most recently used first. */
    readonly repos: Effect.Effect<ReadonlyArray<string>, TaskStoreError | RecordStore.Failed>
  }
>() {
  static layer = Layer.effect(
    QueueFeed,
    Effect.gen(function* () {
      const store = yield* TaskStore
      const questionStore = yield* QuestionStore
      const snapshots = yield* Snapshots
      const runs = yield* RunFeed
      const executor = yield* CommandExecutor.CommandExecutor
      const log = yield* ConductorLog
      /**
       * The conductor's latest decision per task, with a key that moves when
       * the log does: it is append-only, so its record count and newest
       * record say whether anything was added (a refused decision changes no
       * task, so the tasks alone cannot say).
       */
      const decisions = log.read.pipe(
        Effect.map((records) => ({
          key: `${records.length}:${records.length === 0 ? "" : JSON.stringify(records[0])}`,
          latest: latestDecisions(records)
        }))
      )
      const startedIn = yield* git(process.cwd(), "rev-parse", "--show-toplevel").pipe(
        Effect.provideService(CommandExecutor.CommandExecutor, executor),
        Effect.option
      )
      /**
       * The questions the blockers of `of` name that neither `tasks` nor the
       * hot listing holds: settled and moved to a month's shelf (a blocker is
       * usually answered by the time anyone looks). Looked up by their exact
       * id, one read each, only for the few blockers named; an id found
       * nowhere stays "missing".
       */
      const shelvedBlockers = (of: ReadonlyArray<Task>, tasks: ReadonlyArray<Task>, hot: ReadonlyArray<Question>) => {
        const known = new Set([...tasks.map((t) => t.id), ...hot.map((q) => q.id)])
        const wanted = [...new Set(of.flatMap((t) => t.blocked_by))].filter((id) => !known.has(id))
        return Effect.forEach(wanted, (id) =>
          // `get` also takes a prefix; a blocker names a whole id or nothing.
          questionStore.get(id).pipe(Effect.option, Effect.map(Option.filter((q) => q.id === id)))).pipe(
            Effect.map((found) => found.flatMap((q) => (Option.isSome(q) ? [q.value] : [])))
          )
      }
      /** The same for tasks done and shelved since. */
      const shelvedTaskBlockers = (of: ReadonlyArray<Task>, tasks: ReadonlyArray<Task>) => {
        const known = new Set(tasks.map((t) => t.id))
        const wanted = [...new Set(of.flatMap((t) => t.blocked_by))].filter((id) => !known.has(id))
        return Effect.forEach(wanted, (id) => store.get(id).pipe(Effect.option, Effect.map(Option.filter((t) => t.id === id)))).pipe(
          Effect.map((found) => found.flatMap((t) => (Option.isSome(t) ? [t.value] : [])))
        )
      }

      /** The last snapshot built, what it was built from, and its build's sequence number. */
      const latest = yield* Ref.make(
        Option.none<{
          readonly tasks: ReadonlyArray<Task>
          readonly questions: ReadonlyArray<Question>
          readonly decisions: { readonly key: string; readonly latest: ReadonlyMap<string, DecisionRecord> }
          readonly snapshot: QueueSnapshot
          readonly seq: number
        }>()
      )
      /** How many builds have started. */
      const started = yield* Ref.make(0)
      // One build at a time, and a request that finds one running shares the
      // next: after a write every open page refetches at once, and while the
      // store re-reads a thousand files twenty pages must cost one re-read,
      // not twenty (which, on a busy machine, took seconds each).
      const building = yield* Effect.makeSemaphore(1)

      const current = Effect.gen(function* () {
        const arrival = yield* Ref.get(started)
        return yield* building.withPermits(1)(
          Effect.gen(function* () {
            const last = yield* Ref.get(latest)
            // A build that started after this request arrived saw every write it could know about.
            if (Option.isSome(last) && last.value.seq > arrival) return last.value.snapshot
            const seq = yield* Ref.updateAndGet(started, (n) => n + 1)
            const tasks = yield* store.list
            const questions = (yield* snapshots.current).questions
            // Read once per build, never once per task.
            const decided = yield* decisions
            const same = Option.filter(last, (l) => l.tasks === tasks && l.questions === questions && l.decisions.key === decided.key)
            const snapshot = Option.isSome(same)
              ? same.value.snapshot
              : render(
                views(
                  tasks,
                  [...questions, ...(yield* shelvedBlockers(tasks, tasks, questions))],
                  decided.latest,
                  yield* shelvedTaskBlockers(tasks, tasks)
                )
              )
            yield* Ref.set(latest, Option.some({ tasks, questions, decisions: decided, snapshot, seq }))
            return snapshot
          })
        )
      })

      // The task as written, against the others as last listed: a write
      // moved the folder's mtime, and waiting for a re-read of every task
      // only to name its blockers would make every tap as slow as a listing.
      const viewOf = (t: Task) =>
        Effect.gen(function* () {
          const last = yield* Ref.get(latest)
          const tasks = Option.isSome(last) ? last.value.tasks : yield* store.list
          const questions = (yield* snapshots.current).questions
          const decided = Option.isSome(last) ? last.value.decisions.latest : (yield* decisions).latest
          const all = [t, ...tasks.filter((x) => x.id !== t.id)]
          return views(all, [...questions, ...(yield* shelvedBlockers([t], all, questions))], decided, yield* shelvedTaskBlockers([t], all)).find(
            (v) => v.id === t.id
          )!
        })

      const taskOfRun = (run: string) =>
        store.ofRun(run).pipe(
          Effect.map(Option.map((t): TaskRef => ({ id: t.id, title: t.title, status: t.status }))),
          // display: the feed's entry; none when it cannot be read
          Effect.orElseSucceed(() => Option.none())
        )

      const repos = Effect.gen(function* () {
        const used = new Map<string, string>()
        const seen = (repo: string, at: string) => {
          // Folders only: a task filed by a name this host has no clone of keeps the name there, offered as a name.
          if (repo.startsWith("/") && (used.get(repo) ?? "") < at) used.set(repo, at)
        }
        for (const t of yield* store.list) seen(t.repo, t.created_at)
        for (const r of yield* runs.all) seen(r.repo, r.created_at)
        return [...used].sort((a, b) => b[1].localeCompare(a[1]) || a[0].localeCompare(b[0])).map(([repo]) => repo)
      })

      const history = (options: { readonly before?: string | undefined; readonly limit: number }) =>
        Effect.map(store.history(options), (page) => ({
          // One by one, so the page keeps the shelves' order (newest id first), which `next` pages by.
          tasks: page.tasks.flatMap((t) => views([t], [])),
          next: page.next
        }))

      return { current, viewOf, history, taskOfRun, startedIn, repos }
    })
  )
}
