/**
 * Filing a `ready` run's follow-ups (`verify/FollowUps.ts`) as tasks. Each
 * task's source names the run and the finding, so filing again (after a
 * kill mid-way, or from a second process that saw the same ending) files
 * only what is missing. A task list that cannot be read stops the filing:
 * it is never taken for "no tasks yet".
 */
import { Effect, Option } from "effect"
import * as Q from "../questions/Question.js"
import type { Run } from "../runs/Runs.js"
import { findingOfNode, followUps, MAX_GENERATIONS, nodeOf } from "../verify/FollowUps.js"
import { fileWork } from "./Filing.js"
import type { Task } from "./Task.js"
import { TaskStore } from "./TaskStore.js"

const followUpOf = (t: Task): { readonly run: string; readonly finding: string } | undefined => {
  if (t.source.kind !== "agent") return undefined
  const finding = findingOfNode(t.source.node)
  return finding === undefined ? undefined : { run: t.source.run, finding }
}

/** How many follow-ups deep `runId`'s task is: 0 for the owner's own work. */
const generationOf = (runId: string) =>
  Effect.gen(function* () {
    const tasks = yield* TaskStore
    let depth = 0
    let at = runId
    while (depth <= MAX_GENERATIONS) {
      const task = yield* tasks.ofRun(at)
      const from = Option.isSome(task) ? followUpOf(task.value) : undefined
      if (from === undefined) return depth
      depth++
      at = from.run
    }
    return depth
  })

/** File the follow-ups of `run` (ended `ready`) not filed yet; the tasks filed now. */
export const fileFollowUps = Effect.fn("fileFollowUps")(function* (run: Run) {
  if (run.status !== "ready" || run.verification === undefined) return []
  const tasks = yield* TaskStore
  const all = yield* tasks.list
  const filed = all.flatMap((t) => {
    const from = followUpOf(t)
    return from !== undefined && from.run === run.id ? [from.finding] : []
  })
  const known = { openTitles: all.filter((t) => t.status !== "done").map((t) => t.title), filed, generation: yield* generationOf(run.id) }
  const out: Array<Task> = []
  for (const f of followUps({ short: Q.shortId(run.id), branch: run.branch }, run.verification, known))
    out.push(
      yield* fileWork({
        instruction: f.instruction,
        title: f.title,
        repo: run.repo,
        relativeFolders: false,
        source: { kind: "agent", run: run.id, node: nodeOf(f.finding) }
      })
    )
  return out
})
