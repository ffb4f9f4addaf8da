/**
 * Commands beyond the questions core, registered here so each lives in its
 * own module. `start` is what `npm start` runs.
 */
import { Command } from "@effect/cli"
import { Effect, Option } from "effect"
import { CliFailure } from "./CliFailure.js"
import { DEFAULT_PORT, options as webOptions, runWeb, web } from "./web.js"
import { run, runHelp, runs, show, showHelp } from "./run.js"
import type { HelpExtras } from "./Help.js"
import { serve } from "./serve.js"
import { doctor } from "./doctor.js"
import { task } from "./task.js"
import { plan } from "./plan.js"
import { store } from "./store.js"
import { approvals } from "./approvals.js"
import { mcp } from "./mcp.js"
import { service } from "./service.js"
import { init } from "./init.js"
import { hosts } from "./hosts.js"
import { fold, foldHelp, pick, pickHelp } from "./compete.js"
import { land } from "./land.js"

/**
 * What `npm start` runs: the web UI on loopback with the owner's own home,
 * and the waiter with it, so one command answers and delivers. Loopback
 * rather than `auto` because a bare `npm start` should not put the questions
 * on a network by surprise.
 */
const start = Command.make("start", { port: webOptions.port }, (o) =>
  o.port < 0 || o.port > 65535
    ? Effect.fail(CliFailure.usage(`--port must be 0-65535, not ${o.port}`))
    : runWeb({ bind: "127.0.0.1", port: o.port, home: Option.none(), loop: true })).pipe(
    Command.withDescription(`Run the web UI on 127.0.0.1:${DEFAULT_PORT} (or --port) and the waiter (what \`npm start\` runs)`)
  )

export const extraCommands = [web, start, run, runs, show, fold, pick, land, serve, hosts, task, plan, doctor, store, mcp, approvals, service, init] as const

/** What some of these commands add to their help, by command path. */
export const extraHelp: Record<string, HelpExtras> = {
  "magi run": runHelp,
  "magi show": showHelp,
  "magi fold": foldHelp,
  "magi pick": pickHelp
}
