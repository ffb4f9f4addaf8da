import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Ref } from "effect"
import * as TurnSlots from "../../src/agents/TurnSlots.js"

/** Let the forked fibers run up to their next wait. */
const settle = Effect.repeatN(Effect.yieldNow(), 20)

describe("TurnSlots", () => {
  it.effect("with every slot taken, resumes of answered questions start before tasks that came first, and the line says who waits behind how many", () =>
    Effect.gen(function* () {
      const slots = yield* TurnSlots.make(1)
      const order = yield* Ref.make<ReadonlyArray<string>>([])
      const hold = yield* Deferred.make<void>()
      const first = yield* Effect.fork(slots.withSlot("running", Deferred.await(hold)))
      yield* settle
      const turn = (run: string) => slots.withSlot(run, Ref.update(order, (o) => [...o, run]))
      const task = yield* Effect.fork(turn("task"))
      yield* settle
      const resume = yield* Effect.fork(turn("resume").pipe(Effect.locally(TurnSlots.priority, "resume"), Effect.locally(TurnSlots.question, "q-1")))
      yield* settle
      // The resume names the question whose answer it carries: its card says it waits.
      expect(yield* slots.load).toEqual({ running: 1, queued: 2, waiting: [{ run: "resume", question: "q-1", ahead: 1 }, { run: "task", ahead: 2 }] })
      yield* Deferred.succeed(hold, undefined)
      yield* Fiber.join(first)
      yield* Fiber.join(task)
      yield* Fiber.join(resume)
      expect(yield* Ref.get(order)).toEqual(["resume", "task"])
      expect((yield* slots.load).running).toBe(0)
    }))

  it.effect("a turn stopped while it waits leaves the line and takes no slot", () =>
    Effect.gen(function* () {
      const slots = yield* TurnSlots.make(1)
      const hold = yield* Deferred.make<void>()
      const first = yield* Effect.fork(slots.withSlot("running", Deferred.await(hold)))
      yield* settle
      const waiting = yield* Effect.fork(slots.withSlot("gone", Effect.void))
      yield* settle
      expect((yield* slots.load).queued).toBe(1)
      yield* Fiber.interrupt(waiting)
      expect(yield* slots.load).toEqual({ running: 1, queued: 0, waiting: [] })
      yield* Deferred.succeed(hold, undefined)
      yield* Fiber.join(first)
      const ran = yield* slots.withSlot("next", Effect.succeed("ran"))
      expect(ran).toBe("ran")
      expect((yield* slots.load).running).toBe(0)
    }))
})
