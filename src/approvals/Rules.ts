/**
 * Approval rules: which tool calls an agent may make without asking the
 * owner, and which it may never make. Pure: patterns in, a verdict out.
 *
 * A rule is a tool name, optionally with a pattern in parentheses:
 *
 * - `Read` — every call of the tool `Read`;
 * - `mcp__github__*` — every tool whose name matches the glob;
 * - `Bash(git status)` — exactly that command;
 * - `Bash(npm test:*)` — `npm test`, or `npm test` followed by a space and
 *   anything (claude's own spelling of a command prefix);
 * - `Bash(git log *)`, `Edit(/work/site/src/*)` — a glob: `*` is any run of
 *   characters (slashes and spaces included), `?` is one character.
 *
 * What the parenthesised pattern is matched against is the call's *subject*:
 * a shell tool's command, a file tool's path, a fetch's URL (`subjectOf`);
 * a tool with none of these is matched on its input as compact JSON.
 *
 * Deny beats allow. And an allow rule is strict where a shell is concerned:
 * it never matches a command that chains or redirects (`;`, `&`, `|`, a
 * backquote, `$(`, `>`, `<`, a newline) unless its own pattern holds that
 * character, so `Bash(git status:*)` cannot let `git status; rm -rf ~` through.
 * A deny rule is matched against the whole command *and* each part between
 * those operators, so `Bash(rm -rf:*)` also stops `cd build && rm -rf .`.
 */

/** One tool call as the agent CLI hands it to magi. */
export interface ToolCall {
  /** The tool's name as the CLI names it: `Bash`, `Edit`, `mcp__github__create_issue`. */
  readonly tool: string
  readonly input: Readonly<Record<string, unknown>>
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
  if (rule.pattern === undefined) return true
  const subject = subjectOf(call)
  if (CHAINING.test(subject) && !CHAINING.test(rule.pattern)) return false
  return patternMatches(rule.pattern, subject)
}

/** Does a deny rule stop `call`? Checked on the whole subject and on each part of a chained command. */
export const denies = (rule: Rule, call: ToolCall): boolean => {
  if (!globRegExp(rule.tool).test(call.tool)) return false
  if (rule.pattern === undefined) return true
  const subject = subjectOf(call)
  return patternMatches(rule.pattern, subject) || commandParts(subject).some((part) => patternMatches(rule.pattern!, part))
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
