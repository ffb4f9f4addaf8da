/**
 * Issue 26, point 2: on the file store, a read that failed is never taken
 * for "nothing there" before a write. The file system is the test's own
 * (memory, or a real folder) with reads of chosen paths failing as a
 * permission or I/O error does; what the store then writes, or refuses to,
 * is checked once the reads work again.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as PlatformError from "@effect/platform/Error"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import * as NodePath from "node:path"
import * as StoreBackend from "../../../src/store/StoreBackend.js"
import { contractFolders, openFolder } from "../../support.js"

interface Note {
  readonly schema: number
  readonly id: string
  readonly text: string
}

const decode = (body: string, source: string) => {
  try {
    const raw = JSON.parse(body) as Partial<Note>
    return typeof raw.id === "string" && typeof raw.text === "string"
      ? Either.right<Note>({ schema: 1, id: raw.id, text: raw.text })
      : Either.left({ message: `${source} is not a note` })
  } catch {
    return Either.left({ message: `${source} is not JSON` })
  }
}

const notesOn = StoreBackend.recordsOf({
  folder: "notes",
  kind: { noun: "note", decode, encode: (n: Note) => JSON.stringify(n), idOf: (n: Note) => n.id, maxBytes: 4096 },
  archive: { dir: "history", shelfOf: (id: string) => id.slice(0, 7), digest: (n: Note) => n.text.toLowerCase() }
})

/** The error a read gets from a file it may not read (EACCES), as @effect/platform wraps it. */
const denied = (method: string, path: string) =>
  new PlatformError.SystemError({ reason: "PermissionDenied", module: "FileSystem", method, pathOrDescriptor: path })

/** `fs`, with every look at a path in `failing` (stat, exists, read) failing as a denied read does. */
const failingAt = (fs: FileSystem.FileSystem, failing: Set<string>): FileSystem.FileSystem => {
  const guard = <A>(method: string, path: string, effect: Effect.Effect<A, PlatformError.PlatformError>) =>
    Effect.suspend(() => (failing.has(path) ? Effect.fail(denied(method, path)) : effect))
  return {
    ...fs,
    stat: (path) => guard("stat", path, fs.stat(path)),
    exists: (path) => guard("exists", path, fs.exists(path)),
    readFileString: (path, encoding) => guard("readFile", path, fs.readFileString(path, encoding))
  }
}

for (const folder of contractFolders) {
  describe(`a failed read before a write, on ${folder.name}`, () => {
    const open = Effect.gen(function* () {
      const { dir, fs, write } = yield* openFolder(folder)
      const failing = new Set<string>()
      const context = yield* Layer.build(Layer.merge(StoreBackend.StoreBackend.filesAt(dir), Layer.succeed(FileSystem.FileSystem, failingAt(fs, failing))))
      const notes = yield* Effect.provide(notesOn, context)
      return { dir, fs, write, failing, notes }
    })

    it.scoped("a hot copy that cannot be read is not passed over for the shelf's: the update fails and the hot copy keeps its text", () =>
      Effect.gen(function* () {
        const { dir, write, failing, notes } = yield* open
        const id = "2026-08-05-old1"
        yield* notes.create({ schema: 1, id, text: "shelved" })
        expect(yield* notes.archive(id, () => true)).toBe(true)
        // The record is hot again (a move back half done, a hand copy): newer than its shelf's.
        const hot = NodePath.join(dir, "notes", `${id}.json`)
        yield* write(hot, JSON.stringify({ schema: 1, id, text: "newer, hot" }))
        failing.add(hot)
        const updated = yield* Effect.either(notes.update(id, (n) => Either.right({ ...n, text: `${n.text}, edited` })))
        expect(Either.isLeft(updated) && updated.left._tag).toBe("StoreFailed")
        failing.clear()
        expect((yield* notes.read(id)).text).toBe("newer, hot")
      }))

    it.scoped("a whole write of a record whose hot copy cannot be looked at fails, rather than land on the shelf's older copy", () =>
      Effect.gen(function* () {
        const { dir, write, failing, notes } = yield* open
        const id = "2026-08-07-put1"
        yield* notes.create({ schema: 1, id, text: "shelved" })
        expect(yield* notes.archive(id, () => true)).toBe(true)
        const hot = NodePath.join(dir, "notes", `${id}.json`)
        yield* write(hot, JSON.stringify({ schema: 1, id, text: "newer, hot" }))
        failing.add(hot)
        const put = yield* Effect.either(notes.put({ schema: 1, id, text: "written whole" }))
        expect(Either.isLeft(put) && put.left._tag).toBe("StoreFailed")
        failing.clear()
        expect((yield* notes.read(id)).text).toBe("newer, hot")
        expect((yield* notes.shelfIds("2026-08")).length).toBe(1)
      }))

    it.scoped("a shelf's index that cannot be read is the store failing, said so, and the index is left as it was", () =>
      Effect.gen(function* () {
        const { dir, fs, failing, notes } = yield* open
        for (const id of ["2026-08-05-aaa1", "2026-08-06-bbb2"]) {
          yield* notes.create({ schema: 1, id, text: `note ${id}` })
          yield* notes.archive(id, () => true)
        }
        yield* notes.shelfIndex("2026-08")
        const index = NodePath.join(dir, "notes", "history", "2026-08.index.json")
        const before = yield* fs.readFileString(index)
        failing.add(index)
        const got = yield* Effect.either(notes.shelfIndex("2026-08"))
        expect(Either.isLeft(got) && got.left._tag).toBe("StoreFailed")
        failing.clear()
        expect(yield* fs.readFileString(index)).toBe(before)
      }))
  })
}
