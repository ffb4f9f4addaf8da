/**
 * `magi run rm`: take a finished run's worktree and branch away, keeping its
 * record (marked `removed_at`) as history, so its questions and artifacts
 * still say which run they came from.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import { Clock, Data, Effect, Option } from "effect"
import * as Q from "../questions/Question.js"
import { resumable } from "./RunStatus.js"
import { RunDriver } from "./RunDriver.js"
import { RunStore, type Run } from "./Runs.js"
import { git } from "./Worktree.js"

export class RunNotRemoved extends Data.TaggedError("RunNotRemoved")<{ readonly message: string }> {}

/**
 * Why `run` may not be removed now, if it may not: its worktree is where a
 * live or resumable run works, and removing it would strand the agent (and
 * any answer on its way to it).
 */
export const removalRefusal = (run: Run, turnRunning: boolean): string | undefined => {
  if (run.removed_at !== undefined) return `run ${run.id} was already removed (${run.removed_at})`
  if (turnRunning) return `run ${run.id} has a turn running right now; wait for it to end`
  if (resumable(run.status))
    return `run ${run.id} is ${run.status}, so it may still go on in its worktree; only a done, failed or superseded run is removed`
  return undefined
}

/** Remove run `wanted`'s worktree and branch; what was done, a line each. */
export const removeRun = Effect.fn("removeRun")(function* (wanted: string) {
  const runs = yield* RunStore
  const fs = yield* FileSystem.FileSystem
  const driver = yield* RunDriver
  const refuse = (message: string) => new RunNotRemoved({ message })
  const run = yield* runs.get(wanted).pipe(Effect.mapError((e) => refuse(e.message)))
  let busy = false
  for (const seat of run.seats) busy ||= yield* driver.seatBusy(run, seat.key)
  const why = removalRefusal(run, busy)
  if (why !== undefined) return yield* refuse(why)

  const said: string[] = []
  const failed = (e: { readonly message: string }) => refuse(`${e.message}; nothing else was removed`)
  // fallback: a worktree that cannot be looked at is taken as there, so it is removed through git
  if (yield* fs.exists(run.worktree).pipe(Effect.orElseSucceed(() => true))) {
    // Work the agent left uncommitted would go with the folder: never silently.
    const dirty = yield* git(run.worktree, "status", "--porcelain").pipe(Effect.mapError(failed))
    if (dirty !== "")
      return yield* refuse(
        `run ${run.id}'s worktree ${run.worktree} has uncommitted changes (${dirty.split("\n").length} path(s)); ` +
          `commit or discard them first (git -C ${run.worktree} status)`
      )
    yield* git(run.repo, "worktree", "remove", run.worktree).pipe(Effect.mapError(failed))
    said.push(`removed worktree ${run.worktree}`)
  } else {
    // Deleted by hand: git still lists it until pruned.
    // fallback: best-effort prune of git's worktree list
    yield* git(run.repo, "worktree", "prune").pipe(Effect.ignore)
    said.push(`worktree ${run.worktree} was already gone`)
  }
  const tip = yield* git(run.repo, "rev-parse", "--verify", "--quiet", `refs/heads/${run.branch}`).pipe(Effect.option)
  if (Option.isSome(tip)) {
    yield* git(run.repo, "branch", "-D", run.branch).pipe(Effect.mapError(failed))
    // Like git itself: the commit, so a branch removed by mistake can be had back.
    said.push(`deleted branch ${run.branch} (was ${tip.value.slice(0, 12)}; \`git -C ${run.repo} branch ${run.branch} ${tip.value}\` brings it back)`)
  } else said.push(`branch ${run.branch} was already gone`)

  const at = Q.timestamp(new Date(yield* Clock.currentTimeMillis))
  const updated = yield* runs
    .update(run.id, (r) => ({ ...r, removed_at: at }), { keepUpdatedAt: true })
    .pipe(Effect.mapError((e) => refuse(e.message)))
  said.push(`kept run ${run.id}'s record, marked removed (magi show ${Q.shortId(run.id)} still shows it)`)
  return { run: updated, said }
})
