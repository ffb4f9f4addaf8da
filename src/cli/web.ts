/**
 * `magi web`: the page the owner answers from, usually on a phone.
 *
 * Prints the URL on stdout (the one line a script would capture into
 * `MAGI_WEB_URL`) and runs until SIGINT or SIGTERM.
 */
import { Command, Options } from "@effect/cli"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Effect, Layer, Option } from "effect"
import { MagiHome } from "../MagiHome.js"
import { QuestionStore } from "../QuestionStore.js"
import { serve } from "../web/WebServer.js"
import { CliFailure } from "./CliFailure.js"
import { writeErr, writeOut } from "./io.js"

export const DEFAULT_PORT = 7878

/**
 * Only the store, not the config files: a broken `magi.toml` in whatever
 * directory the server was started from must not keep the owner from
 * answering.
 */
const storeLayer = (home: Option.Option<string>) =>
  QuestionStore.layer.pipe(
    Layer.provide(Option.match(home, { onNone: () => MagiHome.fromEnv, onSome: MagiHome.at })),
    Layer.provideMerge(NodeContext.layer)
  )

/** Serve until interrupted. */
export const runWeb = (bind: string, port: number, home: Option.Option<string>) =>
  Effect.scoped(
    Effect.gen(function* () {
      const running = yield* serve({ bind, port }).pipe(Effect.mapError((e) => CliFailure.refused(e.message)))
      if (Option.isSome(running.warning)) yield* Effect.logWarning(running.warning.value)
      const store = yield* QuestionStore
      yield* writeErr(
        `magi web: serving the questions in ${store.root} at ${running.url}\n` +
          `magi web: export MAGI_WEB_URL=${running.url} so notifications link here\n`
      )
      yield* writeOut(`${running.url}\n`)
      return yield* Effect.never
    })
  ).pipe(Effect.provide(storeLayer(home)))

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
  )
}

export const web = Command.make("web", options, (o) => {
  if (o.port < 0 || o.port > 65535) return Effect.fail(CliFailure.usage(`--port must be 0-65535, not ${o.port}`))
  return runWeb(o.bind, o.port, o.home)
}).pipe(Command.withDescription("Serve the phone page and HTTP API for answering questions"))
