import { describe, expect, it } from "@effect/vitest"
import { FileSystem } from "@effect/platform"
import { Effect, Either, Fiber, Layer, Option, TestClock } from "effect"
import * as NodePath from "node:path"
import * as Q from "../../src/questions/Question.js"
import { LOCK_STALE_MS, PANEL_MAX_BYTES, QUESTION_FILE_MAX_BYTES, QuestionStore } from "../../src/questions/QuestionStore.js"
import * as LocalContext from "../../src/platform/LocalContext.js"
import * as MemoryFileSystem from "../../src/store/MemoryFileSystem.js"
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import { answerQuestion, sayToQuestion } from "../../src/questions/Answers.js"
import * as Lease from "../../src/questions/Leases.js"
import { advance, backends, realPause, runUntilDone, tempDir, choiceQuestion, freeQuestion, HOSTILE_ASSET_NAMES, ok, RUN } from "../support.js"

const encoder = new TextEncoder()
const text = (bytes: Option.Option<Uint8Array>) => Option.map(bytes, (b) => new TextDecoder().decode(b))

for (const backend of backends) {
  describe(`QuestionStore over ${backend.name}`, () => {
    /** Run `body` against a fresh store of this backend. */
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

    it.scoped("stops a deleted run's questions asking, and leaves answered ones and other runs alone", () =>
      withStore(({ store }) =>
        Effect.gen(function* () {
          const open = choiceQuestion("20260101-000001-aaaa")
          const answered = ok(Q.answer(freeQuestion("20260101-000002-bbbb"), { text: "keep this" }, new Date()))
          const elsewhere = { ...choiceQuestion("20260101-000003-cccc"), run: "20260903-105039-3cbf" }
          for (const q of [open, answered, elsewhere]) yield* store.put(q)

          expect(yield* store.abandonForRun(RUN, "run was deleted")).toBe(1)
          const back = yield* store.get(open.id)
          expect(back.status).toBe("abandoned")
          expect(back.detail).toContain("run was deleted")
          expect((yield* store.get(answered.id)).status).toBe("answered")
          expect((yield* store.get(elsewhere.id)).status).toBe("open")
          expect(yield* store.openFor(RUN)).toEqual([])
        })
      ))

    it.scoped("abandons a run's open questions with the reason given, once", () =>
      withStore(({ store }) =>
        Effect.gen(function* () {
          const q = choiceQuestion()
          yield* store.put(q)
          expect(yield* store.abandonForRun(RUN, `run ${RUN} failed, so nothing is waiting for this answer`)).toBe(1)
          const back = yield* store.get(q.id)
          expect(back.status).toBe("abandoned")
          expect(back.detail).toContain(RUN)
          expect(back.detail).toContain("failed")
          // A second call finds nothing left.
          expect(yield* store.abandonForRun(RUN, "again")).toBe(0)
        })
      ))

    it.scoped("lists open questions first, newest first, and resolves the short id", () =>
      withStore(({ store }) =>
        Effect.gen(function* () {
          const oldOpen = choiceQuestion("20260101-000001-aaaa")
          const newOpen = choiceQuestion("20260101-000002-bbbb")
          const answered = ok(Q.answer(choiceQuestion("20260101-000003-cccc"), { choice: "Redis" }, new Date()))
          for (const q of [oldOpen, answered, newOpen]) yield* store.put(q)

          expect((yield* store.list).map((q) => q.id)).toEqual([
            "20260101-000002-bbbb",
            "20260101-000001-aaaa",
            "20260101-000003-cccc"
          ])
          expect(yield* store.countOpen).toBe(2)
          expect(yield* store.openFor(RUN)).toHaveLength(2)
          expect(yield* store.openFor("some-other-run")).toEqual([])
          expect(yield* store.resolveId("bbbb")).toBe("20260101-000002-bbbb")
          expect(yield* store.resolveId("20260101-000001")).toBe("20260101-000001-aaaa")
          const none = yield* Effect.flip(store.resolveId("nope"))
          expect(none.message).toContain("no question matches `nope`")
          const several = yield* Effect.flip(store.resolveId("20260101"))
          expect(several.message).toContain("matches 3 questions")
          expect(yield* store.revision).toBeGreaterThan(0)
        })
      ))

    it.scoped("finds a question by the start of its short id, and names the few a shared start matches", () =>
      withStore(({ store }) =>
        Effect.gen(function* () {
          for (const id of ["20260101-000001-de12", "20260101-000002-d9f0", "20260101-000003-a7e0"]) yield* store.put(choiceQuestion(id))
          // What the owner saw in the list was `de12`; they typed its start.
          expect(yield* store.resolveId("de")).toBe("20260101-000001-de12")
          expect(yield* store.resolveId("d9")).toBe("20260101-000002-d9f0")
          const several = yield* Effect.flip(store.resolveId("d"))
          expect(several.message).toContain("`d` matches 2 questions: 20260101-000001-de12, 20260101-000002-d9f0; type more of the id")
        })
      ))

    it.scoped("never serves a stale listing after a write, however quickly it follows", () =>
      withStore(({ store }) =>
        Effect.gen(function* () {
          const q = choiceQuestion()
          yield* store.put(q)
          for (let round = 0; round < 20; round++) {
            expect((yield* store.list)[0]!.thread).toHaveLength(round)
            yield* sayToQuestion(q.id, `word ${round}`)
          }
          expect((yield* store.list)[0]!.thread).toHaveLength(20)
        })
      ))

    it.scoped("does not count an asker's lease beat as a change to the questions", () =>
      withStore(({ store }) =>
        Effect.gen(function* () {
          const q = choiceQuestion()
          yield* store.put(q)
          // The first beat ever makes the leases folder; after that, beats
          // land every few seconds while an agent waits, and change nothing.
          yield* Lease.beat(store.root, q.id, "asker")
          const before = yield* store.revision
          yield* realPause(20)
          yield* Lease.beat(store.root, q.id, "asker")
          yield* Lease.beat(store.root, q.id, "asker")
          expect(yield* store.revision).toBe(before)
        })
      ))

    it.scoped("never builds a path from an id that could leave the store", () =>
      withStore(({ store, fs, base }) =>
        Effect.gen(function* () {
          yield* fs.makeDirectory(base, { recursive: true })
          yield* fs.writeFileString(NodePath.join(base, "secret.json"), Q.encode(choiceQuestion("secret")))
          yield* store.put(choiceQuestion())
          const e = yield* Effect.flip(store.get("../secret"))
          expect(e._tag).toBe("QuestionNotFound")
        })
      ))

    it.scoped("skips a truncated or future file in the listing, but explains it when asked by name", () =>
      withStore(({ store, fs }) =>
        Effect.gen(function* () {
          const good = choiceQuestion()
          yield* store.put(good)
          yield* fs.writeFileString(NodePath.join(store.root, "20260101-000009-dead.json"), '{"schema": 1, "id"')
          const future = {
            schema: 99,
            id: "20260101-000010-beef",
            run: "r",
            node: "n",
            seat: "s",
            summary: "?",
            detail: "",
            choices: [],
            status: "open",
            asked_at: "2026-01-01T00:00:00Z",
            answered_at: null,
            answer: null
          }
          yield* fs.writeFileString(NodePath.join(store.root, "20260101-000010-beef.json"), JSON.stringify(future))

          const listed = yield* store.list
          expect(listed.map((q) => q.id)).toEqual([good.id])
          const e = yield* Effect.flip(store.get("20260101-000010-beef"))
          expect(e.message).toContain("schema")
        })
      ))

    it.scoped("keeps listing and answering when one small file nests thousands of arrays deep", () =>
      withStore(({ store, fs }) =>
        Effect.gen(function* () {
          const good = choiceQuestion("20260101-000001-aaaa")
          yield* store.put(good)
          // 12 KB each: a bare nest, and a valid record whose choices nest 3,000 deep.
          yield* fs.writeFileString(NodePath.join(store.root, "20260101-000002-bbbb.json"), "[".repeat(6000) + "]".repeat(6000))
          const deep = { ...JSON.parse(Q.encode(choiceQuestion("20260101-000003-cccc"))), choices: ["[".repeat(3000) + "]".repeat(3000)] }
          const body = JSON.stringify(deep).replace(`"${deep.choices[0]}"`, deep.choices[0])
          yield* fs.writeFileString(NodePath.join(store.root, "20260101-000003-cccc.json"), body)

          expect((yield* store.list).map((q) => q.id)).toEqual([good.id])
          expect(yield* store.countOpen).toBe(1)
          yield* sayToQuestion(good.id, "still answerable")
          expect((yield* store.get(good.id)).thread).toHaveLength(1)
          for (const id of ["20260101-000002-bbbb", "20260101-000003-cccc"]) {
            const e = yield* Effect.flip(store.get(id))
            expect(e._tag).toBe("UnreadableQuestion")
            expect(e.message.length).toBeLessThan(1000)
          }
          const skipped = yield* store.skipped
          expect(skipped.map((s) => s.id).sort()).toEqual(["20260101-000002-bbbb", "20260101-000003-cccc"])
        })
      ))

    it.scoped("refuses a file whose id is not its own name, rather than writing it back elsewhere", () =>
      withStore(({ store, fs }) =>
        Effect.gen(function* () {
          const q = choiceQuestion("20260101-000001-aaaa")
          yield* store.put(q)
          // Copied by hand under another name, id unchanged.
          yield* fs.writeFileString(NodePath.join(store.root, "20260101-000002-bbbb.json"), Q.encode(q))
          const e = yield* Effect.flip(store.get("20260101-000002-bbbb"))
          expect(e.message).toContain("not the one its name says")
          expect((yield* store.list).map((x) => x.id)).toEqual([q.id])
          expect(Either.isLeft(yield* Effect.either(sayToQuestion("20260101-000002-bbbb", "hello?")))).toBe(true)
          expect((yield* store.get(q.id)).thread).toEqual([])
        })
      ))

    it.scoped("reads a schema-1 file byte for byte as an older magi wrote it", () =>
      withStore(({ store, fs }) =>
        Effect.gen(function* () {
          yield* fs.makeDirectory(store.root, { recursive: true })
          const body = `{
  "schema": 1,
  "id": "20260902-231501-ab12",
  "run": "20260902-201256-9fb7",
  "node": "implement",
  "seat": "impl-A",
  "summary": "Which storage backend should the cache use?",
  "detail": "Both are already dependencies.",
  "choices": ["SQLite", "Redis"],
  "status": "open",
  "asked_at": "2026-09-02T23:15:01Z",
  "answered_at": null,
  "answer": null
}`
          yield* fs.writeFileString(NodePath.join(store.root, "20260902-231501-ab12.json"), body)
          const q = yield* store.get("20260902-231501-ab12")
          expect(q.schema).toBe(1)
          expect(q.panel).toBe(false)
          expect(q.assets).toEqual([])
          expect(q.thread).toEqual([])
          expect(q.answer_timeout).toBe(0)
          expect(q.cwd).toBe("")
          expect(q.waiter).toBeNull()
          expect(Q.waitingOnAgent(q)).toBe(false)
          expect(q.summary).toBe("Which storage backend should the cache use?")
          expect(yield* store.list).toHaveLength(1)
        })
      ))

    it.scoped("counts a question that talked back and forth as one open question", () =>
      withStore(({ store }) =>
        Effect.gen(function* () {
          const q = choiceQuestion()
          yield* store.put(q)
          yield* sayToQuestion(q.id, "why not Postgres?")
          expect(yield* store.countNeedsOwner).toBe(0)
          yield* store.update(q.id, (fresh) => Q.reply(fresh, "no server to run", ["SQLite"], new Date()))
          expect(yield* store.countOpen).toBe(1)
          expect(yield* store.countNeedsOwner).toBe(1)
          expect(yield* store.openFor(RUN)).toHaveLength(1)
        })
      ))

    it.scoped("keeps every one of many concurrent updates to one question", () =>
      withStore(({ store }) =>
        Effect.gen(function* () {
          const q = choiceQuestion()
          yield* store.put(q)
          const words = Array.from({ length: 25 }, (_, i) => `word ${i}`)
          yield* Effect.forEach(words, (w) => sayToQuestion(q.id, w), { concurrency: "unbounded" })
          const back = yield* store.get(q.id)
          expect(back.thread.map((t) => t.body).sort()).toEqual([...words].sort())
        })
      ))

    it.scoped("lets exactly one of several racing answers win", () =>
      withStore(({ store }) =>
        Effect.gen(function* () {
          const q = choiceQuestion()
          yield* store.put(q)
          const results = yield* Effect.forEach(
            ["SQLite", "Redis", "SQLite", "Redis"],
            (choice) => Effect.either(answerQuestion(q.id, { choice })),
            { concurrency: "unbounded" }
          )
          expect(results.filter(Either.isRight)).toHaveLength(1)
          for (const r of results.filter(Either.isLeft)) expect(r.left.message).toContain("already answered")
        })
      ))

    it.scoped("waits for a live writer's lock, and goes on the moment it is released", () =>
      withStore(({ store, fs }) =>
        Effect.gen(function* () {
          const q = choiceQuestion()
          yield* store.put(q)
          const lock = NodePath.join(store.root, `${q.id}.lock`)
          yield* fs.writeFileString(lock, "12345 live\n")
          yield* TestClock.setTime(Date.now())
          const waiting = yield* Effect.fork(sayToQuestion(q.id, "hello?"))
          yield* advance("5 seconds", "250 millis")
          expect(waiting.unsafePoll()).toBeNull()
          expect((yield* store.get(q.id)).thread).toEqual([])
          // The live writer finishes: the waiting one goes on at its next try.
          yield* fs.remove(lock)
          yield* runUntilDone(waiting, "50 millis", "1 minute")
          expect((yield* store.get(q.id)).thread).toHaveLength(1)
        })
      ))

    it.scoped("breaks a lock left by a writer that died once it is older than the stale limit", () =>
      withStore(({ store, fs }) =>
        Effect.gen(function* () {
          const q = choiceQuestion()
          yield* store.put(q)
          const lock = NodePath.join(store.root, `${q.id}.lock`)
          yield* fs.writeFileString(lock, "12345 0\n")
          yield* TestClock.setTime(Date.now() + LOCK_STALE_MS + 60_000)
          yield* sayToQuestion(q.id, "hello?")
          expect((yield* store.get(q.id)).thread).toHaveLength(1)
          expect(yield* fs.exists(lock)).toBe(false)
        })
      ))

    it.scoped("breaks a lock dated in the future (a clock stepped back) once it sat unchanged past the stale limit", () =>
      withStore(({ store, fs }) =>
        Effect.gen(function* () {
          const q = choiceQuestion()
          yield* store.put(q)
          const lock = NodePath.join(store.root, `${q.id}.lock`)
          yield* fs.writeFileString(lock, "12345 0\n")
          // The lock's mtime is an hour ahead of this writer's clock.
          yield* TestClock.setTime(Date.now() - 3_600_000)
          const waiting = yield* Effect.fork(sayToQuestion(q.id, "hello?"))
          yield* runUntilDone(waiting, "500 millis", "1 minute")
          expect((yield* store.get(q.id)).thread).toHaveLength(1)
          expect(yield* fs.exists(lock)).toBe(false)
        })
      ))

    it.scoped("breaks a lock that is a directory instead of blocking its question forever", () =>
      withStore(({ store, fs }) =>
        Effect.gen(function* () {
          const q = choiceQuestion()
          yield* store.put(q)
          const lock = NodePath.join(store.root, `${q.id}.lock`)
          yield* fs.makeDirectory(lock)
          yield* fs.writeFileString(NodePath.join(lock, "junk"), "x")
          yield* TestClock.setTime(Date.now())
          const waiting = yield* Effect.fork(sayToQuestion(q.id, "hello?"))
          yield* runUntilDone(waiting, "500 millis", "1 minute")
          expect((yield* store.get(q.id)).thread).toHaveLength(1)
          expect(yield* fs.exists(lock)).toBe(false)
        })
      ))

    it.scoped("never lets one question's stuck lock delay a write to another", () =>
      withStore(({ store, fs }) =>
        Effect.gen(function* () {
          const stuck = choiceQuestion("20260101-000001-aaaa")
          const other = choiceQuestion("20260101-000002-bbbb")
          yield* store.put(stuck)
          yield* store.put(other)
          yield* fs.writeFileString(NodePath.join(store.root, `${stuck.id}.lock`), "12345 live\n")
          yield* TestClock.setTime(Date.now())
          // Virtual time stands still: the stuck writer waits as long as the
          // test runs; the other question's write must not queue behind it.
          const blocked = yield* Effect.fork(sayToQuestion(stuck.id, "hello?"))
          yield* realPause(20)
          const free = yield* Effect.fork(sayToQuestion(other.id, "hello?"))
          for (let i = 0; i < 2_000 && free.unsafePoll() === null; i++) yield* realPause(5)
          expect(free.unsafePoll()).not.toBeNull()
          expect((yield* store.get(other.id)).thread).toHaveLength(1)
          expect(blocked.unsafePoll()).toBeNull()
          yield* Fiber.interrupt(blocked)
        })
      ))

    it.scoped("files a new question only under a free id, never over one already there", () =>
      withStore(({ store }) =>
        Effect.gen(function* () {
          const first = choiceQuestion()
          const same = { ...freeQuestion(first.id), summary: "drawn the same id in the same second" }
          expect(Option.isSome(yield* store.fileNew(first, Effect.succeed))).toBe(true)
          let prepared = false
          const second = yield* store.fileNew(same, (q: Q.Question) =>
            Effect.sync(() => {
              prepared = true
              return q
            }))
          expect(Option.isNone(second)).toBe(true)
          // Refused before anything of its own (a panel) was written.
          expect(prepared).toBe(false)
          expect(yield* store.create(same)).toBe(false)
          expect((yield* store.get(first.id)).summary).toBe(first.summary)
        })
      ))

    it.scoped("sweeps scratch a killed writer left once it is clearly abandoned, and leaves fresh scratch alone", () =>
      withStore(({ store, fs }) =>
        Effect.gen(function* () {
          const q = choiceQuestion()
          yield* store.put(q)
          const tmp = NodePath.join(store.root, `${q.id}.json.4242.abcdefgh.tmp`)
          const panelTmp = NodePath.join(store.root, `${q.id}.panel.tmp-abcdefgh`)
          yield* fs.writeFileString(tmp, "half a rec")
          yield* fs.makeDirectory(panelTmp)
          yield* fs.writeFile(NodePath.join(panelTmp, "big.png"), new Uint8Array(1024))
          // Young: a live writer may still own them.
          yield* TestClock.setTime(Date.now())
          expect(yield* store.sweep).toBe(0)
          expect(yield* fs.exists(tmp)).toBe(true)
          // Long past any live writer.
          yield* TestClock.setTime(Date.now() + 2 * 60 * 60 * 1000)
          yield* sayToQuestion(q.id, "a write changes the folder")
          yield* store.list
          expect(yield* fs.exists(tmp)).toBe(false)
          expect(yield* fs.exists(panelTmp)).toBe(false)
          expect((yield* store.list).map((x) => x.id)).toEqual([q.id])
        })
      ))

    // -- panels --------------------------------------------------------------

    const panelled = () => choiceQuestion("20260903-014455-ab12")

    it.scoped("stores a panel byte for byte with its assets copied and listed sorted", () =>
      withStore(({ store, fs, base }) =>
        Effect.gen(function* () {
          const work = NodePath.join(base, "worktree")
          yield* fs.makeDirectory(work, { recursive: true })
          yield* fs.writeFileString(NodePath.join(work, "diff.svg"), "<svg/>")
          yield* fs.writeFile(NodePath.join(work, "table.png"), new Uint8Array([0x89, 0x50, 0x4e, 0x47]))
          const html = '<h1>Merge?</h1>\n<img src="asset/diff.svg">\n'
          const q = yield* store.putPanel(panelled(), html, [NodePath.join(work, "table.png"), NodePath.join(work, "diff.svg")])
          yield* store.put(q)

          expect(q.panel).toBe(true)
          expect(q.assets).toEqual(["diff.svg", "table.png"])
          expect(yield* store.panelHtml(q.id)).toEqual(Option.some(html))
          expect(text(yield* store.panelAsset(q.id, "diff.svg"))).toEqual(Option.some("<svg/>"))
          const onDisk = JSON.parse(yield* fs.readFileString(NodePath.join(store.root, `${q.id}.json`)))
          expect(onDisk.panel).toBe(true)
          expect(onDisk.assets).toEqual(["diff.svg", "table.png"])

          // Copied, so the panel still renders after the worktree is gone.
          yield* fs.remove(work, { recursive: true })
          const png = yield* store.panelAsset(q.id, "table.png")
          expect(Option.map(png, (b) => [...b])).toEqual(Option.some([0x89, 0x50, 0x4e, 0x47]))
        })
      ))

    it.scoped("refuses a traversal asset name before touching the filesystem", () =>
      withStore(({ store, fs, base }) =>
        Effect.gen(function* () {
          const q = yield* store.putPanel(panelled(), "<p>ok</p>", [])
          yield* store.put(q)
          // One level above the panel directory, where `..` lands.
          const secret = "this must never reach the browser"
          yield* fs.writeFileString(NodePath.join(store.root, "id_rsa"), secret)
          const traversed = NodePath.join(store.root, `${q.id}.panel`, "..", "id_rsa")
          expect(yield* fs.readFileString(traversed)).toBe(secret)

          for (
            const name of [
              ...HOSTILE_ASSET_NAMES,
              "x".repeat(200)
            ]
          ) {
            const e = yield* Effect.flip(store.panelAsset(q.id, name))
            expect(e._tag).toBe("InvalidAssetName")
            expect(e.message).toContain("not a panel file name")
            expect(e.message).not.toContain(secret)
          }
          // A permitted name still finds its file: the refusals were the rule.
          expect(Option.isSome(yield* store.panelAsset(q.id, "index.html"))).toBe(true)

          // The same rule on the write side; a refusal leaves the panel intact.
          const hidden = NodePath.join(base, ".hidden")
          yield* fs.writeFileString(hidden, "x")
          const e = yield* Effect.flip(store.putPanel(q, "<p>replacement</p>", [hidden]))
          expect(e.message).toContain(".hidden")
          expect(e.message).toContain("A-Za-z0-9")
          expect(yield* store.panelHtml(q.id)).toEqual(Option.some("<p>ok</p>"))
        })
      ))

    it.scoped("refuses an oversized panel naming the cap and the size, and writes nothing", () =>
      withStore(({ store, fs, base }) =>
        Effect.gen(function* () {
          const q = panelled()
          yield* store.put(q)
          const big = NodePath.join(base, "recording.png")
          yield* fs.makeDirectory(base, { recursive: true })
          yield* fs.writeFile(big, new Uint8Array(PANEL_MAX_BYTES))
          const html = "<p>see the recording</p>"
          const e = yield* Effect.flip(store.putPanel(q, html, [big]))
          expect(e.message).toContain(String(PANEL_MAX_BYTES))
          expect(e.message).toContain(String(PANEL_MAX_BYTES + html.length))
          expect(yield* fs.readDirectory(store.root)).toEqual([`${q.id}.json`])
        })
      ))

    it.scoped("refuses two assets sharing a base name, naming both sources", () =>
      withStore(({ store, fs, base }) =>
        Effect.gen(function* () {
          const before = NodePath.join(base, "before")
          const after = NodePath.join(base, "after")
          yield* fs.makeDirectory(before, { recursive: true })
          yield* fs.makeDirectory(after, { recursive: true })
          yield* fs.writeFileString(NodePath.join(before, "diff.png"), "before")
          yield* fs.writeFileString(NodePath.join(after, "diff.png"), "after")
          const e = yield* Effect.flip(
            store.putPanel(panelled(), "<p>x</p>", [NodePath.join(before, "diff.png"), NodePath.join(after, "diff.png")])
          )
          expect(e.message).toContain("diff.png")
          expect(e.message).toContain("before")
          expect(e.message).toContain("after")
          expect(yield* fs.exists(NodePath.join(store.root, `${panelled().id}.panel`))).toBe(false)
        })
      ))

    it.scoped("replaces a panel stored twice rather than merging two attempts", () =>
      withStore(({ store, fs, base }) =>
        Effect.gen(function* () {
          yield* fs.makeDirectory(base, { recursive: true })
          yield* fs.writeFile(NodePath.join(base, "old.png"), encoder.encode("old"))
          yield* fs.writeFile(NodePath.join(base, "new.png"), encoder.encode("new"))
          const first = yield* store.putPanel(panelled(), "<p>first</p>", [NodePath.join(base, "old.png")])
          const second = yield* store.putPanel(first, "<p>second</p>", [NodePath.join(base, "new.png")])
          expect(second.assets).toEqual(["new.png"])
          expect(yield* store.panelHtml(second.id)).toEqual(Option.some("<p>second</p>"))
          expect(yield* store.panelAsset(second.id, "old.png")).toEqual(Option.none())

          yield* store.dropPanel(second.id)
          expect(yield* store.panelHtml(second.id)).toEqual(Option.none())
          expect(yield* fs.exists(NodePath.join(store.root, `${second.id}.panel`))).toBe(false)
          // Dropping what is already gone is the desired state, not an error.
          yield* store.dropPanel(second.id)
        })
      ))

    it.scoped("reports a missing panel as none, and refuses an empty one", () =>
      withStore(({ store, fs }) =>
        Effect.gen(function* () {
          const q = panelled()
          yield* store.put(q)
          expect(yield* store.panelHtml(q.id)).toEqual(Option.none())
          expect(yield* store.panelAsset(q.id, "diff.svg")).toEqual(Option.none())
          const e = yield* Effect.flip(store.putPanel(q, "  \n", []))
          expect(e.message).toContain("empty panel")
          expect(yield* fs.exists(NodePath.join(store.root, `${q.id}.panel`))).toBe(false)
        })
      ))
  })
}

describe("QuestionStore over a real folder with hostile files in it", () => {
  const ids = {
    fifo: "20260101-000002-f1f0",
    zero: "20260101-000003-2e70",
    folder: "20260101-000004-d1d1",
    huge: "20260101-000005-b16b"
  }

  const readers = [
    { name: "looked at, then read, through FileSystem", layer: LocalContext.fileSystemLayer },
    { name: "read in one step by the bounded reader", layer: LocalContext.layer }
  ]
  for (const reader of readers)
    it.scoped(`skips a FIFO, a link to /dev/zero, a folder and an oversized file named *.json, and explains each by id (${reader.name})`, () =>
      Effect.gen(function* () {
        const base = yield* tempDir
        const root = NodePath.join(base, "questions")
        return yield* Effect.gen(function* () {
          const store = yield* QuestionStore
          const good = choiceQuestion("20260101-000001-aaaa")
          yield* store.put(good)
          execFileSync("mkfifo", [NodePath.join(root, `${ids.fifo}.json`)])
          NodeFs.symlinkSync("/dev/zero", NodePath.join(root, `${ids.zero}.json`))
          NodeFs.mkdirSync(NodePath.join(root, `${ids.folder}.json`))
          NodeFs.writeFileSync(NodePath.join(root, `${ids.huge}.json`), Buffer.alloc(QUESTION_FILE_MAX_BYTES + 1, 0x20))

          expect((yield* store.list).map((q) => q.id)).toEqual([good.id])
          const skipped = yield* store.skipped
          expect(Object.fromEntries(skipped.map((s) => [s.id, s.reason]))).toMatchObject({
            [ids.fifo]: expect.stringContaining("a FIFO"),
            [ids.zero]: expect.stringContaining("a character device"),
            [ids.folder]: expect.stringContaining("a directory"),
            [ids.huge]: expect.stringContaining(String(QUESTION_FILE_MAX_BYTES))
          })
          const e = yield* Effect.flip(store.get(ids.fifo))
          expect(e.message).toContain("only regular files")
          yield* sayToQuestion(good.id, "still answerable")
          expect((yield* store.get(good.id)).thread).toHaveLength(1)
        }).pipe(Effect.provide(QuestionStore.at(root).pipe(Layer.provideMerge(reader.layer))))
      }))

  it.scoped("flushes a record and its folder to the disk before the write returns", () =>
    Effect.gen(function* () {
      const steps: string[] = []
      const spied = Layer.effect(
        FileSystem.FileSystem,
        Effect.map(MemoryFileSystem.make, (fs) => ({
          ...fs,
          open: (path: string, options?: FileSystem.OpenFileOptions) =>
            Effect.map(fs.open(path, options), (file) => ({
              ...file,
              sync: Effect.zipRight(Effect.sync(() => steps.push(`sync ${NodePath.basename(path)}`)), file.sync)
            })),
          rename: (from: string, to: string) => Effect.zipRight(Effect.sync(() => steps.push(`rename ${NodePath.basename(to)}`)), fs.rename(from, to))
        }))
      )
      yield* Effect.gen(function* () {
        const store = yield* QuestionStore
        const q = choiceQuestion()
        yield* store.put(q)
        steps.length = 0
        yield* answerQuestion(q.id, { choice: "Redis" })
      }).pipe(Effect.provide(QuestionStore.at("/home/questions").pipe(Layer.provideMerge(spied))))
      const sync = steps.findIndex((s) => s.startsWith("sync ") && s.endsWith(".tmp"))
      const rename = steps.indexOf("rename 20260902-231501-ab12.json")
      const dir = steps.lastIndexOf("sync questions")
      expect(sync).toBeGreaterThanOrEqual(0)
      expect(rename).toBeGreaterThan(sync)
      expect(dir).toBeGreaterThan(rename)
    }))
})
