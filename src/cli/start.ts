/**
 * `magi start`, what `npm start` runs: the web UI on loopback with the
 * owner's own home, and the waiter with it, so one command answers and
 * delivers. Loopback rather than `auto` because a bare `npm start` should not
 * put the questions on a network by surprise.
 */
import { Command } from "@effect/cli"
import { Effect, Option } from "effect"
import { CliFailure } from "./CliFailure.js"
import { DEFAULT_PORT, options as webOptions, runWeb } from "./web.js"

export const start = Command.make("start", { port: webOptions.port }, (o) =>
  o.port < 0 || o.port > 65535
    ? Effect.fail(CliFailure.usage(`--port must be 0-65535, not ${o.port}`))
    : runWeb({ bind: "127.0.0.1", port: o.port, home: Option.none(), loop: true })).pipe(
    Command.withDescription(`Run the web UI on 127.0.0.1:${DEFAULT_PORT} (or --port) and the waiter (what \`npm start\` runs)`)
  )
