/**
 * `magi land ID`: the landing steps of a `ready` run, now (`docs/landing.md`).
 * With the approval on, it files the merge question and waits for the
 * answer, polling the question on a `Schedule`; interrupted, the question
 * stays filed and `magi land ID` again picks the same one up.
 */
import { Args, Command } from "@effect/cli"
import { Duration, Effect, Layer, Schedule } from "effect"
import * as GitHubForge from "../land/GitHubForge.js"
import { LandDriver } from "../land/LandDriver.js"
import * as L from "../runs/Landing.js"
import * as Q from "../questions/Question.js"
import type { Run } from "../runs/Runs.js"
import { CliFailure } from "./CliFailure.js"
import { writeOut } from "./io.js"
import { runsLayer } from "../app/Layers.js"

/** How often the waiting command looks at the approval question. */
const POLL = Schedule.identity<Run>().pipe(Schedule.addDelay(() => Duration.seconds(2)))

const waitingOnOwner = (run: Run) => run.status === "ready" && L.waitsOnOwner(run.landing)

export const land = Command.make(
  "land",
  { id: Args.text({ name: "id" }).pipe(Args.withDescription("the ready run's id or short id")) },
  ({ id }) =>
    Effect.gen(function* () {
      const driver = yield* LandDriver
      const first = yield* driver.drive(id).pipe(Effect.mapError((e) => CliFailure.refused(e.message)))
      if (waitingOnOwner(first))
        yield* writeOut(
          `run ${Q.shortId(first.id)}: asked the owner to approve the merge (question ${Q.shortId(first.landing!.question!)}); waiting for the answer\n`
        )
      const run = waitingOnOwner(first)
        ? yield* driver.drive(id).pipe(
          Effect.mapError((e) => CliFailure.refused(e.message)),
          Effect.repeat({ schedule: POLL, while: waitingOnOwner })
        )
        : first
      if (run.status === "merged") return yield* writeOut(`run ${Q.shortId(run.id)}: ${run.reason}\n`)
      return yield* CliFailure.refused(`run ${Q.shortId(run.id)} did not land: ${run.landing?.stopped || run.reason || run.status}`)
    }).pipe(Effect.provide(LandDriver.Default.pipe(Layer.provide(GitHubForge.layerConfigured()), Layer.provideMerge(runsLayer()))))
).pipe(Command.withDescription("Land a ready run now: the merge approval, then the merge ([graph] merge)"))
