import { FileSystem } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as MemoryFileSystem from "../../src/store/MemoryFileSystem.js"

describe("the in-memory filesystem", () => {
  it.effect("appends with flag a, as a real disk does, and replaces otherwise", () =>
    Effect.gen(function* () {
      const fs = yield* FileSystem.FileSystem
      yield* fs.makeDirectory("/d", { recursive: true })
      yield* fs.writeFileString("/d/log", "one\n", { flag: "a" })
      yield* fs.writeFileString("/d/log", "two\n", { flag: "a" })
      expect(yield* fs.readFileString("/d/log")).toBe("one\ntwo\n")
      yield* fs.writeFileString("/d/log", "three\n")
      expect(yield* fs.readFileString("/d/log")).toBe("three\n")
    }).pipe(Effect.provide(MemoryFileSystem.layer)))
})
