/**
 * `magi serve`: the daemon. Until SIGINT or SIGTERM it runs the waiter, so an
 * owner's answer reaches the agent seat that asked even after the agent's
 * `magi ask` process is gone, and the queue's loop, which works filed tasks
 * one after another.
 */
import { Command, Options } from "@effect/cli"
import { Effect, Option } from "effect"
import { CliFailure } from "./CliFailure.js"
import { writeErr } from "./io.js"
import { homeLayer, waiterLayer } from "../app/Layers.js"
import { waiterLoop } from "../app/WaiterLoop.js"
import { firstMoveSaid, shelveLoop } from "../app/Shelving.js"

export const serve = Command.make(
  "serve",
  {
    home: Options.directory("home").pipe(
      Options.withPseudoName("DIR"),
      Options.withDescription("magi's state directory (default: MAGI_HOME, else the platform's data dir)"),
      Options.optional
    ),
    maxAttempts: Options.integer("max-attempts").pipe(
      Options.withPseudoName("N"),
      Options.withDescription("failed runs before a task is held for you (default: [daemon] max_attempts, else 2)"),
      Options.optional
    ),
    noConductor: Options.boolean("no-conductor").pipe(
      Options.withDescription("leave the queue in priority order even when [roles] conductor names an agent")
    )
  },
  ({ home, maxAttempts, noConductor }) =>
    Effect.gen(function* () {
      if (Option.isSome(maxAttempts) && maxAttempts.value < 1)
        return yield* CliFailure.usage(`--max-attempts must be a whole number above 0, not ${maxAttempts.value}`)
      const loop = waiterLoop((dir) => writeErr(`magi serve: waiting on the questions and working the queue in ${dir} (pid ${process.pid}); Ctrl-C stops\n`))
      // Settled records move to their month's shelf beside the loop (see
      // `Shelving`). On a home written before the shelves, the first move
      // comes before the loop: the waiter's and the queue's listings of a
      // flat folder of 100,000 settled questions, re-read while the move
      // renamed them away, held 470 MB after the move against 126 MB for a
      // serve started on the moved home. Answers wait for it, once.
      // display: a line on stderr that cannot be written changes nothing
      const moved = firstMoveSaid((line) => writeErr(line).pipe(Effect.ignore))
      return yield* Effect.scoped(Effect.zipRight(moved, Effect.zipRight(Effect.forkScoped(shelveLoop), loop))).pipe(
        Effect.mapError((e) => CliFailure.refused(e.message)),
        Effect.provide(
          waiterLayer(homeLayer(home), {
            maxAttempts: Option.getOrUndefined(maxAttempts),
            announce: (event) => writeErr(`magi serve: ${event.line}\n`)
          }, { disabled: noConductor })
        )
      )
    })
).pipe(Command.withDescription("Run the daemon: carry the owner's answers to agents whose `magi ask` is gone, and work the task queue"))
