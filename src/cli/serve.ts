/**
 * `magi serve`: the daemon. Runs the waiter until SIGINT or SIGTERM, so an
 * owner's answer reaches the agent seat that asked even after the agent's
 * `magi ask` process is gone.
 */
import { Command, Options } from "@effect/cli"
import { Effect, Layer, Option } from "effect"
import * as Daemon from "../daemon/Daemon.js"
import { MagiHome } from "../platform/MagiHome.js"
import { Notices } from "../daemon/Notices.js"
import { Waiter } from "../daemon/Waiter.js"
import { CliFailure } from "./CliFailure.js"
import { runsLayer } from "./RunLayer.js"
import { writeErr } from "./io.js"

/** The waiter and everything it drives, over `home`. */
export const waiterLayer = (home: Layer.Layer<MagiHome>) =>
  Waiter.layer.pipe(Layer.provideMerge(Notices.layer), Layer.provideMerge(runsLayer(home)))

/**
 * Own the home and run the waiter until interrupted; fails with `HomeTaken`
 * when another loop owns it, or takes it over later (this one was paused past
 * the heartbeat's staleness), which stops the waiter. What `magi web` runs in-process unless told
 * `--no-loop`: provide `waiterLayer(home)` around it. `banner` is the line
 * printed once the home is owned, in the words of the command running it.
 */
export const waiterLoop = (banner: (home: string) => string) =>
  Effect.scoped(
    Effect.gen(function* () {
      const home = yield* MagiHome
      const owned = yield* Daemon.own(home.dir)
      const waiter = yield* Waiter
      yield* writeErr(banner(home.dir))
      return yield* Effect.raceFirst(waiter.run, owned.lost)
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
    waiterLoop((dir) => `magi serve: waiting on the questions in ${dir} (pid ${process.pid}); Ctrl-C stops\n`).pipe(
      Effect.mapError((e) => CliFailure.refused(e.message)),
      Effect.provide(waiterLayer(Option.match(home, { onNone: () => MagiHome.fromEnv, onSome: MagiHome.at })))
    )
).pipe(Command.withDescription("Run the daemon: carry the owner's answers to agents whose `magi ask` is gone"))
