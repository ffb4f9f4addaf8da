/**
 * `magi review BRANCH`: only the verification's steps (sync, review rounds,
 * fix, gate) on a branch that already exists, as a run record of its own.
 * The branch is never rewritten or deleted: the run works on its own copy
 * (`verify/ReviewRun.ts`).
 */
import { Args, Command, Options } from "@effect/cli"
import { Effect, Option } from "effect"
import { runsLayer } from "../app/Layers.js"
import * as Q from "../questions/Question.js"
import { createReviewRun } from "../verify/ReviewRun.js"
import * as VerifyConfig from "../verify/VerifyConfig.js"
import { VerifyDriver } from "../verify/VerifyDriver.js"
import { CliFailure } from "./CliFailure.js"
import type { HelpExtras } from "./Help.js"
import { writeErr } from "./io.js"
import { reportEnd } from "./run.js"

const refused = (e: { readonly message: string }) => CliFailure.refused(e.message)

export const review = Command.make(
  "review",
  {
    branch: Args.text({ name: "branch" }).pipe(Args.withDescription("the existing branch to sync, review, fix and gate (it is left as it is)")),
    repo: Options.directory("repo").pipe(
      Options.withPseudoName("DIR"),
      Options.withDescription("the repository the branch is in (default: the current directory)"),
      Options.optional
    ),
    base: Options.text("base").pipe(
      Options.withPseudoName("BRANCH"),
      Options.withDescription("the branch to sync onto and review against (default: the one checked out)"),
      Options.optional
    ),
    agent: Options.text("agent").pipe(
      Options.withPseudoName("AGENT"),
      Options.withDescription("roster id of the agent that fixes and resolves conflicts (default: the first)"),
      Options.optional
    )
  },
  (o) =>
    Effect.gen(function* () {
      const run = yield* createReviewRun({
        branch: o.branch,
        repoDir: Option.getOrElse(o.repo, () => process.cwd()),
        base: o.base,
        agent: o.agent
      }).pipe(Effect.mapError(refused))
      yield* writeErr(`run ${Q.shortId(run.id)}: reviewing ${o.branch} against ${run.base} on its own copy ${run.branch} (${o.branch} is left as it is)\n`)
      const settings = yield* VerifyConfig.load(run.repo).pipe(Effect.mapError(refused))
      const ended = yield* Effect.flatMap(VerifyDriver, (d) => d.drive(run.id, settings)).pipe(
        Effect.catchTag("SeatBusy", (e) => Effect.fail(CliFailure.refused(`${e.message}; wait for it to end`))),
        Effect.mapError((e) => (e instanceof CliFailure ? e : refused(e)))
      )
      return yield* reportEnd(ended)
    }).pipe(Effect.provide(runsLayer()))
).pipe(Command.withDescription("Sync, review, fix and gate an existing branch, as a run of its own (the branch itself is never rewritten)"))

export const reviewHelp: HelpExtras = {
  usage: ["magi review BRANCH [--repo DIR] [--base BRANCH] [--agent AGENT]"],
  examples: [
    ["magi review feature/login", "review feature/login against the checked-out branch; fixes land on the run's own copy"],
    ["magi review wip --base main --repo ~/src/app", "another repository, against main"]
  ]
}
