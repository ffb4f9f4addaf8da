/**
 * The one place magi reads a command line beside @effect/cli, for what the
 * library (0.77) cannot do: it parses every command line, once, and this
 * looks only at the words' shape first. A help request is answered here
 * (magi's help, `Help.ts`, from the same definitions); the library has no
 * "did you mean" for a command (`magi tsk`: "Invalid subcommand"); it takes
 * an unknown flag for a positional (`magi answer --rply yes` looked up a
 * question called `--rply`), the next option for a value left out
 * (`--reply --say hm` replied "--say"), and a repeated option's second
 * value for words (`--priority 1 --priority 2 x` filed "priority 2 x").
 * Its own refusals are said again in magi's words (`explain`). Each mistake
 * is one line; the caller prints it after `magi: ` and exits 2.
 */
import { HelpDoc, type ValidationError } from "@effect/cli"
import { closest } from "../platform/Spelling.js"
import { optionNamed, type ArgSpec, type CommandSpec, type OptionSpec } from "./CommandSpec.js"

export type Reading =
  | { readonly _tag: "Help"; readonly spec: CommandSpec }
  | { readonly _tag: "Mistake"; readonly message: string }
  /** For @effect/cli to parse: the command named, for `explain`. */
  | { readonly _tag: "Run"; readonly spec: CommandSpec }

/**
 * @effect/cli's own options, passed through untouched: `true` for the ones
 * that take a value. All but `--version` are kept out of magi's help and its
 * completion scripts (`HIDDEN_BUILT_INS`).
 */
const BUILT_INS: Record<string, boolean> = { "--version": false, "--completions": true, "--log-level": true, "--wizard": false }

export const HIDDEN_BUILT_INS: ReadonlyArray<string> = Object.keys(BUILT_INS).filter((name) => name !== "--version")

const HELP = new Set(["--help", "-h"])

const where = (spec: CommandSpec) => spec.path.join(" ")

/** `-` is a value (stdin) and `-3` a number; anything else starting with `-` is a flag. */
const isFlag = (word: string) => word.startsWith("-") && word !== "-" && !/^-\d/.test(word)

const unknownCommand = (spec: CommandSpec, typed: string): string => {
  const names = spec.subcommands.map((c) => c.name)
  const near = closest(typed, names)
  return (
    `${where(spec)} has no command \`${typed}\`` +
    (near !== undefined ? `; did you mean \`${where(spec)} ${near}\`?` : ".") +
    ` The commands: ${names.join(", ")} (${where(spec)} --help says what each does)`
  )
}

const unknownOption = (spec: CommandSpec, typed: string): string => {
  const names = spec.options.map((o) => o.name)
  const near = closest(typed, names)
  if (near !== undefined) return `${where(spec)} has no option ${typed}; did you mean ${near}?`
  return names.length === 0
    ? `${where(spec)} takes no options, and ${typed} is not one`
    : `${where(spec)} has no option ${typed}; its options: ${names.join(", ")} (${where(spec)} --help describes them)`
}

const needsValue = (o: OptionSpec) => `${o.name} needs a value (${o.placeholder}): ${o.description}`

interface Words {
  /** Each option given, with the value it was given (a switch: none). */
  readonly given: ReadonlyArray<{ readonly option: OptionSpec; readonly value: string | undefined }>
  readonly positionals: ReadonlyArray<string>
}

/** Sort the words after the command into options with their values and positional words, by shape. */
const sortWords = (spec: CommandSpec, args: ReadonlyArray<string>): Words | string => {
  const given: Array<{ option: OptionSpec; value: string | undefined }> = []
  const positionals: string[] = []
  for (let i = 0; i < args.length; i++) {
    const word = args[i]!
    if (word === "--") {
      positionals.push(...args.slice(i + 1))
      break
    }
    if (!isFlag(word)) {
      positionals.push(word)
      continue
    }
    const eq = word.startsWith("--") ? word.indexOf("=") : -1
    const name = eq < 0 ? word : word.slice(0, eq)
    const inline = eq < 0 ? undefined : word.slice(eq + 1)
    if (name in BUILT_INS) {
      if (BUILT_INS[name] && inline === undefined) i++
      continue
    }
    const option = optionNamed(spec, name)
    if (option === undefined) return unknownOption(spec, name)
    if (!option.repeated && given.some((g) => g.option === option)) return `${option.name} was given more than once; it takes one value`
    if (option.kind === "flag") {
      // @effect/cli would read `--json=maybe` as the switch and a stray word `maybe`.
      if (inline !== undefined && !/^(true|false)$/.test(inline)) return `${option.name} is a switch and takes no value (not \`${inline}\`)`
      given.push({ option, value: inline })
      continue
    }
    let value = inline
    if (value === undefined) {
      const next = args[i + 1]
      // The next word is another of this command's options: the value was left out.
      if (next === undefined || HELP.has(next) || optionNamed(spec, next.split("=")[0]!) !== undefined) return needsValue(option)
      value = next
      i++
    }
    given.push({ option, value })
  }
  return { given, positionals }
}

/** Read `args` (the command line after `magi`) against `root`, by the words' shape. */
export const read = (root: CommandSpec, args: ReadonlyArray<string>): Reading => {
  // `magi help` and `magi help task add`: what `--help` says, as git and npm answer it.
  if (args[0] === "help" && !root.subcommands.some((c) => c.name === "help")) return read(root, [...args.slice(1), "--help"])
  const end = args.indexOf("--")
  const wantsHelp = (end < 0 ? args : args.slice(0, end)).some((a) => HELP.has(a))
  let spec = root
  let i = 0
  while (spec.subcommands.length > 0) {
    const next = args[i]
    // A command that runs by itself (`magi web`), with its options or none.
    if (spec.runsAlone && (next === undefined || (next.startsWith("-") && !HELP.has(next)))) break
    // `magi`, or `magi task`, alone: what there is to run.
    if (next === undefined || HELP.has(next)) return { _tag: "Help", spec }
    if (next.startsWith("-")) {
      if (wantsHelp) return { _tag: "Help", spec }
      if (next in BUILT_INS) return { _tag: "Run", spec }
      return {
        _tag: "Mistake",
        message: `${where(spec)} needs a command before any option (${next}); the commands: ${spec.subcommands.map((c) => c.name).join(", ")}`
      }
    }
    const child = spec.subcommands.find((c) => c.name === next)
    if (child === undefined) return { _tag: "Mistake", message: unknownCommand(spec, next) }
    spec = child
    i++
  }
  if (wantsHelp) return { _tag: "Help", spec }
  const words = sortWords(spec, args.slice(i))
  return typeof words === "string" ? { _tag: "Mistake", message: words } : { _tag: "Run", spec }
}

// -- @effect/cli's refusals in magi's words ---------------------------------

/** What @effect/cli said, as one plain line. */
const said = (error: ValidationError.ValidationError): string =>
  "error" in error
    ? HelpDoc.toAnsiText(error.error)
      .replace(/\x1b\[[0-9;]*m/g, "")
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => l !== "")
      .join(" ")
    : ""

const argName = (a: ArgSpec) => a.name.replace(/^<|>$/g, "")

const wholeOrNumber = (typeName: string) => (typeName === "integer" ? "a whole number" : "a number")

/**
 * @effect/cli's refusal of `args` (the words after the command `spec`) as
 * one line naming what was wrong: which flag or argument, and what it takes.
 */
export const explain = (spec: CommandSpec, args: ReadonlyArray<string>, error: ValidationError.ValidationError): string => {
  const text = said(error)
  const words = sortWords(spec, args.slice(spec.path.length - 1))
  if (typeof words === "string") return words
  const givenAs = (value: string) => words.given.find((g) => g.value === value)

  const notType = /^'(.*)' is not a (integer|float)$/s.exec(text)
  if (notType !== null) {
    const [, value, type] = notType as unknown as [string, string, string]
    const option = givenAs(value)
    if (option !== undefined) return `${option.option.name} takes ${wholeOrNumber(type)} (${option.option.placeholder}), not \`${value}\``
    const arg = spec.args[words.positionals.indexOf(value)] ?? spec.args.find((a) => !a.repeated)
    if (arg !== undefined)
      return `${where(spec)}: the ${argName(arg)} is ${wholeOrNumber(type)}${arg.description ? `, ${arg.description}` : ""}; \`${value}\` is not one`
  }
  const cases = /^Expected one of the following cases: (.*)$/.exec(text)
  if (cases !== null) {
    const wrong = words.given.find((g) => g.option.kind === "choice" && g.value !== undefined && !g.option.choices.includes(g.value))
    if (wrong !== undefined) return `${wrong.option.name} takes one of ${wrong.option.choices.join(", ")}, not \`${wrong.value}\``
    // Not an option's: an argument's, said by its name.
    const at = spec.args.findIndex((a, k) => a.choices.length > 0 && words.positionals[k] !== undefined && !a.choices.includes(words.positionals[k]!))
    if (at >= 0) return `${where(spec)}: the ${argName(spec.args[at]!)} is one of ${cases[1]}, not \`${words.positionals[at]}\``
  }
  const missingOption = /^Expected to find option: '(.*)'$/.exec(text)
  if (missingOption !== null) {
    const o = optionNamed(spec, missingOption[1]!)
    if (o !== undefined) return `${where(spec)} needs ${o.name} ${o.placeholder}: ${o.description}`
  }
  const missingArg = /^Missing argument (<[^>]*>)/.exec(text)
  if (missingArg !== null) {
    const a = spec.args.find((x) => x.name === missingArg[1])
    return `${where(spec)} needs ${missingArg[1]}${a?.description ? `: ${a.description}` : ""}`
  }
  const extra = /^Received unknown argument: '(.*)'$/s.exec(text)
  if (extra !== null) {
    const max = spec.args.some((a) => a.repeated) ? Infinity : spec.args.length
    const word = words.positionals[max] ?? extra[1]!
    return max === 0
      ? `${where(spec)} takes options only, not \`${word}\` (${where(spec)} --help lists them)`
      : `${where(spec)} takes at most ${max} argument${max === 1 ? "" : "s"} (${spec.args.map((a) => a.name).join(" ")}); \`${word}\` is one too many`
  }
  return `${where(spec)}: ${text === "" ? "the command line could not be read" : text} (${where(spec)} --help says what it takes)`
}
