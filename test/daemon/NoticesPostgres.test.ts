/**
 * Notices on PostgreSQL, on the real server of the test run: raised by one
 * waiter, listed (and not raised twice) by another process sharing the
 * database, announced on the web's feed through `LISTEN`, and never a file
 * in the home.
 */
import { describe, expect, it } from "@effect/vitest"
import { FileSystem } from "@effect/platform"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { Effect, Fiber, Layer, Option, Redacted, Ref, Stream } from "effect"
import * as NodePath from "node:path"
import { Notices, noticesDir } from "../../src/daemon/Notices.js"
import { MagiHome } from "../../src/platform/MagiHome.js"
import { StoreBackend } from "../../src/store/StoreBackend.js"
import { Notifier } from "../../src/questions/Notifier.js"
import { NoticeFeed } from "../../src/web/NoticeFeed.js"
import { freshDatabase, query } from "../pgSupport.js"
import { choiceQuestion, tempDir } from "../support.js"

/** Notices and the web's feed of them on a fresh database; `other` opens both again, as another process (its own home, its own pool) would. */
const onPostgres = Effect.gen(function* () {
  const db = yield* freshDatabase
  const base = yield* tempDir
  const notified = yield* Ref.make<ReadonlyArray<string>>([])
  let homes = 0
  const open = Effect.gen(function* () {
    const home = NodePath.join(base, `home-${homes++}`)
    const context = yield* Layer.build(
      Layer.mergeAll(Notices.layer, NoticeFeed.layer).pipe(
        Layer.provide(
          Layer.mergeAll(
            StoreBackend.postgres(Redacted.make(db.url)),
            MagiHome.at(home),
            Layer.succeed(Notifier, {
              command: ["notify"],
              configured: true,
              channels: ["notify"],
              notify: (q) => Ref.update(notified, (n) => [...n, q.summary])
            })
          )
        ),
        Layer.provideMerge(NodeFileSystem.layer)
      )
    )
    return yield* Effect.provide(
      Effect.map(Effect.all([Notices, NoticeFeed, FileSystem.FileSystem]), ([notices, feed, fs]) => ({ notices, feed, fs, home })),
      context
    )
  })
  return { db, notified, first: yield* open, other: open }
})

describe("notices on PostgreSQL", () => {
  it.scopedLive("a notice raised in one process is listed by another, not raised twice, and leaves no file in either home", () =>
    Effect.gen(function* () {
      const { db, notified, first, other } = yield* onPostgres
      const second = yield* other
      const q = choiceQuestion()
      expect(second.notices.where).toMatch(/^postgres:\/\/magi_test:\*\*\*@.* \(notices\)$/)
      const raised = yield* first.notices.raise(q, "Answered@1", "could not reach impl-A", "the seat is gone")
      expect(Option.isSome(raised)).toBe(true)
      const listed = yield* second.notices.list
      expect(listed).toEqual([Option.getOrThrow(raised)])
      expect(yield* second.feed.list).toEqual(listed)
      // The same notice from the other process is recognised: one tap on the shoulder, not two.
      expect(yield* second.notices.raise(q, "Answered@1", "could not reach impl-A", "the seat is gone")).toEqual(Option.none())
      // Another reason is another notice, listed newest first.
      const later = yield* second.notices.raise(q, "Answered@1", "could not reach impl-A", "the agent CLI is missing")
      expect((yield* first.feed.list).map((n) => n.reason)).toHaveLength(2)
      expect(Option.isSome(later)).toBe(true)
      expect(yield* notified).toEqual(["could not reach impl-A", "could not reach impl-A"])
      const rows = yield* query(db.url, "SELECT id FROM magi_records WHERE kind = 'notices' ORDER BY id")
      expect(rows).toHaveLength(2)
      for (const side of [first, second]) {
        const dir = noticesDir({ dir: side.home })
        const names = yield* side.fs.readDirectory(dir).pipe(Effect.orElseSucceed((): string[] => []))
        expect(names.filter((n) => n.endsWith(".json"))).toEqual([])
      }
    }))

  it.scopedLive("the web's feed of another process hears a notice land, by its name, and its revision moves", () =>
    Effect.gen(function* () {
      const { first, other } = yield* onPostgres
      const second = yield* other
      const before = yield* second.feed.revision
      const heard = yield* Effect.fork(second.feed.changes.pipe(Stream.filter((name) => name.endsWith(".json")), Stream.runHead))
      // The listener connects on its own connection: raised (each a new reason) until it has heard one.
      let last: string | undefined
      for (let i = 0; i < 100 && Option.isNone(yield* Fiber.poll(heard)); i++) {
        const n = yield* first.notices.raise(choiceQuestion(), "Answered@1", "could not deliver", `try ${i}`)
        last = Option.getOrThrow(n).id
        yield* Effect.sleep("50 millis")
      }
      const got = yield* Fiber.join(heard)
      expect(Option.isSome(got)).toBe(true)
      expect(Option.getOrThrow(got)).toMatch(/^\d{8}-\d{6}-[0-9a-f]{4}\.json$/)
      expect(last).toBeDefined()
      expect(yield* second.feed.revision).toBeGreaterThan(before)
    }))
})
