/**
 * The command line as plain data, read from what @effect/cli itself says
 * about the very `Command`s its parser runs: their usage (`Usage`: each
 * option's names and value, whether optional or repeated, each argument) and
 * their help (`HelpDoc`: each description and default). magi's help and its
 * usage messages are built from this, so an option added to a command is
 * described with no second list to keep.
 *
 * Only @effect/cli's public models are read (`Command.getUsage`,
 * `Command.getHelp`, `Command.getSubcommands`), never its internal
 * descriptors; `test/cli/CommandSpec.test.ts` pins what is read from them.
 */
import { CliConfig, Command, CommandDescriptor, type HelpDoc, type Usage } from "@effect/cli"
import type * as Span from "@effect/cli/HelpDoc/Span"
import { Option } from "effect"

export type ValueKind = "flag" | "text" | "integer" | "number" | "choice" | "path" | "date" | "secret"

export interface OptionSpec {
  /** `--summary` */
  readonly name: string
  /** Other spellings: `-h`. */
  readonly aliases: ReadonlyArray<string>
  readonly kind: ValueKind
  /** What the value is called in usage: `TEXT`, `SECONDS`, `FILE`… */
  readonly placeholder: string
  readonly description: string
  readonly required: boolean
  readonly repeated: boolean
  /** The default, shown in help when it says something (never `false`). */
  readonly fallback: string | undefined
  /** For `choice`: the values allowed. */
  readonly choices: ReadonlyArray<string>
}

export interface ArgSpec {
  /** `<id>` */
  readonly name: string
  readonly kind: ValueKind
  readonly description: string
  readonly required: boolean
  readonly repeated: boolean
  /** When it is one of a few words: those. */
  readonly choices: ReadonlyArray<string>
}

export interface CommandSpec {
  readonly name: string
  /** From the top: `["magi", "task", "add"]`. */
  readonly path: ReadonlyArray<string>
  readonly description: string
  readonly options: ReadonlyArray<OptionSpec>
  readonly args: ReadonlyArray<ArgSpec>
  readonly subcommands: ReadonlyArray<CommandSpec>
  /**
   * Whether the command runs with no subcommand named: always for a leaf,
   * and for one with subcommands when it takes options or arguments of its
   * own (`magi web` serves; `magi web pair` is one of its subcommands).
   */
  readonly runsAlone: boolean
}

/**
 * How magi reads a command line with @effect/cli: names as typed (a flag in
 * the wrong case is a mistake, not a synonym), its built-in options kept out
 * of the help, and the library's own "did you mean" for flags within two
 * slips.
 */
export const cliConfig: CliConfig.CliConfig = CliConfig.make({ isCaseSensitive: true, showBuiltIns: false, autoCorrectLimit: 2 })

// -- HelpDoc as plain text --------------------------------------------------

const spanText = (span: Span.Span): string => {
  switch (span._tag) {
    case "Text":
    case "URI":
      return span.value
    case "Sequence":
      return spanText(span.left) + spanText(span.right)
    case "Weak":
    case "Strong":
    case "Highlight":
      return spanText(span.value)
  }
}

/** The paragraphs of a block, in order. */
const paragraphs = (doc: HelpDoc.HelpDoc): ReadonlyArray<string> => {
  switch (doc._tag) {
    case "Paragraph":
    case "Header":
      return [spanText(doc.value)]
    case "Sequence":
      return [...paragraphs(doc.left), ...paragraphs(doc.right)]
    case "Enumeration":
      return doc.elements.flatMap(paragraphs)
    default:
      return []
  }
}

/** A help as its sections: each heading's paragraphs and description lists. */
interface Section {
  readonly text: Array<string>
  readonly definitions: Array<readonly [string, HelpDoc.HelpDoc]>
}

const sectionsOf = (doc: HelpDoc.HelpDoc): Map<string, Section> => {
  const sections = new Map<string, Section>()
  let current: Section = { text: [], definitions: [] }
  const walk = (d: HelpDoc.HelpDoc) => {
    switch (d._tag) {
      case "Header":
        current = { text: [], definitions: [] }
        sections.set(spanText(d.value), current)
        return
      case "Sequence":
        walk(d.left)
        walk(d.right)
        return
      case "DescriptionList":
        for (const [span, block] of d.definitions) current.definitions.push([spanText(span), block])
        return
      case "Paragraph":
        current.text.push(spanText(d.value))
        return
      default:
        return
    }
  }
  walk(doc)
  return sections
}

/**
 * A description as the command gave it. @effect/cli puts the value's type in
 * words first ("A user-defined piece of text.", "An integer.") and after it,
 * that it is optional or repeatable, which magi's help says its own way.
 */
const LIBRARY_NOTES = /^This (setting is optional|option (may|must) be repeated|argument (may|must) be repeated)/

const ownWords = (block: HelpDoc.HelpDoc): string =>
  paragraphs(block)
    .slice(1)
    .filter((p) => p !== "" && !LIBRARY_NOTES.test(p))
    .join(" ")

/** The default @effect/cli says an option has, when it says something. */
const defaultIn = (block: HelpDoc.HelpDoc): string | undefined => {
  for (const p of paragraphs(block)) {
    const m = /^This setting is optional\. Defaults to: (.*)$/.exec(p)
    if (m !== null) return m[1] === "false" || m[1]!.startsWith("{") || m[1]!.startsWith("Option") ? undefined : m[1]
  }
  return undefined
}

/** The definition in `section` for `name`: its words start with the name. */
const definitionOf = (section: Section | undefined, name: string): HelpDoc.HelpDoc | undefined =>
  section?.definitions.find(([words]) => words === name || new RegExp(`^${name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}[ ,.]`).test(words))?.[1]

// -- values -----------------------------------------------------------------

/** @effect/cli's name for a value's type, as magi calls the kind. */
const KINDS: Record<string, ValueKind> = {
  text: "text",
  integer: "integer",
  float: "number",
  date: "date",
  path: "path",
  file: "path",
  directory: "path",
  secret: "secret",
  redacted: "secret"
}

interface Mods {
  readonly required: boolean
  readonly repeated: boolean
}

interface Named {
  readonly names: ReadonlyArray<string>
  readonly accepted: Option.Option<string>
  readonly required: boolean
  readonly repeated: boolean
}

/** Every name in a usage, with whether it is required and repeated there. */
const namedIn = (usage: Usage.Usage, mods: Mods): ReadonlyArray<Named> => {
  switch (usage._tag) {
    case "Named":
      return [{ names: usage.names, accepted: usage.acceptedValues, ...mods }]
    case "Optional":
      return namedIn(usage.usage, { ...mods, required: false })
    case "Repeated":
      // A repeated option is given as many times as wanted, none at all included.
      return namedIn(usage.usage, { ...mods, repeated: true })
    case "Alternation":
      return [...namedIn(usage.left, { ...mods, required: false }), ...namedIn(usage.right, { ...mods, required: false })]
    case "Concat":
      return [...namedIn(usage.left, mods), ...namedIn(usage.right, mods)]
    default:
      return []
  }
}

const optionSpec = (n: Named, section: Section | undefined): OptionSpec => {
  const name = n.names.find((x) => x.startsWith("--")) ?? n.names[0]!
  const accepted = Option.getOrUndefined(n.accepted)
  const choices = accepted !== undefined && accepted.includes(" | ") ? accepted.split(" | ") : []
  const kind: ValueKind = accepted === undefined ? "flag" : choices.length > 0 ? "choice" : (KINDS[accepted] ?? "text")
  const placeholder = kind === "choice"
    ? choices.join("|")
    : accepted !== undefined && !(accepted in KINDS)
    ? accepted
    : kind === "integer"
    ? "N"
    : kind.toUpperCase()
  const block = definitionOf(section, name)
  return {
    name,
    aliases: n.names.filter((x) => x !== name),
    kind,
    placeholder,
    description: block === undefined ? "" : ownWords(block),
    // A flag is never required: absent means off.
    required: n.required && kind !== "flag" && !n.repeated,
    repeated: n.repeated,
    fallback: block === undefined ? undefined : defaultIn(block),
    choices
  }
}

const argSpec = (n: Named, section: Section | undefined): ArgSpec => {
  const name = n.names[0]!
  const block = definitionOf(section, name)
  const typeName = name.replace(/^<|>$/g, "")
  return {
    name,
    kind: KINDS[typeName] ?? "text",
    description: block === undefined ? "" : ownWords(block),
    required: n.required && !n.repeated,
    repeated: n.repeated,
    choices: Option.match(n.accepted, { onNone: () => [], onSome: (a) => a.split(" | ") })
  }
}

// -- commands ---------------------------------------------------------------

/**
 * The commands directly under `command`. @effect/cli's public
 * `getSubcommands` answers one level only, flattened to each child's own
 * parent command (the grandchildren are lost), so this follows the tree's
 * two joints itself: a command mapped over (`Map`) and one with
 * subcommands (`Subcommands`). It is the one place that does;
 * `test/cli/CommandSpec.test.ts` fails first if their shape changes.
 */
type Joint = { readonly _tag: string; readonly command?: Joint; readonly parent?: Joint; readonly children?: ReadonlyArray<Joint> }

const childrenOf = (command: Joint): ReadonlyArray<Joint> =>
  command._tag === "Map" && command.command !== undefined
    ? childrenOf(command.command)
    : command._tag === "Subcommands"
    ? (command.children ?? [])
    : []

const describeDescriptor = (command: Joint, parent: ReadonlyArray<string>): CommandSpec => {
  const descriptor = command as unknown as CommandDescriptor.Command<unknown>
  const usage = CommandDescriptor.getUsage(descriptor)
  const help = sectionsOf(CommandDescriptor.getHelp(descriptor, cliConfig))
  // The first name in the usage is the command's own.
  const [self, ...rest] = namedIn(usage, { required: true, repeated: false })
  const name = self!.names[0]!
  const path = [...parent, name]
  const options = rest.filter((n) => n.names[0]!.startsWith("-")).map((n) => optionSpec(n, help.get("OPTIONS")))
  const args = rest.filter((n) => n.names[0]!.startsWith("<")).map((n) => argSpec(n, help.get("ARGUMENTS")))
  const subcommands = childrenOf(command).map((child) => describeDescriptor(child, path))
  return {
    name,
    path,
    description: (help.get("DESCRIPTION")?.text ?? []).join(" "),
    options,
    args,
    subcommands,
    runsAlone: subcommands.length === 0 || options.length > 0 || args.length > 0
  }
}

/** The whole command tree under `command`, as data. */
export const describeCommand = <Name extends string, R, E, A>(command: Command.Command<Name, R, E, A>): CommandSpec =>
  describeDescriptor(command.descriptor as unknown as Joint, [])

/** The command `path` names (`["task", "add"]` under the root), if there is one. */
export const find = (root: CommandSpec, path: ReadonlyArray<string>): CommandSpec | undefined => {
  let here: CommandSpec | undefined = root
  for (const name of path) here = here?.subcommands.find((c) => c.name === name)
  return here
}

/** The option `--name` (or an alias) of `spec`. */
export const optionNamed = (spec: CommandSpec, name: string): OptionSpec | undefined => spec.options.find((o) => o.name === name || o.aliases.includes(name))
