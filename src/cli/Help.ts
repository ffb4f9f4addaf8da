/**
 * `magi … --help`, rendered by magi from the command definitions
 * (`CommandSpec`): one renderer for every command, so no command's help can
 * fall behind its options. A command may add usage lines, examples and
 * sections of its own (`HelpExtras`), kept beside the command.
 */
import type { ArgSpec, CommandSpec, OptionSpec } from "./CommandSpec.js"

export interface HelpExtras {
  /** Usage lines, instead of the one derived from the options (after `magi `). */
  readonly usage?: ReadonlyArray<string>
  /** `[command line, what it does]` */
  readonly examples?: ReadonlyArray<readonly [string, string]>
  /** Further sections: a title and its lines, already laid out. */
  readonly sections?: ReadonlyArray<{ readonly title: string; readonly lines: ReadonlyArray<string> }>
}

export interface HelpStyle {
  /** Bold headings: only on a terminal, and never with `NO_COLOR` set. */
  readonly color: boolean
  /** Columns to wrap to. */
  readonly width: number
}

/** https://no-color.org: any non-empty `NO_COLOR` turns colour off. */
export const styleFor = (stream: { readonly isTTY?: boolean; readonly columns?: number }, env: NodeJS.ProcessEnv): HelpStyle => ({
  color: stream.isTTY === true && (env.NO_COLOR ?? "") === "" && env.TERM !== "dumb",
  width: Math.max(40, Math.min(stream.isTTY === true && stream.columns ? stream.columns : 80, 100))
})

/** `text` wrapped to `width`, every line after the first indented by `indent`. */
export const wrap = (text: string, width: number, indent: number): ReadonlyArray<string> => {
  const lines: string[] = []
  let line = ""
  for (const word of text.split(/\s+/).filter((w) => w !== "")) {
    if (line !== "" && line.length + 1 + word.length > width) {
      lines.push(line)
      line = word
    } else line = line === "" ? word : `${line} ${word}`
  }
  if (line !== "") lines.push(line)
  return lines.map((l, i) => (i === 0 ? l : " ".repeat(indent) + l))
}

const argName = (a: ArgSpec) => a.name.replace(/^<|>$/g, "").toUpperCase()

const optionUsage = (o: OptionSpec) => (o.kind === "flag" ? o.name : `${o.name} ${o.placeholder}`)

/** The usage line derived from the definitions: required parts spelled out, the rest as `[options]`. */
const derivedUsage = (spec: CommandSpec): string => {
  const parts = [spec.path.join(" ")]
  if (spec.subcommands.length > 0) parts.push(spec.runsAlone ? "[COMMAND]" : "COMMAND")
  for (const o of spec.options.filter((o) => o.required)) parts.push(optionUsage(o) + (o.repeated ? "..." : ""))
  if (spec.options.some((o) => !o.required)) parts.push("[options]")
  for (const a of spec.args) {
    const name = argName(a) + (a.repeated ? "..." : "")
    parts.push(a.required ? name : `[${name}]`)
  }
  return parts.join(" ")
}

const notes = (o: OptionSpec): string => {
  const said: string[] = []
  if (o.required) said.push("required")
  if (o.repeated) said.push("repeatable")
  if (o.fallback !== undefined) said.push(`default: ${o.fallback}`)
  return said.length === 0 ? "" : ` (${said.join("; ")})`
}

/** Left column wide enough for most names; a longer one puts its text on the next line. */
const LEFT = 26

const twoColumns = (left: string, text: string, width: number): ReadonlyArray<string> => {
  const body = wrap(text, width - LEFT - 2, LEFT + 2)
  if (left.length + 2 > LEFT) return [`  ${left}`, ...body.map((l, i) => (i === 0 ? " ".repeat(LEFT + 2) + l : l))]
  return body.map((l, i) => (i === 0 ? `  ${left.padEnd(LEFT)}${l}` : l))
}

/** The help of `spec` (a command anywhere in the tree), as printed. */
export const render = (spec: CommandSpec, extras: HelpExtras | undefined, style: HelpStyle): string => {
  const heading = (title: string) => (style.color ? `\x1b[1m${title}\x1b[0m` : title)
  const out: string[] = []
  out.push(...wrap(`${spec.path.join(" ")}: ${spec.description}`, style.width, 2), "")
  out.push(heading("Usage:"))
  for (const line of extras?.usage ?? [derivedUsage(spec)]) out.push(...wrap(line, style.width - 2, 6).map((l) => `  ${l}`))
  if (spec.subcommands.length > 0) {
    out.push("", heading("Commands:"))
    for (const c of spec.subcommands) out.push(...twoColumns(c.name, c.description, style.width))
  }
  if (spec.args.length > 0) {
    out.push("", heading("Arguments:"))
    for (const a of spec.args) {
      const said = [a.required ? "required" : "optional", ...(a.repeated ? ["any number of words"] : [])].join("; ")
      out.push(...twoColumns(argName(a) + (a.repeated ? "..." : ""), `${a.description || describeArg(a)} (${said})`, style.width))
    }
  }
  if (spec.options.length > 0) {
    out.push("", heading("Options:"))
    for (const o of spec.options)
      out.push(...twoColumns([optionUsage(o), ...o.aliases].join(", "), o.description + notes(o), style.width))
  }
  for (const section of extras?.sections ?? []) {
    out.push("", heading(`${section.title}:`))
    for (const line of section.lines) {
      // A line keeps its own indent; what wraps goes two further in.
      const lead = line.length - line.trimStart().length + 2
      out.push(...wrap(line, style.width - lead, lead + 2).map((l, i) => (i === 0 ? " ".repeat(lead) + l : l)))
    }
  }
  if (extras?.examples !== undefined && extras.examples.length > 0) {
    out.push("", heading("Examples:"))
    for (const [line, what] of extras.examples) out.push(...wrap(`# ${what}`, style.width - 2, 4).map((l) => `  ${l}`), `  ${line}`)
  }
  if (spec.subcommands.length > 0) out.push("", `Run \`${spec.path.join(" ")} COMMAND --help\` for one command's options.`)
  return out.join("\n") + "\n"
}

const describeArg = (a: ArgSpec) => (a.repeated ? "words, joined with spaces" : "a value")

/**
 * The options a command's own help names (in its usage forms and examples,
 * each a `magi …` line) that the command it names does not define: the
 * hand-written forms cannot fall behind the definitions unnoticed
 * (`test/cli/Help.test.ts` runs it over every command's help).
 */
export const undefinedOptions = (root: CommandSpec, extras: HelpExtras): ReadonlyArray<string> => {
  const lines = [...(extras.usage ?? []), ...(extras.examples ?? []).map(([line]) => line)]
  return lines.flatMap((line) => {
    // Quoted words are an instruction's or a summary's text, not options.
    const words = line.replace(/"[^"]*"|'[^']*'/g, "TEXT").split(/\s+/).filter((w) => w !== "" && !w.startsWith("|"))
    if (words[0] !== root.name) return []
    let spec = root
    let i = 1
    for (; i < words.length; i++) {
      const child = spec.subcommands.find((c) => c.name === words[i])
      if (child === undefined) break
      spec = child
    }
    const end = words.indexOf("--", i)
    return (end < 0 ? words.slice(i) : words.slice(i, end))
      .flatMap((w) => [...w.matchAll(/(?:^|\[)(--?[a-z][\w-]*)/g)].map((m) => m[1]!))
      .filter((name) => !spec.options.some((o) => o.name === name || o.aliases.includes(name)))
      .map((name) => `${spec.path.join(" ")} ${name} (in \`${line}\`)`)
  })
}
