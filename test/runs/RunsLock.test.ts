/**
 * The run lock's retries: a lock held by another writer is waited for; a lock
 * that cannot be written at all is an error at once, named as what it is.
 */
import { FileSystem, Error as PlatformError } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Layer } from "effect"
import * as MemoryFileSystem from "../../src/store/MemoryFileSystem.js"
import { QuestionStore } from "../../src/questions/QuestionStore.js"
import { RunStore, type Run } from "../../src/runs/Runs.js"
import { runWithSession } from "../runSupport.js"
import * as NodePath from "node:path"

const RUN_ID = "19700101-000000-9fb7"

const run: Run = runWithSession(RUN_ID)

/** Memory, except that the run lock (and the scratch file it is linked from) cannot be created: a read-only or full disk. */
const lockDenied = Layer.effect(
  FileSystem.FileSystem,
  Effect.map(MemoryFileSystem.make, (fs) => ({
    ...fs,
    writeFileString: (path: string, text: string, options?: FileSystem.WriteFileStringOptions) =>
      NodePath.basename(path).startsWith("run.lock")
        ? Effect.fail(
          new PlatformError.SystemError({ module: "FileSystem", method: "writeFile", reason: "PermissionDenied", pathOrDescriptor: path })
        )
        : fs.writeFileString(path, text, options),
    // The lock is a create-new open and a write (FileClaim.createNew): denied at the open, as a read-only disk does.
    open: (path: string, options?: FileSystem.OpenFileOptions) =>
      NodePath.basename(path).startsWith("run.lock") && (options?.flag ?? "r") !== "r"
        ? Effect.fail(new PlatformError.SystemError({ module: "FileSystem", method: "open", reason: "PermissionDenied", pathOrDescriptor: path }))
        : fs.open(path, options)
  }))
)

describe("the run lock", () => {
  it.effect("a lock that cannot be written fails at once with why, instead of waiting as if another process held it", () =>
    Effect.gen(function* () {
      const runs = yield* RunStore
      yield* runs.put(run)
      // A daemon fiber: before the fix it waits out the retries on virtual
      // time, and a child fiber would hold the test open until it ended.
      const update = yield* Effect.forkDaemon(runs.update(RUN_ID, (r) => ({ ...r, summary: "x" })))
      for (let i = 0; i < 20; i++) yield* Effect.yieldNow()
      const exit = update.unsafePoll()
      expect(exit).not.toBeNull()
      expect(Exit.isFailure(exit!)).toBe(true)
      const message = JSON.stringify(exit)
      expect(message).toContain("PermissionDenied")
      expect(message).not.toContain("another process")
      yield* Fiber.interruptFork(update)
    }).pipe(Effect.provide(RunStore.at("/home/runs").pipe(Layer.provideMerge(QuestionStore.at("/home/questions")), Layer.provideMerge(lockDenied)))))
})
