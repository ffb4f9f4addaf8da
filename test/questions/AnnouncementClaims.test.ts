/**
 * The announcement's claim (`Announcements.claim`) on both backends: of
 * processes that see the same question at once — two askers of one thread
 * length, or several hosts' loops standing in for a failed asker — exactly
 * one is told to send. Each claimant is a store opened as another process
 * would open it (its own store object; on PostgreSQL its own pool).
 */
import { describe, expect, it } from "@effect/vitest"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { Effect, Layer, Option, Redacted } from "effect"
import * as NodePath from "node:path"
import * as Announcements from "../../src/questions/Announcements.js"
import { QuestionStore } from "../../src/questions/QuestionStore.js"
import { MagiHome } from "../../src/platform/MagiHome.js"
import { StoreBackend } from "../../src/store/StoreBackend.js"
import { freshDatabase } from "../pgSupport.js"
import { choiceQuestion, tempDir } from "../support.js"

/** Racers at once: a handful of hosts' loops, all woken by one change. */
const RACERS = 6

/** A way to open the store as one more process, on each backend. */
const backends = [
  {
    name: "a home folder",
    opener: Effect.map(tempDir, (base) => ({
      open: Effect.provide(QuestionStore, QuestionStore.at(NodePath.join(base, "questions")).pipe(Layer.provide(NodeFileSystem.layer)))
    }))
  },
  {
    name: "PostgreSQL",
    opener: Effect.gen(function* () {
      const db = yield* freshDatabase
      const base = yield* tempDir
      return {
        open: Effect.flatMap(
          Layer.build(
            QuestionStore.layer.pipe(
              Layer.provide(Layer.mergeAll(StoreBackend.postgres(Redacted.make(db.url)), MagiHome.at(NodePath.join(base, "home")))),
              Layer.provide(NodeFileSystem.layer)
            )
          ),
          (context) => Effect.provide(QuestionStore, context)
        )
      }
    })
  }
] as const

describe.each(backends)("announcing a question on $name", ({ opener }) => {
  it.live(`of ${RACERS} askers announcing one thread length at once, exactly one sends; a reply is a new announcement`, () =>
    Effect.gen(function* () {
      const { open } = yield* opener
      const stores = yield* Effect.all(Array.from({ length: RACERS }, () => open))
      const q = choiceQuestion()
      const won = yield* Effect.all(
        stores.map((s, i) => Announcements.claim(s.announcements, q, "asker", `host-${i}`, (current) => Announcements.askerShouldNotify(q, current))),
        { concurrency: "unbounded" }
      )
      expect(won.filter(Option.isSome)).toHaveLength(1)
      const replied = { ...q, thread: [...q.thread, { who: "agent" as const, body: "More detail", at: q.asked_at }] }
      const again = yield* Announcements.claim(stores[0]!.announcements, replied, "asker", "host-0", (current) =>
        Announcements.askerShouldNotify(replied, current))
      expect(Option.isSome(again)).toBe(true)
    }).pipe(Effect.scoped))

  it.live(`of ${RACERS} loops standing in for an asker that failed, exactly one sends, and it is recorded as sent by its host`, () =>
    Effect.gen(function* () {
      const { open } = yield* opener
      const stores = yield* Effect.all(Array.from({ length: RACERS }, () => open))
      const q = choiceQuestion()
      const asker = yield* Announcements.claim(stores[0]!.announcements, q, "asker", "sandbox", (current) => Announcements.askerShouldNotify(q, current))
      yield* Announcements.finish(stores[0]!.announcements, Option.getOrThrow(asker), "failed", "could not resolve ntfy.sh")
      const now = new Date()
      const won = yield* Effect.all(
        stores.map((s, i) => Announcements.claim(s.announcements, q, "loop", `host-${i}`, (current) => Announcements.loopShouldNotify(q, current, now))),
        { concurrency: "unbounded" }
      )
      const winners = won.filter(Option.isSome)
      expect(winners).toHaveLength(1)
      yield* Announcements.finish(stores[1]!.announcements, winners[0]!.value, "sent")
      const record = yield* Announcements.read(stores[2]!.announcements, q.id)
      expect(record).toMatchObject({ _tag: "Some", value: { state: "sent", by: "loop", host: winners[0]!.value.host } })
      // Sent: no loop stands in again.
      expect(Announcements.loopShouldNotify(q, record, new Date())).toBe(false)
    }).pipe(Effect.scoped))
})
