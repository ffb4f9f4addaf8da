/**
 * `magi serve`: the daemon. Until SIGINT or SIGTERM it runs the waiter, so an
 * owner's answer reaches the agent seat that asked even after the agent's
 * `magi ask` process is gone, and the queue's loop, which works filed tasks
 * one after another.
 */
import { Command, Options } from "@effect/cli"
import { Effect, Layer, Option, Queue } from "effect"
import * as Daemon from "../daemon/Daemon.js"
import { MagiHome } from "../platform/MagiHome.js"
import { Notices } from "../daemon/Notices.js"
import { Waiter } from "../daemon/Waiter.js"
import { QueueLoop, type QueueLoopOptions } from "../daemon/QueueLoop.js"
import { Conductor } from "../daemon/Conductor.js"
import { Deputies } from "../daemon/Deputies.js"
import { CliFailure } from "./CliFailure.js"
import { runsLayer } from "./RunLayer.js"
import { writeErr } from "./io.js"
import { firstMoveSaid, shelveLoop } from "../app/Shelving.js"
import { Hosts } from "../platform/Hosts.js"
import { TurnSlots } from "../agents/TurnSlots.js"

/** The waiter, the queue's loop and everything they drive, over `home`. */
export const waiterLayer = (home: Layer.Layer<MagiHome>, queue: QueueLoopOptions = {}, conductor: { readonly disabled?: boolean } = {}) =>
  Layer.mergeAll(
    Waiter.layer,
    QueueLoop.layer(queue).pipe(
      Layer.provide(
        conductor.disabled === true
          ? Conductor.off
          : Layer.merge(Conductor.layer({ maxAttempts: queue.maxAttempts }), Deputies.layer)
      )
    )
  ).pipe(Layer.provideMerge(Notices.layer), Layer.provideMerge(runsLayer(home)))

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
      const queue = yield* QueueLoop
      const owned = yield* Daemon.own(home.dir, queue.status)
      // The host's name, claimed on the store every host shares: a second
      // loop calling itself this host is refused here, before it resumes a
      // seat or takes a task.
      const slots = yield* TurnSlots
      const host = yield* (yield* Hosts).register(
        Effect.map(slots.load, (l) => ({ turns: l.running, queued: l.queued, waiting: l.waiting }))
      )
      // A turn queued or started is on the host's record at once, so the
      // page says "queued behind N turns" without waiting for the next beat.
      yield* Effect.forkScoped(Effect.forever(Effect.zipRight(Queue.take(slots.changed), host.refresh)))
      const waiter = yield* Waiter
      yield* writeErr(banner(home.dir))
      // One beat: the waiter first (an answer that unblocks or finishes a
      // task is delivered before the queue looks), then the queue. The
      // waiter's own loop paces it: at once when an answer lands or an
      // asker lets go, else every `TICK`. A fixed five-second beat here
      // left every answer waiting for the next one (2.5 s on average, 3.2 s
      // median measured, where the waiter's wake-up takes milliseconds).
      const queueTurn = Effect.gen(function* () {
        if ((yield* queue.tick).length > 0) yield* owned.refresh
      })
      // The first to end, failure included: losing the home or the host name stops the loop.
      return yield* Effect.raceFirst(waiter.beats(queueTurn), Effect.raceFirst(owned.lost, host.lost))
    })
  )

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
      const loop = waiterLoop(
        (dir) => `magi serve: waiting on the questions and working the queue in ${dir} (pid ${process.pid}); Ctrl-C stops\n`
      )
      // Settled records move to their month's shelf beside the loop (see
      // `Shelving`). On a home written before the shelves, the first move
      // comes before the loop: the waiter's and the queue's listings of a
      // flat folder of 100,000 settled questions, re-read while the move
      // renamed them away, held 470 MB after the move against 126 MB for a
      // serve started on the moved home. Answers wait for it, once.
      const moved = firstMoveSaid((line) => writeErr(line).pipe(Effect.ignore))
      return yield* Effect.scoped(Effect.zipRight(moved, Effect.zipRight(Effect.forkScoped(shelveLoop), loop))).pipe(
        Effect.mapError((e) => CliFailure.refused(e.message)),
        Effect.provide(
          waiterLayer(Option.match(home, { onNone: () => MagiHome.fromEnv, onSome: MagiHome.owned }), {
            maxAttempts: Option.getOrUndefined(maxAttempts),
            announce: (event) => writeErr(`magi serve: ${event.line}\n`)
          }, { disabled: noConductor })
        )
      )
    })
).pipe(Command.withDescription("Run the daemon: carry the owner's answers to agents whose `magi ask` is gone, and work the task queue"))
