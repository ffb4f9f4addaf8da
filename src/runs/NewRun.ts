/**
 * Starting a run and driving one of its turns: what `magi run` does at a
 * terminal and what the queue's loop does for each task, written once so a
 * task runs exactly like `magi run` (its own worktree, branch and record;
 * the same turn, settled the same way).
 */
import { CommandExecutor } from "@effect/platform"
import { Cause, Clock, Context, Data, Duration, Effect, Layer, Option, Random } from "effect"
import type { AgentSpec } from "../agents/AgentRoster.js"
import type { CallResult } from "../agents/Agents.js"
import { MagiHome } from "../platform/MagiHome.js"
import * as Q from "../questions/Question.js"
import { finishTurn, runTurn, type TurnPrompt } from "./RunTurns.js"
import { RUN_SCHEMA, RunStore, type Run } from "./Runs.js"
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
  readonly create: (repoDir: string, home: string, runId: string, short: string) => Effect.Effect<Worktree.Worktree, Worktree.GitFailed>
  readonly branchTaken: (repoDir: string, short: string) => Effect.Effect<boolean>
}

export class Workspaces extends Context.Tag("magi/Workspaces")<Workspaces, WorkspacesShape>() {
  static git = Layer.effect(
    Workspaces,
    Effect.map(CommandExecutor.CommandExecutor, (executor) => ({
      create: (repoDir, home, runId, short) =>
        Worktree.create(repoDir, home, runId, short).pipe(Effect.provideService(CommandExecutor.CommandExecutor, executor)),
      branchTaken: (repoDir, short) =>
        Worktree.branchTaken(repoDir, short).pipe(Effect.provideService(CommandExecutor.CommandExecutor, executor))
    }))
  )
}

/**
 * The git root of `dir`, or why there is none: a run works in a worktree of
 * a repository, so asked from anywhere else it is refused with the fix.
 */
export const repoRootOf = (dir: string) =>
  Worktree.git(dir, "rev-parse", "--show-toplevel").pipe(
    Effect.mapError(
      () =>
        new RunNotStarted({
          message: `${dir} is not inside a git repository; a run works in a worktree of one, so run it from inside the repository or give --repo DIR`
        })
    )
  )

/**
 * Set a run up: a fresh id that names neither an existing run nor an
 * existing branch, its worktree off the tip of `repoDir`'s checkout, and its
 * record, `running`, with one implementing seat for `agent`.
 */
export const createRun = Effect.fn("createRun")(function* (instruction: string, agent: AgentSpec, repoDir: string) {
  const runs = yield* RunStore
  const home = yield* MagiHome
  const workspaces = yield* Workspaces
  const at = new Date(yield* Clock.currentTimeMillis)
  const draw = Effect.map(Random.nextIntBetween(0, 0x10000), (n) => Q.makeId(at, n))
  let id = yield* draw
  while (Option.isSome(yield* Effect.option(runs.get(id))) || (yield* workspaces.branchTaken(repoDir, Q.shortId(id)))) id = yield* draw
  const tree = yield* workspaces
    .create(repoDir, home.dir, id, Q.shortId(id))
    .pipe(Effect.mapError((e) => new RunNotStarted({ message: e.message })))
  const run: Run = {
    schema: RUN_SCHEMA,
    id,
    status: "running",
    instruction,
    repo: tree.repo,
    base: tree.base,
    base_commit: tree.baseCommit,
    worktree: tree.path,
    branch: tree.branch,
    seats: [{ key: IMPL_SEAT, agent: agent.id, turns: 0, session: null, write: true }],
    created_at: Q.timestamp(at),
    updated_at: Q.timestamp(at),
    summary: "",
    reason: ""
  }
  yield* runs.put(run).pipe(Effect.mapError((e) => new RunNotStarted({ message: e.message })))
  return run
})

/** How a driven turn ended: the run as settled, and the agent's call when one ran. */
export interface TurnOutcome {
  readonly run: Run
  readonly result: CallResult | undefined
}

/**
 * Run the impl seat's turn and settle the run by how it went (`finishTurn`).
 * A turn that cannot start fails the run with the reason. Interrupted (the
 * owner's Ctrl-C, the loop stopping), the run is left `stalled`: its seat
 * keeps its session, so it can be picked up again rather than sit "running".
 * Fails with `SeatBusy` only when another turn holds the seat.
 */
export const driveTurn = Effect.fn("driveTurn")(function* (runId: string, prompt: TurnPrompt, timeout: Duration.Duration = RUN_TURN_TIMEOUT) {
  const runs = yield* RunStore
  const result = yield* runTurn({ run: runId, seat: IMPL_SEAT, prompt, timeout }).pipe(
    Effect.map((r): CallResult | undefined => r),
    Effect.catchTag("TurnRefused", (e) =>
      Effect.as(runs.setStatus(runId, "failed", e.message).pipe(Effect.ignore), undefined)
    ),
    Effect.onInterrupt(() => runs.setStatus(runId, "stalled", "interrupted; continue with magi run --resume").pipe(Effect.ignore)),
    // Anything else unexpected (a defect, an I/O error in between) settles
    // the run as failed with the reason: never `running` forever.
    Effect.tapErrorCause((cause) =>
      Cause.isInterruptedOnly(cause) || Cause.failureOption(cause).pipe(Option.exists((e) => e._tag === "SeatBusy"))
        ? Effect.void
        : runs.setStatus(runId, "failed", `the turn ended unexpectedly: ${Cause.pretty(cause).split("\n")[0]}`).pipe(Effect.ignore)
    )
  )
  if (result === undefined) return { run: yield* runs.get(runId), result } satisfies TurnOutcome
  return { run: yield* finishTurn(runId, result), result } satisfies TurnOutcome
})
