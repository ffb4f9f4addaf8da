/**
 * Whole waiter scenarios on virtual time: an in-memory filesystem, a fake
 * agent that records every resume, and `TestClock` standing in for hours.
 */
import { FileSystem } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Clock, Context, Duration, Effect, Either, Exit, Layer, Option, Ref, Scope, TestClock } from "effect"
import { Rosters, type AgentSpec } from "../../src/agents/AgentRoster.js"
import { Agents, type CallInput, type CallResult } from "../../src/agents/Agents.js"
import * as Lease from "../../src/questions/Leases.js"
import * as Announcements from "../../src/questions/Announcements.js"
import { MagiConfig } from "../../src/platform/MagiConfig.js"
import { MagiHome } from "../../src/platform/MagiHome.js"
import * as MemoryFileSystem from "../../src/store/MemoryFileSystem.js"
import { Notices } from "../../src/daemon/Notices.js"
import { Notifier } from "../../src/questions/Notifier.js"
import * as Q from "../../src/questions/Question.js"
import { QuestionStore } from "../../src/questions/QuestionStore.js"
import { RunDriver } from "../../src/runs/RunDriver.js"
import { RunStore, type Run } from "../../src/runs/Runs.js"
import { StoreFailed } from "../../src/store/StoreErrors.js"
import { runWithSession } from "../runSupport.js"
import { plainFolders } from "./loopSupport.js"
import { fullLookDue, TICK, Waiter } from "../../src/daemon/Waiter.js"
import { VerifyDriver } from "../../src/verify/VerifyDriver.js"
import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"

const HOME = "/home"
const QROOT = `${HOME}/questions`
const RUN_ID = "19700101-000000-9fb7"
const Q_ID = "19700101-000001-ab12"

const agent: AgentSpec = { id: "fake", kind: "codex", command: ["codex"], model: null, args: [], env: {} }

const theRun = (over: Partial<Run> = {}): Run => runWithSession(RUN_ID, { status: "waiting", ...over })

const theQuestion = (): Q.Question => ({
  ...Q.make({
    id: Q_ID,
    run: RUN_ID,
    node: "impl",
    seat: "impl",
    summary: "Which backend?",
    detail: "Both are dependencies.",
    choices: ["SQLite", "Redis"],
    now: new Date(0),
    cwd: "/w"
  }),
  answer_timeout: 3600
})

/** What the fake agent does on each resume. */
interface Script {
  readonly text: string
  readonly usable?: boolean
  /** How long the turn takes, on the virtual clock. */
  readonly takes?: Duration.Duration
  /** Run inside the turn, e.g. the agent replying on the thread itself. */
  readonly during?: Effect.Effect<void, never, QuestionStore>
  /** Why the turn failed, as the adapter read it. */
  readonly problem?: string
  /** A usage limit: its reset time, or "". */
  readonly quota?: string
}

interface World {
  readonly calls: Ref.Ref<ReadonlyArray<CallInput>>
  readonly notified: Ref.Ref<ReadonlyArray<string>>
  readonly script: Ref.Ref<Script>
  /** Turns running right now, and the most that ever ran at once. */
  readonly running: Ref.Ref<number>
  readonly busiest: Ref.Ref<number>
  readonly base: Context.Context<FileSystem.FileSystem | QuestionStore | RunStore>
}

/** The disk, the stores, and the fake agent: everything that survives a daemon restart. */
const makeWorld = Effect.gen(function* () {
  const calls = yield* Ref.make<ReadonlyArray<CallInput>>([])
  const notified = yield* Ref.make<ReadonlyArray<string>>([])
  const script = yield* Ref.make<Script>({ text: "Going with SQLite." })
  const running = yield* Ref.make(0)
  const busiest = yield* Ref.make(0)
  const base = yield* Layer.build(
    Layer.mergeAll(QuestionStore.at(QROOT), RunStore.at(`${HOME}/runs`).pipe(Layer.provide(QuestionStore.at(QROOT)))).pipe(
      Layer.provideMerge(MemoryFileSystem.layer)
    )
  )
  const fs = Context.get(base, FileSystem.FileSystem)
  yield* fs.makeDirectory("/w", { recursive: true }).pipe(Effect.orDie)
  return { calls, notified, script, running, busiest, base } satisfies World
})

const fakeAgents = (w: World) =>
  Layer.succeed(Agents, {
    call: (input) =>
      Effect.gen(function* () {
        yield* Ref.update(w.calls, (c) => [...c, input])
        const now = yield* Ref.updateAndGet(w.running, (n) => n + 1)
        yield* Ref.update(w.busiest, (m) => Math.max(m, now))
        const s = yield* Ref.get(w.script)
        if (s.during) yield* s.during.pipe(Effect.provide(w.base))
        if (s.takes) yield* Effect.sleep(s.takes).pipe(Effect.ensuring(Ref.update(w.running, (n) => n - 1)))
        else yield* Ref.update(w.running, (n) => n - 1)
        const usable = s.usable ?? true
        return {
          text: s.text,
          session: input.seat.session,
          usable,
          quota: s.quota ?? null,
          exitCode: usable ? 0 : 1,
          timedOut: false,
          seat: { ...input.seat, turns: input.seat.turns + 1 },
          stdoutFile: "",
          stderrFile: "",
          ...(s.problem === undefined ? {} : { problem: s.problem })
        } satisfies CallResult
      })
  })

/** What turns run on over the world: the fake agent, and folders for workspaces (no run is created here). */
const turnServices = (w: World, agents: ReadonlyArray<AgentSpec>) => Layer.mergeAll(fakeAgents(w), Rosters.fixed(agents), MagiHome.at(HOME), plainFolders)

/** The run driver over the world, on its own, as a second process would have it. */
const driverLayer = (w: World, agents: ReadonlyArray<AgentSpec> = [agent]) =>
  RunDriver.layer.pipe(Layer.provide(Layer.merge(turnServices(w, agents), MagiConfig.fixed({}))), Layer.provide(Layer.succeedContext(w.base)))

/** One daemon over the world: its own waiter, memory and in-flight deliveries. */
const daemonLayer = (w: World, agents: ReadonlyArray<AgentSpec> = [agent]) =>
  Waiter.layer.pipe(
    Layer.provideMerge(Notices.at(`${HOME}/notices`)),
    Layer.provideMerge(RunDriver.layer),
    Layer.provide(
      Layer.mergeAll(
        turnServices(w, agents),
        MagiConfig.fixed({}),
        Layer.succeed(Notifier, {
          command: ["notify"],
          configured: true,
          channels: ["notify"],
          notify: (q) => Ref.update(w.notified, (n) => [...n, q.summary])
        })
      )
    ),
    Layer.provideMerge(Layer.succeedContext(w.base))
  )

/** Start a daemon's loop; closing the returned scope stops it, like SIGTERM. */
const startDaemon = (w: World, agents?: ReadonlyArray<AgentSpec>) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const ctx = yield* Layer.buildWithScope(daemonLayer(w, agents), scope)
    const waiter = Context.get(ctx, Waiter)
    const loop = yield* Effect.forkIn(waiter.run, scope)
    return { scope, waiter, ctx, loop }
  })

const stop = (d: { readonly scope: Scope.CloseableScope }) => Scope.close(d.scope, Exit.void)

/**
 * Let the loop run for `total` of virtual time, waking it every `every` (one
 * tick by default; a longer step still ticks once per step, for idle spans).
 */
const pass = (total: Duration.DurationInput, every: Duration.DurationInput = TICK) =>
  Effect.gen(function* () {
    let left = Duration.toMillis(total)
    while (left > 0) {
      const step = Math.min(left, Duration.toMillis(every))
      yield* TestClock.adjust(Duration.millis(step))
      yield* Effect.yieldNow()
      left -= step
    }
  })

const seed = (w: World, q: Q.Question = theQuestion(), run: Run = theRun()) =>
  Effect.gen(function* () {
    yield* Context.get(w.base, QuestionStore).put(q)
    yield* Context.get(w.base, RunStore).put(run)
  }).pipe(Effect.orDie)

const question = (w: World) => Context.get(w.base, QuestionStore).get(Q_ID).pipe(Effect.orDie)
const runRecord = (w: World) => Context.get(w.base, RunStore).get(RUN_ID).pipe(Effect.orDie)
const owner = (w: World, change: (q: Q.Question, now: Date) => Either.Either<Q.Question, Q.QuestionRejected>) =>
  Effect.gen(function* () {
    const now = new Date(yield* TestClock.currentTimeMillis)
    yield* Context.get(w.base, QuestionStore).update(Q_ID, (q) => change(q, now))
  }).pipe(Effect.orDie)
const beatAsAsker = (w: World) => Lease.beat(QROOT, Q_ID, "asker").pipe(Effect.provide(w.base))
const notices = (w: World) =>
  Effect.flatMap(Notices, (n) => n.list).pipe(
    Effect.provide(Notices.at(`${HOME}/notices`).pipe(Layer.provide(Layer.mergeAll(Layer.succeedContext(w.base), Notifier.off))))
  )

describe("the waiter, scenario by scenario", () => {
  it.scoped("while the asker is alive nothing starts; once it dies the answer goes to the same seat exactly once", () =>
    Effect.gen(function* () {
      const w = yield* makeWorld
      yield* seed(w)
      yield* beatAsAsker(w)
      const d = yield* startDaemon(w)
      yield* owner(w, (q, now) => Q.answer(q, { choice: "SQLite" }, now))
      // The asker keeps polling for five minutes: beats well inside the ttl.
      for (let i = 0; i < 10; i++) {
        yield* pass("30 seconds")
        yield* beatAsAsker(w)
      }
      expect(yield* Ref.get(w.calls)).toEqual([])
      // Killed: the lease ages out after 90 s and the next tick delivers.
      yield* pass("2 minutes")
      yield* d.waiter.settle
      yield* pass("20 minutes", "1 minute")
      const calls = yield* Ref.get(w.calls)
      expect(calls).toHaveLength(1)
      expect(calls[0]!.seat).toMatchObject({ key: "impl", agent: "fake", session: "thread-1", turns: 1 })
      expect(calls[0]!.allowWrite).toBe(true)
      expect(calls[0]!.prompt).toContain("## The owner's answer\n\nSQLite")
      expect(calls[0]!.cwd).toBe("/w")
      const q = yield* question(w)
      expect(q).toMatchObject({ status: "answered", answer_delivered: true, waiter: null })
      // The turn ended with nothing outstanding: the run is done, its seat moved on.
      expect(yield* runRecord(w)).toMatchObject({ status: "done", summary: "Going with SQLite.", seats: [{ turns: 2 }] })
      yield* stop(d)
    }))

  it.scoped("an answer to a question whose asker is gone reaches the seat at once, not at the next look", () =>
    Effect.gen(function* () {
      const w = yield* makeWorld
      yield* seed(w)
      const d = yield* startDaemon(w)
      yield* pass("1 second", "1 second")
      expect(yield* Ref.get(w.calls)).toEqual([])
      yield* owner(w, (q, now) => Q.answer(q, { choice: "SQLite" }, now))
      // Far less than one TICK of virtual time: only the change can have woken it.
      yield* pass("10 millis", "10 millis")
      expect(yield* Ref.get(w.calls)).toHaveLength(1)
      yield* d.waiter.settle
      yield* stop(d)
    }))

  it.scoped("an asker that lets go of its lease wakes the waiter, which delivers the answer it was waiting on", () =>
    Effect.gen(function* () {
      const w = yield* makeWorld
      yield* seed(w)
      yield* beatAsAsker(w)
      const d = yield* startDaemon(w)
      yield* owner(w, (q, now) => Q.answer(q, { choice: "SQLite" }, now))
      yield* pass("1 second", "1 second")
      // The asker holds it: nothing starts.
      expect(yield* Ref.get(w.calls)).toEqual([])
      // The asker exits (say SIGTERM before it printed): its lease goes with it.
      yield* Lease.release(QROOT, Q_ID, "asker").pipe(Effect.provide(w.base))
      yield* pass("10 millis", "10 millis")
      expect(yield* Ref.get(w.calls)).toHaveLength(1)
      yield* d.waiter.settle
      yield* stop(d)
    }))

  it.scoped("when the owner says something to a dead asker, the seat is resumed once and its printed reply lands on the thread", () =>
    Effect.gen(function* () {
      const w = yield* makeWorld
      yield* seed(w)
      yield* Ref.set(w.script, { text: "SQLite: it is already embedded.", takes: Duration.seconds(40) })
      const d = yield* startDaemon(w)
      yield* owner(w, (q, now) => Q.say(q, "Which is cheaper to run?", now))
      yield* pass("10 seconds")
      // Mid-turn: the daemon holds the wait, and says so.
      expect((yield* question(w)).waiter?.kind).toBe("daemon")
      expect(yield* Lease.read(QROOT, Q_ID).pipe(Effect.provide(w.base))).toMatchObject({ _tag: "Some", value: { kind: "daemon" } })
      yield* pass("1 minute")
      yield* d.waiter.settle
      yield* pass("20 minutes", "1 minute")
      expect(yield* Ref.get(w.calls)).toHaveLength(1)
      const prompt = (yield* Ref.get(w.calls))[0]!.prompt
      expect(prompt).toContain("## What the owner just said (they have not decided yet)\n\nWhich is cheaper to run?")
      expect(prompt).toContain(`magi ask --thread ${Q_ID}`)
      const q = yield* question(w)
      expect(q.status).toBe("open")
      expect(q.thread.map((t) => [t.who, t.body])).toEqual([
        ["operator", "Which is cheaper to run?"],
        ["agent", "SQLite: it is already embedded."]
      ])
      expect(q.delivered_turns).toBe(1)
      expect(q.waiter).toBeNull()
      // The question is still open, so the run waits; it is never done.
      expect((yield* runRecord(w)).status).toBe("waiting")
      yield* stop(d)
    }))

  it.scoped("an agent that replied on the thread itself is not quoted a second time", () =>
    Effect.gen(function* () {
      const w = yield* makeWorld
      yield* seed(w)
      yield* Ref.set(w.script, {
        text: "I replied on the thread.",
        during: Effect.flatMap(QuestionStore, (s) => s.update(Q_ID, (q) => Q.reply(q, "SQLite, it is embedded.", q.choices, new Date(60_000)))).pipe(
          Effect.orDie
        )
      })
      const d = yield* startDaemon(w)
      yield* owner(w, (q, now) => Q.say(q, "Why?", now))
      yield* pass("30 seconds")
      yield* d.waiter.settle
      const q = yield* question(w)
      expect(q.thread.map((t) => t.body)).toEqual(["Why?", "SQLite, it is embedded."])
      expect(q.delivered_turns).toBe(1)
      yield* stop(d)
    }))

  it.scoped("an answer that came after the asker's slice ended is delivered once and recorded as delivered", () =>
    Effect.gen(function* () {
      const w = yield* makeWorld
      yield* seed(w)
      // The asker's slice ran out at four minutes; its lease ages out by 5.5.
      yield* beatAsAsker(w)
      const d = yield* startDaemon(w)
      yield* pass("4 minutes")
      yield* owner(w, (q, now) => Q.answer(q, { choice: "Redis" }, now))
      yield* pass("2 minutes")
      yield* d.waiter.settle
      yield* pass("20 minutes", "1 minute")
      expect(yield* Ref.get(w.calls)).toHaveLength(1)
      expect((yield* question(w)).answer_delivered).toBe(true)
      yield* stop(d)
    }))

  it.scoped("a seat with no session gets one notice and no agent; the input is retried after ten minutes without a second notice", () =>
    Effect.gen(function* () {
      const w = yield* makeWorld
      yield* seed(w, theQuestion(), theRun({ seats: [{ key: "impl", agent: "fake", turns: 0, session: null, write: true }] }))
      const d = yield* startDaemon(w)
      yield* owner(w, (q, now) => Q.answer(q, { choice: "SQLite" }, now))
      yield* pass("9 minutes")
      expect(yield* Ref.get(w.calls)).toEqual([])
      const once = yield* notices(w)
      expect(once).toHaveLength(1)
      expect(once[0]).toMatchObject({ question: Q_ID, run: RUN_ID, seat: "impl" })
      expect(once[0]!.reason).toContain("no codex session to resume")
      expect(yield* Ref.get(w.notified)).toEqual([once[0]!.summary])
      expect(once[0]!.summary).toContain("could not give the agent your answer")
      expect((yield* question(w)).answer_delivered).toBe(false)
      // Still refused ten minutes on: tried again, but the owner already knows.
      yield* pass("2 minutes")
      expect(yield* notices(w)).toHaveLength(1)
      expect(yield* Ref.get(w.notified)).toHaveLength(1)
      // The seat gains a session at 11 min: the input, last refused at 10,
      // is left alone until 20, then delivered.
      yield* Context.get(w.base, RunStore)
        .update(RUN_ID, (r) => ({ ...r, seats: [{ ...r.seats[0]!, turns: 1, session: "thread-9" }] }))
        .pipe(Effect.orDie)
      yield* pass("8 minutes")
      expect(yield* Ref.get(w.calls)).toEqual([])
      yield* pass("2 minutes")
      yield* d.waiter.settle
      expect((yield* Ref.get(w.calls)).map((c) => c.seat.session)).toEqual(["thread-9"])
      expect((yield* question(w)).answer_delivered).toBe(true)
      yield* stop(d)
    }))

  it.scoped("every other reason a seat cannot be resumed is a notice naming it, never a fresh agent", () =>
    Effect.gen(function* () {
      const cases: ReadonlyArray<[string, Run, ReadonlyArray<AgentSpec>, Partial<Q.Question>]> = [
        ["is gone", theRun(), [agent], { cwd: "/nowhere" }],
        ["is done and cannot be resumed", theRun({ status: "done" }), [agent], {}],
        ["has no seat impl", theRun({ seats: [{ key: "judge", agent: "fake", turns: 1, session: "s", write: false }] }), [agent], {}],
        ["agent fake has left the roster", theRun(), [], {}]
      ]
      for (const [why, run, roster, over] of cases) {
        const w = yield* makeWorld
        yield* seed(w, { ...theQuestion(), ...over }, run)
        yield* owner(w, (q, now) => Q.answer(q, { choice: "SQLite" }, now))
        const d = yield* startDaemon(w, roster)
        yield* pass("1 minute")
        expect(yield* Ref.get(w.calls)).toEqual([])
        const all = yield* notices(w)
        expect(all).toHaveLength(1)
        expect(all[0]!.reason).toContain(why)
        yield* stop(d)
      }
    }))

  it.scoped("a failed resumed turn is one notice, the answer stays undelivered, and it is retried after ten minutes", () =>
    Effect.gen(function* () {
      const w = yield* makeWorld
      yield* seed(w)
      yield* Ref.set(w.script, { text: "Error: session not found", usable: false })
      const d = yield* startDaemon(w)
      yield* owner(w, (q, now) => Q.answer(q, { choice: "SQLite" }, now))
      yield* pass("1 minute")
      yield* d.waiter.settle
      expect(yield* Ref.get(w.calls)).toHaveLength(1)
      const [n] = yield* notices(w)
      expect(n!.reason).toContain("the resumed turn failed (exit 1): Error: session not found")
      expect(yield* question(w)).toMatchObject({ answer_delivered: false, waiter: null })
      // The run is left as it was: a later delivery may still work.
      expect((yield* runRecord(w)).status).toBe("waiting")
      yield* Ref.set(w.script, { text: "Done with SQLite." })
      yield* pass("10 minutes")
      yield* d.waiter.settle
      expect(yield* Ref.get(w.calls)).toHaveLength(2)
      expect((yield* question(w)).answer_delivered).toBe(true)
      yield* stop(d)
    }))

  it.scoped("a resumed turn that hits a usage limit stalls the run with the reset time, and the answer is delivered once it lifts", () =>
    Effect.gen(function* () {
      const w = yield* makeWorld
      yield* seed(w)
      yield* Ref.set(w.script, { text: "5-hour limit reached", usable: false, quota: "3pm (UTC)" })
      const d = yield* startDaemon(w)
      yield* owner(w, (q, now) => Q.answer(q, { choice: "SQLite" }, now))
      yield* pass("1 minute")
      yield* d.waiter.settle
      expect(yield* runRecord(w)).toMatchObject({ status: "stalled", reason: "the agent hit its usage limit; it resets 3pm (UTC)" })
      const [n] = yield* notices(w)
      expect(n!.reason).toContain("usage limit (it resets 3pm (UTC))")
      expect((yield* question(w)).status).toBe("answered")
      yield* Ref.set(w.script, { text: "Done with SQLite." })
      yield* pass("10 minutes")
      yield* d.waiter.settle
      expect((yield* question(w)).answer_delivered).toBe(true)
      expect((yield* runRecord(w)).status).toBe("done")
      yield* stop(d)
    }))

  it.scoped("a resumed claude refusing to run as root tells the owner exactly what to do in the notice", () =>
    Effect.gen(function* () {
      const w = yield* makeWorld
      yield* seed(w)
      const { ROOT_ADVICE } = yield* Effect.promise(() => import("../../src/agents/adapters/claude.js"))
      yield* Ref.set(w.script, { text: "--dangerously-skip-permissions cannot be used with root/sudo privileges", usable: false, problem: ROOT_ADVICE })
      const d = yield* startDaemon(w)
      yield* owner(w, (q, now) => Q.answer(q, { choice: "SQLite" }, now))
      yield* pass("1 minute")
      yield* d.waiter.settle
      const [n] = yield* notices(w)
      expect(n!.reason).toBe(ROOT_ADVICE)
      expect(n!.reason).toContain('IS_SANDBOX = "1"')
      yield* stop(d)
    }))

  it.scoped("an agent that answered on the thread and then ran out of time has still read the owner's words", () =>
    Effect.gen(function* () {
      const w = yield* makeWorld
      yield* seed(w)
      yield* Ref.set(w.script, {
        text: "",
        usable: false,
        during: Effect.flatMap(
          QuestionStore,
          (s) => s.update(Q_ID, (q) => Q.reply(q, "Redis is cheaper here; shall I go with it?", q.choices, new Date(30_000)))
        ).pipe(Effect.orDie)
      })
      const d = yield* startDaemon(w)
      yield* owner(w, (q, now) => Q.say(q, "Which is cheaper?", now))
      yield* pass("30 seconds")
      yield* d.waiter.settle
      yield* pass("30 minutes", "1 minute")
      expect(yield* Ref.get(w.calls)).toHaveLength(1)
      expect(yield* notices(w)).toEqual([])
      const q = yield* question(w)
      expect(q.delivered_turns).toBe(1)
      expect(q.thread.map((t) => t.who)).toEqual(["operator", "agent"])
      yield* stop(d)
    }))

  it.scoped("a question nobody answers before its deadline is abandoned with the reason and its lease cleared", () =>
    Effect.gen(function* () {
      const w = yield* makeWorld
      yield* seed(w)
      yield* beatAsAsker(w)
      const d = yield* startDaemon(w)
      yield* pass("59 minutes", "1 minute")
      expect((yield* question(w)).status).toBe("open")
      yield* pass("2 minutes")
      const q = yield* question(w)
      expect(q.status).toBe("abandoned")
      expect(q.detail).toContain("_Abandoned: no answer within 3600s of asking._")
      expect(Option.isNone(yield* Lease.read(QROOT, Q_ID).pipe(Effect.provide(w.base)))).toBe(true)
      expect(yield* Ref.get(w.calls)).toEqual([])
      yield* stop(d)
    }))

  it.scoped("words said before the deadline are delivered even when the daemon only looks after it", () =>
    Effect.gen(function* () {
      const w = yield* makeWorld
      yield* seed(w)
      yield* TestClock.adjust("59 minutes")
      yield* owner(w, (q, now) => Q.say(q, "Hold on, one more thing", now))
      yield* TestClock.adjust("3 hours")
      const d = yield* startDaemon(w)
      yield* pass("10 seconds")
      yield* d.waiter.settle
      expect(yield* Ref.get(w.calls)).toHaveLength(1)
      expect((yield* question(w)).status).toBe("open")
      yield* stop(d)
    }))

  it.scoped("a daemon stopped mid-delivery marks nothing; the next one delivers once, and a third finds nothing to do", () =>
    Effect.gen(function* () {
      const w = yield* makeWorld
      yield* seed(w)
      yield* Ref.set(w.script, { text: "Going with SQLite.", takes: Duration.minutes(3) })
      yield* owner(w, (q, now) => Q.answer(q, { choice: "SQLite" }, now))
      const first = yield* startDaemon(w)
      yield* pass("1 minute")
      expect(yield* Ref.get(w.calls)).toHaveLength(1)
      yield* stop(first)
      expect(yield* question(w)).toMatchObject({ answer_delivered: false, waiter: null })

      const second = yield* startDaemon(w)
      yield* pass("5 minutes")
      yield* second.waiter.settle
      expect(yield* Ref.get(w.calls)).toHaveLength(2)
      expect((yield* question(w)).answer_delivered).toBe(true)
      yield* stop(second)

      const third = yield* startDaemon(w)
      yield* pass("30 minutes", "1 minute")
      expect(yield* Ref.get(w.calls)).toHaveLength(2)
      yield* stop(third)
    }))

  it.scoped("while the seat is busy with a turn of its own, an answer waits for the turn to end", () =>
    Effect.gen(function* () {
      const w = yield* makeWorld
      yield* seed(w)
      const runsDir = Context.get(w.base, RunStore).dir(RUN_ID)
      const beatSeat = Lease.beat(runsDir, "seat-impl", "daemon").pipe(Effect.provide(w.base))
      yield* beatSeat
      const d = yield* startDaemon(w)
      yield* owner(w, (q, now) => Q.answer(q, { choice: "SQLite" }, now))
      for (let i = 0; i < 6; i++) {
        yield* pass("20 seconds")
        yield* beatSeat
      }
      expect(yield* Ref.get(w.calls)).toEqual([])
      // The turn ended (its lease is cleared): the next tick delivers.
      yield* Lease.clear(runsDir, "seat-impl").pipe(Effect.provide(w.base))
      yield* pass("10 seconds")
      yield* d.waiter.settle
      expect(yield* Ref.get(w.calls)).toHaveLength(1)
      yield* stop(d)
    }))

  it.scoped("two answers waiting on one seat resume it one turn at a time, and both reach the agent", () =>
    Effect.gen(function* () {
      const w = yield* makeWorld
      const second = { ...theQuestion(), id: "19700101-000002-cd34", summary: "Which port?", choices: ["80", "8080"] }
      yield* seed(w)
      yield* Context.get(w.base, QuestionStore).put(second).pipe(Effect.orDie)
      yield* Ref.set(w.script, { text: "On it.", takes: Duration.minutes(2) })
      yield* owner(w, (q, now) => Q.answer(q, { choice: "SQLite" }, now))
      yield* Context.get(w.base, QuestionStore)
        .update(second.id, (q) => Q.answer(q, { choice: "8080" }, new Date(0)))
        .pipe(Effect.orDie)
      // Nobody is asking any more: one tick finds both answers deliverable.
      const d = yield* startDaemon(w)
      yield* pass("10 minutes")
      yield* d.waiter.settle
      expect(yield* Ref.get(w.busiest)).toBe(1)
      expect(yield* Ref.get(w.calls)).toHaveLength(2)
      expect((yield* Ref.get(w.calls)).map((c) => c.seat.turns)).toEqual([1, 2])
      expect((yield* question(w)).answer_delivered).toBe(true)
      expect((yield* Context.get(w.base, QuestionStore).get(second.id).pipe(Effect.orDie)).answer_delivered).toBe(true)
      yield* stop(d)
    }))

  it.scoped("two turns started on one seat at once, as from two processes, run one: the other is told the seat is busy", () =>
    Effect.gen(function* () {
      const w = yield* makeWorld
      yield* seed(w)
      yield* Ref.set(w.script, { text: "On it.", takes: Duration.minutes(1) })
      const driver = Context.get(yield* Layer.build(driverLayer(w)), RunDriver)
      const turn = driver.turn({ run: RUN_ID, seat: "impl", prompt: "carry on", timeout: Duration.minutes(15) }).pipe(Effect.either)
      const both = yield* Effect.fork(Effect.all([turn, turn], { concurrency: "unbounded" }))
      yield* pass("2 minutes")
      const [a, b] = yield* both
      expect(yield* Ref.get(w.calls)).toHaveLength(1)
      expect(yield* Ref.get(w.busiest)).toBe(1)
      const refused = [a, b].filter(Either.isLeft).map((e) => e.left)
      expect(refused).toMatchObject([{ _tag: "SeatBusy" }])
      // The turn that ran let the seat go: the next one starts.
      const next = yield* Effect.fork(turn)
      yield* pass("2 minutes")
      expect(Either.isRight(yield* next)).toBe(true)
      expect((yield* runRecord(w)).seats[0]!.turns).toBe(3)
    }))

  it.scoped("a seat lock an older magi left, naming a pid that lives again, is taken over once it is older than the lease", () =>
    Effect.gen(function* () {
      const w = yield* makeWorld
      yield* seed(w)
      const runsDir = Context.get(w.base, RunStore).dir(RUN_ID)
      // The lock as magi wrote it before seats' locks were claims: a lease
      // with a token and no host. Its pid is this (live) process, as a reused
      // pid would be, so only the lock's age can free the seat.
      yield* Lease.beat(runsDir, "seat-impl", "daemon").pipe(Effect.provide(w.base))
      const lockFile = Lease.leasePath(runsDir, "seat-impl")
      yield* Effect.flatMap(FileSystem.FileSystem, (fs) =>
        Effect.flatMap(fs.readFileString(lockFile), (body) => fs.writeFileString(lockFile, JSON.stringify({ ...JSON.parse(body), token: "123-old" })))).pipe(
          Effect.provide(w.base)
        )
      const driver = Context.get(yield* Layer.build(driverLayer(w)), RunDriver)
      const turn = driver.turn({ run: RUN_ID, seat: "impl", prompt: "carry on", timeout: Duration.minutes(15) }).pipe(Effect.either)
      expect(yield* turn).toMatchObject({ _tag: "Left", left: { _tag: "SeatBusy" } })
      yield* TestClock.adjust("91 seconds")
      expect(Either.isRight(yield* turn)).toBe(true)
      expect(yield* Ref.get(w.calls)).toHaveLength(1)
    }))

  it.scoped("a delivery claim that cannot be read is someone's until it has aged like one, then it is taken over", () =>
    Effect.gen(function* () {
      const w = yield* makeWorld
      yield* seed(w)
      yield* owner(w, (q, now) => Q.answer(q, { choice: "SQLite" }, now))
      // The memory disk stamps files with the real time: the clock joins it.
      yield* TestClock.setTime(Date.now())
      // Another daemon's create-new, between create and fill.
      yield* Context.get(w.base, FileSystem.FileSystem).writeFileString(`${QROOT}/${Q_ID}.claim`, "").pipe(Effect.orDie)
      const d = yield* startDaemon(w)
      yield* pass("2 minutes")
      expect(yield* Ref.get(w.calls)).toEqual([])
      yield* pass("15 minutes", "1 minute")
      yield* d.waiter.settle
      expect(yield* Ref.get(w.calls)).toHaveLength(1)
      expect((yield* question(w)).answer_delivered).toBe(true)
      yield* stop(d)
    }))

  it.scoped("a question filed outside any seat (no cwd) is never touched", () =>
    Effect.gen(function* () {
      const w = yield* makeWorld
      yield* seed(w, { ...theQuestion(), cwd: "" })
      yield* owner(w, (q, now) => Q.answer(q, { choice: "SQLite" }, now))
      const d = yield* startDaemon(w)
      yield* pass("20 minutes", "1 minute")
      expect(yield* Ref.get(w.calls)).toEqual([])
      expect(yield* notices(w)).toEqual([])
      yield* stop(d)
    }))

  it.scoped("an answer to a question asked outside any run, its asker gone, is kept for the next --wait: no notice until its deadline passed unread", () =>
    Effect.gen(function* () {
      const w = yield* makeWorld
      yield* seed(w, { ...theQuestion(), run: "" })
      // The asker's pending slice ended and it let go of its lease: nobody waits.
      yield* owner(w, (q, now) => Q.answer(q, { choice: "SQLite" }, now))
      const d = yield* startDaemon(w)
      // Before (issue 20): a notice ("could not give the agent your answer") within the first tick.
      yield* pass("59 minutes", "1 minute")
      expect(yield* notices(w)).toEqual([])
      expect(yield* Ref.get(w.calls)).toEqual([])
      const kept = yield* question(w)
      expect([kept.status, kept.answer_delivered]).toEqual(["answered", false])
      // The deadline (an hour) passes with the answer unread: now, and only now, the owner is told.
      yield* pass("2 minutes")
      const all = yield* notices(w)
      expect(all).toHaveLength(1)
      expect(all[0]!.reason).toContain("not asked from a magi run")
      expect(all[0]!.reason).toContain("before its deadline")
      expect(yield* Ref.get(w.calls)).toEqual([])
      yield* stop(d)
    }))

  it.scoped("words said on a question asked outside any run wait for the next --wait the same way", () =>
    Effect.gen(function* () {
      const w = yield* makeWorld
      yield* seed(w, { ...theQuestion(), run: "" })
      yield* TestClock.adjust("10 minutes")
      yield* owner(w, (q, now) => Q.say(q, "Which one is cheaper?", now))
      const d = yield* startDaemon(w)
      // The owner's turn restarted the hour.
      yield* pass("59 minutes", "1 minute")
      expect(yield* notices(w)).toEqual([])
      expect((yield* question(w)).status).toBe("open")
      yield* pass("2 minutes")
      expect(yield* notices(w)).toHaveLength(1)
      yield* stop(d)
    }))
})

describe("the loop notifies in the asker's place", () => {
  /** What an asker left on the store: its announcement's record, as it writes it. */
  const announce = (w: World, record: Pick<Announcements.Announcement, "turns" | "state" | "by"> & { readonly reason?: string }) =>
    Effect.flatMap(Clock.currentTimeMillis, (ms) =>
      Context.get(w.base, QuestionStore).announcements.put({
        schema: Announcements.ANNOUNCEMENT_SCHEMA,
        question: Q_ID,
        at: Q.timestamp(new Date(ms)),
        token: "the-asker",
        host: "",
        reason: "",
        ...record
      })).pipe(Effect.provide(w.base))
  const announced = (w: World) => Announcements.read(Context.get(w.base, QuestionStore).announcements, Q_ID).pipe(Effect.provide(w.base))

  it.scoped("a question whose asker could not notify (a sandbox with no network) is notified once, by the loop", () =>
    Effect.gen(function* () {
      const w = yield* makeWorld
      yield* seed(w)
      yield* announce(w, { turns: 0, state: "failed", by: "asker", reason: "could not resolve ntfy.sh" })
      const d = yield* startDaemon(w)
      yield* pass("10 seconds")
      yield* d.waiter.settle
      yield* pass("30 minutes", "1 minute")
      expect(yield* Ref.get(w.notified)).toEqual(["Which backend?"])
      expect(yield* announced(w)).toMatchObject({ _tag: "Some", value: { state: "sent", by: "loop" } })
      yield* stop(d)
      // A restarted loop finds the record and does not notify again.
      const again = yield* startDaemon(w)
      yield* pass("1 minute")
      expect(yield* Ref.get(w.notified)).toHaveLength(1)
      yield* stop(again)
    }))

  it.scoped("a question its asker notified is never notified again", () =>
    Effect.gen(function* () {
      const w = yield* makeWorld
      yield* seed(w)
      yield* announce(w, { turns: 0, state: "sent", by: "asker" })
      const d = yield* startDaemon(w)
      yield* pass("30 minutes", "1 minute")
      expect(yield* Ref.get(w.notified)).toEqual([])
      yield* stop(d)
    }))

  it.scoped("an asker that died mid-notification is stood in for once its attempt could no longer be running", () =>
    Effect.gen(function* () {
      const w = yield* makeWorld
      yield* seed(w)
      yield* announce(w, { turns: 0, state: "sending", by: "asker" })
      const d = yield* startDaemon(w)
      yield* pass("20 seconds")
      // It may still be sending: the loop waits.
      expect(yield* Ref.get(w.notified)).toEqual([])
      yield* pass("30 seconds")
      yield* d.waiter.settle
      expect(yield* Ref.get(w.notified)).toEqual(["Which backend?"])
      yield* stop(d)
    }))

  it.scoped("a failed notification of a question since answered is not sent", () =>
    Effect.gen(function* () {
      const w = yield* makeWorld
      yield* seed(w)
      yield* announce(w, { turns: 0, state: "failed", by: "asker" })
      yield* owner(w, (q, now) => Q.answer(q, { choice: "SQLite" }, now))
      const d = yield* startDaemon(w)
      yield* pass("1 minute")
      expect(yield* Ref.get(w.notified)).toEqual([])
      yield* stop(d)
    }))
})

describe("the waiter on a run store that fails a read", () => {
  it.scoped("a question past its deadline whose run cannot be read is not expired: its run may be another host's, or its seat busy", () =>
    Effect.gen(function* () {
      const w0 = yield* makeWorld
      const real = Context.get(w0.base, RunStore)
      const failing = yield* Ref.make(false)
      const flaky = {
        ...real,
        get: (id: string) =>
          Effect.flatMap(
            Ref.get(failing),
            (fail) => (fail
              ? Effect.fail(new StoreFailed({ kind: "run", op: "read", where: "/home/runs", reason: "the disk hiccuped", backend: "files" }))
              : real.get(id))
          )
      }
      const w: World = { ...w0, base: Context.add(w0.base, RunStore, flaky) }
      yield* seed(w)
      yield* beatAsAsker(w)
      yield* Ref.set(failing, true)
      const d = yield* startDaemon(w)
      yield* pass("70 minutes", "5 minutes")
      expect((yield* question(w)).status).toBe("open")
      // Read again, the run is this host's and its seat free: the question expires at the next look.
      yield* Ref.set(failing, false)
      yield* pass("2 minutes")
      expect((yield* question(w)).status).toBe("abandoned")
      yield* stop(d)
    }))
})

describe("the waiter's pace", () => {
  it.each([
    { all: true, now: 1_000, last: 1_000, full: true, why: "a wake asked for every question" },
    { all: false, now: 1_000, last: Number.NEGATIVE_INFINITY, full: true, why: "the first beat" },
    { all: false, now: 1_000 + Duration.toMillis(TICK) - 1, last: 1_000, full: false, why: "within a TICK of the last full look" },
    { all: false, now: 1_000 + Duration.toMillis(TICK), last: 1_000, full: true, why: "a TICK since the last full look" }
  ])("looks at every question: $full when $why", ({ all, full, last, now }) => {
    expect(fullLookDue(all, now, last)).toBe(full)
  })

  it.scoped("beats at once, then once every TICK when nothing wakes it", () =>
    Effect.gen(function* () {
      const w = yield* makeWorld
      const scope = yield* Scope.make()
      const ctx = yield* Layer.buildWithScope(daemonLayer(w), scope)
      const beats = yield* Ref.make(0)
      yield* Effect.forkIn(Context.get(ctx, Waiter).beats(Ref.update(beats, (n) => n + 1)), scope)
      yield* pass("1 millis", "1 millis")
      expect(yield* Ref.get(beats)).toBe(1)
      yield* pass(Duration.millis(Duration.toMillis(TICK) - 2), "1 second")
      expect(yield* Ref.get(beats)).toBe(1)
      yield* pass("1 millis", "1 millis")
      expect(yield* Ref.get(beats)).toBe(2)
      yield* pass(Duration.times(TICK, 3))
      expect(yield* Ref.get(beats)).toBe(5)
      yield* Scope.close(scope, Exit.void)
    }))

  it.scoped("a delivered turn that ends well with a verification configured is never written done before it is verified", () =>
    Effect.gen(function* () {
      const w = yield* makeWorld
      const fs = Context.get(w.base, FileSystem.FileSystem)
      yield* fs.makeDirectory("/r", { recursive: true }).pipe(Effect.orDie)
      yield* fs.writeFileString("/r/magi.toml", '[verify]\ngate = ["true"]\n').pipe(Effect.orDie)
      yield* seed(w)
      // Every status any write gives the run, in order: what the queue's tick could read.
      const written = yield* Ref.make<ReadonlyArray<string>>([])
      const inner = Context.get(w.base, RunStore)
      const noted = <E>(e: Effect.Effect<Run, E>) => Effect.tap(e, (r) => Ref.update(written, (l) => [...l, r.status]))
      const recording = RunStore.make({
        ...inner,
        update: (id, f) => noted(inner.update(id, f)),
        setStatus: (id, status, reason) => noted(inner.setStatus(id, status, reason))
      })
      const scope = yield* Scope.make()
      const ctx = yield* Layer.buildWithScope(
        Waiter.layer.pipe(
          Layer.provideMerge(Notices.at(`${HOME}/notices`)),
          Layer.provideMerge(VerifyDriver.Default),
          Layer.provideMerge(RunDriver.layer),
          Layer.provide(Layer.mergeAll(turnServices(w, [agent]), MagiConfig.fixed({}), Notifier.off, NodeCommandExecutor.layer)),
          Layer.provideMerge(Layer.succeedContext(Context.add(w.base, RunStore, recording)))
        ),
        scope
      )
      const waiter = Context.get(ctx, Waiter)
      yield* Effect.forkIn(waiter.run, scope)
      yield* owner(w, (q, now) => Q.answer(q, { choice: "SQLite" }, now))
      yield* pass("1 minute", "1 second")
      yield* waiter.settle
      expect(yield* Ref.get(w.calls)).toHaveLength(1)
      const statuses = yield* Ref.get(written)
      // The turn's end goes straight to the verification (which, with no git
      // repository here, stalls at its sync): never through done.
      expect(statuses).toContain("running")
      expect(statuses).not.toContain("done")
      const run = yield* runRecord(w)
      expect(run.verification?.step).toBe("sync")
      expect(run.status).not.toBe("done")
      yield* Scope.close(scope, Exit.void)
    }))
})
