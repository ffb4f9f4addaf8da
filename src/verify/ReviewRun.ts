/**
 * `magi review BRANCH`: a run of its own that only syncs, reviews, fixes and
 * gates a branch somebody else made. magi never rewrites or deletes a branch
 * it did not create, so the run works on its own copy, `magi/<short>`,
 * started at the branch's tip: the sync rebases that copy and the fixer
 * commits on it, and `magi run rm` takes only it away. The owner's branch is
 * recorded (`reviewed`) and left exactly as it was.
 */
import { Clock, Effect, Option, Random, Schema } from "effect"
import * as NodePath from "node:path"
import { Rosters } from "../agents/AgentRoster.js"
import { MagiConfig } from "../platform/MagiConfig.js"
import { MagiHome } from "../platform/MagiHome.js"
import * as Q from "../questions/Question.js"
import { IMPL_SEAT } from "../runs/NewRun.js"
import { branchFor, RUN_SCHEMA, type Run, RunStore } from "../runs/Runs.js"
import { branchTaken, git } from "../runs/Worktree.js"

export class ReviewNotStarted extends Schema.TaggedError<ReviewNotStarted>()("ReviewNotStarted", {
  branch: Schema.String,
  repo: Schema.String,
  why: Schema.String
}) {
  override get message() {
    return `cannot review ${this.branch} in ${this.repo}: ${this.why}`
  }
}

export interface ReviewRequest {
  readonly branch: string
  readonly repoDir: string
  /** The branch to sync onto and review against; default the one checked out in `repoDir`. */
  readonly base: Option.Option<string>
  /** The roster agent that fixes (and resolves conflicts); default the first. */
  readonly agent: Option.Option<string>
}

/** The instruction the reviewers read: what this run is for, since no agent implemented it. */
export const reviewInstruction = (branch: string, base: string): string =>
  `Review branch ${branch}: its commits since ${base}. Nobody in this run wrote it; read it as its author's change.`

/** Set up the review run's record and worktree; the verification is driven after, by `VerifyDriver.drive`. */
export const createReviewRun = Effect.fn("ReviewRun.create")(function* (req: ReviewRequest) {
  const runs = yield* RunStore
  const home = yield* MagiHome
  const self = (yield* MagiConfig).hostName
  const refuse = (repo: string, why: string) => new ReviewNotStarted({ branch: req.branch, repo, why })
  const repo = yield* git(req.repoDir, "rev-parse", "--show-toplevel").pipe(
    Effect.mapError(() => refuse(req.repoDir, "it is not inside a git repository; give --repo DIR"))
  )
  const resolve = (name: string) =>
    git(repo, "rev-parse", "--verify", "--quiet", `refs/heads/${name}^{commit}`).pipe(Effect.option, Effect.map(Option.filter((s) => s !== "")))
  const head = yield* resolve(req.branch)
  if (Option.isNone(head)) {
    // display: the branch list only words the refusal
    const have = yield* git(repo, "for-each-ref", "--format=%(refname:short)", "refs/heads").pipe(Effect.orElseSucceed(() => ""))
    return yield* refuse(repo, `there is no branch ${req.branch} (have: ${have.split("\n").filter((b) => b !== "").join(", ") || "none"})`)
  }
  // fallback: a failed read of HEAD asks for --base rather than guess one
  const current = yield* git(repo, "symbolic-ref", "--quiet", "--short", "HEAD").pipe(Effect.orElseSucceed(() => ""))
  const base = Option.getOrElse(req.base, () => current)
  if (base === "") return yield* refuse(repo, "the checkout is on no branch to review it against; give --base BRANCH")
  if (base === req.branch) return yield* refuse(repo, `it is the branch checked out there, so it has no base to review it against; give --base BRANCH`)
  const baseCommit = yield* resolve(base)
  if (Option.isNone(baseCommit)) return yield* refuse(repo, `there is no base branch ${base}`)
  const roster = yield* Effect.flatMap(Rosters, (r) => r.forRepo(repo)).pipe(Effect.mapError((e) => refuse(repo, e.message)))
  const agent = Option.isSome(req.agent) ? roster.get(req.agent.value) : roster.first
  if (Option.isNone(agent))
    return yield* refuse(
      repo,
      Option.isSome(req.agent)
        ? `no agent \`${req.agent.value}\` in the roster (have: ${roster.agents.map((a) => a.id).join(", ") || "none"})`
        : "no agent to review with: configure [agents.<id>] in magi.toml, or put claude, codex, opencode or agy on PATH"
    )

  const at = new Date(yield* Clock.currentTimeMillis)
  const draw = Effect.map(Random.nextIntBetween(0, 0x10000), (n) => Q.makeId(at, n))
  let id = yield* draw
  while (Option.isSome(yield* Effect.option(runs.get(id))) || (yield* branchTaken(repo, Q.shortId(id)))) id = yield* draw
  const worktree = NodePath.join(home.dir, "worktrees", id)
  const branch = branchFor(id)
  yield* git(repo, "worktree", "add", "--quiet", "-b", branch, worktree, head.value).pipe(Effect.mapError((e) => refuse(repo, e.message)))
  const run: Run = {
    schema: RUN_SCHEMA,
    id,
    status: "running",
    instruction: reviewInstruction(req.branch, base),
    repo,
    base,
    base_commit: baseCommit.value,
    worktree,
    branch,
    seats: [{ key: IMPL_SEAT, agent: agent.value.id, turns: 0, session: null, write: true }],
    created_at: Q.timestamp(at),
    updated_at: Q.timestamp(at),
    summary: "",
    reason: "",
    host: self,
    reviewed: { branch: req.branch, head: head.value }
  }
  yield* runs.put(run).pipe(Effect.mapError((e) => refuse(repo, e.message)))
  return run
})
