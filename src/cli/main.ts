/**
 * The `magi` command line: the subcommands, and how a run of one becomes an
 * exit code. Stdout belongs to the agent reading a result, so every log line
 * and every refusal goes to stderr.
 */
import { Args, CliConfig, Command, ValidationError } from "@effect/cli"
import * as LocalContext from "../platform/LocalContext.js"
import { Cause, Console, Effect, Exit, Layer, Logger, LogLevel } from "effect"
import { CliFailure, defectLine } from "./CliFailure.js"
import { commandHelp, commands } from "./commands.js"
import { cliConfig, describeCommand, type CommandSpec } from "./CommandSpec.js"
import * as CommandLine from "./CommandLine.js"
import * as Help from "./Help.js"
import { forTerminal } from "../platform/TerminalText.js"
import { interruptExitCode } from "./Signals.js"

export { VERSION } from "../platform/Version.js"
import { VERSION } from "../platform/Version.js"

type Shell = "bash" | "zsh" | "fish"

/**
 * `magi completion bash|zsh|fish`: the script a shell sources to complete
 * magi's commands and options, written by @effect/cli from the same
 * definitions it parses with.
 */
const completion = Command.make(
  "completion",
  {
    shell: Args.choice<Shell>([["bash", "bash"], ["zsh", "zsh"], ["fish", "fish"]], { name: "shell" }).pipe(
      Args.withDescription("the shell to complete in: bash, zsh or fish")
    )
  },
  ({ shell }) => Effect.flatMap(completionScript(shell), (lines) => Effect.sync(() => process.stdout.write(lines.join("\n") + "\n")))
).pipe(Command.withDescription("Print a script that completes magi's commands and options in bash, zsh or fish"))

const root = Command.make("magi").pipe(
  Command.withDescription("Let unattended coding agents ask their owner, and get the answer back"),
  Command.withSubcommands([...commands, completion])
)

function completionScript(shell: Shell): Effect.Effect<Array<string>> {
  switch (shell) {
    case "bash":
      return Effect.map(Command.getBashCompletions(root, "magi"), (lines) => tidyCompletions(lines, shell))
    case "zsh":
      return Effect.map(Command.getZshCompletions(root, "magi"), (lines) => tidyCompletions(lines, shell))
    case "fish":
      return Effect.map(Command.getFishCompletions(root, "magi"), (lines) => tidyCompletions(lines, shell))
  }
}

/** @effect/cli's options that magi's help keeps out of sight, kept out of completion too. */
const HIDDEN = CommandLine.HIDDEN_BUILT_INS

/**
 * @effect/cli's script, with what it gets wrong put right. Its bash script
 * names a command two levels down `magi,task,add` where it matches the words
 * typed as `magi__task,add`, so `magi task add --pr<TAB>` completed nothing;
 * and every script offers the built-in options the help hides.
 */
const tidyCompletions = (lines: ReadonlyArray<string>, shell: Shell): Array<string> =>
  lines
    .filter((line) => !HIDDEN.some((h) => (shell === "fish" ? line.includes(` -l ${h.slice(2)} `) : line.trimStart().startsWith(`'${h}[`))))
    .map((line) => {
      if (shell !== "bash") return line
      const nested = /^(\s+)([\w-]+(?:,[\w-]+){2,})\)$/.exec(line)
      if (nested !== null) {
        const names = nested[2]!.split(",")
        return `${nested[1]}${names.slice(0, -1).join("__")},${names.at(-1)})`
      }
      return line.replace(/^(\s+opts=")(.*)"$/, (_, lead: string, opts: string) => `${lead}${opts.split(" ").filter((o) => !HIDDEN.includes(o)).join(" ")}"`)
    })

const cli = Command.run(root, { name: "magi", version: VERSION })

/** The command tree as data, for help and for saying a usage mistake; read once, when first needed. */
let spec: CommandSpec | undefined
const specOf = () => (spec ??= describeCommand(root))

/**
 * @effect/cli prints what it finds wrong with a command line itself, in its
 * own words and colours; magi says it once, its way (`CommandLine.explain`).
 */
const quietConsole = Effect.map(Console.consoleWith(Effect.succeed), (base): Console.Console => ({
  ...base,
  error: () => Effect.void
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
    const reading = CommandLine.read(specOf(), argv.slice(2))
    switch (reading._tag) {
      case "Help":
        return Effect.sync(() => {
          const extras = commandHelp[reading.spec.path.join(" ")]
          process.stdout.write(Help.render(reading.spec, extras, Help.styleFor(process.stdout, process.env)))
        })
      case "Mistake":
        return Effect.sync(() => {
          process.stderr.write(`magi: ${forTerminal(reading.message)}\n`)
          process.exitCode = 2
        })
      case "Run":
        return Effect.flatMap(quietConsole, (console) => Effect.withConsole(cli(argv), console)).pipe(
          Effect.catchIf(ValidationError.isValidationError, (e) => Effect.fail(CliFailure.usage(CommandLine.explain(reading.spec, argv.slice(2), e)))),
          Effect.provide(CliConfig.layer(cliConfig))
        )
    }
  }).pipe(
    // display: the command's failure is printed and becomes the exit code
    Effect.catchAll((e) =>
      Effect.sync(() => {
        if (e instanceof CliFailure) {
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
        process.stderr.write(`magi: ${defectLine(defect, Boolean(process.env.MAGI_DEBUG), () => Cause.pretty(Cause.die(defect)))}\n`)
        process.exitCode = 1
      })
    ),
    Effect.provide(Layer.merge(LocalContext.layer, logging))
  )

/** Exit code for a finished run; for a signal, 128 + its number (SIGINT 130, SIGTERM 143), like a shell. */
export const exitCodeOf = (exit: Exit.Exit<unknown, unknown>): number =>
  Exit.isFailure(exit) ? (Cause.isInterruptedOnly(exit.cause) ? interruptExitCode() : 1) : Number(process.exitCode ?? 0)
