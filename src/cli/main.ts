/**
 * The `magi` command line: the subcommands, and how a run of one becomes an
 * exit code. Stdout belongs to the agent reading a result, so every log line
 * and every refusal goes to stderr.
 */
import { Command, ValidationError } from "@effect/cli"
import * as LocalContext from "../platform/LocalContext.js"
import { Cause, Console, Effect, Exit, Layer, Logger, LogLevel } from "effect"
import { ask, askHelp } from "./ask.js"
import { answer, answerHelp } from "./answer.js"
import { notify } from "./notify.js"
import { CliFailure } from "./CliFailure.js"
import { extraCommands, extraHelp } from "./extra.js"
import { describeCommand } from "./CommandSpec.js"
import * as CommandLine from "./CommandLine.js"
import * as Help from "./Help.js"
import { forTerminal } from "../platform/TerminalText.js"
import { interruptExitCode } from "./Signals.js"

import { VERSION } from "./Version.js"
export { VERSION }

const root = Command.make("magi").pipe(
  Command.withDescription("Let unattended coding agents ask their owner, and get the answer back"),
  Command.withSubcommands([ask, answer, notify, ...extraCommands])
)

const cli = Command.run(root, { name: "magi", version: VERSION })

/** Usage lines, examples and sections some commands add to their help, by path. */
const helpExtras: Record<string, Help.HelpExtras> = { "magi ask": askHelp, "magi answer": answerHelp, ...extraHelp }

/** Strip what a terminal would draw with: a mistake is plain words on stderr. */
const plain = (text: string) => text.replace(/\x1b\[[0-9;]*m/g, "").trim()

/**
 * What @effect/cli itself still prints (a mistake only its parser finds),
 * said like every other magi error: one `magi: ` line each, no colour.
 */
const magiConsole = Effect.map(Console.consoleWith(Effect.succeed), (base): Console.Console => ({
  ...base,
  error: (...args: ReadonlyArray<unknown>) =>
    Effect.sync(() => {
      const lines = plain(args.map(String).join(" ")).split("\n").filter((l) => l.trim() !== "")
      for (const line of lines) process.stderr.write(`magi: ${forTerminal(line)}\n`)
    })
}))

/** Log lines for the person at the terminal, never on stdout. */
const stderrLogger = Logger.make(({ logLevel, message }) => {
  const text = Array.isArray(message) ? message.map(String).join(" ") : String(message)
  const prefix = logLevel._tag === "Warning" ? "magi: warning: " : logLevel._tag === "Error" ? "magi: error: " : "magi: "
  // Warnings and notices quote agent text (a summary, a failed turn's last
  // line): escaped like every other printer of it.
  // On a terminal, `magi ask` may be redrawing its progress line: a log line
  // clears it first, so the two never run together.
  process.stderr.write((process.stderr.isTTY ? "\r\x1b[2K" : "") + prefix + forTerminal(text) + "\n")
})

const logging = Layer.merge(
  Logger.replace(Logger.defaultLogger, stderrLogger),
  Logger.minimumLogLevel(process.env.MAGI_DEBUG ? LogLevel.Debug : LogLevel.Info)
)

/** Run `argv`, settling `process.exitCode`: 0 ok, 1 refused, 2 usage. */
export const main = (argv: ReadonlyArray<string>) =>
  Effect.suspend(() => {
    const reading = CommandLine.read(describeCommand(root), argv.slice(2))
    switch (reading._tag) {
      case "Help":
        return Effect.sync(() => {
          const extras = helpExtras[reading.spec.path.join(" ")]
          process.stdout.write(Help.render(reading.spec, extras, Help.styleFor(process.stdout, process.env)))
        })
      case "Mistake":
        return Effect.sync(() => {
          process.stderr.write(`magi: ${forTerminal(reading.message)}\n`)
          process.exitCode = 2
        })
      case "Run":
        return Effect.flatMap(magiConsole, (console) => Effect.withConsole(cli(argv), console))
    }
  }).pipe(
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
