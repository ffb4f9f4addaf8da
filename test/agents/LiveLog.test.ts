/** A seat's live events on disk (issue 32.1): appended while the turn runs, bounded, followed from any point. */
import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Duration, Effect, Fiber, Stream } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as LiveLog from "../../src/agents/LiveLog.js"
import { tempDirSync } from "../support.js"

const bytes = (s: string) => new TextEncoder().encode(s)
const run = <A, E>(e: Effect.Effect<A, E, import("@effect/platform/FileSystem").FileSystem>) => Effect.provide(e, NodeContext.layer)

describe("LiveLog", () => {
  it.effect("a turn's events are appended as they come, closed by its end, and the next turn continues the count", () =>
    run(Effect.gen(function* () {
      const file = LiveLog.liveFile(tempDirSync(), "impl-A")
      const first = yield* LiveLog.open(file, 1)
      yield* first.feed(bytes("reading the store\nhalf a li"))
      expect((yield* LiveLog.read(file)).map((e) => e.kind)).toEqual(["message"])
      yield* first.feed(bytes("ne\n"))
      yield* first.end("", false)
      yield* first.end("again", true)
      const second = yield* LiveLog.open(file, 2)
      yield* second.feed(bytes(`${JSON.stringify({ type: "turn.failed", error: { message: "overloaded" } })}\n`))
      yield* second.end("the agent's turn failed", true)
      const all = yield* LiveLog.read(file)
      expect(all.map((e) => [e.seq, e.turn, e.kind])).toEqual([
        [1, 1, "message"],
        [2, 1, "message"],
        [3, 1, "end"],
        [4, 2, "error"],
        [5, 2, "end"]
      ])
      expect(all[1]).toMatchObject({ kind: "message", text: "half a line" })
      expect((yield* LiveLog.read(file, 3)).map((e) => e.seq)).toEqual([4, 5])
    })))

  it.effect("a CLI printing 100 MB of lines leaves a log of at most 2 MiB and 2000 events, the newest ones, counted on", () =>
    run(Effect.gen(function* () {
      const file = LiveLog.liveFile(tempDirSync(), "impl")
      const w = yield* LiveLog.open(file, 1)
      const line = `${"x".repeat(1000)}\n`
      const chunk = bytes(line.repeat(64))
      const chunks = Math.ceil((100 * 1024 * 1024) / chunk.length)
      let maxSize = 0
      for (let i = 0; i < chunks; i++) {
        yield* w.feed(chunk)
        if (i % 97 === 0) maxSize = Math.max(maxSize, NodeFs.statSync(file).size)
      }
      yield* w.end("", false)
      const size = NodeFs.statSync(file).size
      const entries = yield* LiveLog.read(file)
      expect(Math.max(maxSize, size)).toBeLessThanOrEqual(LiveLog.MAX_BYTES + 64 * 1100)
      expect(entries.length).toBeLessThanOrEqual(LiveLog.MAX_EVENTS)
      expect(entries.at(-1)).toMatchObject({ kind: "end", seq: chunks * 64 + 1 })
      expect(entries.map((e) => e.seq)).toEqual(entries.map((_, i) => entries[0]!.seq + i))
      // No scratch file is left beside it.
      expect(NodeFs.readdirSync(NodePath.dirname(file))).toEqual(["impl.live.jsonl"])
    })), 120_000)

  it.effect("a line of 50 MB becomes one short event, never 50 MB on disk", () =>
    run(Effect.gen(function* () {
      const file = LiveLog.liveFile(tempDirSync(), "impl")
      const w = yield* LiveLog.open(file, 1)
      const chunk = new Uint8Array(1024 * 1024).fill(0x7b)
      for (let i = 0; i < 50; i++) yield* w.feed(chunk)
      yield* w.end("", false)
      expect(NodeFs.statSync(file).size).toBeLessThan(1024)
      expect((yield* LiveLog.read(file)).map((e) => e.kind)).toEqual(["error", "end"])
    })))

  it.effect("a log that is there but cannot be read is not taken for an empty one: it is left as it was", () =>
    run(Effect.gen(function* () {
      const file = LiveLog.liveFile(tempDirSync(), "impl")
      NodeFs.mkdirSync(file)
      const w = yield* LiveLog.open(file, 1)
      yield* w.feed(bytes("said\n"))
      yield* w.end("", false)
      expect(NodeFs.statSync(file).isDirectory()).toBe(true)
    })))

  // Real files answer in real time: these poll every 10 ms on the live clock, waiting (up to a generous bound) for what they expect.
  const EVERY = Duration.millis(10)
  const waitFor = (ok: () => boolean) =>
    Effect.gen(function* () {
      for (let i = 0; i < 1000 && !ok(); i++) yield* Effect.sleep(EVERY)
    })

  it.live("follow gives what came after a seq, then each append, and reads on across a rewrite", () =>
    run(Effect.gen(function* () {
      const file = LiveLog.liveFile(tempDirSync(), "impl")
      const w = yield* LiveLog.open(file, 1)
      yield* w.feed(bytes("one\ntwo\nthree\n"))
      const seen: number[] = []
      const fiber = yield* LiveLog.follow(file, { after: 1, every: EVERY }).pipe(
        Stream.runForEach((e) => Effect.sync(() => seen.push(e.seq))),
        Effect.fork
      )
      yield* waitFor(() => seen.length >= 2)
      expect(seen).toEqual([2, 3])
      yield* w.feed(bytes("four\n"))
      yield* waitFor(() => seen.length >= 3)
      expect(seen).toEqual([2, 3, 4])
      // Enough lines to rewrite the log to its newest half, then one more.
      yield* w.feed(bytes("line\n".repeat(LiveLog.MAX_EVENTS)))
      yield* Effect.sleep(Duration.millis(50))
      yield* w.feed(bytes("last\n"))
      yield* waitFor(() => seen.at(-1) === 4 + LiveLog.MAX_EVENTS + 1)
      yield* Fiber.interrupt(fiber)
      expect(seen.at(-1)).toBe(4 + LiveLog.MAX_EVENTS + 1)
      // Never a seq twice nor out of order.
      expect(seen).toEqual([...seen].sort((a, b) => a - b))
      expect(new Set(seen).size).toBe(seen.length)
    })))

  it.live("follow waits for a log not there yet", () =>
    run(Effect.gen(function* () {
      const file = LiveLog.liveFile(tempDirSync(), "impl")
      const fiber = yield* LiveLog.follow(file, { every: EVERY }).pipe(Stream.take(1), Stream.runCollect, Effect.fork)
      yield* Effect.sleep(Duration.millis(50))
      const w = yield* LiveLog.open(file, 1)
      yield* w.feed(bytes("hello\n"))
      expect(Chunk.toArray(yield* Fiber.join(fiber)).map((e) => e.kind)).toEqual(["message"])
    })))

  it("a seat's name is kept to safe characters in the file's name", () => {
    expect(NodePath.basename(LiveLog.liveFile("/a", "../../etc/x"))).toBe("______etc_x.live.jsonl")
  })
})
