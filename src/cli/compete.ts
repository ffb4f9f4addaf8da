/**
 * `magi fold` and `magi pick`: what the owner does to a competition after
 * the panel. Fold removes a finished competition's losing candidates'
 * worktrees and branches and its judges' worktrees; pick makes another
 * viable candidate the winner, recorded as the owner's choice beside the
 * panel's.
 */
import { Args, Command, Options } from "@effect/cli"
import { Effect, Option } from "effect"
import { CompetitionDriver } from "../graph/CompetitionDriver.js"
import * as Q from "../questions/Question.js"
import { resumable } from "../runs/RunStatus.js"
import { RunStore, type Run } from "../runs/Runs.js"
import { CliFailure } from "./CliFailure.js"
import type { HelpExtras } from "./Help.js"
import { writeOut } from "./io.js"
import { runsLayer } from "../app/Layers.js"

const refused = (e: { readonly message: string }) => CliFailure.refused(e.message)

/** Why `run` cannot be folded now, or undefined when it can. */
const notFoldable = (run: Run): string | undefined =>
  run.competition === undefined
    ? `run ${Q.shortId(run.id)} is not a competition; magi run rm ${Q.shortId(run.id)} removes a single-seat run's worktree and branch`
    : resumable(run.status)
    ? `run ${Q.shortId(run.id)} is ${run.status} and can still go on; fold it once it is finished`
    : undefined

export const fold = Command.make(
  "fold",
  {
    id: Args.text({ name: "id" }).pipe(Args.withDescription("the competition's run id or short id"), Args.optional),
    all: Options.boolean("all").pipe(Options.withDescription("every finished competition not folded yet"))
  },
  ({ all, id }) =>
    Effect.gen(function* () {
      const runs = yield* RunStore
      const competition = yield* CompetitionDriver
      if (all === Option.isSome(id)) return yield* CliFailure.usage("magi fold takes a run's id, or --all")
      const targets = Option.isSome(id)
        ? [yield* runs.get(id.value).pipe(Effect.mapError(refused))]
        : (yield* runs.list.pipe(Effect.mapError(refused))).filter((r) =>
          r.competition !== undefined && r.competition.folded_at === undefined && notFoldable(r) === undefined
        )
      if (Option.isSome(id)) {
        const why = notFoldable(targets[0]!)
        if (why !== undefined) return yield* CliFailure.refused(why)
      }
      if (targets.length === 0) return yield* writeOut("no finished competition left to fold\n")
      for (const run of targets) {
        yield* competition.foldNow(run.id).pipe(Effect.mapError(refused))
        yield* writeOut(
          `folded run ${Q.shortId(run.id)}: ${
            run.competition?.winner === null ? "every candidate's" : "the losing candidates'"
          } worktrees and branches and the judges' worktrees are removed\n`
        )
      }
    }).pipe(Effect.provide(runsLayer()))
).pipe(Command.withDescription("Remove a finished competition's losing candidates (worktrees, branches) and judges' worktrees"))

export const pick = Command.make(
  "pick",
  {
    id: Args.text({ name: "id" }).pipe(Args.withDescription("the competition's run id or short id")),
    label: Args.text({ name: "label" }).pipe(Args.withDescription("the candidate to make the winner (A, B, …)"))
  },
  ({ id, label }) =>
    Effect.gen(function* () {
      const runs = yield* RunStore
      const run = yield* runs.get(id).pipe(Effect.mapError(refused))
      if (run.competition === undefined) return yield* CliFailure.refused(`run ${Q.shortId(run.id)} is not a competition: it has one candidate`)
      if (run.competition.step !== "elected")
        return yield* CliFailure.refused(`run ${Q.shortId(run.id)} has not elected a winner yet (it is at ${run.competition.step}); pick once it has`)
      const after = yield* Effect.flatMap(CompetitionDriver, (c) => c.pick(run.id, label)).pipe(Effect.mapError(refused))
      yield* writeOut(`run ${Q.shortId(run.id)}: the owner picked ${after.competition?.winner}; its work is on branch ${after.branch}\n`)
    }).pipe(Effect.provide(runsLayer()))
).pipe(Command.withDescription("Make another viable candidate of a competition the winner (recorded beside the panel's choice)"))

export const foldHelp: HelpExtras = {
  examples: [
    ["magi fold ab12", "remove run ab12's losers and judges' worktrees"],
    ["magi fold --all", "every finished competition not folded yet"]
  ]
}

export const pickHelp: HelpExtras = {
  examples: [["magi pick ab12 B", "candidate B wins run ab12, whatever the panel elected"]]
}
