/** `magi notify --test`: run the notification command once, and say what happened. */
import { Command, Options } from "@effect/cli"
import { Clock, Effect } from "effect"
import * as Q from "../questions/Question.js"
import { MagiConfig, userConfigFile } from "../platform/MagiConfig.js"
import { Notifier, notConfigured } from "../questions/Notifier.js"
import { CliFailure } from "./CliFailure.js"
import { questionsLayer } from "../app/Layers.js"
import { writeOut } from "./io.js"

export const notify = Command.make(
  "notify",
  { test: Options.boolean("test").pipe(Options.withDescription("send a sample notification now")) },
  ({ test }) =>
    Effect.gen(function* () {
      if (!test) return yield* CliFailure.usage("magi notify only has --test for now: magi notify --test")
      const notifier = yield* Notifier
      const config = yield* MagiConfig
      if (!notifier.configured) {
        const read = config.files.length > 0 ? config.files.join(", ") : "none found"
        // Nothing was sent: a check that sends nothing has failed.
        return yield* CliFailure.refused(`${notConfigured(yield* userConfigFile)} (config files read: ${read})`)
      }
      const sample = Q.make({
        id: Q.makeId(new Date(yield* Clock.currentTimeMillis), 0xbeef),
        run: "test-run",
        node: "notify",
        seat: "operator",
        summary: "magi test notification: if you see this, notifications work",
        detail: "",
        choices: [],
        now: new Date(yield* Clock.currentTimeMillis)
      })
      for (const channel of notifier.channels) yield* writeOut(`notifying: ${channel}\n`)
      yield* notifier.notify(sample).pipe(Effect.mapError((e) => CliFailure.refused(e.message)))
      yield* writeOut("the notification went out\n")
    }).pipe(Effect.provide(questionsLayer()))
).pipe(Command.withDescription("Check the notification command"))
