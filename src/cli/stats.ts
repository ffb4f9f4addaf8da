/**
 * `magi stats [--json]`: what the competitions so far say about each agent
 * (`graph/Stats.ts`, pure over the run records): candidacies, wins, mean
 * rank, cost and time per candidacy; how often each judge's first choice
 * won; each reviewer's precision and what end to end and the gate caught.
 */
import { Command, Options } from "@effect/cli"
import { Effect } from "effect"
import { runListingLayer } from "../app/Layers.js"
import { describeStats, statsOf } from "../graph/Stats.js"
import { forTerminalLine } from "../platform/TerminalText.js"
import { RunStore } from "../runs/Runs.js"
import { CliFailure } from "./CliFailure.js"
import { writeOut } from "./io.js"

export const stats = Command.make(
  "stats",
  { json: Options.boolean("json").pipe(Options.withDescription("the figures as JSON")) },
  ({ json }) =>
    Effect.gen(function* () {
      // A store that cannot be listed is said so, never shown as "no competition yet".
      const runs = yield* Effect.flatMap(RunStore, (r) => r.list).pipe(Effect.mapError((e) => CliFailure.refused(e.message)))
      const s = statsOf(runs)
      // Agent ids come from the owner's config, yet are printed as any untrusted line is.
      yield* writeOut(json ? JSON.stringify(s, null, 2) + "\n" : describeStats(s).map(forTerminalLine).join("\n") + "\n")
    }).pipe(Effect.provide(runListingLayer()))
).pipe(Command.withDescription("Per agent: candidacies, wins, win rate, mean rank, cost and time per candidacy; judges' and reviewers' records"))
