/**
 * Shared fixtures: the seed's two sample questions, and the two store
 * backends every store test runs against (a real temp directory, memory).
 */
import { FileSystem } from "@effect/platform"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { Effect, Either, Layer } from "effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import * as Q from "../src/questions/Question.js"
import * as MemoryFileSystem from "../src/store/MemoryFileSystem.js"
import { QuestionStore } from "../src/questions/QuestionStore.js"

export const RUN = "20260902-201256-9fb7"
export const ASKED = new Date("2026-09-02T23:15:01Z")

/** A multiple-choice question, as an implementing seat would ask it. */
export const choiceQuestion = (id = "20260902-231501-ab12", now = ASKED): Q.Question =>
  Q.make({
    id,
    run: RUN,
    node: "implement",
    seat: "impl-A",
    summary: "Which storage backend should the cache use?",
    detail: "Both are already dependencies.",
    choices: ["SQLite", "Redis"],
    now
  })

/** A free-text question. */
export const freeQuestion = (id = "20260902-231502-cd34", now = ASKED): Q.Question =>
  Q.make({
    id,
    run: RUN,
    node: "review",
    seat: "rev-1",
    summary: "What should the error message say?",
    detail: "",
    choices: [],
    now
  })

/**
 * Asset names that would change what a path join means (traversal, absolute
 * paths on either OS, hidden files, the empty name): the rule in
 * `Q.validAssetName` and the store that serves assets must refuse each.
 */
export const HOSTILE_ASSET_NAMES: ReadonlyArray<string> = [
  "..",
  "../id_rsa",
  "..\\id_rsa",
  "sub/../id_rsa",
  "/",
  "\\",
  "/etc/passwd",
  "C:\\Windows\\win.ini",
  "",
  ".hidden",
  "."
]

/** Unwrap a transition the test expects to succeed. */
export const ok = <A, E>(result: Either.Either<A, E>): A => {
  if (Either.isLeft(result)) throw new Error(`expected success, got ${String((result.left as { message?: string }).message ?? result.left)}`)
  return result.right
}

/** Unwrap a transition the test expects to be refused; its message. */
export const refusal = <A, E extends { message: string }>(result: Either.Either<A, E>): string => {
  if (Either.isRight(result)) throw new Error("expected a refusal, the transition succeeded")
  return result.left.message
}

/** A fresh real directory, removed when the test's scope closes. */
export const tempDir = Effect.acquireRelease(
  Effect.sync(() => NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "magi-test-"))),
  (dir) => Effect.sync(() => NodeFs.rmSync(dir, { recursive: true, force: true }))
)

export const tempDirSync = () => NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "magi-test-"))

export interface Backend {
  readonly name: string
  /** A filesystem plus a store rooted at `<base>/questions`. */
  readonly layer: (base: string) => Layer.Layer<QuestionStore | FileSystem.FileSystem>
  /** A base directory for one test. */
  readonly base: Effect.Effect<string, never, import("effect").Scope.Scope>
}

const storeOver = (fs: Layer.Layer<FileSystem.FileSystem>) => (base: string) => QuestionStore.at(NodePath.join(base, "questions")).pipe(Layer.provideMerge(fs))

export const backends: ReadonlyArray<Backend> = [
  { name: "files in a temp directory", layer: storeOver(NodeFileSystem.layer), base: tempDir },
  { name: "memory", layer: storeOver(MemoryFileSystem.layer), base: Effect.succeed("/magi") }
]

/** The two file folders every store contract suite runs on beside PostgreSQL: one in memory, one real. */
export const contractFolders: ReadonlyArray<{
  readonly name: string
  readonly fs: Layer.Layer<FileSystem.FileSystem>
  readonly base: Effect.Effect<string, never, import("effect").Scope.Scope>
}> = [
  { name: "memory", fs: MemoryFileSystem.layer, base: Effect.succeed("/magi") },
  { name: "files in a real folder", fs: NodeFileSystem.layer, base: tempDir }
]

/** A folder of one of them for one test: where it is, its filesystem, and a write that makes the parent folders first. */
export const openFolder = (folder: (typeof contractFolders)[number]) =>
  Effect.gen(function* () {
    const dir = yield* folder.base
    const fs = yield* Effect.provide(FileSystem.FileSystem, folder.fs)
    const write = (path: string, body: string) =>
      Effect.orDie(Effect.zipRight(fs.makeDirectory(NodePath.dirname(path), { recursive: true }), fs.writeFileString(path, body)))
    return { dir, fs, write }
  })

/** Let real I/O (a file read, a child process) make progress for `ms`. */
export const realPause = (ms = 2) => Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, ms)))

/**
 * Move virtual time forward by `total` in `step`s, pausing in real time
 * between steps. A fiber that mixes real file I/O with `Clock` sleeps only
 * schedules its next sleep after its I/O finishes, so one big jump of the
 * `TestClock` would land before that sleep exists and it would wait forever.
 */
export const advance = (total: import("effect").Duration.DurationInput, step: import("effect").Duration.DurationInput = "1 second") =>
  Effect.gen(function* () {
    const { Duration, TestClock } = yield* Effect.promise(() => import("effect"))
    let left = Duration.toMillis(total)
    const stepMs = Duration.toMillis(step)
    while (left > 0) {
      const now = Math.min(stepMs, left)
      yield* TestClock.adjust(Duration.millis(now))
      yield* realPause()
      left -= now
    }
  })

/**
 * Step virtual time until `fiber` finishes (at most `max`), pausing in real
 * time between steps so its real I/O keeps up; the fiber's result. Robust
 * where a fixed `advance` is not: on a loaded machine the I/O between two
 * sleeps can take longer than any fixed pause.
 */
export const runUntilDone = <A, E>(
  fiber: import("effect").Fiber.RuntimeFiber<A, E>,
  step: import("effect").Duration.DurationInput = "1 second",
  max: import("effect").Duration.DurationInput = "2 days"
) =>
  Effect.gen(function* () {
    const { Duration, Fiber, TestClock } = yield* Effect.promise(() => import("effect"))
    const stepMs = Duration.toMillis(step)
    let left = Duration.toMillis(max)
    while (fiber.unsafePoll() === null) {
      if (left <= 0) return yield* Effect.die(new Error("the fiber never finished within the virtual time allowed"))
      yield* TestClock.adjust(Duration.millis(stepMs))
      left -= stepMs
      yield* realPause(3)
    }
    return yield* Fiber.join(fiber)
  })

/**
 * Resolve once `ok()` holds, polling every 100 ms; reject naming `what` after
 * `ms`. For tests that watch real processes: the deadline is generous, so a
 * loaded machine only makes them slower.
 */
export const until = async (what: string, ok: () => boolean, ms: number): Promise<void> => {
  const end = Date.now() + ms
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}
