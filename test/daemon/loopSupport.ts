/**
 * What the loop's in-memory tests (QueueLoop, Conductor) stand on: every
 * store of a home in one in-memory filesystem, and workspaces that are
 * plain folders (the loop's logic is under test, not git).
 */
import { FileSystem } from "@effect/platform"
import { Effect, Layer } from "effect"
import { MagiHome } from "../../src/platform/MagiHome.js"
import * as MemoryFileSystem from "../../src/store/MemoryFileSystem.js"
import { QuestionStore } from "../../src/questions/QuestionStore.js"
import { TaskStore } from "../../src/queue/TaskStore.js"
import { Workspaces } from "../../src/runs/NewRun.js"
import { RunStore } from "../../src/runs/Runs.js"

/** What a loop test's world provides: the stores, the home, the workspaces and the filesystem under them. */
export type Base = FileSystem.FileSystem | QuestionStore | RunStore | TaskStore | MagiHome | Workspaces

/** A workspace is a plain folder under the home's `worktrees/`, on a branch that is never taken. */
export const plainFolders = Layer.effect(
  Workspaces,
  Effect.map(FileSystem.FileSystem, (fs) => ({
    repoRoot: (dir: string) => Effect.succeed(dir),
    create: (repo: string, home: string, runId: string, short: string) =>
      fs.makeDirectory(`${home}/worktrees/${runId}`, { recursive: true }).pipe(
        Effect.orDie,
        Effect.as({ repo, base: "main", baseCommit: "0".repeat(40), branch: `magi/${short}`, path: `${home}/worktrees/${runId}` })
      ),
    branchTaken: () => Effect.succeed(false)
  }))
)

/** The stores of the home at `home`, all in one fresh in-memory filesystem. */
export const homeInMemory = (home: string): Layer.Layer<Base> => {
  const questions = QuestionStore.at(`${home}/questions`)
  return Layer.mergeAll(questions, RunStore.at(`${home}/runs`).pipe(Layer.provide(questions)), TaskStore.at(`${home}/queue`), MagiHome.at(home), plainFolders)
    .pipe(
      Layer.provideMerge(MemoryFileSystem.layer)
    )
}
