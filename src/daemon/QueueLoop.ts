/**
 * The queue's loop: works filed tasks one after another, unattended.
 *
 * Every tick (after the waiter's, in `magi serve` and inside `magi web`) it
 * sweeps claims left by dead loops, clears blockers that are done or
 * answered, settles or stalls running tasks that nobody is working on, and
 * starts the next runnable task while fewer than `[daemon]
 * max_concurrent_runs` of its turns are going. A task runs exactly like
 * `magi run` (`runs/RunDriver`): its own worktree, branch and run record. A run
 * left waiting on the owner keeps its task running but frees its slot; the
 * waiter carries the answer to it, and a later tick settles the task by the
 * same rules once that delivery has ended the run.
 *
 * Across hosts sharing one PostgreSQL store, each host's loop is one of
 * several working one queue: it starts only tasks whose repository it has
 * (`[repos]` by name, or a task's folder), within its own
 * `max_concurrent_runs`, and a task's claim (`Claims`, one row every host
 * sees) makes exactly one of them run it. A task whose loop died is
 * noticed by any loop (its claim goes stale) and follows the attempts rule.
 *
 * All state that matters is on disk (tasks, claims, runs); the loop's own
 * memory is which turns it has in flight and which agents are resting after
 * a usage limit, so a restarted loop picks up where the last one stopped.
 */
import { Clock, Effect, Either, FiberSet, Option, Ref } from "effect"
import { Rosters, type AgentSpec } from "../agents/AgentRoster.js"
import * as Prompts from "../agents/Prompts.js"
import { MagiConfig } from "../platform/MagiConfig.js"
import * as Q from "../questions/Question.js"
import { QuestionStore } from "../questions/QuestionStore.js"
import { IMPL_SEAT, RUN_TURN_TIMEOUT, type TurnOutcome } from "../runs/NewRun.js"
import { RunDriver } from "../runs/RunDriver.js"
import * as FileSystem from "@effect/platform/FileSystem"
import { CompetitionDriver } from "../graph/CompetitionDriver.js"
import { VerifyDriver } from "../verify/VerifyDriver.js"
import * as GraphConfig from "../graph/GraphConfig.js"
import { outstanding, RunStore, type Run } from "../runs/Runs.js"
import type { TurnPrompt } from "../runs/RunTurns.js"
import { resumable } from "../runs/RunStatus.js"
import * as T from "../queue/Task.js"
import { taskInstruction } from "../queue/TaskPrompt.js"
import { TaskStore } from "../queue/TaskStore.js"
import { fileFollowUps } from "../queue/FollowUpFiling.js"
import * as CommandExecutor from "@effect/platform/CommandExecutor"
import { untilStoreAnswers } from "../store/StoreWait.js"
import { Conductor } from "./Conductor.js"
import { Deputies } from "./Deputies.js"
import {
  type BlockerState,
  resetAt,
  resolveBlockers,
  retryPaused,
  orphanSettlement,
  parkedCompetition,
  settle,
  type Settlement,
  settlementFor
} from "./QueueDecide.js"

/** One thing the loop did to a task, as `magi serve` prints it. */
export interface QueueEvent {
  readonly kind: "started" | "done" | "failed" | "held" | "stalled" | "waiting" | "unblocked" | "paused" | "conducted"
  readonly task: string
  readonly run: string | null
  readonly line: string
}

/** What the loop is doing now, for `daemon.json`. */
export interface QueueStatus {
  readonly current: ReadonlyArray<{ readonly task: string; readonly run: string }>
  /** Tasks this loop has brought to done since it started. */
  readonly completed: number
}

export interface QueueLoopShape {
  /** Look at the queue once; turns start in the background. */
  readonly tick: Effect.Effect<ReadonlyArray<QueueEvent>>
  /** Wait until no turn of this loop is in flight (tests, orderly shutdown). */
  readonly settle: Effect.Effect<void>
  readonly status: Effect.Effect<QueueStatus>
}

export interface QueueLoopOptions {
  /** `magi serve --max-attempts`, over `[daemon] max_attempts`. */
  readonly maxAttempts?: number | undefined
  /** Told of every started or settled task, as it happens. */
  readonly announce?: ((event: QueueEvent) => Effect.Effect<void>) | undefined
}

/** A loop whose in-flight turns end with the layer's scope. */
export class QueueLoop extends Effect.Service<QueueLoop>()("magi/QueueLoop", {
  scoped: (options: QueueLoopOptions = {}) => Effect.suspend(() => make(options))
}) {
  static layer = QueueLoop.Default
}

const title = (t: T.Task) => `${T.shortId(t.id)} ${t.title}`

export const make = Effect.fn("QueueLoop.make")(function* (options: QueueLoopOptions) {
  const tasks = yield* TaskStore
  const questions = yield* QuestionStore
  const runs = yield* RunStore
  const rosters = yield* Rosters
  const config = yield* MagiConfig
  const conductor = yield* Effect.serviceOption(Conductor)
  const deputies = yield* Effect.serviceOption(Deputies)
  const driver = yield* RunDriver
  // A task's run is a competition when its repository's config says so; a
  // loop built without the competition (some tests) runs every task solo.
  const competition = yield* Effect.serviceOption(CompetitionDriver)
  // A task's run that ended well is synced, reviewed and gated when its repository says so; the task ends only after.
  const verifier = yield* Effect.serviceOption(VerifyDriver)
  const fs = yield* Effect.serviceOption(FileSystem.FileSystem)
  const executor = yield* Effect.serviceOption(CommandExecutor.CommandExecutor)
  /**
   * A ready run's open nits and minors become follow-up tasks before its
   * task is settled, so a loop killed in between files the rest next time
   * (the filing skips what is filed); a failure is logged, the task settles.
   */
  const followUps = (run: Run) =>
    Option.isNone(fs) || Option.isNone(executor) || run.status !== "ready"
      ? Effect.void
      : fileFollowUps(run).pipe(
        Effect.provideService(FileSystem.FileSystem, fs.value),
        Effect.provideService(CommandExecutor.CommandExecutor, executor.value),
        Effect.provideService(TaskStore, tasks),
        Effect.provideService(QuestionStore, questions),
        Effect.tap((filed) => Effect.forEach(filed, (t) => Effect.logInfo(`filed follow-up ${T.shortId(t.id)}: ${t.title}`))),
        // fallback: follow-ups not filed are logged; the next settle files what is missing
        Effect.catchAll((e) => Effect.logWarning(`could not file run ${Q.shortId(run.id)}'s follow-ups: ${e.message}`)),
        Effect.asVoid
      )
  const maxAttempts = options.maxAttempts ?? config.maxAttempts
  const announce = options.announce ?? ((e: QueueEvent) => Effect.logInfo(e.line))
  /** Task id → run id, for the turns this loop has going. */
  const inFlight = yield* Ref.make(new Map<string, string>())
  /** Agent id → when it may run again, after a usage limit. */
  const restingUntil = yield* Ref.make(new Map<string, number>())
  /** Runs already reported as waiting, so the line is printed once. */
  const toldWaiting = yield* Ref.make(new Set<string>())
  const completed = yield* Ref.make(0)
  const turns = yield* FiberSet.make<void, never>()
  const nowMs = Clock.currentTimeMillis

  const say = (events: Array<QueueEvent>, event: QueueEvent) => Effect.zipRight(Effect.sync(() => events.push(event)), announce(event))

  /** The event a settled task gives, by where it ended up. */
  const settledEvent = (t: T.Task, run: string): QueueEvent | undefined => {
    switch (t.status) {
      case "done":
        return { kind: "done", task: t.id, run, line: `done ${title(t)} (run ${Q.shortId(run)})` }
      case "failed":
        return {
          kind: t.last_error?.includes("usage limit") ? "stalled" : "failed",
          task: t.id,
          run,
          line: `${t.last_error?.includes("usage limit") ? "stalled" : "failed"} ${title(t)} (attempt ${t.attempts} of ${maxAttempts} spent): ${
            t.last_error ?? ""
          }`
        }
      case "held":
        return { kind: "held", task: t.id, run, line: `held ${title(t)}: ${t.hold_reason ?? ""}` }
      default:
        return undefined
    }
  }

  /**
   * Update one task, logging instead of failing: one bad file must not stop
   * the loop. A store that is away is waited for: a settled turn whose task
   * was not moved on would be run again.
   */
  const change = (id: string, f: (t: T.Task) => T.Task) =>
    untilStoreAnswers(`queue: updating task ${T.shortId(id)}`, tasks.update(id, (t) => Either.right(f(t))), (e) => e._tag === "TaskStoreError").pipe(
      Effect.map(Option.some),
      // fallback: a task that cannot be updated is "not changed"; the next tick reads it again
      Effect.catchAll((e) => Effect.as(Effect.logWarning(`queue: could not update task ${T.shortId(id)}: ${e.message}`), Option.none<T.Task>()))
    )

  /** Settle the task by how its run ended; the claim goes unless the run waits on the owner. */
  const settleTask = (events: Array<QueueEvent>, taskId: string, run: Run) =>
    Effect.gen(function* () {
      const s = settlementFor(run)
      if (s._tag === "Wait") {
        if (run.status === "waiting" && !(yield* Ref.get(toldWaiting)).has(run.id)) {
          yield* Ref.update(toldWaiting, (w) => new Set(w).add(run.id))
          // display: the questions named in the "waiting" line; none when they cannot be read
          const open = (yield* questions.list.pipe(Effect.orElseSucceed(() => []))).filter((q) => q.run === run.id && outstanding(q))
          yield* say(events, {
            kind: "waiting",
            task: taskId,
            run: run.id,
            line: `waiting ${T.shortId(taskId)} on the owner (run ${Q.shortId(run.id)}, question ${
              open.map((q) => Q.shortId(q.id)).join(", ") || "?"
            }); the next task may start`
          })
        }
        return
      }
      yield* followUps(run)
      const after = yield* change(taskId, (t) => settle(t, run.id, s, maxAttempts))
      yield* tasks.unclaim(taskId)
      if (Option.isNone(after)) return
      const event = settledEvent(after.value, run.id)
      if (after.value.status === "done") yield* Ref.update(completed, (n) => n + 1)
      if (event !== undefined && after.value.runs.at(-1) === run.id) yield* say(events, event)
    })

  // -- 1. blockers ----------------------------------------------------------------

  const resolveAll = (events: Array<QueueEvent>, all: ReadonlyArray<T.Task>) =>
    Effect.gen(function* () {
      const blocked = all.filter((t) => t.status === "blocked")
      if (blocked.length === 0) return
      const byId = new Map(all.map((t) => [t.id, t]))
      // Read, not assumed: a question the listing failed to give would be "missing", and its task's wait dropped.
      const qs = new Map((yield* questions.list).map((q) => [q.id, q]))
      // A question answered long ago is on its month's shelf, not in the hot
      // listing: looked up by id before it is called missing.
      // So is a task done a while ago: looked up by id before it is called missing.
      for (const id of new Set(blocked.flatMap((t) => t.blocked_by)))
        if (!byId.has(id) && !qs.has(id)) {
          const shelved = yield* questions.get(id).pipe(Effect.map(Option.some), Effect.catchTag("QuestionNotFound", () => Effect.succeedNone))
          if (Option.isSome(shelved) && shelved.value.id === id) qs.set(id, shelved.value)
          else {
            const done = yield* tasks.get(id).pipe(Effect.map(Option.some), Effect.catchTag("TaskNotFound", () => Effect.succeedNone))
            if (Option.isSome(done) && done.value.id === id) byId.set(id, done.value)
          }
        }
      const lookup = (id: string): BlockerState => {
        const t = byId.get(id)
        if (t !== undefined) return { kind: "task", status: t.status }
        const q = qs.get(id)
        if (q !== undefined) return { kind: "question", status: q.status, answer: Q.resolution(q) }
        return { kind: "missing" }
      }
      for (const t of blocked) {
        if (resolveBlockers(t, lookup) === t) continue
        const after = yield* change(t.id, (fresh) => resolveBlockers(fresh, lookup))
        if (Option.isNone(after) || after.value.status === "blocked") continue
        yield* say(
          events,
          after.value.status === "held"
            ? { kind: "held", task: t.id, run: null, line: `held ${title(after.value)}: ${after.value.hold_reason ?? ""}` }
            : { kind: "unblocked", task: t.id, run: null, line: `unblocked ${title(after.value)}: nothing left to wait on` }
        )
      }
    })

  // -- 2. running tasks nobody here is working on ---------------------------------

  const follow = (events: Array<QueueEvent>, t: T.Task) =>
    Effect.gen(function* () {
      const runId = t.runs.at(-1)
      const claimant = yield* Effect.either(tasks.claimant(t.id))
      // Who holds it cannot be told (the store is away): never taken for
      // nobody, which would call a live loop, maybe this one, gone.
      if (Either.isLeft(claimant)) return yield* Effect.logDebug(`queue: the claim on task ${T.shortId(t.id)} cannot be read: ${claimant.left.message}`)
      const holder = claimant.right
      // Another live loop (another host's, on a shared store) holds it: that
      // loop settles it and says so; this one would only say it twice.
      if (Option.isSome(holder) && holder.value !== process.pid) return
      const loopAlive = Option.isSome(holder)
      const stall = (why: string) =>
        Effect.gen(function* () {
          const after = yield* change(t.id, (fresh) => (fresh.status === "running" && fresh.runs.at(-1) === runId
            ? Either.getOrElse(T.stall(fresh, why), () => fresh)
            : fresh))
          yield* tasks.unclaim(t.id)
          // fallback: best-effort stall of the run; the task's own settlement is what was written
          if (runId !== undefined) yield* runs.setStatus(runId, "stalled", why).pipe(Effect.ignore)
          if (Option.isSome(after) && after.value.status === "failed")
            yield* say(events, { kind: "stalled", task: t.id, run: runId ?? null, line: `stalled ${title(t)}: ${why}; the attempt is refunded` })
        })
      /**
       * Give up on the run under `s` (`orphanSettlement`): the run is
       * stalled either way (nothing of it is going on), the task spends the
       * attempt or not as `s` says.
       */
      const giveUp = (s: Settlement & { readonly why: string }) =>
        Effect.gen(function* () {
          if (runId === undefined) return
          const after = yield* change(t.id, (fresh) => settle(fresh, runId, s, maxAttempts))
          yield* tasks.unclaim(t.id)
          // fallback: best-effort stall of the run; the task's own settlement is what was written
          yield* runs.setStatus(runId, "stalled", s.why).pipe(Effect.ignore)
          if (Option.isNone(after) || after.value.runs.at(-1) !== runId) return
          const now = after.value
          if (now.status === "held") yield* say(events, { kind: "held", task: t.id, run: runId, line: `held ${title(now)}: ${now.hold_reason ?? ""}` })
          else if (now.status === "failed")
            yield* say(events, {
              kind: "stalled",
              task: t.id,
              run: runId,
              line: `stalled ${title(t)}: ${s.why}; ${
                s._tag === "Fail" ? `attempt ${now.attempts} of ${maxAttempts} spent, so it runs again` : "the attempt is refunded"
              }`
            })
        })
      if (runId === undefined) return loopAlive ? undefined : yield* stall("it was marked running but no run was ever recorded for it")
      const run = yield* Effect.either(runs.get(runId))
      if (Either.isLeft(run)) return loopAlive ? undefined : yield* stall(`its run ${runId} cannot be read (${run.left.message})`)
      // Read, not assumed: "nobody waits on the owner" would settle (stall) a run that still has an answer to carry.
      const waitingOnOwner = (yield* questions.list).some((q) => q.run === runId && outstanding(q))
      // A run with an answer still to deliver has not ended, even if the
      // waiter's delivery stalled it on a usage limit: the waiter carries the
      // answer once the limit lifts, and the task waits for that run.
      if (waitingOnOwner && resumable(run.right.status)) return yield* settleTask(events, t.id, { ...run.right, status: "waiting" })
      if (settlementFor(run.right)._tag !== "Wait" || run.right.status === "waiting") return yield* settleTask(events, t.id, run.right)
      const s = orphanSettlement({
        turnInFlight: yield* Effect.map(
          Effect.forEach(run.right.competition === undefined ? [IMPL_SEAT] : run.right.seats.map((s) => s.key), (seat) => driver.seatBusy(run.right, seat)),
          (busy) => busy.some((b) => b)
        ),
        waitingOnOwner,
        lastMovedMs: Math.max(Date.parse(run.right.updated_at), Date.parse(t.updated_at)),
        nowMs: yield* nowMs,
        loopAlive
      })
      if (s !== undefined && (s._tag === "Fail" || s._tag === "Stall")) yield* giveUp(s)
    })

  // -- 3. starting --------------------------------------------------------------------

  /** The agent for a task's repo: `[roles] implementer`, else the roster's first; or why there is none. */
  const implementerFor = (repo: string) =>
    Effect.gen(function* () {
      const roster = yield* Effect.either(rosters.forRepo(repo))
      if (Either.isLeft(roster)) return Either.left(`the agent roster for ${repo} cannot be read: ${roster.left.message}`)
      if (config.implementer !== null)
        return Either.fromOption(
          roster.right.get(config.implementer),
          () =>
            `[roles] implementer names ${config.implementer}, which is not in the roster for ${repo} (have: ${
              roster.right.agents.map((a) => a.id).join(", ") || "none"
            })`
        )
      return Either.fromOption(
        roster.right.first,
        () => `no agent to run it: configure [agents.<id>] for ${repo}, or put claude, codex, opencode or agy on PATH`
      )
    })

  /** Hold a task the loop cannot start, with why, so the owner sees it on the queue. */
  const holdForOwner = (events: Array<QueueEvent>, t: T.Task, why: string) =>
    Effect.gen(function* () {
      const after = yield* change(t.id, (fresh) => (T.runnable(fresh) ? Either.getOrElse(T.hold(fresh, why, "machine"), () => fresh) : fresh))
      if (Option.isSome(after) && after.value.status === "held")
        yield* say(events, { kind: "held", task: t.id, run: null, line: `held ${title(t)}: ${why}` })
    })

  /** The turn of a started task, in the background: drive it, then settle the task by it. */
  const work = (t: T.Task, run: Run, prompt: TurnPrompt, go: Effect.Effect<TurnOutcome, unknown> = driver.drive(run.id, prompt, RUN_TURN_TIMEOUT)) =>
    Effect.gen(function* () {
      const outcome: Either.Either<TurnOutcome, unknown> = yield* Effect.either(go)
      const events: QueueEvent[] = []
      if (Either.isLeft(outcome)) {
        // Could not even run (the seat taken, the record unreadable): not the task's fault.
        const why = `its turn could not run: ${(outcome.left as { message?: string }).message ?? String(outcome.left)}`
        // fallback: best-effort stall of the run; the task's own settlement is what was written
        yield* runs.setStatus(run.id, "stalled", why).pipe(Effect.ignore)
        return yield* settleTask(events, t.id, { ...run, status: "stalled", reason: why })
      }
      const { result } = outcome.right
      if (result !== undefined && result.quota !== null) {
        const until = resetAt(result.quota, new Date(yield* nowMs))
        const agent = run.seats[0]!.agent
        yield* Ref.update(restingUntil, (m) => new Map(m).set(agent, until))
        yield* say(events, {
          kind: "paused",
          task: t.id,
          run: run.id,
          line: `agent ${agent} hit its usage limit; no new turn for it until ${new Date(until).toISOString()}`
        })
      }
      yield* settleTask(events, t.id, outcome.right.run)
    }).pipe(
      Effect.onInterrupt(() =>
        // The loop is stopping mid-turn: the attempt was nobody's fault.
        Effect.gen(function* () {
          const why = "the magi loop stopped while its turn ran"
          yield* change(t.id, (fresh) => settle(fresh, run.id, { _tag: "Stall", why }, maxAttempts))
          yield* tasks.unclaim(t.id)
        })
      ),
      Effect.ensuring(Ref.update(inFlight, (m) => {
        const n = new Map(m)
        n.delete(t.id)
        return n
      })),
      // display: the turn's bad end is logged; the task is settled by the next tick
      Effect.catchAllCause((c) => Effect.logWarning(`queue: the turn of task ${T.shortId(t.id)} ended badly: ${c}`))
    )

  /** Try to start `t`; true when it started. `agents` remembers each repo's implementer for this tick. */
  const startOne = (events: Array<QueueEvent>, t: T.Task, agents: Map<string, Either.Either<AgentSpec, string>>) =>
    Effect.gen(function* () {
      const repo = T.repoHere(t, config.repos)
      // Filed by a name this host has no clone of: another host's to run.
      if (repo === undefined) return false
      const known = agents.get(repo)
      const agent = known ?? (yield* implementerFor(repo))
      agents.set(repo, agent)
      if (Either.isLeft(agent)) return yield* Effect.as(holdForOwner(events, t, agent.left), false)
      const until = (yield* Ref.get(restingUntil)).get(agent.right.id)
      if (until !== undefined && until > (yield* nowMs)) return false
      if (!(yield* tasks.claim(t.id))) return false
      const fresh = yield* Effect.either(tasks.get(t.id))
      if (Either.isLeft(fresh) || !T.runnable(fresh.right)) return yield* Effect.as(tasks.unclaim(t.id), false)
      return yield* begin(events, fresh.right, agent.right, repo)
      // display: a task that could not start is logged and left as it was
    }).pipe(Effect.catchAll((e) => Effect.as(Effect.logWarning(`queue: could not start task ${T.shortId(t.id)}: ${e.message}`), false)))

  /** How a task's run is seated when it is a competition; none for a solo run; or why its config cannot say. */
  const competitionFor = (t: T.Task, repo: string) =>
    Effect.gen(function* () {
      if (t.solo === true || Option.isNone(competition) || Option.isNone(fs)) return Either.right(Option.none())
      const roster = yield* Effect.either(rosters.forRepo(repo))
      if (Either.isLeft(roster)) return Either.left(`the agent roster for ${repo} cannot be read: ${roster.left.message}`)
      const settings = yield* Effect.either(GraphConfig.load(repo).pipe(Effect.provideService(FileSystem.FileSystem, fs.value)))
      if (Either.isLeft(settings)) return Either.left(settings.left.message)
      const seating = GraphConfig.seatsFor(settings.right, roster.right.agents.map((a) => a.id), false)
      return Either.right(
        seating.candidates > 1 ? Option.some({ seating, settings: settings.right, roster: roster.right, driver: competition.value }) : Option.none()
      )
    })

  /** A run's implementing, then (where the loop has one) its sync, review and gate: one way for a start and a resume. */
  const thenVerified = <E, R>(implemented: Effect.Effect<TurnOutcome, E, R>) =>
    Option.isNone(verifier)
      ? implemented
      : Effect.flatMap(implemented, (o) => Effect.map(verifier.value.afterImplementing(o.run), (ran): TurnOutcome => ({ ...o, run: ran })))

  const begin = (events: Array<QueueEvent>, t: T.Task, agent: AgentSpec, repo: string) =>
    Effect.gen(function* () {
      // A competition the last loop parked goes on from its recorded step, not as a new run.
      const last = t.runs.at(-1)
      const before = last === undefined ? undefined : Option.getOrUndefined(yield* Effect.option(runs.get(last)))
      if (Option.isSome(competition) && before !== undefined && parkedCompetition(before, config.hostName))
        return yield* resumeParked(events, t, before, competition.value)
      const compete = yield* competitionFor(t, repo)
      if (Either.isLeft(compete)) {
        yield* tasks.unclaim(t.id)
        yield* holdForOwner(events, t, compete.left)
        return false
      }
      const plan = Option.getOrUndefined(compete.right)
      const made = yield* Effect.either(
        plan === undefined
          ? driver.create(t.instruction, agent, repo)
          : plan.driver.create({ instruction: taskInstruction(t), repoDir: repo, seating: plan.seating, settings: plan.settings, roster: plan.roster })
      )
      if (Either.isLeft(made)) {
        yield* tasks.unclaim(t.id)
        yield* holdForOwner(events, t, `a run cannot be set up: ${made.left.message}`)
        return false
      }
      const run = made.right
      // The prompt from the task as it was queued: its answers, its review
      // branch, its fresh-start flag (which `start` then clears). It names
      // magi as the seat's agent runs it, which the turn works out.
      const instruction = taskInstruction(t)
      const prompt: TurnPrompt = (magi) => Prompts.runPrompt(instruction, run.worktree, run.branch, magi)
      const started = yield* Effect.either(tasks.update(t.id, (x) => T.start(x, run.id)))
      if (Either.isLeft(started)) {
        // fallback: best-effort mark of a run that never began; its task was already refused
        yield* runs.setStatus(run.id, "superseded", `its task changed before the run began: ${started.left.message}`).pipe(Effect.ignore)
        yield* tasks.unclaim(t.id)
        return false
      }
      yield* Ref.update(inFlight, (m) => new Map(m).set(t.id, run.id))
      yield* say(events, {
        kind: "started",
        task: t.id,
        run: run.id,
        line: `started ${title(t)} (priority ${t.priority}, attempt ${started.right.attempts} of ${maxAttempts}) as run ${Q.shortId(run.id)} with ${
          plan === undefined ? agent.id : `${plan.seating.candidates} candidates`
        } on ${run.branch}`
      })
      const implemented = plan === undefined
        ? driver.drive(run.id, prompt, RUN_TURN_TIMEOUT)
        : Effect.map(plan.driver.drive(run.id, plan.seating, plan.settings), (ended): TurnOutcome => ({ run: ended, result: undefined }))
      yield* FiberSet.run(turns, work(started.right, run, prompt, thenVerified(implemented)))
      return true
    })

  /** Pick a parked competition up again for its task: the same run, the attempt counted as any start's. */
  const resumeParked = (events: Array<QueueEvent>, t: T.Task, run: Run, compete: CompetitionDriver) =>
    Effect.gen(function* () {
      const started = yield* Effect.either(tasks.update(t.id, (x) => T.start(x, run.id)))
      if (Either.isLeft(started)) {
        yield* tasks.unclaim(t.id)
        return false
      }
      yield* Ref.update(inFlight, (m) => new Map(m).set(t.id, run.id))
      yield* say(events, {
        kind: "started",
        task: t.id,
        run: run.id,
        line: `resumed ${title(t)} (attempt ${started.right.attempts} of ${maxAttempts}): its run ${Q.shortId(run.id)} goes on at its ${
          run.competition?.step ?? ""
        } step`
      })
      const resumed = Effect.map(compete.resume(run.id), (ended): TurnOutcome => ({ run: ended, result: undefined }))
      yield* FiberSet.run(turns, work(started.right, run, "", thenVerified(resumed)))
      return true
    })

  /**
   * Failed tasks whose pause before a retry (`RETRY_PAUSE`) has not run out.
   * A run is read only for a task failed within the pause, to tell a failure
   * from a stall.
   */
  const pausedRetries = (all: ReadonlyArray<T.Task>) =>
    Effect.gen(function* () {
      const now = yield* nowMs
      const paused = new Set<string>()
      for (const t of all) {
        if (!retryPaused(t, false, now)) continue
        const last = t.runs.at(-1)
        const run = last === undefined ? Option.none<Run>() : yield* Effect.option(runs.get(last))
        if (retryPaused(t, Option.exists(run, (r) => r.status === "stalled"), now)) paused.add(t.id)
      }
      return paused
    })

  // -- the tick -------------------------------------------------------------------------

  const tick = Effect.gen(function* () {
    const events: QueueEvent[] = []
    // The queue is read, never assumed, before the tick writes: a failed listing fails the tick (logged below), the next one reads again.
    let all = yield* tasks.list
    yield* resolveAll(events, all)
    const mine = yield* Ref.get(inFlight)
    for (const t of all) if (t.status === "running" && !mine.has(t.id)) yield* follow(events, t)
    // The conductor's turn comes first; whatever it did (or failed to do),
    // the loop then goes on to its own next task.
    if (Option.isSome(conductor)) {
      const lines = yield* conductor.value.cycle
      for (const line of lines) yield* say(events, { kind: "conducted", task: "", run: null, line: `conductor: ${line}` })
      if (lines.length > 0) all = yield* tasks.list
    }
    // Conductor questions nobody waits on get a deputy, in the background.
    if (Option.isSome(deputies)) yield* deputies.value.tick
    if (events.length > 0) all = yield* tasks.list
    // Failed tasks still in their pause are not tried this tick.
    const tried = yield* pausedRetries(all)
    // A roster is read from the repo's config files: once per repo per tick,
    // however many of its tasks wait behind a resting agent.
    const agents = new Map<string, Either.Either<AgentSpec, string>>()
    for (;;) {
      if ((yield* Ref.get(inFlight)).size >= config.maxConcurrentRuns) break
      // Only tasks for repositories this host has a clone of: the rest are
      // left to the hosts that do (each claims before it starts, so of
      // several hosts reaching for one task exactly one runs it).
      const next = T.nextRunnable(all.filter((t) => !tried.has(t.id) && T.repoHere(t, config.repos) !== undefined))
      if (next === undefined) break
      tried.add(next.id)
      yield* startOne(events, next, agents)
    }
    return events
  }).pipe(
    // display: the failed tick is logged; the next tick reads everything again
    Effect.catchAllCause((c) => Effect.as(Effect.logWarning(`queue tick failed: ${c}`), [] as ReadonlyArray<QueueEvent>)),
    Effect.withSpan("QueueLoop.tick")
  )

  const status = Effect.gen(function* () {
    const current = [...(yield* Ref.get(inFlight)).entries()].map(([task, run]) => ({ task, run }))
    return { current, completed: yield* Ref.get(completed) } satisfies QueueStatus
  })

  return { tick, settle: FiberSet.awaitEmpty(turns), status } satisfies QueueLoopShape
})
