/**
 * The `magi` command line: the subcommands, and how a run of one becomes an
 * exit code. Stdout belongs to the agent reading a result, so every log line
 * and every refusal goes to stderr.
 */
import { Command, ValidationError } from "@effect/cli"
import * as LocalContext from "../platform/LocalContext.js"
import { Cause, Effect, Exit, Layer, Logger, LogLevel } from "effect"
import { ask } from "./ask.js"
import { answer } from "./answer.js"
import { notify } from "./notify.js"
import { CliFailure } from "./CliFailure.js"
import { extraCommands } from "./extra.js"
import { forTerminal } from "../platform/TerminalText.js"
import { interruptExitCode } from "./Signals.js"

export const VERSION = "0.1.0"

const root = Command.make("magi").pipe(
  Command.withDescription("Let unattended coding agents ask their owner, and get the answer back"),
  Command.withSubcommands([ask, answer, notify, ...extraCommands])
)

const cli = Command.run(root, { name: "magi", version: VERSION })

/** Log lines for the person at the terminal, never on stdout. */
const stderrLogger = Logger.make(({ logLevel, message }) => {
  const text = Array.isArray(message) ? message.map(String).join(" ") : String(message)
  const prefix = logLevel._tag === "Warning" ? "magi: warning: " : logLevel._tag === "Error" ? "magi: error: " : "magi: "
  // Warnings and notices quote agent text (a summary, a failed turn's last
  // line): escaped like every other printer of it.
  process.stderr.write(prefix + forTerminal(text) + "\n")
})

const logging = Layer.merge(
  Logger.replace(Logger.defaultLogger, stderrLogger),
  Logger.minimumLogLevel(process.env.MAGI_DEBUG ? LogLevel.Debug : LogLevel.Info)
)

/** Run `argv`, settling `process.exitCode`: 0 ok, 1 refused, 2 usage. */
export const main = (argv: ReadonlyArray<string>) =>
  cli(argv).pipe(
    Effect.catchAll((e) =>
      Effect.sync(() => {
        if (ValidationError.isValidationError(e)) {
          // @effect/cli has already printed what was wrong with the usage.
          process.exitCode = 2
        } else if (e instanceof CliFailure) {
          process.stderr.write(`magi: ${forTerminal(e.message)}\n`)
          process.exitCode = e.exitCode
        } else {
          const message = typeof e === "object" && e !== null && "message" in e ? String(e.message) : String(e)
          process.stderr.write(`magi: ${forTerminal(message)}\n`)
          process.exitCode = 1
        }
      })
    ),
    Effect.catchAllDefect((defect) =>
      Effect.sync(() => {
        process.stderr.write(`magi: unexpected failure: ${Cause.pretty(Cause.die(defect))}\n`)
        process.exitCode = 1
      })
    ),
    Effect.provide(Layer.merge(LocalContext.layer, logging))
  )

/** Exit code for a finished run; for a signal, 128 + its number (SIGINT 130, SIGTERM 143), like a shell. */
export const exitCodeOf = (exit: Exit.Exit<unknown, unknown>): number =>
  Exit.isFailure(exit) ? (Cause.isInterruptedOnly(exit.cause) ? interruptExitCode() : 1) : Number(process.exitCode ?? 0)
