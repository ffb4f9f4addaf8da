import { describe, expect, it } from "@effect/vitest"
import { FileSystem } from "@effect/platform"
import { Chunk, Effect, Either, Layer, Option, Stream, TestClock } from "effect"
import * as NodePath from "node:path"
import * as LocalContext from "../../src/platform/LocalContext.js"
import * as Q from "../../src/questions/Question.js"
import * as History from "../../src/questions/History.js"
import { archiveNow } from "../../src/questions/Archiver.js"
import { QuestionStore } from "../../src/questions/QuestionStore.js"
import { backends, choiceQuestion, freeQuestion, ok, tempDir } from "../support.js"

const HOUR = 60 * 60 * 1000
const DAY = 24 * HOUR

/** A question asked at `asked`, answered then, and read by its agent. */
const settled = (id: string, asked: Date, summary = "Which storage backend should the cache use?"): Q.Question => ({
  ...ok(Q.answer({ ...choiceQuestion(id, asked), summary }, { choice: "SQLite" }, asked)),
  answer_delivered: true
})

/** The ids of history, page after page of `limit`, following each page's cursor (ten pages at most). */
const everyPage = (store: QuestionStore, limit: number) =>
  Effect.gen(function* () {
    const seen: string[] = []
    let before: string | undefined
    for (let n = 0; n < 10; n++) {
      const page = yield* store.historyPage({ before, limit })
      seen.push(...page.questions.map((q) => q.id))
      if (page.next === null) break
      before = page.next
    }
    return seen
  })

/** An id asked at `d` (local time, as magi draws them). */
const idAt = (d: Date, suffix: string) => `${Q.makeId(d, 0).slice(0, 15)}-${suffix}`

for (const backend of backends) {
  describe(`history over ${backend.name}`, () => {
    const withStore = <A, E>(
      body: (ctx: { base: string; store: QuestionStore; fs: FileSystem.FileSystem }) => Effect.Effect<A, E, QuestionStore | FileSystem.FileSystem>
    ) =>
      Effect.gen(function* () {
        const base = yield* backend.base
        return yield* Effect.gen(function* () {
          const store = yield* QuestionStore
          const fs = yield* FileSystem.FileSystem
          return yield* body({ base, store, fs })
        }).pipe(Effect.provide(backend.layer(base)))
      })

    const hotFile = (store: QuestionStore, id: string) => NodePath.join(store.root, `${id}.json`)
    const shelfFile = (store: QuestionStore, id: string) => NodePath.join(store.root, "history", History.monthOf(id)!, `${id}.json`)

    it.scoped("sweeps scratch a killed write left on a shelf and beside the shelves once it is clearly abandoned, and nothing else", () =>
      withStore(({ store, fs }) =>
        Effect.gen(function* () {
          const asked = new Date("2026-09-02T10:00:00Z")
          const q = settled(idAt(asked, "5c5c"), asked)
          yield* store.put(q)
          yield* TestClock.setTime(asked.getTime() + HOUR + 1000)
          expect(yield* archiveNow).toBe(1)
          // A write to the shelved question, and one to its month's index, both killed midway.
          const onShelf = `${shelfFile(store, q.id)}.4242.abcdefgh.tmp`
          const besideShelves = NodePath.join(store.root, "history", `${History.monthOf(q.id)}.index.json.4242.abcdefgh.tmp`)
          yield* fs.writeFileString(onShelf, "half a rec")
          yield* fs.writeFileString(besideShelves, "half an index")
          // Young: a live writer may still own them.
          yield* TestClock.setTime(Date.now())
          expect(yield* archiveNow).toBe(0)
          expect(yield* fs.exists(onShelf)).toBe(true)
          expect(yield* fs.exists(besideShelves)).toBe(true)
          // Long past any live writer: the mover's next round takes them.
          yield* TestClock.setTime(Date.now() + 2 * HOUR)
          expect(yield* archiveNow).toBe(0)
          expect(yield* fs.exists(onShelf)).toBe(false)
          expect(yield* fs.exists(besideShelves)).toBe(false)
          expect((yield* store.get(q.id)).answer).toEqual({ choice: "SQLite" })
          expect(yield* fs.exists(shelfFile(store, q.id))).toBe(true)
        })
      ))

    it.scoped("moves a question settled over an hour ago to its month's shelf, where get, update and every kind of id still find it", () =>
      withStore(({ store, fs }) =>
        Effect.gen(function* () {
          const asked = new Date("2026-09-02T10:00:00Z")
          const q = settled(idAt(asked, "ab12"), asked)
          yield* store.put(q)
          yield* TestClock.setTime(asked.getTime() + HOUR + 1000)

          expect(yield* archiveNow).toBe(1)
          expect(yield* fs.exists(hotFile(store, q.id))).toBe(false)
          expect(yield* fs.exists(shelfFile(store, q.id))).toBe(true)
          // Gone from the hot listing, found by id, prefix and short id.
          expect((yield* store.list).map((x) => x.id)).toEqual([])
          expect((yield* store.get(q.id)).answer).toEqual({ choice: "SQLite" })
          expect(yield* store.resolveId(q.id.slice(0, 17))).toBe(q.id)
          expect(yield* store.resolveId("ab12")).toBe(q.id)
          // A write to it lands on the shelf, not back in the hot folder.
          const said = yield* store.update(q.id, (x) => Either.right({ ...x, delivered_turns: 3 }))
          expect(said.delivered_turns).toBe(3)
          expect((yield* store.get(q.id)).delivered_turns).toBe(3)
          expect(yield* fs.exists(hotFile(store, q.id))).toBe(false)
        })
      ))

    it.scoped("never moves an open question, nor an answer the agent has not read until it is thirty days old", () =>
      withStore(({ store, fs }) =>
        Effect.gen(function* () {
          const asked = new Date("2026-09-02T10:00:00Z")
          const open = choiceQuestion(idAt(asked, "0001"), asked)
          const unread = ok(Q.answer(freeQuestion(idAt(asked, "0002"), asked), { text: "use the cache" }, asked))
          const fresh = settled(idAt(asked, "0003"), asked)
          for (const q of [open, unread, fresh]) yield* store.put(q)

          // Fifty-nine minutes: nothing is old enough.
          yield* TestClock.setTime(asked.getTime() + HOUR - 60_000)
          expect(yield* archiveNow).toBe(0)
          // Past the hour: only the one the agent read.
          yield* TestClock.setTime(asked.getTime() + 2 * HOUR)
          expect(yield* archiveNow).toBe(1)
          expect(yield* fs.exists(shelfFile(store, fresh.id))).toBe(true)
          // Twenty-nine days: the waiter may still carry the answer.
          yield* TestClock.setTime(asked.getTime() + 29 * DAY)
          expect(yield* archiveNow).toBe(0)
          yield* TestClock.setTime(asked.getTime() + 31 * DAY)
          expect(yield* archiveNow).toBe(1)
          expect(yield* fs.exists(shelfFile(store, unread.id))).toBe(true)
          expect((yield* store.list).map((q) => q.id)).toEqual([open.id])
        })
      ))

    it.scoped("moves the panel with its question, and still serves its page and files", () =>
      Effect.gen(function* () {
        const dir = yield* tempDir
        const html = NodePath.join(dir, "p.html")
        const png = NodePath.join(dir, "chart.png")
        return yield* withStore(({ store, fs }) =>
          Effect.gen(function* () {
            yield* fs.makeDirectory(dir, { recursive: true })
            yield* fs.writeFileString(html, "<p>evidence</p>")
            yield* fs.writeFileString(png, "PNG")
            const asked = new Date("2026-09-02T10:00:00Z")
            const q = yield* store.putPanel(settled(idAt(asked, "cafe"), asked), "<p>evidence</p>", [png])
            yield* store.put(q)
            yield* TestClock.setTime(asked.getTime() + 2 * HOUR)
            expect(yield* archiveNow).toBe(1)
            expect(yield* fs.exists(NodePath.join(store.root, `${q.id}.panel`))).toBe(false)
            expect(Option.getOrThrow(yield* store.panelHtml(q.id))).toBe("<p>evidence</p>")
            expect(new TextDecoder().decode(Option.getOrThrow(yield* store.panelAsset(q.id, "chart.png")))).toBe("PNG")
          })
        )
      }))

    it.scoped("loses no write made while questions are being moved", () =>
      withStore(({ store }) =>
        Effect.gen(function* () {
          const asked = new Date("2026-09-02T10:00:00Z")
          const qs = Array.from({ length: 30 }, (_, i) => settled(idAt(asked, `a${String(i).padStart(3, "0")}`), asked))
          for (const q of qs) yield* store.put(q)
          yield* TestClock.setTime(asked.getTime() + 2 * HOUR)
          // Every question gets a write racing the mover; each must be on disk after, wherever it ended up.
          yield* Effect.all(
            [archiveNow, Effect.forEach(qs, (q) => store.update(q.id, (x) => Either.right({ ...x, delivered_turns: 7 })), { concurrency: 4 })],
            { concurrency: "unbounded" }
          )
          for (const q of qs) expect((yield* store.get(q.id)).delivered_turns).toBe(7)
          yield* archiveNow
          expect(yield* store.list).toEqual([])
          for (const q of qs) expect((yield* store.get(q.id)).delivered_turns).toBe(7)
        })
      ))

    it.scoped("lists history by when each question was settled, not asked: answered, abandoned or expired, hot or shelved, page after page", () =>
      withStore(({ store }) =>
        Effect.gen(function* () {
          const at = (day: number, hour = 12) => new Date(Date.UTC(2026, 6, day, hour))
          // Asked in July, answered only in August: the latest settled of all.
          const lateAnswer = { ...ok(Q.answer(choiceQuestion(idAt(at(1), "aaaa"), at(1)), { choice: "SQLite" }, at(40))), answer_delivered: true }
          // Asked and answered on the 20th.
          const prompt = settled(idAt(at(20), "bbbb"), at(20), "prompt")
          // Asked on the 5th, abandoned on the 25th.
          const abandoned = Q.abandon(choiceQuestion(idAt(at(5), "cccc"), at(5)), "the run was deleted", at(25))
          // Asked on the 10th, expired on the 11th.
          const expired = Q.abandon(choiceQuestion(idAt(at(10), "dddd"), at(10)), "no answer within 86400s of asking", at(11))
          for (const q of [lateAnswer, prompt, abandoned, expired]) yield* store.put(q)
          const settledOrder = [lateAnswer, abandoned, prompt, expired].map((q) => q.id)

          const pages = everyPage(store, 3)
          expect(yield* pages).toEqual(settledOrder)
          // On the month shelves (the one asked first on the oldest), the same.
          yield* TestClock.setTime(Date.UTC(2026, 9, 1))
          expect(yield* archiveNow).toBe(4)
          expect(yield* pages).toEqual(settledOrder)
          expect(Chunk.toReadonlyArray(yield* Stream.runCollect(store.everything)).map((q) => q.id)).toEqual(settledOrder)
          // A search keeps the same order.
          expect((yield* store.historyPage({ limit: 10, words: ["which"] })).questions.map((q) => q.id)).toEqual(
            [lateAnswer, abandoned, expired].map((q) => q.id)
          )
        })
      ))

    it.scoped("pages settled history newest first across the hot folder and the months, with a cursor and a search", () =>
      withStore(({ store }) =>
        Effect.gen(function* () {
          // Two months on shelves, three recent ones still hot, one open.
          const july = Array.from({ length: 5 }, (_, i) => settled(idAt(new Date(2026, 6, 10 + i, 12), "0000"), new Date(2026, 6, 10 + i, 12), `july ${i}`))
          const aug = Array.from({ length: 5 }, (_, i) => settled(idAt(new Date(2026, 7, 10 + i, 12), "0000"), new Date(2026, 7, 10 + i, 12), `august ${i}`))
          for (const q of [...july, ...aug]) yield* store.put(q)
          yield* TestClock.setTime(new Date(2026, 8, 1).getTime())
          expect(yield* archiveNow).toBe(10)
          const recent = Array.from({ length: 3 }, (_, i) =>
            settled(idAt(new Date(2026, 8, 1, 0, 10 + i), "0000"), new Date(2026, 8, 1, 0, 10 + i), `september ${i}`))
          for (const q of recent)
            yield* store.put(q)
          yield* store.put(choiceQuestion(idAt(new Date(2026, 8, 1, 0, 30), "0000"), new Date(2026, 8, 1, 0, 30)))

          const everyId = [...recent, ...aug, ...july].map((q) =>
            q.id
          ).sort().reverse()
          expect(yield* everyPage(store, 4)).toEqual(everyId)

          const found = yield* store.historyPage({ limit: 10, words: History.words("AUGUST 3") })
          expect(found.questions.map((q) => q.summary)).toEqual(["august 3"])
          expect(found.next).toBeNull()
          expect((yield* store.historyPage({ limit: 2, words: ["september"] })).questions.map((q) => q.summary)).toEqual(["september 2", "september 1"])
          // Streaming everything: the open one, then history as the pages list it.
          const all = Chunk.toReadonlyArray(yield* Stream.runCollect(store.everything)).map((q) => q.id)
          expect(all).toHaveLength(14)
          expect(all.slice(1)).toEqual(everyId)
        })
      ))

    it.scoped("searches a month through its index, not its files", () =>
      withStore(({ store, fs }) =>
        Effect.gen(function* () {
          const asked = new Date(2026, 6, 10, 12)
          const q = settled(idAt(asked, "beef"), asked, "cache sizing")
          yield* store.put(q)
          yield* TestClock.setTime(asked.getTime() + 2 * HOUR)
          yield* archiveNow
          const index = NodePath.join(store.root, "history", `${History.monthOf(q.id)}.index.json`)
          // Each question's place in history (when it was settled) and its words.
          const kept = JSON.parse(yield* fs.readFileString(index)) as Record<string, [string, string]>
          const [order, words] = kept[q.id]!
          expect(order).toBe(History.orderKey(q))
          expect(words).toContain("cache sizing")
          // Words only the index holds are found, so the index is what is read.
          yield* fs.writeFileString(index, JSON.stringify({ [q.id]: [order, `${words} zebra`] }))
          const viaIndex = yield* Effect.provide(
            Effect.flatMap(QuestionStore, (fresh) => fresh.historyPage({ limit: 5, words: ["zebra"] })),
            QuestionStore.at(store.root)
          )
          expect(viaIndex.questions.map((x) => x.id)).toEqual([q.id])
        })
      ))
  })
}

// The first move as magi runs it on Node (`LocalContext`: the folders' names
// read a batch at a time through `opendir`, each month's index written as it
// is made), with more questions than one batch of names holds.
describe("the first move of a flat home, on Node's own filesystem layer", () => {
  it.scoped("moves every settled question over several batches of names, leaves the open ones, and indexes each month whole", () =>
    Effect.gen(function* () {
      const base = yield* tempDir
      const root = NodePath.join(base, "questions")
      yield* Effect.gen(function* () {
        const store = yield* QuestionStore
        const fs = yield* FileSystem.FileSystem
        // 640 settled (more than one batch of 500 names, in the hot folder and on August's shelf) and 3 open.
        const months = [[7, 520], [8, 60], [9, 60]] as const
        const settledOnes = months.flatMap(([month, count]) =>
          Array.from({ length: count }, (_, i) => {
            const asked = new Date(2026, month, 1 + (i % 27), 9, i % 60)
            return settled(idAt(asked, i.toString(16).padStart(4, "0")), asked, `question ${month}-${i} about caching`)
          })
        )
        const open = [1, 2, 3].map((i) => choiceQuestion(idAt(new Date(2026, 10, 20, 9, i), `0pe${i}`), new Date(2026, 10, 20, 9, i)))
        yield* Effect.forEach([...settledOnes, ...open], (q) => store.put(q), { concurrency: 8, discard: true })
        yield* TestClock.setTime(new Date(2026, 11, 1).getTime())
        expect(yield* archiveNow).toBe(640)
        const hot = (yield* fs.readDirectory(root)).filter((n) => n.endsWith(".json")).sort()
        expect(hot).toEqual(open.map((q) => `${q.id}.json`).sort())
        for (const [month, count] of months) {
          const shelf = History.monthOf(settledOnes.find((q) => new Date(q.asked_at).getMonth() === month)!.id)!
          const index = JSON.parse(yield* fs.readFileString(NodePath.join(root, "history", `${shelf}.index.json`))) as Record<string, [string, string]>
          const onShelf = settledOnes.filter((q) => History.monthOf(q.id) === shelf)
          expect(onShelf).toHaveLength(count)
          expect(Object.keys(index).sort()).toEqual(onShelf.map((q) => q.id).sort())
          for (const q of onShelf) expect(index[q.id]).toEqual([History.orderKey(q), History.digest(q)])
        }
        // Found by its words, through the index just written.
        const found = yield* store.historyPage({ limit: 5, words: ["question", "7-517"] })
        expect(found.questions.map((q) => q.summary)).toEqual(["question 7-517 about caching"])
      }).pipe(Effect.provide(QuestionStore.at(root).pipe(Layer.provideMerge(LocalContext.layer))))
    }))
})
