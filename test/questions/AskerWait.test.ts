import { describe, expect, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Clock, ConfigProvider, Context, Duration, Effect, Exit, Fiber, Layer, Option, Schedule, Scope, Stream, TestClock } from "effect"
import * as NodePath from "node:path"
import * as Q from "../../src/questions/Question.js"
import { QuestionStore } from "../../src/questions/QuestionStore.js"
import * as QuestionStoreModule from "../../src/questions/QuestionStore.js"
import { Notifier } from "../../src/questions/Notifier.js"
import * as Notify from "../../src/questions/Notifier.js"
import { AskerWait, type WaitOutcome } from "../../src/questions/AskerWait.js"
import * as AskerWaitModule from "../../src/questions/AskerWait.js"
import * as MemoryFileSystem from "../../src/store/MemoryFileSystem.js"
import { MagiConfig } from "../../src/platform/MagiConfig.js"
import * as Lease from "../../src/questions/Leases.js"
import * as Announcements from "../../src/questions/Announcements.js"
import { answerQuestion, sayToQuestion } from "../../src/questions/Answers.js"
import { advance, choiceQuestion, realPause, runUntilDone, tempDirSync } from "../support.js"

const HOUR = 3600

/** AskerWait over a real temp-dir store, notifications as given (off by default). */
const onDisk = (slice: Duration.DurationInput, notifier: Layer.Layer<Notifier> = Notifier.off) => {
  const root = NodePath.join(tempDirSync(), "questions")
  return Layer.scoped(AskerWait, Effect.map(AskerWaitModule.make(Duration.decode(slice)), AskerWait.make)).pipe(
    Layer.provideMerge(Layer.mergeAll(QuestionStore.at(root), notifier, MagiConfig.fixed({}))),
    Layer.provideMerge(NodeContext.layer)
  )
}

/**
 * AskerWait over an in-memory store: every step is synchronous, so whole days of
 * virtual time replay at once. `poll` can be stretched so a replay hears the
 * answer through the store's change stream alone.
 */
const inMemory = (slice: Duration.DurationInput, poll: Duration.DurationInput = AskerWaitModule.POLL) =>
  Layer.scoped(AskerWait, Effect.map(AskerWaitModule.make(Duration.decode(slice), Duration.decode(poll)), AskerWait.make)).pipe(
    Layer.provideMerge(Layer.mergeAll(QuestionStore.at("/magi/questions"), Notifier.off, MagiConfig.fixed({}))),
    Layer.provideMerge(MemoryFileSystem.layer)
  )

/** A question asked "now" on the virtual clock, with its deadline recorded. */
const asked = (timeoutSecs: number) =>
  Effect.map(TestClock.currentTimeMillis, (ms) => ({ ...choiceQuestion(undefined, new Date(ms)), answer_timeout: timeoutSecs }))

/** Wait in real time until the question is on disk. */
const onDiskNow = (id: string) =>
  Effect.flatMap(QuestionStore, (store) =>
    store.get(id).pipe(
      Effect.retry({ schedule: Schedule.spaced("5 millis").pipe(Schedule.upTo("60 seconds")) }),
      Effect.withClock(Clock.make()),
      Effect.orDie
    ))

/** What an agent does: ask, then `--wait` again after every pending slice. */
const agentLoop = (q: Q.Question) =>
  Effect.gen(function* () {
    const waits = yield* AskerWait
    const store = yield* QuestionStore
    let outcome: WaitOutcome = yield* waits.askAndWait(q, Duration.seconds(q.answer_timeout))
    let slices = 1
    while (outcome._tag === "Pending") {
      const fresh = yield* store.get(q.id)
      const left = Q.budgetLeftMs(fresh, 86_400, new Date(yield* TestClock.currentTimeMillis))
      outcome = yield* waits.resumeWait(fresh, Duration.millis(left))
      slices++
    }
    return { outcome, slices }
  })

describe("AskerWait", () => {
  it.effect("returns the answer another writer put in the file, with the caller's copy refreshed", () =>
    Effect.gen(function* () {
      const waits = yield* AskerWait
      const q = yield* asked(60)
      const waiting = yield* Effect.fork(waits.askAndWait(q, Duration.seconds(60)))
      yield* onDiskNow(q.id)
      yield* advance("5 seconds")
      yield* answerQuestion(q.id, { choice: "SQLite" })
      const outcome = yield* runUntilDone(waiting)
      expect(outcome._tag).toBe("Answered")
      if (outcome._tag !== "Answered") return
      expect(outcome.answer).toBe("SQLite")
      expect(outcome.question.status).toBe("answered")
      expect(outcome.question.answered_at).not.toBeNull()
    }).pipe(Effect.provide(onDisk("240 seconds"))))

  it.effect("abandons a question nobody answers by its deadline, keeping the record and the reason", () =>
    Effect.gen(function* () {
      const waits = yield* AskerWait
      const store = yield* QuestionStore
      const q = yield* asked(60)
      const waiting = yield* Effect.fork(waits.askAndWait(q, Duration.seconds(60)))
      yield* onDiskNow(q.id)
      const outcome = yield* runUntilDone(waiting, "3 seconds")
      expect(outcome._tag).toBe("Abandoned")
      expect(yield* TestClock.currentTimeMillis).toBeGreaterThanOrEqual(60_000)
      const onDisk = yield* store.get(q.id)
      expect(onDisk.status).toBe("abandoned")
      expect(onDisk.detail).toContain("_Abandoned: no answer within 60s of asking._")
      expect(Q.resolution(onDisk)).toBeUndefined()
      expect(yield* store.countOpen).toBe(0)
    }).pipe(Effect.provide(onDisk("240 seconds"))))

  it.effect("hands back Pending when a slice runs out, and leaves the question open", () =>
    Effect.gen(function* () {
      const waits = yield* AskerWait
      const store = yield* QuestionStore
      const q = yield* asked(HOUR)
      const waiting = yield* Effect.fork(waits.askAndWait(q, Duration.seconds(HOUR)))
      // The write is flushed to the disk before the wait starts; virtual
      // time must not run ahead of it, or the slice would start late.
      yield* onDiskNow(q.id)
      const outcome = yield* runUntilDone(waiting, "3 seconds")
      expect(outcome._tag).toBe("Pending")
      // The slice, not the hour-long deadline, ended it.
      expect(yield* TestClock.currentTimeMillis).toBeLessThan(60_000)
      expect((yield* store.get(q.id)).status).toBe("open")
    }).pipe(Effect.provide(onDisk("30 seconds"))))

  it.effect("sees, on a resumed wait, the answer written after the first slice ended", () =>
    Effect.gen(function* () {
      const waits = yield* AskerWait
      const store = yield* QuestionStore
      const q = yield* asked(HOUR)
      const first = yield* Effect.fork(waits.askAndWait(q, Duration.seconds(HOUR)))
      yield* onDiskNow(q.id)
      expect((yield* runUntilDone(first, "3 seconds"))._tag).toBe("Pending")

      yield* answerQuestion(q.id, { choice: "Redis" })
      const fresh = yield* store.get(q.id)
      const second = yield* Effect.fork(waits.resumeWait(fresh, Duration.seconds(HOUR - 31)))
      const outcome = yield* runUntilDone(second)
      expect(outcome._tag === "Answered" && outcome.answer).toBe("Redis")
    }).pipe(Effect.provide(onDisk("30 seconds"))))

  it.effect("never misses a word the owner left in the gap between two slices", () =>
    Effect.gen(function* () {
      const waits = yield* AskerWait
      const store = yield* QuestionStore
      const q = yield* asked(HOUR)
      const first = yield* Effect.fork(waits.askAndWait(q, Duration.seconds(HOUR)))
      yield* onDiskNow(q.id)
      expect((yield* runUntilDone(first, "3 seconds"))._tag).toBe("Pending")

      // Nobody is waiting while the owner speaks.
      yield* sayToQuestion(q.id, "why not Postgres?")
      // The resumed wait loads a fresh copy that already holds the word.
      const resumed = yield* store.get(q.id)
      const outcome = yield* waits.resumeWait(resumed, Duration.seconds(HOUR - 31))
      expect(outcome._tag === "Replied" && outcome.said).toBe("why not Postgres?")
      expect(outcome.question.status).toBe("open")
    }).pipe(Effect.provide(onDisk("30 seconds"))))

  it.effect("returns to the agent when the owner talks back without deciding", () =>
    Effect.gen(function* () {
      const waits = yield* AskerWait
      const q = yield* asked(60)
      const waiting = yield* Effect.fork(waits.askAndWait(q, Duration.seconds(60)))
      yield* onDiskNow(q.id)
      yield* advance("4 seconds")
      yield* sayToQuestion(q.id, "why not Postgres?")
      const outcome = yield* runUntilDone(waiting)
      expect(outcome._tag === "Replied" && outcome.said).toBe("why not Postgres?")
      expect(outcome.question.status).toBe("open")
      expect(outcome.question.answer).toBeNull()
    }).pipe(Effect.provide(onDisk("240 seconds"))))

  it.effect("keeps an answer that lands at the very moment the deadline passes", () =>
    Effect.gen(function* () {
      const waits = yield* AskerWait
      const store = yield* QuestionStore
      const q = yield* asked(9)
      const waiting = yield* Effect.fork(waits.askAndWait(q, Duration.seconds(9)))
      yield* onDiskNow(q.id)
      // The last poll before the deadline is at 6 s; the answer lands after
      // it, so the wait meets it only when it goes to abandon the question.
      yield* advance("7 seconds")
      yield* answerQuestion(q.id, { choice: "SQLite" })
      yield* advance("3 seconds")
      const outcome = yield* Fiber.join(waiting)
      expect(outcome._tag).toBe("Answered")
      expect((yield* store.get(q.id)).status).toBe("answered")
    }).pipe(Effect.provide(inMemory("240 seconds"))))

  it.effect("reports a notification command that cannot run, and the wait still gets the answer", () =>
    Effect.gen(function* () {
      const notifier = yield* Notifier
      const q = yield* asked(60)
      const failed = yield* Effect.flip(notifier.notify(q))
      expect(failed.message).toContain("magi-notifier-that-does-not-exist-9fb7")
      expect(failed.message).toContain("could not be started")

      const waits = yield* AskerWait
      const waiting = yield* Effect.fork(waits.askAndWait(q, Duration.seconds(60)))
      yield* onDiskNow(q.id)
      yield* advance("3 seconds")
      yield* answerQuestion(q.id, { choice: "Redis" })
      const outcome = yield* runUntilDone(waiting)
      expect(outcome._tag === "Answered" && outcome.answer).toBe("Redis")
    }).pipe(
      Effect.provide(
        onDisk(
          "240 seconds",
          Layer.effect(Notifier, Notify.make(["magi-notifier-that-does-not-exist-9fb7", "{summary}"], "")).pipe(
            Layer.provide(NodeContext.layer)
          )
        )
      )
    ))

  it.effect("beats the asker's lease while waiting and records what the agent was given", () =>
    Effect.gen(function* () {
      const waits = yield* AskerWait
      const store = yield* QuestionStore
      const q = yield* asked(HOUR)
      const waiting = yield* Effect.fork(waits.askAndWait(q, Duration.seconds(HOUR)))
      yield* onDiskNow(q.id)
      yield* advance("10 seconds")
      const lease = yield* Lease.read(store.root, q.id)
      expect(lease._tag === "Some" && lease.value.kind).toBe("asker")
      // Fresh on the virtual clock: the last beat was at most one poll ago.
      expect(lease._tag === "Some" && Lease.isFresh(lease.value, new Date(yield* TestClock.currentTimeMillis))).toBe(true)

      yield* sayToQuestion(q.id, "why not Postgres?")
      const replied = yield* runUntilDone(waiting)
      expect((yield* store.get(q.id)).delivered_turns).toBe(0)
      yield* waits.markDelivered(replied)
      expect((yield* store.get(q.id)).delivered_turns).toBe(1)

      yield* answerQuestion(q.id, { choice: "Redis" })
      const answered = yield* waits.resumeWait(yield* store.get(q.id), Duration.seconds(HOUR))
      expect(answered._tag).toBe("Answered")
      yield* waits.markDelivered(answered)
      expect((yield* store.get(q.id)).answer_delivered).toBe(true)
    }).pipe(Effect.provide(inMemory("240 seconds"))))

  it.effect("never loses an owner's word said while the agent was replying to an earlier one", () =>
    Effect.gen(function* () {
      const waits = yield* AskerWait
      const store = yield* QuestionStore
      const q = yield* asked(HOUR)
      yield* store.put(q)
      yield* sayToQuestion(q.id, "op1: why not Postgres?")
      const first = yield* waits.resumeWait(yield* store.get(q.id), Duration.seconds(HOUR))
      expect(first._tag === "Replied" && first.said).toBe("op1: why not Postgres?")
      yield* waits.markDelivered(first)
      // The owner adds a word before the agent's reply lands.
      yield* sayToQuestion(q.id, "op2: and how is it backed up?")
      yield* store.update(q.id, (fresh) => Q.reply(fresh, "Postgres needs a server", ["SQLite"], new Date()))
      const second = yield* waits.resumeWait(yield* store.get(q.id), Duration.seconds(HOUR))
      expect(second._tag === "Replied" && second.said).toBe("op2: and how is it backed up?")
    }).pipe(Effect.provide(inMemory("240 seconds"))))

  it.effect("hears an answer by re-reading every few seconds where the store cannot be watched", () =>
    Effect.gen(function* () {
      const waits = yield* AskerWait
      const q = yield* asked(60)
      const waiting = yield* Effect.fork(waits.askAndWait(q, Duration.seconds(60)))
      yield* onDiskNow(q.id)
      yield* TestClock.adjust("1 second")
      yield* answerQuestion(q.id, { choice: "Redis" })
      // No change event will come: only the next re-read, at 3 s, sees it.
      yield* TestClock.adjust("1 second")
      expect(waiting.unsafePoll()).toBeNull()
      yield* TestClock.adjust("1 second")
      const outcome = yield* Fiber.join(waiting)
      expect(outcome._tag === "Answered" && outcome.answer).toBe("Redis")
    }).pipe(
      Effect.provide(
        Layer.scoped(AskerWait, Effect.map(AskerWaitModule.make(Duration.minutes(4)), AskerWait.make)).pipe(
          Layer.provideMerge(
            Layer.mergeAll(
              Layer.effect(
                QuestionStore,
                Effect.map(QuestionStoreModule.make("/magi/questions"), (store) => QuestionStore.make({ ...store, changes: Stream.empty }))
              ),
              Notifier.off,
              MagiConfig.fixed({})
            )
          ),
          Layer.provideMerge(MemoryFileSystem.layer)
        )
      )
    ))

  it.effect("replays a whole day in slices, the owner answering in hour 23", () =>
    Effect.gen(function* () {
      const q = yield* asked(24 * HOUR)
      const agent = yield* Effect.fork(agentLoop(q))
      yield* TestClock.adjust(Duration.hours(23))
      yield* answerQuestion(q.id, { choice: "SQLite" })
      yield* TestClock.adjust(Duration.minutes(1))
      const { outcome, slices } = yield* Fiber.join(agent)
      expect(outcome._tag === "Answered" && outcome.answer).toBe("SQLite")
      // One-hour slices (an agent CLI with a long tool timeout), each a
      // fresh `magi ask --wait`; the answer is heard in the 24th.
      expect(slices).toBe(24)
    }).pipe(Effect.provide(inMemory("1 hour", "1 day"))))

  it.effect("replays a whole day in slices with nobody answering, and abandons exactly at the deadline", () =>
    Effect.gen(function* () {
      const store = yield* QuestionStore
      const q = yield* asked(24 * HOUR)
      const agent = yield* Effect.fork(agentLoop(q))
      yield* TestClock.adjust(Duration.hours(24).pipe(Duration.subtract(Duration.seconds(1))))
      expect((yield* store.get(q.id)).status).toBe("open")
      yield* TestClock.adjust(Duration.seconds(2))
      const { outcome, slices } = yield* Fiber.join(agent)
      expect(outcome._tag).toBe("Abandoned")
      expect(slices).toBe(24)
      expect((yield* store.get(q.id)).detail).toContain("no answer within 86400s of asking")
    }).pipe(Effect.provide(inMemory("1 hour", "1 day"))))
})

describe("AskerWait let go of the asker's lease when the asking process stops waiting", () => {
  /** The waits of one `magi ask` process: the scope closing is the command ending. */
  const oneProcess = (slice: Duration.DurationInput) =>
    Effect.gen(function* () {
      const scope = yield* Scope.make()
      const ctx = yield* Layer.buildWithScope(inMemory(slice), scope)
      const leaseOf = (id: string) => Lease.read("/magi/questions", id).pipe(Effect.provide(Layer.succeedContext(ctx)), Effect.map(Option.map((l) => l.kind)))
      return { scope, waits: Context.get(ctx, AskerWait), ctx, leaseOf }
    })

  it.effect("a slice that hands back pending leaves no lease once the command ends", () =>
    Effect.gen(function* () {
      const p = yield* oneProcess("30 seconds")
      const q = yield* asked(HOUR)
      const waiting = yield* Effect.fork(p.waits.askAndWait(q, Duration.seconds(HOUR)))
      yield* advance("5 seconds")
      expect(yield* p.leaseOf(q.id)).toEqual(Option.some("asker"))
      expect((yield* runUntilDone(waiting))._tag).toBe("Pending")
      yield* Scope.close(p.scope, Exit.void)
      // Before: the lease stayed for its whole 90 s ttl, and so did the daemon.
      expect(yield* p.leaseOf(q.id)).toEqual(Option.none())
    }))

  it.effect("a pending slice of a question outside any magi run lets go of its lease too: nobody waits once it exited", () =>
    Effect.gen(function* () {
      const p = yield* oneProcess("30 seconds")
      const q = { ...(yield* asked(HOUR)), run: "" }
      const waiting = yield* Effect.fork(p.waits.askAndWait(q, Duration.seconds(HOUR)))
      expect((yield* runUntilDone(waiting))._tag).toBe("Pending")
      yield* Scope.close(p.scope, Exit.void)
      // Before (issue 20): the lease stayed its 90 s, and the page said "the agent is waiting".
      expect(yield* p.leaseOf(q.id)).toEqual(Option.none())
    }))

  it.effect("a wait stopped by a signal leaves no lease either", () =>
    Effect.gen(function* () {
      const p = yield* oneProcess("4 minutes")
      const q = yield* asked(HOUR)
      const waiting = yield* Effect.fork(p.waits.askAndWait(q, Duration.seconds(HOUR)))
      yield* advance("5 seconds")
      yield* Fiber.interrupt(waiting)
      yield* Scope.close(p.scope, Exit.interrupt(waiting.id()))
      expect(yield* p.leaseOf(q.id)).toEqual(Option.none())
    }))

  it.effect("a lease someone else beat since (the daemon delivering) is left alone", () =>
    Effect.gen(function* () {
      const p = yield* oneProcess("30 seconds")
      const q = yield* asked(HOUR)
      const waiting = yield* Effect.fork(p.waits.askAndWait(q, Duration.seconds(HOUR)))
      yield* runUntilDone(waiting)
      yield* Lease.beat("/magi/questions", q.id, "daemon").pipe(Effect.provide(Layer.succeedContext(p.ctx)))
      yield* Scope.close(p.scope, Exit.void)
      expect(yield* p.leaseOf(q.id)).toEqual(Option.some("daemon"))
    }))
})

describe("a deputy's wait", () => {
  it.effect("holds its question with a deputy lease (MAGI_NODE=deputy), and leaves letting go to the daemon that runs the deputy", () =>
    Effect.gen(function* () {
      const scope = yield* Scope.make()
      const ctx = yield* Layer.buildWithScope(
        AskerWait.layer.pipe(
          Layer.provideMerge(Layer.mergeAll(QuestionStore.at("/magi/questions"), Notifier.off, MagiConfig.fixed({ waitSliceSecs: 30 }))),
          Layer.provideMerge(MemoryFileSystem.layer)
        ),
        scope
      ).pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["MAGI_NODE", "deputy"]]))))
      const leaseOf = (id: string) => Lease.read("/magi/questions", id).pipe(Effect.provide(Layer.succeedContext(ctx)), Effect.map(Option.map((l) => l.kind)))
      const q = yield* asked(HOUR)
      const waiting = yield* Effect.fork(Context.get(ctx, AskerWait).askAndWait(q, Duration.seconds(HOUR)))
      yield* advance("5 seconds")
      expect(yield* leaseOf(q.id)).toEqual(Option.some("deputy"))
      expect((yield* runUntilDone(waiting))._tag).toBe("Pending")
      yield* Scope.close(scope, Exit.void)
      // The deputy's turn may wait again at once; the daemon beats the lease until the turn ends.
      expect(yield* leaseOf(q.id)).toEqual(Option.some("deputy"))
    }))
})

describe("the asker records whether it notified, for the loop to stand in", () => {
  const failing = Layer.succeed(Notifier, {
    command: ["ntfy"],
    configured: true,
    channels: ["ntfy"],
    notify: () => Effect.fail(new Notify.NotifyFailed({ message: "could not resolve ntfy.sh" }))
  })
  const working = Layer.succeed(Notifier, { command: ["ntfy"], configured: true, channels: ["ntfy"], notify: () => Effect.void })

  for (
    const [name, notifier, state] of [
      ["a notification that fails (no network in the sandbox) is recorded as failed", failing, "failed"],
      ["a notification sent is recorded as sent", working, "sent"]
    ] as const
  )
    it.effect(name, () =>
      Effect.gen(function* () {
        const waits = yield* AskerWait
        const store = yield* QuestionStore
        const q = yield* asked(60)
        const waiting = yield* Effect.fork(waits.askAndWait(q, Duration.seconds(60)))
        // The record is written with real I/O: give it real time to land.
        let record = yield* Announcements.read(store.announcements, q.id)
        for (let i = 0; i < 500 && !(Option.isSome(record) && record.value.state !== "sending"); i++) {
          yield* realPause(10)
          record = yield* Announcements.read(store.announcements, q.id)
        }
        expect(record).toMatchObject({ _tag: "Some", value: { state, by: "asker", turns: 0 } })
        yield* Fiber.interrupt(waiting)
      }).pipe(Effect.provide(onDisk("240 seconds", notifier))))
})
