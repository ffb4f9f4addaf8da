/**
 * `magi web`: the page the owner answers from, usually on a phone.
 *
 * Prints the URL on stdout (the one line a script would capture into
 * `MAGI_WEB_URL`) and runs until SIGINT or SIGTERM. Unless told `--no-loop`
 * it also runs the waiter in-process, so one command is enough for an answer
 * to reach an agent whose `magi ask` is gone.
 */
import { Command, Options } from "@effect/cli"
import * as LocalContext from "../platform/LocalContext.js"
import { Effect, Layer, Option, Ref } from "effect"
import { MagiConfig } from "../platform/MagiConfig.js"
import { MagiHome } from "../platform/MagiHome.js"
import { QuestionStore } from "../questions/QuestionStore.js"
import { serve } from "../web/WebServer.js"
import { CliFailure } from "./CliFailure.js"
import { writeErr, writeOut } from "./io.js"
import { inProcessWaiter } from "./InProcessWaiter.js"
import { shelveLoop } from "../store/Shelving.js"
import { RunStore } from "../runs/Runs.js"
import { TaskStore } from "../queue/TaskStore.js"
import { receivedSignal } from "./Signals.js"

export const DEFAULT_PORT = 7878

export interface WebRun {
  readonly bind: string
  readonly port: number
  readonly home: Option.Option<string>
  /** Run the waiter in this process too (`magi web` without `--no-loop`). */
  readonly loop: boolean
}

const homeLayer = (home: Option.Option<string>) => Option.match(home, { onNone: () => MagiHome.fromEnv, onSome: MagiHome.at })

/**
 * The store, on the backend the config names (`[store] url`); a broken
 * `magi.toml` in whatever directory the server was started from is warned
 * about and otherwise ignored, since it must not keep the owner from
 * answering.
 */
const storeLayer = (home: Layer.Layer<MagiHome>) =>
  QuestionStore.layer.pipe(
    Layer.provideMerge(Layer.merge(home, MagiConfig.fromFilesOrDefaults(process.cwd(), "serving the page"))),
    Layer.provideMerge(LocalContext.layer)
  )

/** Serve until interrupted. */
export const runWeb = (options: WebRun) => {
  const home = homeLayer(options.home)
  // The address once the page is up, for the line said on the way out.
  const served = Ref.unsafeMake(Option.none<string>())
  return Effect.scoped(
    Effect.gen(function* () {
      const running = yield* serve({ bind: options.bind, port: options.port }).pipe(
        Effect.mapError((e) => CliFailure.refused(e.message))
      )
      yield* Ref.set(served, Option.some(running.url))
      if (Option.isSome(running.warning)) yield* Effect.logWarning(running.warning.value)
      const store = yield* QuestionStore
      yield* writeErr(
        `magi web: serving the questions in ${store.where} at ${running.url}\n` +
          `magi web: export MAGI_WEB_URL=${running.url} so notifications link here\n`
      )
      yield* writeOut(`${running.url}\n`)
      // Started once the page is up, so nothing the waiter does can delay it;
      // interrupted with the scope, which lets go of the home on the way out.
      if (options.loop) yield* Effect.forkScoped(inProcessWaiter(home))
      // Settled questions, finished runs and done tasks to their month's shelf: now (the migration of an
      // older home) and every few minutes; the page is up already.
      yield* Effect.forkScoped(shelveLoop.pipe(Effect.provide(Layer.merge(RunStore.layer, TaskStore.layer))))
      return yield* Effect.never
    })
  ).pipe(
    // Said once everything is closed: a terminal that went quiet would
    // otherwise leave the owner wondering whether the page still answers.
    Effect.onInterrupt(() =>
      Effect.flatMap(Ref.get(served), (url) =>
        Option.match(url, {
          onNone: () => Effect.void,
          onSome: (at) => writeErr(`magi web: stopped${signalWords()}; ${at} no longer answers\n`).pipe(Effect.ignore)
        })
      )
    ),
    Effect.provide(storeLayer(home))
  )
}

const signalWords = () => {
  const signal = receivedSignal()
  return signal === undefined ? "" : ` by ${signal}`
}

const options = {
  bind: Options.text("bind").pipe(
    Options.withDescription(
      "`auto` (this machine's Tailscale address, else 127.0.0.1 with a warning) or an IP address; never 0.0.0.0 unless you say so"
    ),
    Options.withDefault("auto")
  ),
  port: Options.integer("port").pipe(
    Options.withDescription("port to listen on; 0 picks a free one"),
    Options.withDefault(DEFAULT_PORT)
  ),
  home: Options.directory("home").pipe(
    Options.withDescription("magi's state directory (default: MAGI_HOME, else the platform's data dir)"),
    Options.optional
  ),
  noLoop: Options.boolean("no-loop").pipe(
    Options.withDescription("serve the page only; leave delivering answers to a `magi serve` running elsewhere")
  )
}

export const web = Command.make("web", options, (o) => {
  if (o.port < 0 || o.port > 65535) return Effect.fail(CliFailure.usage(`--port must be 0-65535, not ${o.port}`))
  return runWeb({ bind: o.bind, port: o.port, home: o.home, loop: !o.noLoop })
}).pipe(Command.withDescription("Serve the phone page and HTTP API for answering questions, and run the waiter unless --no-loop"))
