/**
 * Approval rules: which tool calls an agent may make without asking the
 * owner, and which it may never make. Pure: patterns in, a verdict out. A
 * rule is a tool name with an optional pattern matched against the call's
 * subject (`subjectOf`: a command, a path, a URL); deny beats allow, a deny
 * matches any simple command a shell line runs (`ShellCommands.ts`,
 * `CommandMatch.ts`), an allow only one plain command, and a path is
 * matched normalised and through its symlinks. The syntax and each case are
 * in docs/approvals.md ("Rules" and the sections under it).
 */

import * as NodePath from "node:path"
import { commandPattern, matchesCommand } from "./CommandMatch.js"
import { parseLine, type ParsedLine } from "./ShellCommands.js"

/** One tool call as the agent CLI hands it to magi. */
export interface ToolCall {
  /** The tool's name as the CLI names it: `Bash`, `Edit`, `mcp__github__create_issue`. */
  readonly tool: string
  readonly input: Readonly<Record<string, unknown>>
  /** A file tool's path as the filesystem resolves it (symlinks followed), when magi could read it: `FilePaths.withResolvedPath`. */
  readonly resolvedPath?: string
}

export interface Rule {
  /** The rule as the owner wrote it, shown back verbatim. */
  readonly text: string
  /** The tool name glob. */
  readonly tool: string
  /** The subject pattern, when the rule has parentheses. */
  readonly pattern: string | undefined
}

/** A rule that cannot be read, with why. */
export interface BadRule {
  readonly text: string
  readonly why: string
}

const RULE = /^([A-Za-z0-9_*?.-]+)(?:\((.*)\))?$/s

/** Read one rule as written, or say why it is no rule. */
export const parseRule = (text: string): Rule | BadRule => {
  const trimmed = text.trim()
  if (trimmed === "") return { text, why: "an empty rule matches nothing; write a tool name such as `Bash` or `Bash(git status:*)`" }
  const m = RULE.exec(trimmed)
  if (m === null)
    return {
      text,
      why:
        `\`${text}\` is not a rule: write a tool name (letters, digits, _ - . and * ?), optionally followed by a pattern in parentheses, e.g. \`Bash(npm test:*)\``
    }
  if (m[2] !== undefined && m[2].trim() === "") return { text, why: `\`${text}\` has empty parentheses; leave them out to match every call of ${m[1]}` }
  return { text: trimmed, tool: m[1]!, pattern: m[2] }
}

export const isBadRule = (r: Rule | BadRule): r is BadRule => "why" in r

/** The fields a subject is read from, in order: a shell's command, a file tool's path, a fetch's URL. */
const SUBJECT_FIELDS = ["command", "file_path", "notebook_path", "path", "url", "pattern"] as const

/** What a rule's parenthesised pattern is matched against. */
export const subjectOf = (call: ToolCall): string => {
  for (const field of SUBJECT_FIELDS) {
    const v = call.input[field]
    if (typeof v === "string") return v
  }
  return JSON.stringify(call.input)
}

/** The fields whose subject is a file path. */
const PATH_FIELDS = new Set(["file_path", "notebook_path", "path"])

/** The field the subject is read from, if any. */
const subjectField = (call: ToolCall): string | undefined => SUBJECT_FIELDS.find((f) => typeof call.input[f] === "string")

/** A file tool's path in each form a rule is matched against: as normalised (`..`, `.`, `//` gone), and as resolved on disk. */
export const pathForms = (call: ToolCall): ReadonlyArray<string> | undefined => {
  const field = subjectField(call)
  if (field === undefined || !PATH_FIELDS.has(field)) return undefined
  const normal = NodePath.posix.normalize(call.input[field] as string)
  return call.resolvedPath === undefined || call.resolvedPath === normal ? [normal] : [normal, call.resolvedPath]
}

/** The tools whose `command` is a shell command line (claude's, codex's, and opencode's read by claude's names). */
const SHELL_TOOLS = new Set(["Bash", "bash", "shell", "Shell"])

/** A shell tool's command as the commands it runs, or undefined for any other call. */
export const shellLine = (call: ToolCall): ParsedLine | undefined => {
  if (!SHELL_TOOLS.has(call.tool) || typeof call.input.command !== "string") return undefined
  // Parsed once per call, however many rules look at it.
  const known = parsedLines.get(call)
  if (known !== undefined) return known
  const line = parseLine(call.input.command)
  parsedLines.set(call, line)
  return line
}
const parsedLines = new WeakMap<ToolCall, ParsedLine>()

/** Shell syntax that chains, substitutes or redirects: an allow rule for one command must not let a second one through. */
const CHAINING = /[;&|`<>\n]|\$\(/

/** A glob (`*` any run, `?` one character) as an anchored regular expression. */
const globRegExp = (glob: string): RegExp =>
  new RegExp(
    `^${
      glob
        .split("")
        .map((c) => (c === "*" ? "[\\s\\S]*" : c === "?" ? "[\\s\\S]" : c.replace(/[\\^$.|+()[\]{}]/g, "\\$&")))
        .join("")
    }$`
  )

/** Does `subject` match the pattern of a rule (`prefix:*`, or a glob)? */
const patternMatches = (pattern: string, subject: string): boolean => {
  if (pattern.endsWith(":*")) {
    const prefix = pattern.slice(0, -2)
    return subject === prefix || (subject.startsWith(prefix) && /^\s/.test(subject.slice(prefix.length)))
  }
  return globRegExp(pattern).test(subject)
}

/** The parts of a shell command between chaining operators, trimmed. */
const commandParts = (command: string): ReadonlyArray<string> =>
  command
    .split(/&&|\|\||[;&|\n]|\$\(|`|\)/)
    .map((p) => p.trim())
    .filter((p) => p !== "")

/** Does an allow rule let `call` through? */
export const allows = (rule: Rule, call: ToolCall): boolean => {
  if (!globRegExp(rule.tool).test(call.tool)) return false
  // A line no deny rule could read whole is the owner's, even under a bare `Bash`.
  const unread = shellLine(call)
  if (unread !== undefined && (unread._tag === "Unparsed" || unread.opaque)) return false
  if (rule.pattern === undefined) return true
  const paths = pathForms(call)
  if (paths !== undefined) return paths.every((p) => patternMatches(rule.pattern!, p))
  const subject = subjectOf(call)
  const chains = CHAINING.test(rule.pattern)
  if (CHAINING.test(subject) && !chains) return false
  const line = shellLine(call)
  if (line !== undefined) {
    // Only what the parser read whole, as plain words: nothing the shell fills in later.
    if (line._tag === "Unparsed" || line.opaque || !line.commands.every((c) => c.literal)) return false
    if (!chains && !line.single) return false
  }
  return patternMatches(rule.pattern, subject)
}

/** Does a deny rule's pattern match one simple command: by its words, or as text for a glob? */
const deniesCommand = (pattern: string, words: ReadonlyArray<string>): boolean => {
  const asWords = commandPattern(pattern)
  return asWords === undefined ? patternMatches(pattern, words.join(" ")) : matchesCommand(asWords, { words, literal: true })
}

/** Does a deny rule stop `call`? Checked on the subject as written, each part of a chain, each command the parser finds, each form of a path. */
export const denies = (rule: Rule, call: ToolCall): boolean => {
  if (!globRegExp(rule.tool).test(call.tool)) return false
  if (rule.pattern === undefined) return true
  const pattern = rule.pattern
  const subject = subjectOf(call)
  if (patternMatches(pattern, subject) || commandParts(subject).some((part) => patternMatches(pattern, part))) return true
  if ((pathForms(call) ?? []).some((p) => patternMatches(pattern, p))) return true
  const line = shellLine(call)
  return line?._tag === "Parsed" && line.commands.some((c) => deniesCommand(pattern, c.words))
}

/** Where a rule came from, as `magi approvals list` and the audit log name it. */
export type RuleSource =
  | { readonly _tag: "config"; readonly scope: string }
  | { readonly _tag: "saved"; readonly id: string }

export interface SourcedRule {
  readonly rule: Rule
  readonly source: RuleSource
}

export type Verdict =
  | { readonly _tag: "allow"; readonly by: SourcedRule }
  | { readonly _tag: "deny"; readonly by: SourcedRule }
  | { readonly _tag: "ask" }

/** The verdict of the rules on one call: a deny rule that matches wins, then an allow rule, else the owner is asked. */
export const decide = (call: ToolCall, allow: ReadonlyArray<SourcedRule>, deny: ReadonlyArray<SourcedRule>): Verdict => {
  const denied = deny.find((r) => denies(r.rule, call))
  if (denied !== undefined) return { _tag: "deny", by: denied }
  const allowed = allow.find((r) => allows(r.rule, call))
  if (allowed !== undefined) return { _tag: "allow", by: allowed }
  return { _tag: "ask" }
}

/** Tools whose subject is a file: "always" allows that one file, not its folder. */
const FILE_TOOLS = new Set(["Edit", "Write", "MultiEdit", "NotebookEdit", "Read"])

/** A word that reads as a subcommand (`status`, `run-tests`), not a flag, a path or a value. */
const SUBCOMMAND = /^[a-z][a-z0-9-]*$/

/**
 * The rule "Always allow" would save for `call`, shown to the owner before
 * they pick it. Narrow on purpose: a shell command's program and its
 * subcommand (`Bash(git push:*)`), or the exact command when it has no
 * subcommand or chains (`Bash(rm -rf build/)`); a file tool's exact path; any
 * other tool by name.
 */
export const suggestRule = (call: ToolCall): string => {
  const subject = subjectOf(call)
  const hasSubject = SUBJECT_FIELDS.some((f) => typeof call.input[f] === "string")
  if (!hasSubject) return call.tool
  if (FILE_TOOLS.has(call.tool)) return `${call.tool}(${subject})`
  if (typeof call.input.command === "string") {
    const words = subject.trim().split(/\s+/)
    if (!CHAINING.test(subject) && words.length >= 2 && SUBCOMMAND.test(words[1]!) && !/[*?()]/.test(words[0]!))
      return `${call.tool}(${words[0]} ${words[1]}:*)`
    return `${call.tool}(${subject.trim()})`
  }
  return call.tool
}
