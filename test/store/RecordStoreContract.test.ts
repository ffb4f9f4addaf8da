/**
 * The record store's contract, held against every backend: memory (the file
 * store over `MemoryFileSystem`), files in a real folder, and a real
 * PostgreSQL. A behaviour the stores promise is a test here, never of one
 * backend alone; what only one backend has (hostile files, stale lock files)
 * stays in that backend's own tests.
 */
import { describe, expect, it } from "@effect/vitest"
import { FileSystem } from "@effect/platform"
import { Effect, Either, Layer, Redacted, Scope } from "effect"
import * as NodePath from "node:path"
import * as MemoryFileSystem from "../../src/store/MemoryFileSystem.js"
import type * as RecordStore from "../../src/store/RecordStore.js"
import * as StoreBackend from "../../src/store/StoreBackend.js"
import { parseVersioned } from "../../src/store/VersionedJson.js"
import { freshDatabase, query } from "../pgSupport.js"
import { contractFolders, openFolder } from "../support.js"

/** A small record kind of the test's own: versioned like every magi record. */
interface Note {
  readonly schema: number
  readonly id: string
  readonly text: string
  readonly count: number
  readonly winner?: string
}
const SCHEMA = 2
const NOTE_MAX_BYTES = 4096

const decode = (body: string, source: string) =>
  Either.flatMap(
    parseVersioned(body, source, SCHEMA, (raw) => `note ${String(raw.id)}`),
    (raw) => {
      const r = raw as Partial<Note>
      return typeof r.id === "string" && typeof r.text === "string"
        ? Either.right<Note>({
          schema: SCHEMA,
          id: r.id,
          text: r.text,
          count: typeof r.count === "number" ? r.count : 0,
          ...(r.winner ? { winner: r.winner } : {})
        })
        : Either.left({ message: `${source} is not a note` })
    }
  )

const note = (id: string, text = `note ${id}`): Note => ({ schema: SCHEMA, id, text, count: 0 })

type Notes = RecordStore.RecordStore<Note>

const noteKind = {
  kind: { noun: "note", decode, encode: (n: Note) => JSON.stringify(n), idOf: (n: Note) => n.id, maxBytes: NOTE_MAX_BYTES }
}

/** Shelved by the id's first seven characters, like questions by month. */
const shelfOf = (id: string) => (/^\d{4}-\d{2}/.test(id) ? id.slice(0, 7) : undefined)

const notesOn = StoreBackend.recordsOf({
  folder: "notes",
  ...noteKind,
  // Listed by their count, then id (as questions by when they were settled).
  archive: { dir: "history", shelfOf, digest: (n) => n.text.toLowerCase(), order: (n) => `${String(n.count).padStart(4, "0")} ${n.id}` }
})

/** The same notes listed by id alone, as runs and tasks are. */
const ledgerOn = StoreBackend.recordsOf({ folder: "ledger", ...noteKind, archive: { dir: "history", shelfOf, digest: (n) => n.text.toLowerCase() } })

/** One backend as the contract sees it, plus how to plant a stored body behind the contract's back. */
interface Harness {
  readonly name: string
  /** A fresh store, and a second one over the same data as another process would open it. */
  readonly open: Effect.Effect<
    {
      readonly notes: Notes
      /** Notes of a kind listed by id alone (`ledgerOn`), beside them. */
      readonly ledger: Notes
      readonly other: Effect.Effect<Notes, unknown, Scope.Scope>
      /** A body stored as note `id` (of the ledger with `folder` "ledger"). */
      readonly plant: (id: string, body: string, folder?: string) => Effect.Effect<void>
    },
    unknown,
    Scope.Scope
  >
}

const fileHarness = (folder: (typeof contractFolders)[number]): Harness => ({
  name: folder.name,
  open: Effect.gen(function* () {
    const { dir, fs, write } = yield* openFolder(folder)
    const layer = StoreBackend.StoreBackend.filesAt(dir)
    const context = yield* Layer.build(Layer.merge(layer, Layer.succeed(FileSystem.FileSystem, fs)))
    const build = Effect.provide(notesOn, context)
    return {
      notes: yield* build,
      ledger: yield* Effect.provide(ledgerOn, context),
      other: build,
      plant: (id: string, body: string, folder = "notes") => write(NodePath.join(dir, folder, `${id}.json`), body)
    }
  })
})

const pgHarness: Harness = {
  name: "PostgreSQL",
  open: Effect.gen(function* () {
    const db = yield* freshDatabase
    // A pool of its own each time, as another process (or host) opens the same database.
    const backend = Layer.build(Layer.merge(StoreBackend.StoreBackend.postgres(Redacted.make(db.url)), MemoryFileSystem.layer))
    const build = Effect.flatMap(backend, (context) => Effect.provide(notesOn, context))
    const notes = yield* build
    return {
      notes,
      ledger: yield* Effect.flatMap(backend, (context) => Effect.provide(ledgerOn, context)),
      other: build,
      plant: (id: string, body: string, folder = "notes") =>
        Effect.asVoid(
          query(db.url, "INSERT INTO magi_records (kind, id, body) VALUES ($1, $2, $3) ON CONFLICT (kind, id) DO UPDATE SET body = EXCLUDED.body", [
            folder,
            id,
            body
          ])
        )
    }
  })
}

const harnesses: ReadonlyArray<Harness> = [...contractFolders.map(fileHarness), pgHarness]

for (const harness of harnesses) {
  describe(`the record store contract, on ${harness.name}`, () => {
    it.scopedLive("writes a new record only under a free id, and reads back exactly what was written", () =>
      Effect.gen(function* () {
        const { notes } = yield* harness.open
        expect(yield* notes.create(note("2026-09-01-aa11", "first"))).toBe(true)
        expect(yield* notes.create(note("2026-09-01-aa11", "second"))).toBe(false)
        expect((yield* notes.read("2026-09-01-aa11")).text).toBe("first")
        expect(yield* notes.exists("2026-09-01-aa11")).toBe(true)
        expect(yield* notes.exists("2026-09-01-zz99")).toBe(false)
        yield* notes.put({ ...note("2026-09-01-aa11"), text: "replaced" })
        expect((yield* notes.get("aa11")).text).toBe("replaced")
      }))

    it.scopedLive("says a missing record is not found, by tag", () =>
      Effect.gen(function* () {
        const { notes } = yield* harness.open
        const missing = yield* Effect.flip(notes.read("2026-09-01-none"))
        expect(missing._tag).toBe("RecordNotFound")
        expect(missing).toMatchObject({ kind: "note", wanted: "2026-09-01-none", total: 0 })
        const unmatched = yield* Effect.flip(notes.get("nothing-like-it"))
        expect(unmatched._tag).toBe("RecordNotFound")
        expect(unmatched).toMatchObject({ kind: "note", wanted: "nothing-like-it", matches: [], total: 0 })
        expect(unmatched.message).toContain("no note matches `nothing-like-it`")
      }))

    it.scopedLive("keeps every one of twenty concurrent read-modify-writes, from two processes", () =>
      Effect.gen(function* () {
        const { notes, other } = yield* harness.open
        const second = yield* other
        yield* notes.create(note("2026-09-01-cc33"))
        yield* Effect.forEach(
          Array.from({ length: 20 }, (_, i) => i),
          (i) => (i % 2 === 0 ? notes : second).update("2026-09-01-cc33", (n) => Either.right({ ...n, count: n.count + 1 })),
          { concurrency: "unbounded" }
        )
        expect((yield* notes.read("2026-09-01-cc33")).count).toBe(20)
      }))

    it.scopedLive("lets exactly one of twenty racing writers win, every round", () =>
      Effect.gen(function* () {
        const { notes, other } = yield* harness.open
        const second = yield* other
        for (let round = 0; round < 3; round++) {
          const id = `2026-09-01-race${round}`
          yield* notes.create(note(id))
          const outcomes = yield* Effect.forEach(
            Array.from({ length: 20 }, (_, i) => `writer-${i}`),
            (who, i) =>
              Effect.either(
                (i % 2 === 0 ? notes : second).update(
                  id,
                  (n) => n.winner === undefined ? Either.right({ ...n, winner: who }) : Either.left(`already won by ${n.winner}`)
                )
              ),
            { concurrency: "unbounded" }
          )
          expect(outcomes.filter(Either.isRight)).toHaveLength(1)
          const stored = yield* notes.read(id)
          expect(outcomes.filter(Either.isLeft).every((o) => o.left === `already won by ${stored.winner}`)).toBe(true)
        }
      }))

    it.scopedLive("refuses a record written by a newer magi by name, and still lists the rest", () =>
      Effect.gen(function* () {
        const { notes, plant } = yield* harness.open
        yield* notes.create(note("2026-09-01-ok00"))
        yield* plant("2026-09-01-new1", JSON.stringify({ schema: SCHEMA + 1, id: "2026-09-01-new1", text: "from the future" }))
        // Its own tag with what it says, so a caller can say "upgrade magi" rather than "broken".
        const refused = yield* notes.read("2026-09-01-new1").pipe(
          Effect.flip,
          Effect.flatMap((e) => (e._tag === "NewerSchema" ? Effect.succeed(e) : Effect.die(`refused as ${e._tag}: ${e.message}`)))
        )
        expect({ schema: refused.schema, known: refused.known, record: refused.record }).toEqual({
          schema: SCHEMA + 1,
          known: SCHEMA,
          record: "note 2026-09-01-new1"
        })
        expect(refused.message).toContain(`was written by a newer magi (schema ${SCHEMA + 1}, this build only speaks up to ${SCHEMA})`)
        const { records, skipped } = yield* notes.scan
        expect(records.map((n) => n.id)).toEqual(["2026-09-01-ok00"])
        expect(skipped.map((s) => s.id)).toEqual(["2026-09-01-new1"])
        expect(skipped[0]!.reason).toContain("newer magi")
      }))

    it.scopedLive("refuses a stored record over the kind's size cap, and one that says it is another", () =>
      Effect.gen(function* () {
        const { notes, plant } = yield* harness.open
        yield* plant("2026-09-01-big0", JSON.stringify({ ...note("2026-09-01-big0"), text: "x".repeat(NOTE_MAX_BYTES) }))
        expect((yield* Effect.flip(notes.read("2026-09-01-big0"))).message).toContain(`${NOTE_MAX_BYTES}-byte cap`)
        yield* plant("2026-09-01-who0", JSON.stringify(note("2026-09-01-else")))
        expect((yield* Effect.flip(notes.read("2026-09-01-who0"))).message).toContain("holds note `2026-09-01-else`")
      }))

    it.scopedLive("finds a record by a unique prefix or short id, and names every match of an ambiguous one", () =>
      Effect.gen(function* () {
        const { notes } = yield* harness.open
        for (const id of ["2026-09-01-ab12", "2026-09-02-ab34", "2026-09-03-cd56"]) yield* notes.create(note(id))
        expect(yield* notes.resolve("cd56")).toBe("2026-09-03-cd56")
        expect(yield* notes.resolve("cd")).toBe("2026-09-03-cd56")
        expect(yield* notes.resolve("2026-09-02")).toBe("2026-09-02-ab34")
        const ambiguous = yield* Effect.flip(notes.resolve("ab"))
        expect(ambiguous.message).toBe("`ab` matches 2 notes: 2026-09-01-ab12, 2026-09-02-ab34; type more of the id")
        expect(ambiguous).toMatchObject({ _tag: "RecordNotFound", kind: "note", wanted: "ab", matches: ["2026-09-01-ab12", "2026-09-02-ab34"], total: 2 })
        // A wildcard typed by a person matches only itself.
        expect((yield* Effect.flip(notes.resolve("%"))).message).toContain("no note matches")
      }))

    it.scopedLive("never serves a stale listing after a write, and moves its revision", () =>
      Effect.gen(function* () {
        const { notes, other } = yield* harness.open
        const second = yield* other
        yield* notes.create(note("2026-09-01-aa01"))
        expect((yield* notes.scan).records).toHaveLength(1)
        const before = yield* notes.revision
        // Written by another process: this one's memo must not hide it.
        yield* second.create(note("2026-09-01-aa02"))
        expect((yield* notes.scan).records.map((n) => n.id).sort()).toEqual(["2026-09-01-aa01", "2026-09-01-aa02"])
        yield* second.update("2026-09-01-aa01", (n) => Either.right({ ...n, text: "changed" }))
        expect((yield* notes.scan).records.find((n) => n.id === "2026-09-01-aa01")?.text).toBe("changed")
        expect(yield* notes.revision).not.toBe(before)
        yield* second.remove("2026-09-01-aa02")
        expect((yield* notes.scan).records.map((n) => n.id)).toEqual(["2026-09-01-aa01"])
      }))

    it.scopedLive("shelves a settled record: out of the listing, still found by id, short id and search words, updated in place", () =>
      Effect.gen(function* () {
        const { notes } = yield* harness.open
        for (const id of ["2026-08-05-old1", "2026-09-07-new1", "2026-09-08-new2", "2026-09-09-hot1"]) yield* notes.create(note(id, `Text of ${id}`))
        expect(yield* notes.archive("2026-09-09-hot1", () => false)).toBe(false)
        for (const id of ["2026-08-05-old1", "2026-09-07-new1", "2026-09-08-new2"]) expect(yield* notes.archive(id, () => true)).toBe(true)
        yield* notes.flushShelves(["2026-08", "2026-09"])
        expect((yield* notes.scan).records.map((n) => n.id)).toEqual(["2026-09-09-hot1"])
        expect(yield* notes.shelves).toEqual(["2026-09", "2026-08"])
        expect(yield* notes.shelfIds("2026-09")).toEqual(["2026-09-08-new2", "2026-09-07-new1"])
        expect((yield* notes.readShelf("2026-09", ["2026-09-07-new1", "2026-09-08-new2"])).map((n) => n.id)).toEqual([
          "2026-09-07-new1",
          "2026-09-08-new2"
        ])
        expect((yield* notes.shelfIndex("2026-08")).get("2026-08-05-old1")).toBe("text of 2026-08-05-old1")
        expect((yield* notes.get("old1")).id).toBe("2026-08-05-old1")
        expect(yield* notes.exists("2026-08-05-old1")).toBe(true)
        yield* notes.update("old1", (n) => Either.right({ ...n, text: "Edited on the shelf" }))
        expect(yield* notes.shelfIds("2026-08")).toEqual(["2026-08-05-old1"])
        expect((yield* notes.shelfIndex("2026-08")).get("2026-08-05-old1")).toBe("edited on the shelf")
        expect((yield* notes.scan).records.map((n) => n.id)).toEqual(["2026-09-09-hot1"])
      }))

    it.scopedLive("pages through the shelves newest first, by search words, skipping what it is told", () =>
      Effect.gen(function* () {
        const { notes } = yield* harness.open
        const ids = ["2026-07-01-aa01", "2026-07-02-aa02", "2026-08-01-bb01", "2026-08-02-bb02", "2026-09-01-cc01"]
        for (const id of ids) yield* notes.create(note(id, id.endsWith("2") ? `Redis ${id}` : `SQLite ${id}`))
        for (const id of ids) yield* notes.archive(id, () => true)
        const page = (query: RecordStore.ShelvedQuery) => Effect.map(notes.shelvedIds(query), (found) => found.map((s) => s.id))
        expect(yield* notes.shelvedIds({ limit: 2 })).toEqual([
          { id: "2026-09-01-cc01", order: "0000 2026-09-01-cc01" },
          { id: "2026-08-02-bb02", order: "0000 2026-08-02-bb02" }
        ])
        expect(yield* page({ before: "0000 2026-08-02-bb02", limit: 2 })).toEqual(["2026-08-01-bb01", "2026-07-02-aa02"])
        expect(yield* page({ limit: 10, words: ["redis"] })).toEqual(["2026-08-02-bb02", "2026-07-02-aa02"])
        expect(yield* page({ limit: 10, words: ["sqlite", "2026-07"] })).toEqual(["2026-07-01-aa01"])
        expect(yield* page({ limit: 10, words: ["redis", "nowhere"] })).toEqual([])
        expect(yield* page({ limit: 3, skip: (id) => id.startsWith("2026-08") })).toEqual(["2026-09-01-cc01", "2026-07-02-aa02", "2026-07-01-aa01"])
      }))

    it.scopedLive("lists the shelves by each record's order, not by its shelf, and follows a record rewritten on its shelf", () =>
      Effect.gen(function* () {
        const { notes } = yield* harness.open
        const page = (query: RecordStore.ShelvedQuery) => Effect.map(notes.shelvedIds(query), (found) => found.map((s) => s.id))
        // The oldest shelf's note stands first: its count is the greatest.
        yield* notes.create({ ...note("2026-07-01-aa01"), count: 5 })
        yield* notes.create({ ...note("2026-08-01-bb01"), count: 1 })
        yield* notes.create(note("2026-09-01-cc01"))
        for (const id of ["2026-07-01-aa01", "2026-08-01-bb01", "2026-09-01-cc01"]) yield* notes.archive(id, () => true)
        expect(yield* page({ limit: 10 })).toEqual(["2026-07-01-aa01", "2026-08-01-bb01", "2026-09-01-cc01"])
        expect(yield* page({ before: "0005 2026-07-01-aa01", limit: 1 })).toEqual(["2026-08-01-bb01"])
        yield* notes.update("2026-09-01-cc01", (n) => Either.right({ ...n, count: 9 }))
        expect(yield* page({ limit: 2 })).toEqual(["2026-09-01-cc01", "2026-07-01-aa01"])
      }))

    it.scopedLive("pages a kind listed by id through its hot and shelved records alike, newest first, an unreadable hot one taking no slot", () =>
      Effect.gen(function* () {
        const { ledger, plant } = yield* harness.open
        const shelved = ["2026-07-01-aa01", "2026-08-01-bb01", "2026-08-02-bb02"]
        for (const id of [...shelved, "2026-09-01-cc01", "2026-09-02-cc02"]) yield* ledger.create(note(id))
        for (const id of shelved) yield* ledger.archive(id, () => true)
        yield* ledger.flushShelves(["2026-07", "2026-08"])
        yield* plant("2026-09-03-cc03", "not json", "ledger")
        const page = (before: string | undefined, limit: number) =>
          Effect.map(ledger.pageById({ before, limit }), (p) => ({ ids: p.records.map((n) => n.id), next: p.next }))
        expect(yield* page(undefined, 2)).toEqual({ ids: ["2026-09-02-cc02", "2026-09-01-cc01"], next: "2026-09-01-cc01" })
        expect(yield* page("2026-09-01-cc01", 2)).toEqual({ ids: ["2026-08-02-bb02", "2026-08-01-bb01"], next: "2026-08-01-bb01" })
        expect(yield* page("2026-08-01-bb01", 2)).toEqual({ ids: ["2026-07-01-aa01"], next: null })
        expect(yield* page(undefined, 10)).toEqual({
          ids: ["2026-09-02-cc02", "2026-09-01-cc01", "2026-08-02-bb02", "2026-08-01-bb01", "2026-07-01-aa01"],
          next: null
        })
        expect(yield* page(undefined, 5)).toEqual({
          ids: ["2026-09-02-cc02", "2026-09-01-cc01", "2026-08-02-bb02", "2026-08-01-bb01", "2026-07-01-aa01"],
          next: null
        })
      }))

    it.scopedLive("holds one record's claim against a writer in another process until the holder is done", () =>
      Effect.gen(function* () {
        const { notes, other } = yield* harness.open
        const second = yield* other
        yield* notes.create(note("2026-09-01-lk01"))
        const order: Array<string> = []
        const holder = notes.withLock(
          "2026-09-01-lk01",
          Effect.gen(function* () {
            order.push("held")
            // Real time: the other writer is another pool or another lock file.
            yield* Effect.promise(() => new Promise((r) => setTimeout(r, 300)))
            order.push("released")
          })
        )
        const fiber = yield* Effect.fork(holder)
        while (!order.includes("held")) yield* Effect.promise(() => new Promise((r) => setTimeout(r, 10)))
        yield* second.update("2026-09-01-lk01", (n) => {
          order.push("second wrote")
          return Either.right({ ...n, count: n.count + 1 })
        })
        yield* fiber.await
        expect(order).toEqual(["held", "released", "second wrote"])
      }))
  })
}
