/**
 * `magi fix ID -f R2-1-3 [-f …] [--reason "…"]`: the owner sends chosen
 * recorded findings of a verified run to its fixer, then magi reviews and
 * gates it again (`VerifyDriver.fixChosen`).
 */
import { Args, Command, Options } from "@effect/cli"
import { Effect, Option } from "effect"
import { runsLayer } from "../app/Layers.js"
import { RunStore } from "../runs/Runs.js"
import * as VerifyConfig from "../verify/VerifyConfig.js"
import { VerifyDriver } from "../verify/VerifyDriver.js"
import { CliFailure } from "./CliFailure.js"
import type { HelpExtras } from "./Help.js"
import { writeErr } from "./io.js"
import { reportEnd } from "./run.js"

const refused = (e: { readonly message: string }) => CliFailure.refused(e.message)

export const fix = Command.make(
  "fix",
  {
    id: Args.text({ name: "id" }).pipe(Args.withDescription("the run's id or short id (magi show ID lists its findings)")),
    finding: Options.text("finding").pipe(
      Options.withAlias("f"),
      Options.withPseudoName("FINDING"),
      Options.withDescription("a recorded finding's id, as magi show prints it (R2-1-3); repeat for several"),
      Options.repeated
    ),
    reason: Options.text("reason").pipe(
      Options.withPseudoName("TEXT"),
      Options.withDescription("why these are to be fixed, for the fixer to read"),
      Options.optional
    )
  },
  (o) =>
    Effect.gen(function* () {
      if (o.finding.length === 0) return yield* CliFailure.usage("magi fix needs the findings to fix: magi fix ID -f R1-1-1 [-f …] (magi show ID lists them)")
      const run = yield* Effect.flatMap(RunStore, (r) => r.get(o.id)).pipe(Effect.mapError(refused))
      const settings = yield* VerifyConfig.load(run.repo).pipe(Effect.mapError(refused))
      yield* writeErr(`run ${o.id}: sending ${o.finding.join(", ")} to the fixer, then reviewing again\n`)
      const ended = yield* Effect.flatMap(VerifyDriver, (d) => d.fixChosen(run.id, o.finding, Option.getOrUndefined(o.reason), settings)).pipe(
        Effect.catchTag("SeatBusy", (e) => Effect.fail(CliFailure.refused(`${e.message}; wait for it to end`))),
        Effect.mapError((e) => (e instanceof CliFailure ? e : refused(e)))
      )
      return yield* reportEnd(ended)
    }).pipe(Effect.provide(runsLayer()))
).pipe(Command.withDescription("Send chosen recorded findings of a run to its fixer, then review and gate it again"))

export const fixHelp: HelpExtras = {
  usage: ['magi fix ID -f FINDING [-f FINDING…] [--reason "TEXT"]'],
  examples: [
    ["magi fix ab12 -f R2-1-3", "have the fixer answer R2-1-3, then a fresh review round and the gate"],
    ['magi fix ab12 -f R1-1-2 -f R1-2-1 --reason "the nits matter here"', "several findings, with the owner's words"]
  ]
}
