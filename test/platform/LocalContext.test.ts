import { describe, expect, it } from "@effect/vitest"
import { FileSystem } from "@effect/platform"
import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as LocalContext from "../../src/platform/LocalContext.js"
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
})
