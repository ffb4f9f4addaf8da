/**
 * The question store on PostgreSQL, on the real server of the test run:
 * what a question adds to the record contract (its panel, its history
 * pages and search, its live change feed), as a second process sees it.
 */
import { describe, expect, it } from "@effect/vitest"
import { FileSystem } from "@effect/platform"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { Effect, Either, Fiber, Layer, Option, Redacted, Stream, TestClock } from "effect"
import * as NodePath from "node:path"
import * as Q from "../../src/questions/Question.js"
import { archiveNow } from "../../src/questions/Archiver.js"
import { PANEL_MAX_BYTES, QuestionStore } from "../../src/questions/QuestionStore.js"
import { MagiHome } from "../../src/platform/MagiHome.js"
import { StoreBackend } from "../../src/store/StoreBackend.js"
import { freshDatabase, query } from "../pgSupport.js"
import { choiceQuestion, ok, tempDir } from "../support.js"

const HOUR = 60 * 60 * 1000

/** A store on a fresh database, and a way to open it again as another process would. */
const onPostgres = Effect.gen(function* () {
  const db = yield* freshDatabase
  const base = yield* tempDir
  const open = Effect.flatMap(
    Layer.build(
      QuestionStore.layer.pipe(
        Layer.provide(Layer.mergeAll(StoreBackend.postgres(Redacted.make(db.url)), MagiHome.at(NodePath.join(base, "home")))),
        Layer.provideMerge(NodeFileSystem.layer)
      )
    ),
    (context) => Effect.provide(Effect.all([QuestionStore, FileSystem.FileSystem]), context)
  )
  const [store, fs] = yield* open
  return { store, fs, base, url: db.url, other: Effect.map(open, ([s]) => s) }
})

const settled = (id: string, asked: Date, summary: string): Q.Question => ({
  ...ok(Q.answer({ ...choiceQuestion(id, asked), summary }, { choice: "SQLite" }, asked)),
  answer_delivered: true
})

const text = (bytes: Option.Option<Uint8Array>) => Option.map(bytes, (b) => new TextDecoder().decode(b))

describe("the question store on PostgreSQL", () => {
  it.scopedLive("keeps a panel byte for byte, replaces it whole, serves it to another process, and drops it", () =>
    Effect.gen(function* () {
      const { store, fs, base, other } = yield* onPostgres
      // The database provided, not the backend the environment would pick.
      expect(store.where).toMatch(/^PostgreSQL at postgres:/)
      const work = NodePath.join(base, "worktree")
      yield* fs.makeDirectory(work, { recursive: true })
      yield* fs.writeFile(NodePath.join(work, "table.png"), new Uint8Array([0x89, 0x50, 0x4e, 0x47]))
      const q = yield* store.putPanel(choiceQuestion(), "<h1>Merge?</h1>", [NodePath.join(work, "table.png")])
      yield* store.put(q)
      // Copied into the database: the worktree can go.
      yield* fs.remove(work, { recursive: true })
      const second = yield* other
      expect(yield* second.panelHtml(q.id)).toEqual(Option.some("<h1>Merge?</h1>"))
      expect(Option.map(yield* second.panelAsset(q.id, "table.png"), (b) => [...b])).toEqual(Option.some([0x89, 0x50, 0x4e, 0x47]))
      expect((yield* Effect.flip(second.panelAsset(q.id, "../id_rsa")))._tag).toBe("InvalidAssetName")
      // A second panel replaces the first whole: no asset of the old one survives.
      yield* store.putPanel(q, "<p>again</p>", [])
      expect(yield* second.panelHtml(q.id)).toEqual(Option.some("<p>again</p>"))
      expect(yield* second.panelAsset(q.id, "table.png")).toEqual(Option.none())
      yield* store.dropPanel(q.id)
      expect(yield* second.panelHtml(q.id)).toEqual(Option.none())
    }))

  it.scopedLive("refuses an oversized panel naming the cap, and leaves the one stored before whole", () =>
    Effect.gen(function* () {
      const { store, fs, base } = yield* onPostgres
      const q = yield* store.putPanel(choiceQuestion(), "<p>first</p>", [])
      const big = NodePath.join(base, "big.bin")
      yield* fs.writeFile(big, new Uint8Array(PANEL_MAX_BYTES + 1))
      const refused = yield* Effect.flip(store.putPanel(q, "<p>second</p>", [big]))
      expect(refused.message).toContain(`over magi's cap of ${PANEL_MAX_BYTES} bytes`)
      expect(text(yield* store.panelAsset(q.id, "index.html"))).toEqual(Option.some("<p>first</p>"))
    }))

  it.scoped("moves settled questions to their month and pages history newest first, across the hot ones and the months, with a search", () =>
    Effect.gen(function* () {
      const { store } = yield* onPostgres
      const asked = (day: number) => new Date(Date.UTC(2026, 6 + Math.floor(day / 30), 1 + (day % 30), 10))
      const ids: Array<string> = []
      for (let day = 0; day < 6; day++) {
        const id = `${Q.makeId(asked(day * 12), 0).slice(0, 15)}-aa${day}${day}`
        ids.push(id)
        yield* store.put(settled(id, asked(day * 12), day % 2 === 0 ? `Cache on SQLite ${day}` : `Queue on Redis ${day}`))
      }
      yield* TestClock.setTime(asked(80).getTime() + HOUR)
      expect(yield* Effect.provideService(archiveNow, QuestionStore, store)).toBe(6)
      expect(yield* store.list).toEqual([])
      const newestFirst = [...ids].reverse()
      const first = yield* store.historyPage({ limit: 4 })
      expect(first.questions.map((q) => q.id)).toEqual(newestFirst.slice(0, 4))
      const rest = yield* store.historyPage({ limit: 4, before: first.next! })
      expect(rest.questions.map((q) => q.id)).toEqual(newestFirst.slice(4))
      expect(rest.next).toBeNull()
      const redis = yield* store.historyPage({ limit: 10, words: ["redis"] })
      expect(redis.questions.map((q) => q.summary)).toEqual(["Queue on Redis 5", "Queue on Redis 3", "Queue on Redis 1"])
      // A shelved question is still found by its short id, and answered questions stay where they are.
      expect((yield* store.get(ids[0]!.slice(-4))).id).toBe(ids[0])
    }))

  it.scoped("lists history by when a question was settled, not asked, on the shelves too, and rows shelved before that order was kept", () =>
    Effect.gen(function* () {
      const { store, url } = yield* onPostgres
      const at = (day: number) => new Date(Date.UTC(2026, 6, day, 10))
      const idOn = (day: number, tail: string) => `${Q.makeId(at(day), 0).slice(0, 15)}-${tail}`
      // Asked first, answered last; asked last, abandoned in between; asked in between, answered at once.
      const lateAnswer = { ...ok(Q.answer(choiceQuestion(idOn(1, "aaaa"), at(1)), { choice: "SQLite" }, at(40))), answer_delivered: true }
      const abandoned = Q.abandon(choiceQuestion(idOn(20, "bbbb"), at(20)), "the run was deleted", at(30))
      const prompt = settled(idOn(10, "cccc"), at(10), "prompt")
      for (const q of [lateAnswer, abandoned, prompt]) yield* store.put(q)
      const settledOrder = [lateAnswer, abandoned, prompt].map((q) => q.id)
      const pages = Effect.gen(function* () {
        const first = yield* store.historyPage({ limit: 2 })
        const rest = yield* store.historyPage({ limit: 2, before: first.next! })
        expect(rest.next).toBeNull()
        return [...first.questions, ...rest.questions].map((q) => q.id)
      })
      expect(yield* pages).toEqual(settledOrder)
      yield* TestClock.setTime(Date.UTC(2026, 9, 1))
      expect(yield* Effect.provideService(archiveNow, QuestionStore, store)).toBe(3)
      expect(yield* pages).toEqual(settledOrder)
      // Shelved by a build that kept no order: worked out again from the rows.
      yield* query(url, "UPDATE magi_records SET sort_key = NULL WHERE kind = 'questions'")
      expect(yield* pages).toEqual(settledOrder)
    }))

  it.scopedLive("says a database that fails under it by tag, naming it with the password masked, and keeps what the database said", () =>
    Effect.gen(function* () {
      const { store, url } = yield* onPostgres
      yield* store.put(choiceQuestion())
      // Someone drops the table under a running magi.
      yield* query(url, "DROP TABLE magi_records")
      const failed = yield* Effect.flip(store.get(choiceQuestion().id))
      expect(failed._tag).toBe("StoreError")
      expect(failed.message).toContain(":***@127.0.0.1")
      expect(failed.message).not.toContain(":magi_test@")
      expect((failed as { cause?: { _tag?: string } }).cause?._tag).toBe("SqlError")
    }))

  it.scopedLive("tells a listener in another process of a change to a question, by its file name", () =>
    Effect.gen(function* () {
      const { store, other } = yield* onPostgres
      const second = yield* other
      const q = choiceQuestion()
      yield* store.put(q)
      const heard = yield* Effect.fork(
        second.changes.pipe(
          Stream.filter((name) => name === `${q.id}.json`),
          Stream.runHead
        )
      )
      // The listener connects on its own connection: written until it has heard one.
      for (let i = 0; i < 100 && Option.isNone(yield* Fiber.poll(heard)); i++) {
        yield* store.update(q.id, (fresh) => Either.right({ ...fresh, detail: `try ${i}` }))
        yield* Effect.sleep("50 millis")
      }
      const got = yield* Fiber.join(heard)
      expect(got).toEqual(Option.some(`${q.id}.json`))
    }))
})
