import { describe, expect, it } from "@effect/vitest"
import { Effect, Ref } from "effect"
import * as Memo from "../../../src/store/files/Memo.js"

/** A stamp long settled: any value computed now may be kept under it. */
const OLD_STAMP = 1_000

describe("Memo", () => {
  it.effect("computes once while the stamp stands, and again when it moves", () =>
    Effect.gen(function* () {
      const memo = Memo.make<number>()
      const computed = yield* Ref.make(0)
      const stamp = yield* Ref.make(OLD_STAMP)
      const compute = Ref.updateAndGet(computed, (n) => n + 1)
      yield* memo.get("k", Ref.get(stamp), compute)
      yield* memo.get("k", Ref.get(stamp), compute)
      expect(yield* Ref.get(computed)).toBe(1)
      yield* Ref.set(stamp, OLD_STAMP + 1)
      expect(yield* memo.get("k", Ref.get(stamp), compute)).toBe(2)
    }))

  it.effect("never keeps a value whose stamp is too young to trust", () =>
    Effect.gen(function* () {
      const memo = Memo.make<number>()
      const computed = yield* Ref.make(0)
      const compute = Ref.updateAndGet(computed, (n) => n + 1)
      yield* memo.get("k", Effect.succeed(Date.now() + 10_000), compute)
      yield* memo.get("k", Effect.succeed(Date.now() + 10_000), compute)
      expect(yield* Ref.get(computed)).toBe(2)
    }))

  it.effect("keeps at most its bound of keys, making room by dropping the oldest", () =>
    Effect.gen(function* () {
      const memo = Memo.make<string>(2)
      const computed = yield* Ref.make<Array<string>>([])
      const get = (key: string) => memo.get(key, Effect.succeed(OLD_STAMP), Effect.as(Ref.update(computed, (ks) => [...ks, key]), key))
      yield* get("a")
      yield* get("b")
      yield* get("c") // "a" makes room
      yield* get("b")
      yield* get("c")
      yield* get("a")
      expect(yield* Ref.get(computed)).toEqual(["a", "b", "c", "a"])
    }))
})
