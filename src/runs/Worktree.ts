/**
 * A run's own git worktree: branch `magi/<short>` off the tip of the branch
 * the owner is on, checked out under `<home>/worktrees/<run id>`. The agent
 * changes files there and never in the owner's checkout, so a run that goes
 * wrong costs a branch, not the owner's uncommitted work.
 */
import * as Command from "@effect/platform/Command"
import * as CommandExecutor from "@effect/platform/CommandExecutor"
import { Chunk, Data, Effect, Stream } from "effect"
import * as NodePath from "node:path"

export class GitFailed extends Data.TaggedError("GitFailed")<{ readonly message: string }> {}

export interface Worktree {
  readonly repo: string
  readonly base: string
  readonly baseCommit: string
  readonly branch: string
  readonly path: string
}

/** Run git in `cwd`; stdout trimmed, or the reason it failed. */
export const git = Effect.fn("git")(function* (cwd: string, ...args: ReadonlyArray<string>) {
  const executor = yield* CommandExecutor.CommandExecutor
  return yield* Effect.scoped(
    Effect.gen(function* () {
      const proc = yield* Command.make("git", ...args).pipe(
        Command.workingDirectory(cwd),
        Command.env({ GIT_TERMINAL_PROMPT: "0" }),
        Command.feed(""),
        Command.start
      )
      const text = (s: Stream.Stream<Uint8Array, unknown>) =>
        // fallback: a stream that cannot be decoded is no text (git's exit code still decides)
        Stream.decodeText(s).pipe(Stream.runCollect, Effect.map((c) => Chunk.join(c, "")), Effect.orElseSucceed(() => ""))
      const [out, err, code] = yield* Effect.all([text(proc.stdout), text(proc.stderr), proc.exitCode], { concurrency: 3 })
      if (code !== 0)
        return yield* new GitFailed({ message: `git ${args.join(" ")} in ${cwd} failed: ${err.trim() || `exit ${code}`}` })
      return out.trim()
    })
  ).pipe(
    Effect.catchTag("SystemError", "BadArgument", (e) => new GitFailed({ message: `git ${args.join(" ")} in ${cwd}: ${e.message}` })),
    Effect.provideService(CommandExecutor.CommandExecutor, executor)
  )
})

/**
 * Is `magi/<short>` already a branch in the repo at `repoDir`? Short ids are
 * 16 bits, so after a few hundred runs a new one may land on an old branch;
 * the caller draws another id rather than fail in `git worktree add`.
 */
export const branchTaken = (repoDir: string, short: string) =>
  git(repoDir, "show-ref", "--verify", "--quiet", `refs/heads/magi/${short}`).pipe(
    Effect.as(true),
    // fallback: a probe that failed is "no"
    Effect.orElseSucceed(() => false)
  )

/**
 * Create the run's worktree off the tip of `repo`'s current branch. Detached
 * HEAD works too (the base is then the commit itself), because "what I have
 * checked out" is what the owner means either way.
 */
export const create = Effect.fn("Worktree.create")(function* (repoDir: string, home: string, runId: string, short: string) {
  const repo = yield* git(repoDir, "rev-parse", "--show-toplevel")
  const baseCommit = yield* git(repo, "rev-parse", "HEAD")
  // fallback: a detached HEAD runs against the base commit itself
  const base = yield* git(repo, "symbolic-ref", "--quiet", "--short", "HEAD").pipe(Effect.orElseSucceed(() => baseCommit))
  const branch = `magi/${short}`
  const path = NodePath.join(home, "worktrees", runId)
  yield* git(repo, "worktree", "add", "-b", branch, path, baseCommit)
  return { repo, base, baseCommit, branch, path } satisfies Worktree
})
