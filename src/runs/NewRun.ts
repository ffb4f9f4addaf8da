/**
 * What a new run is made of: its one implementing seat, how long its turn may
 * take, and the checkout it works in (`Workspaces`). `RunDriver` sets runs up
 * and drives their turns with these, so a task runs exactly like `magi run`.
 */
import * as CommandExecutor from "@effect/platform/CommandExecutor"
import { Context, Data, Duration, Effect, Layer } from "effect"
import type { CallResult } from "../agents/Agents.js"
import type { Run } from "./Runs.js"
import * as Worktree from "./Worktree.js"

/**
 * The longest one implementing turn may run before its process tree is
 * killed. Generous, because a real task (build, tests, a few iterations) takes
 * a while; bounded, because an agent stuck in a loop must not hold the seat
 * forever.
 */
export const RUN_TURN_TIMEOUT = Duration.hours(2)

/** The one seat a plain run has: it implements, so it may write. */
export const IMPL_SEAT = "impl"

/** A run that could not be set up (no repository, git refused); nothing was recorded. */
export class RunNotStarted extends Data.TaggedError("RunNotStarted")<{ readonly message: string }> {}

/**
 * Where runs get their checkouts: git worktrees on the real machine, plain
 * directories in tests that have no repository.
 */
export interface WorkspacesShape {
  /** The top of the repository `dir` is in; fails when it is in none. */
  readonly repoRoot: (dir: string) => Effect.Effect<string, Worktree.GitFailed>
  readonly create: (repoDir: string, home: string, runId: string, short: string) => Effect.Effect<Worktree.Worktree, Worktree.GitFailed>
  readonly branchTaken: (repoDir: string, short: string) => Effect.Effect<boolean>
}

export class Workspaces extends Context.Tag("magi/Workspaces")<Workspaces, WorkspacesShape>() {
  static git = Layer.effect(
    Workspaces,
    Effect.map(CommandExecutor.CommandExecutor, (executor) => ({
      repoRoot: (dir) => Worktree.git(dir, "rev-parse", "--show-toplevel").pipe(Effect.provideService(CommandExecutor.CommandExecutor, executor)),
      create: (repoDir, home, runId, short) =>
        Worktree.create(repoDir, home, runId, short).pipe(Effect.provideService(CommandExecutor.CommandExecutor, executor)),
      branchTaken: (repoDir, short) => Worktree.branchTaken(repoDir, short).pipe(Effect.provideService(CommandExecutor.CommandExecutor, executor))
    }))
  )
}

/** How a driven turn ended: the run as settled, and the agent's call when one ran. */
export interface TurnOutcome {
  readonly run: Run
  readonly result: CallResult | undefined
}
