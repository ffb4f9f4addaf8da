/**
 * The command line as plain data, read from the very `Command`s the parser
 * runs: every command's name, description, options and arguments. magi's
 * help and its usage checks are built from this, in one place, so an option
 * added to a command is described and checked with no second list to keep.
 *
 * @effect/cli's own help cannot hide its built-in options (`--wizard`,
 * `--completions`, `--log-level`) and says "A user-defined piece of text"
 * about every text option; its parser takes an unknown flag for a positional
 * argument. So magi reads the definitions here and speaks for itself. This
 * is the only module that looks inside @effect/cli's descriptors (their
 * shape is internal; `test/cli/CommandSpec.test.ts` pins what it relies on).
 */

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
  readonly name: string
  readonly kind: ValueKind
  readonly description: string
  readonly required: boolean
  readonly repeated: boolean
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
   * Runs by itself as well as through its subcommands (`magi web` serves,
   * `magi web pair` pairs): a command with options of its own. A bare group
   * (`magi task`) has none, and only shows its commands.
   */
  readonly runsAlone: boolean
}

// -- HelpDoc and Span as plain text -----------------------------------------

type Node = { readonly _tag: string; readonly [k: string]: unknown }

const spanText = (span: Node): string => {
  switch (span._tag) {
    case "Text":
    case "URI":
      return String(span.value)
    case "Sequence":
      return spanText(span.left as Node) + spanText(span.right as Node)
    default:
      return "value" in span && typeof span.value === "object" && span.value !== null ? spanText(span.value as Node) : ""
  }
}

const docText = (doc: Node): string => {
  switch (doc._tag) {
    case "Paragraph":
    case "Header":
      return spanText(doc.value as Node)
    case "Sequence":
      return [docText(doc.left as Node), docText(doc.right as Node)].filter((t) => t !== "").join(" ")
    case "Enumeration":
      return (doc.elements as ReadonlyArray<Node>).map(docText).join(" ")
    default:
      return ""
  }
}

// -- values -----------------------------------------------------------------

const kindOf = (primitive: Node): ValueKind => {
  switch (primitive._tag) {
    case "Bool":
      return "flag"
    case "Integer":
      return "integer"
    case "Float":
      return "number"
    case "Choice":
      return "choice"
    case "Path":
      return "path"
    case "DateTime":
      return "date"
    case "Secret":
    case "Redacted":
      return "secret"
    default:
      return "text"
  }
}

/**
 * What a value is called in usage. A kind says little (`TEXT`), so the
 * option's own name does when it names a thing (`--panel FILE`); the table
 * is small because magi's options are few.
 */
const PLACEHOLDERS: Record<string, string> = {
  timeout: "SECONDS",
  panel: "FILE.html",
  asset: "FILE",
  file: "FILE",
  thread: "ID",
  wait: "ID",
  settle: "ID",
  resume: "ID",
  repo: "DIR",
  home: "DIR",
  port: "PORT",
  bind: "ADDRESS",
  agent: "AGENT",
  after: "ID",
  priority: "N",
  "max-attempts": "N",
  choice: "CHOICE",
  to: "URL|DIR"
}

const placeholderFor = (name: string, kind: ValueKind, primitive: Node): string => {
  if (kind === "choice") return (primitive.alternatives as ReadonlyArray<[string, unknown]>).map(([a]) => a).join("|")
  return PLACEHOLDERS[name] ?? (kind === "integer" ? "N" : kind === "number" ? "NUMBER" : kind === "path" ? "PATH" : "TEXT")
}

const shown = (fallback: unknown): string | undefined => {
  if (fallback === undefined || fallback === null || fallback === false) return undefined
  // `Options.optional` is a default of `Option.none()`: nothing to show.
  if (typeof fallback === "object") return undefined
  return String(fallback)
}

// -- options ----------------------------------------------------------------

interface Mods {
  readonly required: boolean
  readonly repeated: boolean
  readonly fallback: string | undefined
}

const optionsOf = (node: Node, mods: Mods): ReadonlyArray<OptionSpec> => {
  switch (node._tag) {
    case "Empty":
      return []
    case "Single": {
      const primitive = node.primitiveType as Node
      const kind = kindOf(primitive)
      const name = String(node.name)
      return [
        {
          name: `--${name}`,
          aliases: (node.aliases as ReadonlyArray<string>).map((a) => (a.length === 1 ? `-${a}` : `--${a}`)),
          kind,
          placeholder: placeholderFor(name, kind, primitive),
          description: docText(node.description as Node),
          // A flag is never required: absent means off.
          required: mods.required && kind !== "flag",
          repeated: mods.repeated,
          fallback: mods.fallback,
          choices: kind === "choice" ? (primitive.alternatives as ReadonlyArray<[string, unknown]>).map(([a]) => a) : []
        }
      ]
    }
    case "Map":
      return optionsOf(node.options as Node, mods)
    case "Both":
      return [...optionsOf(node.left as Node, mods), ...optionsOf(node.right as Node, mods)]
    case "OrElse":
      return [...optionsOf(node.left as Node, { ...mods, required: false }), ...optionsOf(node.right as Node, { ...mods, required: false })]
    case "WithDefault":
      return optionsOf(node.options as Node, { ...mods, required: false, fallback: shown(node.fallback) })
    case "WithFallback":
      return optionsOf(node.options as Node, { ...mods, required: false })
    case "Variadic":
    case "KeyValueMap": {
      const min = node.min as { _tag: string; value?: number } | undefined
      const atLeastOne = min?._tag === "Some" && (min.value ?? 0) > 0
      return optionsOf(node.argumentOption as Node, { ...mods, required: atLeastOne, repeated: true })
    }
    default:
      return []
  }
}

// -- positional arguments ---------------------------------------------------

const argsOf = (node: Node, mods: Mods): ReadonlyArray<ArgSpec> => {
  switch (node._tag) {
    case "Empty":
      return []
    case "Single":
      return [
        {
          name: String(node.name),
          kind: kindOf(node.primitiveType as Node),
          description: docText(node.description as Node),
          required: mods.required,
          repeated: mods.repeated
        }
      ]
    case "Map":
      return argsOf(node.args as Node, mods)
    case "Both":
      return [...argsOf(node.left as Node, mods), ...argsOf(node.right as Node, mods)]
    case "WithDefault":
    case "WithFallbackConfig":
      return argsOf(node.args as Node, { ...mods, required: false })
    case "Variadic": {
      const min = node.min as { _tag: string; value?: number } | undefined
      return argsOf(node.args as Node, { ...mods, required: min?._tag === "Some" && (min.value ?? 0) > 0, repeated: true })
    }
    default:
      return []
  }
}

// -- commands ---------------------------------------------------------------

const REQUIRED: Mods = { required: true, repeated: false, fallback: undefined }

const describeNode = (node: Node, parent: ReadonlyArray<string>): CommandSpec => {
  switch (node._tag) {
    case "Standard":
    case "GetUserInput": {
      const name = String(node.name)
      return {
        name,
        path: [...parent, name],
        description: docText(node.description as Node),
        options: node._tag === "Standard" ? optionsOf(node.options as Node, REQUIRED) : [],
        args: node._tag === "Standard" ? argsOf(node.args as Node, REQUIRED) : [],
        subcommands: [],
        runsAlone: true
      }
    }
    case "Map":
      return describeNode(node.command as Node, parent)
    case "Subcommands": {
      const self = describeNode(node.parent as Node, parent)
      return {
        ...self,
        subcommands: (node.children as ReadonlyArray<Node>).map((c) => describeNode(c, self.path)),
        runsAlone: self.options.length > 0 || self.args.length > 0
      }
    }
    default:
      throw new Error(`magi cannot read @effect/cli command node ${node._tag}`)
  }
}

/** The whole command tree under `command`, as data. */
export const describeCommand = (command: { readonly descriptor: object }): CommandSpec =>
  describeNode(command.descriptor as unknown as Node, [])

/** The command `path` names (`["task", "add"]` under the root), if there is one. */
export const find = (root: CommandSpec, path: ReadonlyArray<string>): CommandSpec | undefined => {
  let here: CommandSpec | undefined = root
  for (const name of path) here = here?.subcommands.find((c) => c.name === name)
  return here
}

/** The option `--name` (or an alias) of `spec`. */
export const optionNamed = (spec: CommandSpec, name: string): OptionSpec | undefined =>
  spec.options.find((o) => o.name === name || o.aliases.includes(name))
