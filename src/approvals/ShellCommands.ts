/**
 * A shell command line as the simple commands it runs, for the approval
 * rules (`Rules.ts`): `cd build && rm -rf .` is `cd build` and `rm -rf .`;
 * `(rm -rf /)`, `{ rm -rf /; }`, `if true; then rm -rf /; fi`, `$(rm -rf /)`
 * and backquotes all hold `rm -rf /`; `sudo`, `env X=1`, `command`, `exec`,
 * `nohup`, `time`, `nice`, `timeout`, `xargs` are looked through to the
 * command they run, `bash -c '…'`, `sh -c` and `eval` are read as the line
 * they run. Parsed by a kept POSIX shell parser (@ericcornelissen/bash-parser),
 * never by splitting on characters. Pure.
 *
 * What the parser cannot read (bash's `[[ ]]`, `$'…'`, `<(…)`, an unclosed
 * quote) is `Unparsed`: no allow rule matches it, so it goes to the owner.
 */
import { Effect } from "effect"

type Parse = (source: string) => unknown
let parseBash: Parse | undefined

/**
 * Load the parser, once per process, before the rules read a command. It is
 * loaded only when a tool call is decided: evaluating it costs more than a
 * hundred milliseconds, which every other magi command would pay at start.
 * Until it is loaded every line reads as `Unparsed`: allowed by no rule.
 */
export const loadParser: Effect.Effect<void> = Effect.suspend(() =>
  parseBash !== undefined
    ? Effect.void
    : Effect.promise(() => import("@ericcornelissen/bash-parser")).pipe(
      Effect.map((m) => {
        parseBash = m.default
      })
    )
)

/** One simple command: its words after quote removal, program first. */
export interface SimpleCommand {
  readonly words: ReadonlyArray<string>
  /** Every word is plain text: no parameter, command or arithmetic expansion left for the shell to fill in. */
  readonly literal: boolean
}

export type ParsedLine =
  | {
    readonly _tag: "Parsed"
    /** Every simple command the line may run, at any depth, each also looked through its wrappers. */
    readonly commands: ReadonlyArray<SimpleCommand>
    /** The line is one simple command, with no operator, redirection, compound command or expansion. */
    readonly single: boolean
    /** A `bash -c`/`eval` argument could not be read (not literal, or not parseable): what it runs is unknown. */
    readonly opaque: boolean
  }
  | { readonly _tag: "Unparsed"; readonly why: string }

/** How deep `bash -c "eval '…'"` nesting is followed before the line is taken as unreadable. */
const MAX_DEPTH = 8

type Node = { readonly [key: string]: unknown }
const isNode = (v: unknown): v is Node => typeof v === "object" && v !== null && !Array.isArray(v)

/** `${IFS}` or `$IFS` unquoted splits a word exactly as a space would (`rm -rf${IFS}/`). */
const IFS = /\$\{IFS\}|\$IFS(?![A-Za-z0-9_])/g

/** A parsed word as the words it stands for, and whether the shell leaves them as written. */
const wordsOf = (word: Node): { readonly words: ReadonlyArray<string>; readonly literal: boolean } => {
  const text = typeof word.text === "string" ? word.text : ""
  const expansions = Array.isArray(word.expansion) ? word.expansion.filter(isNode) : []
  if (expansions.length === 0) return { words: [text], literal: true }
  const onlyIfs = expansions.every((e) => e.type === "ParameterExpansion" && e.parameter === "IFS" && e.op === undefined)
  if (onlyIfs && !/["'\\]/.test(text)) return { words: text.split(IFS).flatMap((w) => (w === "" ? [] : [w])), literal: true }
  return { words: [text], literal: false }
}

/** Every `Command` node of the tree, at any depth: in lists, pipelines, compound commands, expansions, redirections. */
const commandNodes = (node: unknown, into: Array<Node>): Array<Node> => {
  if (Array.isArray(node)) { for (const n of node) commandNodes(n, into) }
  else if (isNode(node)) {
    if (node.type === "Command") into.push(node)
    for (const [key, value] of Object.entries(node)) if (key !== "loc") commandNodes(value, into)
  }
  return into
}

/** Is this tree one plain command: `Script` of one `Command` with no prefix, redirection, `&` or `!`? */
const isSingle = (tree: unknown): boolean => {
  if (!isNode(tree) || !Array.isArray(tree.commands) || tree.commands.length !== 1) return false
  const [only] = tree.commands as ReadonlyArray<unknown>
  if (!isNode(only) || only.type !== "Command" || only.prefix !== undefined || only.async === true || only.bang === true) return false
  return !(Array.isArray(only.suffix) && only.suffix.some((s) => isNode(s) && s.type !== "Word"))
}

const basename = (program: string) => program.slice(program.lastIndexOf("/") + 1)

/** Options of a wrapper that take the next word as their value, so it is not the wrapped program. */
const WRAPPERS: Readonly<Record<string, ReadonlySet<string>>> = {
  sudo: new Set(["-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T", "-R"]),
  doas: new Set(["-u", "-C"]),
  env: new Set(["-u", "-C", "--unset", "--chdir"]),
  command: new Set(),
  builtin: new Set(),
  exec: new Set(["-a"]),
  nohup: new Set(),
  time: new Set(["-f", "-o"]),
  nice: new Set(["-n"]),
  ionice: new Set(["-c", "-n", "-p"]),
  setsid: new Set(),
  stdbuf: new Set(["-i", "-o", "-e"]),
  timeout: new Set(["-s", "-k", "--signal", "--kill-after"]),
  xargs: new Set(["-I", "-n", "-P", "-d", "-E", "-L", "-s", "-a", "-i", "-l"])
}

/** Shells whose `-c STRING` runs STRING as a command line. */
const SHELLS = new Set(["sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox"])

interface Reading {
  readonly commands: Array<SimpleCommand>
  opaque: boolean
}

/** The command a wrapper runs, as words, or undefined when `words` is not a wrapper. */
const unwrapped = (words: ReadonlyArray<string>): ReadonlyArray<string> | undefined => {
  const takesValue = WRAPPERS[basename(words[0] ?? "")]
  if (takesValue === undefined) return undefined
  const program = basename(words[0]!)
  let i = 1
  // timeout's first operand is its duration, not the program.
  let durationLeft = program === "timeout"
  while (i < words.length) {
    const w = words[i]!
    if (w === "--") {
      i++
      break
    }
    if (program === "env" && /^[A-Za-z_][A-Za-z0-9_]*=/.test(w)) i++
    else if (w.startsWith("-") && w.length > 1) i += takesValue.has(w) ? 2 : 1
    else if (durationLeft) {
      durationLeft = false
      i++
    } else break
  }
  return words.slice(i)
}

/** `bash -c STRING`'s STRING (the word after a `-c`, or after a cluster holding `c` such as `-lc`). */
const shellScript = (words: ReadonlyArray<string>): number | undefined => {
  if (!SHELLS.has(basename(words[0] ?? ""))) return undefined
  for (let i = 1; i < words.length; i++) {
    const w = words[i]!
    if (!w.startsWith("-")) return undefined
    if (/^-[A-Za-z]*c[A-Za-z]*$/.test(w)) return i + 1 < words.length ? i + 1 : undefined
  }
  return undefined
}

/** Add one simple command and whatever it runs in turn (its wrapped command, its `-c` script, its `eval`ed words). */
const addCommand = (cmd: SimpleCommand, reading: Reading, depth: number): void => {
  reading.commands.push(cmd)
  const { words } = cmd
  if (words.length === 0) return
  const inner = unwrapped(words)
  if (inner !== undefined) {
    if (inner.length > 0) addCommand({ words: inner, literal: cmd.literal }, reading, depth)
    // `env -S 'rm -rf /'` splits its string into the command.
    const split = words.indexOf("-S")
    if (basename(words[0]!) === "env" && split > 0 && split + 1 < words.length) readLine(words[split + 1]!, reading, depth + 1, cmd.literal)
    return
  }
  const script = shellScript(words)
  if (script !== undefined) return readLine(words[script]!, reading, depth + 1, cmd.literal)
  if (basename(words[0]!) === "eval" && words.length > 1) readLine(words.slice(1).join(" "), reading, depth + 1, cmd.literal)
}

/** Parse `line` and add its commands; a line run by another (`bash -c`) that cannot be read makes the whole opaque. */
const readLine = (line: string, reading: Reading, depth: number, literal: boolean): void => {
  if (!literal || depth > MAX_DEPTH) {
    reading.opaque = true
    return
  }
  const tree = parseTree(line)
  if (typeof tree === "string") {
    reading.opaque = true
    return
  }
  for (const node of commandNodes(tree, [])) addCommand(simpleCommand(node), reading, depth)
}

const simpleCommand = (node: Node): SimpleCommand => {
  const parts = [node.name, ...(Array.isArray(node.suffix) ? node.suffix : [])].filter((w): w is Node => isNode(w) && w.type === "Word")
  const read = parts.map(wordsOf)
  return { words: read.flatMap((r) => r.words), literal: read.every((r) => r.literal) }
}

/** The parser's tree, or why it could not read the line (its own errors, and its crashes on syntax it does not know). */
const parseTree = (line: string): unknown => {
  if (parseBash === undefined) return "the shell parser is not loaded"
  try {
    return parseBash(line)
  } catch (e) {
    return e instanceof Error ? e.message.split("\n")[0]! : String(e)
  }
}

/** Longer than any command an agent types; a longer line is not parsed (the parser's time grows with it), so no allow rule matches it. */
export const MAX_LINE_LENGTH = 64 * 1024

/** `line` as the simple commands it runs, or why it cannot be read. */
export const parseLine = (line: string): ParsedLine => {
  if (line.length > MAX_LINE_LENGTH) return { _tag: "Unparsed", why: `the command is ${line.length} characters, over the ${MAX_LINE_LENGTH} magi reads` }
  const tree = parseTree(line)
  if (typeof tree === "string") return { _tag: "Unparsed", why: tree }
  const reading: Reading = { commands: [], opaque: false }
  for (const node of commandNodes(tree, [])) addCommand(simpleCommand(node), reading, 0)
  return { _tag: "Parsed", commands: reading.commands, single: isSingle(tree), opaque: reading.opaque }
}
