/**
 * `magi serve`: the daemon. Runs the waiter until SIGINT or SIGTERM, so an
 * owner's answer reaches the agent seat that asked even after the agent's
 * `magi ask` process is gone.
 */
import { Command, Options } from "@effect/cli"
import { Effect, Layer, Option } from "effect"
import * as Daemon from "../Daemon.js"
import { MagiHome } from "../MagiHome.js"
import { Notices } from "../Notices.js"
import { Waiter } from "../Waiter.js"
import { CliFailure } from "./CliFailure.js"
import { runsLayer } from "./RunLayer.js"
import { writeErr } from "./io.js"

/** The waiter and everything it drives, over `home`. */
export const waiterLayer = (home: Layer.Layer<MagiHome>) =>
  Waiter.layer.pipe(Layer.provideMerge(Notices.layer), Layer.provideMerge(runsLayer(home)))

/**
 * Own the home and run the waiter until interrupted. What `magi web` runs
 * in-process unless told `--no-loop`: provide `waiterLayer(home)` around it.
 */
export const waiterLoop = Effect.scoped(
  Effect.gen(function* () {
    const home = yield* MagiHome
    yield* Daemon.own(home.dir).pipe(Effect.mapError((e) => CliFailure.refused(e.message)))
    const waiter = yield* Waiter
    yield* writeErr(`magi serve: waiting on the questions in ${home.dir} (pid ${process.pid}); Ctrl-C stops\n`)
    return yield* waiter.run
  })
)

export const serve = Command.make(
  "serve",
  {
    home: Options.directory("home").pipe(
      Options.withDescription("magi's state directory (default: MAGI_HOME, else the platform's data dir)"),
      Options.optional
    )
  },
  ({ home }) =>
    waiterLoop.pipe(Effect.provide(waiterLayer(Option.match(home, { onNone: () => MagiHome.fromEnv, onSome: MagiHome.at }))))
).pipe(Command.withDescription("Run the daemon: carry the owner's answers to agents whose `magi ask` is gone"))
