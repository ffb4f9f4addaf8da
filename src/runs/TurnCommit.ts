/**
 * What an implementing turn left uncommitted is committed for it, on the
 * run's branch, under a message from the agent's own summary.
 *
 * An agent is told to commit its work, and some cannot: codex's sandbox keeps
 * the worktree's `.git` read-only, so its `git commit` fails however willing
 * it is. The work is still in the worktree; committing it when the turn ends
 * means no agent's sandbox costs the owner the work, and the branch is what
 * the owner reviews either way.
 */
import * as CommandExecutor from "@effect/platform/CommandExecutor"
import { Effect, Option } from "effect"
import { git } from "./Worktree.js"

/** The subject line a commit message gets from a summary: its first line, cut to a length git tools show whole. */
const SUBJECT_MAX = 72

/** Who commits when the repository names nobody (`user.name`/`user.email` unset): magi, not a failure. */
const FALLBACK_IDENTITY = ["-c", "user.name=magi", "-c", "user.email=magi@localhost"]

/** The commit message for what the turn `label` left, from the agent's `summary`. */
export const leftoversMessage = (summary: string, label: string): string => {
  const said = summary.trim()
  const first = said.split("\n").find((l) => l.trim() !== "")?.trim() ?? ""
  const subject = first === "" ? `Work left uncommitted by ${label}` : first.length > SUBJECT_MAX ? `${first.slice(0, SUBJECT_MAX - 1).trimEnd()}…` : first
  const body = said === "" || said === first ? "" : `\n\n${said}`
  return `${subject}${body}\n\nCommitted by magi after ${label}: the agent left these changes uncommitted.\n`
}

/**
 * Commit everything uncommitted in `worktree` (new files included, ignored
 * ones not), if anything is; the new commit's id. Hooks are skipped: a hook
 * that fails here would leave the work uncommitted, which is what this is
 * for; the owner reviews the branch before it goes anywhere.
 */
export const commitLeftovers = Effect.fn("commitLeftovers")(function* (worktree: string, summary: string, label: string) {
  const status = yield* git(worktree, "status", "--porcelain", "--untracked-files=all")
  if (status === "") return Option.none<string>()
  yield* git(worktree, "add", "--all")
  // What `git commit` itself would sign as; it fails when there is nobody.
  const named = yield* git(worktree, "var", "GIT_AUTHOR_IDENT").pipe(
    Effect.as(true),
    // fallback: a worktree whose status cannot be read has nothing to commit
    Effect.orElseSucceed(() => false)
  )
  yield* git(worktree, ...(named ? [] : FALLBACK_IDENTITY), "commit", "--quiet", "--no-verify", "-m", leftoversMessage(summary, label))
  return Option.some(yield* git(worktree, "rev-parse", "HEAD"))
})

/**
 * After an implementing turn: commit what it left, and say so in the log. A
 * failure here (no git, a broken index) is logged and the turn goes on: the
 * work is still in the worktree. Runs only where processes can be started;
 * the waiter's in-memory tests have none, and no worktree either.
 */
export const commitAfterTurn = (worktree: string, summary: string, label: string) =>
  Effect.gen(function* () {
    const executor = yield* Effect.serviceOption(CommandExecutor.CommandExecutor)
    if (Option.isNone(executor)) return
    const made = yield* commitLeftovers(worktree, summary, label).pipe(
      Effect.provideService(CommandExecutor.CommandExecutor, executor.value)
    )
    if (Option.isSome(made)) yield* Effect.logInfo(`committed what ${label} left uncommitted in ${worktree} as ${made.value.slice(0, 12)}`)
    // display: a failed commit of a turn's leftovers is logged; the worktree keeps them
  }).pipe(Effect.catchAll((e) => Effect.logWarning(`could not commit what ${label} left in ${worktree}: ${e.message}`)))
