/**
 * The queue's loop, scenario by scenario, on virtual time: an in-memory
 * filesystem, a fake agent scripted per call, the real waiter beside the
 * loop, and `TestClock` standing in for hours.
 */
import { Landings } from "../../src/land/Landings.js"
import { FileSystem } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Context, Duration, Effect, Either, Exit, Layer, Option, Ref, Scope, TestClock } from "effect"
import { spawnSync } from "node:child_process"
import { Rosters, type AgentSpec } from "../../src/agents/AgentRoster.js"
import { Agents, type CallInput, type CallResult } from "../../src/agents/Agents.js"
import { Notices } from "../../src/daemon/Notices.js"
import { QueueLoop, type QueueEvent } from "../../src/daemon/QueueLoop.js"
import { RETRY_PAUSE } from "../../src/daemon/QueueDecide.js"
import { TICK, Waiter } from "../../src/daemon/Waiter.js"
import { Hosts } from "../../src/platform/Hosts.js"
import { TurnSlots } from "../../src/agents/TurnSlots.js"
import { MagiConfig, type Settings } from "../../src/platform/MagiConfig.js"
import * as Q from "../../src/questions/Question.js"
import { Notifier } from "../../src/questions/Notifier.js"
import { QuestionStore } from "../../src/questions/QuestionStore.js"
import { archiveNow } from "../../src/questions/Archiver.js"
import * as T from "../../src/queue/Task.js"
import { TaskStore } from "../../src/queue/TaskStore.js"
import { RunDriver } from "../../src/runs/RunDriver.js"
import { RunStore } from "../../src/runs/Runs.js"
import { sampleRun } from "../runSupport.js"
import { homeInMemory, type Base } from "./loopSupport.js"
import { ok } from "../support.js"
import { waiterLoop } from "../../src/app/WaiterLoop.js"
import * as Lease from "../../src/questions/Leases.js"

const HOME = "/home"
const agent: AgentSpec = { id: "fake", kind: "codex", command: ["codex"], model: null, args: [], env: {} }

/** What the fake agent does on one call. */
interface Turn {
  readonly text: string
  readonly usable?: boolean
  readonly quota?: string | null
  /** Run inside the turn, e.g. the agent asking the owner. */
  readonly during?: (input: CallInput) => Effect.Effect<void, never, QuestionStore | TaskStore>
}

type Script = (input: CallInput, n: number) => Turn

interface World {
  readonly calls: Ref.Ref<ReadonlyArray<CallInput>>
  readonly script: Ref.Ref<Script>
  readonly events: Ref.Ref<ReadonlyArray<QueueEvent>>
  readonly base: Context.Context<Base>
}

const makeWorld = Effect.gen(function* () {
  const calls = yield* Ref.make<ReadonlyArray<CallInput>>([])
  const script = yield* Ref.make<Script>(() => ({ text: "Done." }))
  const events = yield* Ref.make<ReadonlyArray<QueueEvent>>([])
  const base = yield* Layer.build(homeInMemory(HOME))
  return { calls, script, events, base } satisfies World
})

const fakeAgents = (w: World) =>
  Layer.succeed(Agents, {
    call: (input) =>
      Effect.gen(function* () {
        const n = (yield* Ref.updateAndGet(w.calls, (c) => [...c, input])).length
        const turn = (yield* Ref.get(w.script))(input, n)
        if (turn.during) yield* turn.during(input).pipe(Effect.provide(w.base))
        const usable = turn.usable ?? true
        const session = input.seat.session ?? `thread-${input.run}`
        return {
          text: turn.text,
          session,
          usable,
          quota: turn.quota ?? null,
          exitCode: usable ? 0 : 1,
          timedOut: false,
          seat: { ...input.seat, turns: input.seat.turns + 1, session },
          stdoutFile: "",
          stderrFile: ""
        } satisfies CallResult
      })
  })

/** One `magi serve` over the world: its waiter and its queue loop, beating together. */
const startServe = (w: World, settings: Partial<Settings> = {}) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const ctx = yield* Layer.buildWithScope(
      Layer.mergeAll(
        Waiter.layer,
        QueueLoop.layer({ announce: (e) => Ref.update(w.events, (all) => [...all, e]) }),
        Hosts.layer,
        TurnSlots.fixed(4)
      ).pipe(
        Layer.provideMerge(Notices.at(`${HOME}/notices`)),
        Layer.provideMerge(RunDriver.layer),
        Layer.provide(Layer.mergeAll(fakeAgents(w), Rosters.fixed([agent]), MagiConfig.fixed(settings), Notifier.off)),
        Layer.provideMerge(Layer.succeedContext(w.base))
      ),
      scope
    )
    const waiter = Context.get(ctx, Waiter)
    const queue = Context.get(ctx, QueueLoop)
    /** One beat as `magi serve` does it, then every turn it started is let finish. */
    const beat = Effect.gen(function* () {
      yield* waiter.tick
      yield* waiter.settle
      yield* queue.tick
      yield* queue.settle
      yield* TestClock.adjust(TICK)
    })
    const beats = (n: number) => Effect.repeatN(beat, n - 1)
    /** Beat for `total` of virtual time. */
    const pass = (total: Duration.DurationInput) => beats(Math.ceil(Duration.toMillis(total) / Duration.toMillis(TICK)))
    return { scope, ctx, waiter, queue, beat, beats, pass }
  })

const stop = (s: { readonly scope: Scope.CloseableScope }) => Scope.close(s.scope, Exit.void)

const store = (w: World) => Context.get(w.base, TaskStore)
const file = (w: World, instruction: string, over: Partial<Omit<T.NewTask, "id" | "now">> = {}) =>
  store(w).add({ instruction, repo: "/repo", ...over }).pipe(Effect.orDie)
const task = (w: World, id: string) => store(w).get(id).pipe(Effect.orDie)
const prompts = (w: World) => Effect.map(Ref.get(w.calls), (c) => c.map((i) => i.prompt.split("\n")[0]!))

describe("the queue's loop", { timeout: 120_000 }, () => {
  it.scoped("runs tasks one at a time, higher priority first and the oldest first among equals, each as its own run", () =>
    Effect.gen(function* () {
      const w = yield* makeWorld
      const a = yield* file(w, "A old low")
      yield* TestClock.adjust("1 second")
      const b = yield* file(w, "B old high", { priority: 5 })
      yield* TestClock.adjust("1 second")
      yield* file(w, "C new low")
      yield* TestClock.adjust("1 second")
      yield* file(w, "D new high", { priority: 5 })
      const s = yield* startServe(w)
      yield* s.beats(1)
      expect(yield* prompts(w)).toEqual(["B old high"])
      yield* s.beats(5)
      expect(yield* prompts(w)).toEqual(["B old high", "D new high", "A old low", "C new low"])
      const all = yield* store(w).list
      expect(all.every((t) => t.status === "done" && t.attempts === 1 && t.runs.length === 1)).toBe(true)
      // Each ran as a run of its own, in its own worktree, on the impl seat.
      const runs = yield* Context.get(w.base, RunStore).list
      expect(runs).toHaveLength(4)
      expect(runs.every((r) => r.status === "done")).toBe(true)
      const first = (yield* Ref.get(w.calls))[0]!
      expect(first).toMatchObject({ cwd: `${HOME}/worktrees/${(yield* task(w, b.id)).runs[0]}`, allowWrite: true, node: "impl" })
      expect(first.prompt).toContain("## Asking the owner")
      const kinds = (yield* Ref.get(w.events)).map((e) => `${e.kind} ${T.shortId(e.task)}`)
      expect(kinds.slice(0, 2)).toEqual([`started ${T.shortId(b.id)}`, `done ${T.shortId(b.id)}`])
      expect(kinds).toHaveLength(8)
      expect((yield* s.queue.status).completed).toBe(4)
      expect((yield* task(w, a.id)).status).toBe("done")
      yield* stop(s)
    }))

  it.scoped("retries a failed task once after a pause, not within seconds, then holds it for the owner with the last error, and runs it no more", () =>
    Effect.gen(function* () {
      const w = yield* makeWorld
      yield* Ref.set(w.script, () => ({ text: "tests fail", usable: false }))
      const t = yield* file(w, "Flaky work")
      const s = yield* startServe(w)
      yield* s.beats(1)
      expect(yield* task(w, t.id)).toMatchObject({ status: "failed", attempts: 1, last_error: "the agent's turn failed (exit 1)" })
      // Not retried while the pause lasts, so the same failure does not
      // spend the last attempt before the owner has read the first.
      yield* s.pass(Duration.subtract(RETRY_PAUSE, "20 seconds"))
      expect(yield* Ref.get(w.calls)).toHaveLength(1)
      expect(yield* task(w, t.id)).toMatchObject({ status: "failed", attempts: 1 })
      yield* s.pass("30 seconds")
      const held = yield* task(w, t.id)
      expect(held).toMatchObject({ status: "held", hold_source: "machine", attempts: 2, last_error: "the agent's turn failed (exit 1)" })
      expect(held.hold_reason).toContain("failed 2 of 2 attempts")
      expect(held.runs).toHaveLength(2)
      yield* s.pass("10 minutes")
      expect(yield* Ref.get(w.calls)).toHaveLength(2)
      expect((yield* Ref.get(w.events)).map((e) => e.kind)).toEqual(["started", "failed", "started", "held"])
      // Released by the owner, it gets a fresh budget.
      yield* store(w).update(t.id, T.release)
      yield* Ref.set(w.script, () => ({ text: "fixed" }))
      yield* s.beats(1)
      expect(yield* task(w, t.id)).toMatchObject({ status: "done", attempts: 1 })
      yield* stop(s)
    }))

  it.scoped("holds after --max-attempts failures when the loop is given a budget", () =>
    Effect.gen(function* () {
      const w = yield* makeWorld
      yield* Ref.set(w.script, () => ({ text: "no", usable: false }))
      const t = yield* file(w, "Hard work")
      const s = yield* startServe(w, { maxAttempts: 3 })
      yield* s.pass(Duration.sum(Duration.times(RETRY_PAUSE, 2), "30 seconds"))
      expect(yield* task(w, t.id)).toMatchObject({ status: "held", attempts: 3 })
      expect(yield* Ref.get(w.calls)).toHaveLength(3)
      yield* stop(s)
    }))

  it.scoped("a usage limit refunds the attempt and rests the agent until its reset, 15 minutes when it gave none", () =>
    Effect.gen(function* () {
      const w = yield* makeWorld
      yield* Ref.set(w.script, (_, n) => (n === 1 ? { text: "usage limit", usable: false, quota: "" } : { text: "Done." }))
      const t = yield* file(w, "Big work")
      yield* TestClock.adjust("1 second")
      const other = yield* file(w, "Other work")
      const s = yield* startServe(w)
      yield* s.beats(1)
      const stalled = yield* task(w, t.id)
      expect(stalled).toMatchObject({ status: "failed", attempts: 0 })
      expect(stalled.last_error).toContain("usage limit")
      const paused = (yield* Ref.get(w.events)).find((e) => e.kind === "paused")
      expect(paused?.line).toContain("no new turn for it until 1970-01-01T00:15:01.000Z")
      // Nothing runs on that agent for the next 13 minutes, not even another task.
      yield* s.pass("13 minutes")
      expect(yield* Ref.get(w.calls)).toHaveLength(1)
      expect((yield* task(w, other.id)).status).toBe("queued")
      yield* s.pass("3 minutes")
      expect(yield* prompts(w)).toEqual(["Big work", "Big work", "Other work"])
      expect(yield* task(w, t.id)).toMatchObject({ status: "done", attempts: 1, runs: [stalled.runs[0], expect.any(String)] })
      yield* stop(s)
    }))

  it.scoped("a usage limit with a reset time rests the agent until that time", () =>
    Effect.gen(function* () {
      const w = yield* makeWorld
      yield* Ref.set(w.script, (_, n) => (n === 1 ? { text: "limit", usable: false, quota: "1am (UTC)" } : { text: "Done." }))
      yield* file(w, "Work")
      const s = yield* startServe(w)
      yield* s.pass("59 minutes")
      expect(yield* Ref.get(w.calls)).toHaveLength(1)
      yield* s.pass("2 minutes")
      expect(yield* Ref.get(w.calls)).toHaveLength(2)
      yield* stop(s)
    }))

  it.scoped("a running task whose loop is gone spends its attempt and runs again at once; one whose run sat idle for 30 minutes is stalled with its attempt refunded", () =>
    Effect.gen(function* () {
      const w = yield* makeWorld
      const fs = Context.get(w.base, FileSystem.FileSystem)
      const runs = Context.get(w.base, RunStore)
      const s = yield* startServe(w)
      yield* TestClock.adjust("1 hour")
      // Started by a loop that died: its claim names a pid that is gone.
      const orphan = yield* file(w, "Orphaned work")
      yield* runs.put(sampleRun("19700101-010000-aaaa", { created_at: "1970-01-01T01:00:00Z", updated_at: "1970-01-01T01:00:00Z" }))
      yield* store(w).update(orphan.id, (t) => T.start(t, "19700101-010000-aaaa"))
      const dead = spawnSync(process.execPath, ["-e", ""]).pid!
      yield* fs.writeFileString(`${HOME}/queue/${orphan.id}.lock`, `${dead}\n`)
      // Claimed by a live loop, but its run has not moved since 01:00.
      const idle = yield* file(w, "Idle work")
      yield* runs.put(sampleRun("19700101-010000-bbbb", { created_at: "1970-01-01T01:00:00Z", updated_at: "1970-01-01T01:00:00Z" }))
      yield* store(w).update(idle.id, (t) => T.start(t, "19700101-010000-bbbb"))
      expect(yield* store(w).claim(idle.id)).toBe(true)
      // The orphan goes at once (its attempt spent, it runs again at once as
      // attempt 2 of a new run); the idle one only once 30 minutes have passed.
      yield* Ref.set(w.script, () => ({ text: "Done." }))
      yield* s.queue.tick
      yield* s.queue.settle
      const stalledLine = (yield* Ref.get(w.events)).find((e) => e.kind === "stalled" && e.task === orphan.id)
      expect(stalledLine?.line).toContain("the magi loop that ran it is gone")
      expect(stalledLine?.line).toContain("attempt 1 of 2 spent")
      expect((yield* runs.get("19700101-010000-aaaa")).status).toBe("stalled")
      expect(yield* task(w, orphan.id)).toMatchObject({ status: "done", attempts: 2 })
      expect((yield* task(w, orphan.id)).runs).toHaveLength(2)
      expect(yield* task(w, idle.id)).toMatchObject({ status: "running", attempts: 1 })
      yield* TestClock.adjust("29 minutes")
      yield* s.queue.tick
      expect((yield* task(w, idle.id)).status).toBe("running")
      yield* TestClock.adjust("1 minute")
      yield* s.queue.tick
      yield* s.queue.settle
      const idleLine = (yield* Ref.get(w.events)).find((e) => e.kind === "stalled" && e.task === idle.id)
      expect(idleLine?.line).toContain("no turn and no question for 30 minutes")
      // Both run again, as new runs.
      expect(yield* task(w, idle.id)).toMatchObject({ status: "done", attempts: 1 })
      expect((yield* task(w, idle.id)).runs).toHaveLength(2)
      yield* stop(s)
    }))

  it.scoped("a task whose loop died on its last attempt is held for the owner, not run a third time", () =>
    Effect.gen(function* () {
      const w = yield* makeWorld
      const fs = Context.get(w.base, FileSystem.FileSystem)
      const runs = Context.get(w.base, RunStore)
      const s = yield* startServe(w)
      // Its first attempt's loop died (spent), and so did its retry's.
      const t = yield* file(w, "Work that crashes its host")
      yield* runs.put(sampleRun("19700101-000000-aaaa"))
      yield* runs.put(sampleRun("19700101-000000-bbbb"))
      const gone = "the magi loop that ran it is gone and no turn of its run is going on"
      yield* store(w).update(t.id, (x) =>
        T.start(x, "19700101-000000-aaaa").pipe(
          Either.flatMap((y) => T.fail(y, gone, 2)),
          Either.flatMap((z) => T.start(z, "19700101-000000-bbbb"))
        ))
      const dead = spawnSync(process.execPath, ["-e", ""]).pid!
      yield* fs.writeFileString(`${HOME}/queue/${t.id}.lock`, `${dead}\n`)
      yield* s.queue.tick
      yield* s.queue.settle
      const held = yield* task(w, t.id)
      expect(held).toMatchObject({ status: "held", hold_source: "machine", attempts: 2 })
      expect(held.hold_reason).toContain("failed 2 of 2 attempts; last: the magi loop that ran it is gone")
      expect((yield* runs.get("19700101-000000-bbbb")).status).toBe("stalled")
      expect((yield* Ref.get(w.events)).filter((e) => e.task === t.id).map((e) => e.kind)).toEqual(["held"])
      yield* s.pass("10 minutes")
      expect(yield* Ref.get(w.calls)).toHaveLength(0)
      yield* stop(s)
    }))

  it.scoped("a task blocked on another task runs once that one is done", () =>
    Effect.gen(function* () {
      const w = yield* makeWorld
      const first = yield* file(w, "First")
      const second = yield* store(w)
        .add({ instruction: "Second", repo: "/repo", priority: 9 }, (t) => T.block(t, [first.id], "after first"))
        .pipe(Effect.orDie)
      yield* store(w).update(first.id, (t) => T.hold(t, "not yet"))
      const s = yield* startServe(w)
      yield* s.beats(3)
      expect(yield* Ref.get(w.calls)).toEqual([])
      expect((yield* task(w, second.id)).status).toBe("blocked")
      yield* store(w).update(first.id, T.release)
      yield* s.beats(1)
      expect(yield* prompts(w)).toEqual(["First"])
      expect((yield* task(w, second.id)).status).toBe("blocked")
      yield* s.beats(2)
      expect(yield* prompts(w)).toEqual(["First", "Second"])
      expect(yield* task(w, second.id)).toMatchObject({ status: "done", blocked_by: [], blocked_from: null })
      expect((yield* Ref.get(w.events)).map((e) => e.kind)).toContain("unblocked")
      yield* stop(s)
    }))

  it.scoped("a task blocked on a question runs once it is answered, with the answer recorded and in its prompt", () =>
    Effect.gen(function* () {
      const w = yield* makeWorld
      const questions = Context.get(w.base, QuestionStore)
      const q = Q.make({ id: "19700101-000000-ab12", run: "", node: "plan", seat: "", summary: "Which backend?", detail: "", choices: [], now: new Date(0) })
      yield* questions.put(q)
      const t = yield* store(w)
        .add({ instruction: "Build the cache", repo: "/repo" }, (x) => T.block(x, [q.id], "needs the backend"))
        .pipe(Effect.orDie)
      const s = yield* startServe(w)
      yield* s.beats(3)
      expect(yield* Ref.get(w.calls)).toEqual([])
      yield* questions.update(q.id, (x) => Q.answer(x, { text: "Redis" }, new Date(0)))
      yield* s.beats(2)
      expect((yield* task(w, t.id)).answers).toEqual([{ question: q.id, answer: "Redis" }])
      const calls = yield* Ref.get(w.calls)
      expect(calls).toHaveLength(1)
      expect(calls[0]!.prompt).toContain("## The owner's answers")
      expect(calls[0]!.prompt).toContain("- question ab12: Redis")
      expect((yield* task(w, t.id)).status).toBe("done")
      yield* stop(s)
    }))

  it.scoped("a task blocked on a question answered long ago, now in history, runs with its answer rather than being held as missing", () =>
    Effect.gen(function* () {
      const w = yield* makeWorld
      const questions = Context.get(w.base, QuestionStore)
      const asked = new Date(2026, 6, 1, 9)
      const q = Q.make({ id: Q.makeId(asked, 0xab13), run: "", node: "plan", seat: "", summary: "Which backend?", detail: "", choices: [], now: asked })
      yield* questions.put({ ...ok(Q.answer(q, { text: "Redis" }, asked)), answer_delivered: true })
      yield* TestClock.setTime(asked.getTime() + 2 * 60 * 60 * 1000)
      expect(yield* archiveNow.pipe(Effect.provide(w.base))).toBe(1)
      const t = yield* store(w)
        .add({ instruction: "Build the cache", repo: "/repo" }, (x) => T.block(x, [q.id], "needs the backend"))
        .pipe(Effect.orDie)
      const s = yield* startServe(w)
      yield* s.beats(2)
      expect((yield* task(w, t.id)).answers).toEqual([{ question: q.id, answer: "Redis" }])
      expect((yield* task(w, t.id)).status).toBe("done")
      yield* stop(s)
    }))

  it.scoped("a blocker that no longer exists, or a question abandoned unanswered, holds the task naming it", () =>
    Effect.gen(function* () {
      const w = yield* makeWorld
      const questions = Context.get(w.base, QuestionStore)
      const q = Q.abandon(
        Q.make({ id: "19700101-000000-cd34", run: "", node: "plan", seat: "", summary: "?", detail: "", choices: [], now: new Date(0) }),
        "no answer",
        new Date(0)
      )
      yield* questions.put(q)
      const gone = yield* store(w)
        .add({ instruction: "Waits on nothing", repo: "/repo" }, (x) => T.block(x, ["19700101-000000-dead"], "r"))
        .pipe(Effect.orDie)
      const abandoned = yield* store(w).add({ instruction: "Waits on q", repo: "/repo" }, (x) => T.block(x, [q.id], "r")).pipe(Effect.orDie)
      const s = yield* startServe(w)
      yield* s.beats(2)
      const a = yield* task(w, gone.id)
      expect(a).toMatchObject({ status: "held", hold_source: "machine" })
      expect(a.hold_reason).toContain("waits on dead, which no longer exists")
      const b = yield* task(w, abandoned.id)
      expect(b).toMatchObject({ status: "held", hold_source: "machine" })
      expect(b.hold_reason).toContain("question cd34 it waited on was abandoned unanswered")
      expect(yield* Ref.get(w.calls)).toEqual([])
      yield* stop(s)
    }))

  it.scoped("a run waiting on the owner lets the next task start; after the answer the waiter resumes it and the task is done", () =>
    Effect.gen(function* () {
      const w = yield* makeWorld
      const questions = Context.get(w.base, QuestionStore)
      // The first task's agent asks the owner, and its `magi ask` dies.
      yield* Ref.set(w.script, (input, n) =>
        n === 1
          ? {
            text: "I asked which backend to use.",
            during: (i) =>
              Effect.flatMap(QuestionStore, (s) =>
                s.put({
                  ...Q.make({
                    id: "19700101-000000-ab12",
                    run: i.run,
                    node: i.node,
                    seat: i.seat.key,
                    summary: "Which backend?",
                    detail: "",
                    choices: [],
                    now: new Date(0),
                    cwd: i.cwd
                  }),
                  answer_timeout: 86_400
                })).pipe(Effect.orDie)
          }
          : { text: input.prompt.includes("## The owner's answer") ? "Used Redis." : "Done." })
      const asking = yield* file(w, "Asking task", { priority: 5 })
      const next = yield* file(w, "Next task")
      const s = yield* startServe(w)
      yield* s.beats(1)
      const waiting = yield* task(w, asking.id)
      expect(waiting.status).toBe("running")
      const run = yield* Context.get(w.base, RunStore).get(waiting.runs[0]!)
      expect(run.status).toBe("waiting")
      const said = (yield* Ref.get(w.events)).find((e) => e.kind === "waiting")
      expect(said?.line).toContain("question ab12")
      // The waiting run holds no slot: the next task starts and finishes meanwhile.
      yield* s.beats(1)
      expect(yield* prompts(w)).toEqual(["Asking task", "Next task"])
      expect((yield* task(w, next.id)).status).toBe("done")
      expect((yield* task(w, asking.id)).status).toBe("running")
      // The owner answers; the waiter resumes the same seat, and the task follows its run.
      yield* questions.update("ab12", (x) => Q.answer(x, { text: "Redis" }, new Date(0)))
      yield* s.beats(2)
      const calls = yield* Ref.get(w.calls)
      expect(calls).toHaveLength(3)
      expect(calls[2]!.seat).toMatchObject({ key: "impl", session: `thread-${run.id}`, turns: 1 })
      expect(calls[2]!.run).toBe(run.id)
      expect(calls[2]!.prompt).toContain("## The owner's answer\n\nRedis")
      expect((yield* Context.get(w.base, RunStore).get(run.id)).status).toBe("done")
      expect(yield* task(w, asking.id)).toMatchObject({ status: "done", attempts: 1 })
      expect((yield* s.queue.status).completed).toBe(2)
      yield* stop(s)
    }))

  it.scoped("a run whose answer hit a usage limit on delivery keeps its task: no second run, and the task is done once the waiter gets through", () =>
    Effect.gen(function* () {
      const w = yield* makeWorld
      const questions = Context.get(w.base, QuestionStore)
      yield* Ref.set(w.script, (_, n) =>
        n === 1
          ? {
            text: "I asked.",
            during: (i) =>
              Effect.flatMap(QuestionStore, (s) =>
                s.put({
                  ...Q.make({
                    id: "19700101-000000-ab12",
                    run: i.run,
                    node: i.node,
                    seat: i.seat.key,
                    summary: "Which?",
                    detail: "",
                    choices: [],
                    now: new Date(0),
                    cwd: i.cwd
                  }),
                  answer_timeout: 86_400
                })).pipe(Effect.orDie)
          }
          : n === 2
          ? { text: "usage limit", usable: false, quota: "" }
          : { text: "Used Redis." })
      const t = yield* file(w, "Asking task")
      const s = yield* startServe(w)
      yield* s.beats(1)
      yield* questions.update("ab12", (x) => Q.answer(x, { text: "Redis" }, new Date(0)))
      yield* s.beats(2)
      expect(yield* Ref.get(w.calls)).toHaveLength(2)
      const runId = (yield* task(w, t.id)).runs[0]!
      expect((yield* Context.get(w.base, RunStore).get(runId)).status).toBe("stalled")
      expect(yield* task(w, t.id)).toMatchObject({ status: "running", attempts: 1, runs: [runId] })
      yield* s.pass("11 minutes")
      expect((yield* Ref.get(w.calls)).map((c) => c.run)).toEqual([runId, runId, runId])
      expect(yield* task(w, t.id)).toMatchObject({ status: "done", attempts: 1, runs: [runId] })
      yield* stop(s)
    }))

  it.scoped("runs up to [daemon] max_concurrent_runs turns at once", () =>
    Effect.gen(function* () {
      const w = yield* makeWorld
      for (const n of [1, 2, 3]) yield* file(w, `Task ${n}`)
      const s = yield* startServe(w, { maxConcurrentRuns: 2 })
      yield* s.queue.tick
      expect((yield* s.queue.status).current).toHaveLength(2)
      yield* s.queue.settle
      expect((yield* s.queue.status).current).toHaveLength(0)
      yield* s.beats(1)
      expect(yield* Ref.get(w.calls)).toHaveLength(3)
      yield* stop(s)
    }))

  it.scoped("runs with [roles] implementer, and holds a task when that agent is not in the roster", () =>
    Effect.gen(function* () {
      const w = yield* makeWorld
      const t = yield* file(w, "Work")
      const s = yield* startServe(w, { implementer: "ghost" })
      yield* s.beats(1)
      const held = yield* task(w, t.id)
      expect(held).toMatchObject({ status: "held", hold_source: "machine" })
      expect(held.hold_reason).toContain("[roles] implementer names ghost, which is not in the roster")
      yield* stop(s)
      const s2 = yield* startServe(w, { implementer: "fake" })
      yield* store(w).update(t.id, T.release)
      yield* s2.beats(1)
      expect((yield* Ref.get(w.calls)).map((c) => c.seat.agent)).toEqual(["fake"])
      yield* stop(s2)
    }))

  it.scoped("a loop stopped mid-turn leaves the task failed with the attempt refunded and its claim gone", () =>
    Effect.gen(function* () {
      const w = yield* makeWorld
      yield* Ref.set(w.script, () => ({ text: "never", during: () => Effect.never }))
      const t = yield* file(w, "Long work")
      const s = yield* startServe(w)
      yield* s.queue.tick
      yield* Effect.yieldNow()
      expect((yield* task(w, t.id)).status).toBe("running")
      yield* stop(s)
      expect(yield* task(w, t.id)).toMatchObject({ status: "failed", attempts: 0, last_error: "the magi loop stopped while its turn ran" })
      expect(yield* Context.get(w.base, FileSystem.FileSystem).exists(`${HOME}/queue/${t.id}.lock`)).toBe(false)
      expect(Option.isNone(yield* store(w).claimant(t.id))).toBe(true)
      expect(Either.isRight(Either.right(1))).toBe(true)
    }))
})

describe("magi serve's beat", { timeout: 120_000 }, () => {
  /**
   * Real time passes, virtual time does not: whatever happens here happens
   * on a wake-up, never because `TICK` went by. A few real milliseconds per
   * look, since the watch's events come through fibers of their own.
   */
  const withoutTheClock = (what: string, done: Effect.Effect<boolean>) =>
    Effect.gen(function* () {
      for (let i = 0; i < 400; i++) {
        if (yield* done) return
        yield* Effect.promise(() => new Promise((r) => setTimeout(r, 5)))
      }
      throw new Error(`${what} did not happen without the clock moving`)
    })

  it.scoped("resumes every round on the answer (or the asker letting go), not at the next TICK", () =>
    Effect.gen(function* () {
      const w = yield* makeWorld
      const questions = Context.get(w.base, QuestionStore)
      const idOf = (round: number) => `19700101-00000${round}-ab1${round}`
      // As test/fixtures/pending-agent.mjs: each turn asks the next round and
      // ends (its `magi ask` handed back pending); the fourth is done.
      yield* Ref.set(w.script, (_, n) =>
        n <= 3
          ? {
            text: `I asked round ${n}.`,
            during: (i) =>
              Effect.flatMap(QuestionStore, (st) =>
                st.put({
                  ...Q.make({
                    id: idOf(n),
                    run: i.run,
                    node: i.node,
                    seat: i.seat.key,
                    summary: `Round ${n}?`,
                    detail: "",
                    choices: [],
                    now: new Date(0),
                    cwd: i.cwd
                  }),
                  answer_timeout: 86_400
                })).pipe(Effect.orDie)
          }
          : { text: "Done." })
      yield* file(w, "Asking task")
      const s = yield* startServe(w)
      const started = yield* TestClock.currentTimeMillis
      yield* Effect.forkIn(
        waiterLoop(() => Effect.void).pipe(
          Effect.provide(s.ctx),
          // No ready run to land here: the landings' beat is a no-op.
          Effect.provideService(Landings, Landings.make({ tick: Effect.succeed([]), start: () => Effect.dieMessage("no landing is started here") }))
        ),
        s.scope
      )
      const calls = Effect.map(Ref.get(w.calls), (c) => c.length)
      const asked = (round: number) => questions.get(idOf(round)).pipe(Effect.as(true), Effect.orElseSucceed(() => false))
      const answer = (round: number) => questions.update(idOf(round), (x) => Q.answer(x, { text: `Redis ${round}` }, new Date(0))).pipe(Effect.orDie)
      // The first beat starts the task; its turn asks round 1.
      yield* withoutTheClock("the task's turn", Effect.zipWith(calls, asked(1), (n, a) => n === 1 && a))
      yield* answer(1)
      yield* withoutTheClock("resuming round 1", Effect.zipWith(calls, asked(2), (n, a) => n === 2 && a))
      // Answered while the delivery that asked it may still be in flight on
      // the seat: its end wakes the loop.
      yield* answer(2)
      yield* withoutTheClock("resuming round 2", Effect.zipWith(calls, asked(3), (n, a) => n === 3 && a))
      // An asker still waits on round 3 when the answer lands: its own
      // `magi ask` takes it. It is killed and lets go: the lease's going wakes the loop.
      yield* Lease.beat(questions.root, idOf(3), "asker").pipe(Effect.provide(w.base))
      yield* answer(3)
      for (let i = 0; i < 20; i++) yield* Effect.promise(() => new Promise((r) => setTimeout(r, 5)))
      expect(yield* calls).toBe(3)
      yield* Lease.clear(questions.root, idOf(3)).pipe(Effect.provide(w.base))
      yield* withoutTheClock("resuming round 3", Effect.map(calls, (n) => n === 4))
      const prompts = (yield* Ref.get(w.calls)).map((c) => /## The owner's answer\n\n(.*)/.exec(c.prompt)?.[1] ?? null)
      expect(prompts).toEqual([null, "Redis 1", "Redis 2", "Redis 3"])
      expect(yield* TestClock.currentTimeMillis).toBe(started)
      yield* stop(s)
    }))
})
