import { describe, expect, it } from "@effect/vitest"
import { FileSystem } from "@effect/platform"
import { Effect, Either } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as LocalContext from "../../src/platform/LocalContext.js"
import * as RecordStore from "../../src/store/files/RecordStore.js"
import { tempDirSync } from "../support.js"

describe("LocalContext", () => {
  it.effect("reads whole files as the platform would, with the same not-found error", () =>
    Effect.gen(function* () {
      const fs = yield* FileSystem.FileSystem
      const dir = tempDirSync()
      NodeFs.writeFileSync(NodePath.join(dir, "q.json"), '{"ü": 1}')
      expect(yield* fs.readFileString(NodePath.join(dir, "q.json"))).toBe('{"ü": 1}')
      expect([...(yield* fs.readFile(NodePath.join(dir, "q.json")))].length).toBe(9)
      const missing = yield* Effect.flip(fs.readFileString(NodePath.join(dir, "nope.json")))
      expect(missing._tag === "SystemError" && missing.reason).toBe("NotFound")
      // The read is the synchronous one: it completes within the same tick.
      let done = false
      // @effect-diagnostics-next-line runEffectInsideEffect:off -- run on its own, to see it finish synchronously
      Effect.runFork(Effect.map(fs.readFileString(NodePath.join(dir, "q.json")), () => (done = true)))
      expect(done).toBe(true)
    }).pipe(Effect.provide(LocalContext.layer)))

  it.effect("gives a folder's names a batch at a time, each once, while those given are moved away", () =>
    Effect.gen(function* () {
      const reader = yield* RecordStore.BoundedReader
      const dir = tempDirSync()
      const elsewhere = tempDirSync()
      const names = Array.from({ length: 1234 }, (_, i) => `${i}.json`)
      for (const name of names) NodeFs.writeFileSync(NodePath.join(dir, name), "{}")
      const cursor = Either.getOrThrow(reader.openNames(dir))!
      const seen: Array<string> = []
      for (;;) {
        const batch = cursor.next(100)
        if (batch.length === 0) break
        expect(batch.length).toBeLessThanOrEqual(100)
        seen.push(...batch)
        // What the first move does with each batch before it reads the next.
        for (const name of batch) NodeFs.renameSync(NodePath.join(dir, name), NodePath.join(elsewhere, name))
      }
      cursor.close()
      expect(seen.sort()).toEqual([...names].sort())
      expect(NodeFs.readdirSync(dir)).toEqual([])
      // A folder that is not there has no names, and says so without failing.
      expect(Either.getOrThrow(reader.openNames(NodePath.join(dir, "missing")))).toBeUndefined()
    }).pipe(Effect.provide(LocalContext.layer)))
})
