/**
 * The git a competition does around its candidates: their worktrees and
 * branches (`magi/<short>/<label>`), the judges' detached read-only ones at
 * the base, what a candidate's branch holds, whether a turn moved the base,
 * and removing what a fold removes. All through `Worktree.git`.
 */
import * as CommandExecutor from "@effect/platform/CommandExecutor"
import * as FileSystem from "@effect/platform/FileSystem"
import { Effect } from "effect"
import * as NodePath from "node:path"
import { git } from "../runs/Worktree.js"

/** Who commits what a candidate's turn left uncommitted: nobody a judge could recognise. */
export const NEUTRAL = { name: "magi candidate", email: "candidate@magi.invalid" }

/**
 * The `commit-msg` hook of every candidate worktree: author trailers say
 * which agent wrote a candidate, and the judges must not know.
 */
export const COMMIT_MSG_HOOK = `#!/bin/sh
# magi: strip author trailers from a competition candidate's commits.
sed -i.magi -e '/^[Cc]o-[Aa]uthored-[Bb]y:/d' -e '/[Gg]enerated with/d' "$1" && rm -f "$1.magi"
`

/** The same trailers stripped from text a judge reads (a summary, a commit message). */
export const stripTrailers = (text: string): string =>
  text
    .split("\n")
    .filter((l) => !/^\s*co-authored-by:/i.test(l) && !/generated with/i.test(l))
    .join("\n")
    .trim()

/**
 * Let worktrees have config of their own (`extensions.worktreeConfig`), once
 * per competition: the hook and the identity below are the candidates' alone.
 */
export const allowWorktreeConfig = (repo: string) => git(repo, "config", "extensions.worktreeConfig", "true")

/**
 * A candidate's worktree on its own branch off `baseCommit`, with the hook
 * and the neutral identity as that worktree's own config (so the owner's
 * checkout and its other worktrees keep theirs). The config is written as
 * the worktree's `config.worktree` file rather than by three more `git
 * config` processes: prep is on the path of every competition.
 */
export const addCandidate = Effect.fn("CandidateGit.addCandidate")(function* (
  repo: string,
  path: string,
  branch: string,
  baseCommit: string
) {
  const fs = yield* FileSystem.FileSystem
  // fallback: a path that cannot be looked at is added; git refuses an existing one loudly
  if (!(yield* fs.exists(path).pipe(Effect.orElseSucceed(() => false)))) yield* git(repo, "worktree", "add", "--quiet", "-b", branch, path, baseCommit)
  const hooks = `${path}.hooks`
  yield* fs.makeDirectory(hooks, { recursive: true }).pipe(Effect.orDie)
  yield* fs.writeFileString(NodePath.join(hooks, "commit-msg"), COMMIT_MSG_HOOK, { mode: 0o755 }).pipe(Effect.orDie)
  // `<worktree>/.git` is a file naming the worktree's own git dir.
  const pointer = yield* fs.readFileString(NodePath.join(path, ".git")).pipe(Effect.orDie)
  const gitdir = NodePath.resolve(path, pointer.replace(/^gitdir:\s*/, "").trim())
  yield* fs.writeFileString(
    NodePath.join(gitdir, "config.worktree"),
    `[core]\n\thooksPath = ${hooks}\n[user]\n\tname = ${NEUTRAL.name}\n\temail = ${NEUTRAL.email}\n`
  ).pipe(Effect.orDie)
})

/** A judge's worktree: detached at the base, so `git show magi/<short>/B` works and no branch of it can move. */
export const addJudge = Effect.fn("CandidateGit.addJudge")(function* (repo: string, path: string, baseCommit: string) {
  const fs = yield* FileSystem.FileSystem
  // fallback: a path that cannot be looked at is added; git refuses an existing one loudly
  if (!(yield* fs.exists(path).pipe(Effect.orElseSucceed(() => false)))) yield* git(repo, "worktree", "add", "--detach", path, baseCommit)
})

/** The tip of `ref` in `repo`, or null when there is none. */
// fallback: rev-parse --verify fails for a ref that is not there, which is what null says
export const tip = (repo: string, ref: string) => git(repo, "rev-parse", "--verify", "--quiet", `${ref}^{commit}`).pipe(Effect.orElseSucceed(() => null))

/** `<sha> <subject>` of every commit on `branch` off `baseCommit`, newest first. */
export const commitsOf = (repo: string, baseCommit: string, branch: string) =>
  git(repo, "log", "--format=%h %s", `${baseCommit}..${branch}`).pipe(Effect.map((out) => (out === "" ? [] : out.split("\n"))))

export const numstatOf = (repo: string, baseCommit: string, branch: string) => git(repo, "diff", "--numstat", `${baseCommit}...${branch}`)

export const patchOf = (repo: string, baseCommit: string, branch: string) => git(repo, "diff", `${baseCommit}...${branch}`)

/** Is `ancestor` reachable from `descendant`? */
export const isAncestor = (repo: string, ancestor: string, descendant: string) =>
  // fallback: merge-base --is-ancestor answers "no" by failing
  git(repo, "merge-base", "--is-ancestor", ancestor, descendant).pipe(Effect.as(true), Effect.orElseSucceed(() => false))

/**
 * After a candidate's turn: did it move the base? Only a move the candidate
 * made counts (the new tip is on its own branch, or its worktree has the base
 * checked out); the owner's own commits on the base are the owner's, and
 * magi never undoes them. A candidate's move is put back (only if the base
 * is still where the candidate left it), and the reason returned.
 */
export const baseMovedBy = Effect.fn("CandidateGit.baseMovedBy")(function* (
  repo: string,
  base: string,
  before: string | null,
  worktree: string,
  branch: string
) {
  if (before === null) return null
  const after = yield* tip(repo, `refs/heads/${base}`)
  if (after === null || after === before) return null
  const own = yield* tip(repo, `refs/heads/${branch}`)
  // fallback: a detached HEAD has no branch name
  const head = yield* git(worktree, "symbolic-ref", "--quiet", "--short", "HEAD").pipe(Effect.orElseSucceed(() => ""))
  const candidates = head === base || (own !== null && (yield* isAncestor(repo, after, own)))
  if (!candidates) return null
  // fallback: a base that moved again since cannot be put back; the record says so instead of claiming it was.
  const restored = yield* git(repo, "update-ref", `refs/heads/${base}`, before, after).pipe(Effect.as(true), Effect.orElseSucceed(() => false))
  const moved = `it moved the base branch ${base} (from ${before.slice(0, 12)} to ${after.slice(0, 12)})`
  return restored ? `${moved}; magi put it back` : `${moved}; magi could not put it back`
})

/** Remove a worktree and, when given, its branch; what is already gone is fine. */
export const remove = Effect.fn("CandidateGit.remove")(function* (repo: string, path: string, branch: string | null) {
  const fs = yield* FileSystem.FileSystem
  // fallback: best-effort cleanup; what is already gone is fine
  yield* git(repo, "worktree", "remove", "--force", "--force", path).pipe(Effect.ignore)
  // fallback: best-effort cleanup; what is already gone is fine
  yield* fs.remove(path, { recursive: true }).pipe(Effect.ignore)
  // fallback: best-effort cleanup; what is already gone is fine
  yield* fs.remove(`${path}.hooks`, { recursive: true }).pipe(Effect.ignore)
  // fallback: best-effort cleanup; what is already gone is fine
  yield* git(repo, "worktree", "prune").pipe(Effect.ignore)
  // fallback: best-effort cleanup; what is already gone is fine
  if (branch !== null) yield* git(repo, "branch", "-D", branch).pipe(Effect.ignore)
})

export type GitServices = CommandExecutor.CommandExecutor | FileSystem.FileSystem
