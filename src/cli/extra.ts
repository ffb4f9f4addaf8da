/**
 * Commands beyond the questions core, registered here so each lives in its
 * own module. `start` is what `npm start` runs.
 */
import { Command } from "@effect/cli"
import { writeOut } from "./io.js"

const start = Command.make("start", {}, () =>
  writeOut("magi web is not built yet; for now: magi ask / magi answer / magi notify --test (see magi --help)\n")
).pipe(Command.withDescription("Run the web UI and the daemon on 127.0.0.1 (what `npm start` runs)"))

export const extraCommands = [start] as const
