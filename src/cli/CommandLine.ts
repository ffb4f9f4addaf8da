/**
 * The command line read against the command definitions before @effect/cli
 * parses it: a request for help, a usage mistake said in magi's words, or
 * good to run.
 *
 * Checked here, because @effect/cli's parser takes an unknown flag for a
 * positional argument (`magi answer --rply yes` looked up a question called
 * `--rply`) and says "'abc' is not a integer" without naming the flag. Every
 * mistake found here is one line naming what was wrong and what would be
 * right; the caller prints it after `magi: ` and exits 2.
 */
import { closest } from "../platform/Spelling.js"
import { optionNamed, type ArgSpec, type CommandSpec, type OptionSpec } from "./CommandSpec.js"

export type Reading =
  | { readonly _tag: "Help"; readonly spec: CommandSpec }
  | { readonly _tag: "Mistake"; readonly message: string }
  | { readonly _tag: "Run" }

/**
 * @effect/cli's own options, hidden from magi's help and passed through
 * untouched: `true` for the ones that take a value.
 */
const BUILT_INS: Record<string, boolean> = { "--version": false, "--completions": true, "--log-level": true, "--wizard": false }

const HELP = new Set(["--help", "-h"])

const where = (spec: CommandSpec) => spec.path.join(" ")

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

/** Why `value` is no value for `o`, if it is not. */
const badValue = (o: OptionSpec, value: string): string | undefined => {
  switch (o.kind) {
    case "integer":
      return /^[+-]?\d+$/.test(value) ? undefined : `${o.name} takes a whole number (${o.placeholder}), not \`${value}\``
    case "number":
      return value.trim() !== "" && Number.isFinite(Number(value)) ? undefined : `${o.name} takes a number, not \`${value}\``
    case "choice":
      return o.choices.includes(value) ? undefined : `${o.name} takes one of ${o.choices.join(", ")}, not \`${value}\``
    case "flag":
      return /^(true|false)$/.test(value) ? undefined : `${o.name} is a switch and takes no value (not \`${value}\`)`
    default:
      return undefined
  }
}

/**
 * An argument that is not a whole number, said by what it is (`the
 * priority`, not `<n>`) and what it takes: someone who typed `high` needs
 * to hear that it is a number, and which way it counts.
 */
const notWhole = (spec: CommandSpec, a: ArgSpec, value: string): string =>
  `${where(spec)}: the ${a.name.replace(/^<|>$/g, "")} is a whole number${a.description ? `, ${a.description}` : ""}; \`${value}\` is not one`

/** Read `args` (the command line after `magi`) against `root`. */
export const read = (root: CommandSpec, args: ReadonlyArray<string>): Reading => {
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
      if (next in BUILT_INS) return { _tag: "Run" }
      return { _tag: "Mistake", message: `${where(spec)} needs a command before any option (${next}); the commands: ${spec.subcommands.map((c) => c.name).join(", ")}` }
    }
    const child = spec.subcommands.find((c) => c.name === next)
    if (child === undefined) return { _tag: "Mistake", message: unknownCommand(spec, next) }
    spec = child
    i++
  }
  if (wantsHelp) return { _tag: "Help", spec }

  let positionals: string[] = []
  const seen = new Set<string>()
  for (; i < args.length; i++) {
    const token = args[i]!
    if (token === "--") {
      positionals = [...positionals, ...args.slice(i + 1)]
      break
    }
    // `-` is a value (stdin); `-3` is a number.
    if (!token.startsWith("-") || token === "-" || /^-\d/.test(token)) {
      positionals.push(token)
      continue
    }
    const eq = token.startsWith("--") ? token.indexOf("=") : -1
    const name = eq < 0 ? token : token.slice(0, eq)
    const inline = eq < 0 ? undefined : token.slice(eq + 1)
    if (name in BUILT_INS) {
      if (BUILT_INS[name] && inline === undefined) i++
      continue
    }
    const option = optionNamed(spec, name)
    if (option === undefined) return { _tag: "Mistake", message: unknownOption(spec, name) }
    if (seen.has(option.name) && !option.repeated)
      return { _tag: "Mistake", message: `${option.name} was given more than once; it takes one value` }
    seen.add(option.name)
    if (option.kind === "flag") {
      const wrong = inline === undefined ? undefined : badValue(option, inline)
      if (wrong !== undefined) return { _tag: "Mistake", message: wrong }
      continue
    }
    let value = inline
    if (value === undefined) {
      const next = args[i + 1]
      // The next word is another of this command's options: the value was left out.
      if (next === undefined || HELP.has(next) || optionNamed(spec, next.split("=")[0]!) !== undefined)
        return { _tag: "Mistake", message: needsValue(option) }
      value = next
      i++
    }
    const wrong = badValue(option, value)
    if (wrong !== undefined) return { _tag: "Mistake", message: wrong }
  }

  const max = spec.args.some((a) => a.repeated) ? Infinity : spec.args.length
  if (positionals.length > max) {
    const extra = positionals[max]!
    return {
      _tag: "Mistake",
      message:
        max === 0
          ? `${where(spec)} takes options only, not \`${extra}\` (${where(spec)} --help lists them)`
          : `${where(spec)} takes at most ${max} argument${max === 1 ? "" : "s"} (${spec.args.map((a) => a.name).join(" ")}); \`${extra}\` is one too many`
    }
  }
  // Arguments in a fixed place (none repeated before them) are checked like option values.
  for (const [k, a] of spec.args.entries()) {
    if (a.repeated || k >= positionals.length) break
    if (a.kind === "integer" && !/^[+-]?\d+$/.test(positionals[k]!))
      return { _tag: "Mistake", message: notWhole(spec, a, positionals[k]!) }
  }
  const needed = spec.args.filter((a) => a.required)
  if (positionals.length < needed.length) {
    const missing = needed[positionals.length]!
    return { _tag: "Mistake", message: `${where(spec)} needs ${missing.name}${missing.description ? `: ${missing.description}` : ""}` }
  }
  const absent = spec.options.find((o) => o.required && !seen.has(o.name))
  if (absent !== undefined) return { _tag: "Mistake", message: `${where(spec)} needs ${absent.name} ${absent.placeholder}: ${absent.description}` }
  return { _tag: "Run" }
}
