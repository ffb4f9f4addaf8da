/**
 * Does a rule's command pattern (`rm -rf:*`, `git push --force:*`, `git
 * status`) match one simple command (`ShellCommands.SimpleCommand`)? Words,
 * not characters: the program by its name (`/bin/rm` and `\rm` are `rm`),
 * then the rule's other plain words (a subcommand such as `push`) as the
 * command's first ones, and the rule's flags among the command's flags,
 * in any order and spelling: `-rf` is `-fr` and `-r -f`, and where the
 * program is known, its long names and equivalents too (`rm --recursive
 * --force`; `git push --force-with-lease` and `git push origin +main` are a
 * forced push). Pure.
 */
import type { SimpleCommand } from "./ShellCommands.js"

/** A rule's pattern as words: `rm -rf:*` is the prefix `rm -rf`, `git status` exactly that. */
export interface CommandPattern {
  readonly words: ReadonlyArray<string>
  /** `:*`: the command may go on with more words. */
  readonly prefix: boolean
}

/** A pattern that reads as words; a glob (`git log *`) is matched as text instead. */
export const commandPattern = (pattern: string): CommandPattern | undefined => {
  const prefix = pattern.endsWith(":*")
  const body = prefix ? pattern.slice(0, -2) : pattern
  if (/[*?"'\\$`]/.test(body)) return undefined
  const words = body.trim().split(/\s+/).filter((w) => w !== "")
  return words.length === 0 ? undefined : { words, prefix }
}

const basename = (program: string) => program.slice(program.lastIndexOf("/") + 1)

/**
 * Flags that mean the same, by program (and subcommand): each spelling to
 * the one the match compares. Only what a deny rule is likely to name; an
 * unknown program's flags are compared as written (short ones split).
 */
const SAME_FLAGS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  rm: { "-R": "-r", "--recursive": "-r", "--force": "-f", "--dir": "-d" },
  "git push": { "--force": "-f", "--force-with-lease": "-f", "--force-if-includes": "-f", "--delete": "-d" },
  "git clean": { "--force": "-f" },
  "git branch": { "-D": "-d", "--delete": "-d", "--force": "-f" },
  "git checkout": { "--force": "-f" },
  "git reset": {},
  chmod: { "-R": "-r", "--recursive": "-r" },
  chown: { "-R": "-r", "--recursive": "-r" },
  cp: { "-R": "-r", "--recursive": "-r", "--force": "-f" },
  mv: { "--force": "-f" }
}

/** Programs whose options are long words behind one dash (`find -exec`): such a word is never a cluster of letters. */
const SINGLE_DASH_LONG = new Set(["find", "java", "go", "gcc", "g++", "clang", "cc", "ld", "ffmpeg", "openssl", "dd"])

/** git's options before its subcommand that take a value: `git -C dir push` is `git push`. */
const GIT_VALUE_OPTIONS = new Set(["-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env"])

interface Shape {
  /** The program and, for git, its subcommand: what SAME_FLAGS is keyed by. */
  readonly program: string
  readonly positionals: ReadonlyArray<string>
  readonly flags: ReadonlySet<string>
}

/** A command's words as its program, its plain words in order, and its flags normalised. */
const shapeOf = (words: ReadonlyArray<string>): Shape => {
  const program = basename(words[0] ?? "")
  let rest = words.slice(1)
  let key = program
  if (program === "git") {
    // git's own options come before the subcommand.
    let i = 0
    while (i < rest.length && rest[i]!.startsWith("-")) i += GIT_VALUE_OPTIONS.has(rest[i]!) ? 2 : 1
    if (i < rest.length) key = `git ${rest[i]}`
    rest = rest.slice(i)
  }
  const same = SAME_FLAGS[key] ?? {}
  const flags = new Set<string>()
  const positionals: Array<string> = []
  let optionsEnded = false
  for (const w of rest) {
    if (optionsEnded || w === "-" || !w.startsWith("-")) {
      positionals.push(w)
      // A `+` refspec forces that one ref; a `:` one deletes it.
      if (key === "git push" && positionals.length > 1 && w.startsWith("+")) flags.add("-f")
      if (key === "git push" && positionals.length > 1 && w.startsWith(":")) flags.add("-d")
      continue
    }
    if (w === "--") {
      optionsEnded = true
      continue
    }
    // `-rf` is `-r` and `-f`, except for a program whose one-dash words are long names.
    if (!w.startsWith("--") && /^-[A-Za-z0-9]{2,}$/.test(w) && !SINGLE_DASH_LONG.has(program)) {
      for (const c of w.slice(1)) flags.add(same[`-${c}`] ?? `-${c}`)
    } else {
      const name = w.startsWith("--") ? w.replace(/=.*$/s, "") : w
      flags.add(same[name] ?? name)
    }
  }
  return { program: key, positionals, flags }
}

/** Does `pattern` match `command`: program, subcommand words in order, flags as a set (all of them, exactly, without `:*`)? */
export const matchesCommand = (pattern: CommandPattern, command: SimpleCommand): boolean => {
  if (command.words.length === 0) return false
  const rule = shapeOf(pattern.words)
  const cmd = shapeOf(command.words)
  if (rule.program !== cmd.program) return false
  if (rule.positionals.length > cmd.positionals.length) return false
  if (rule.positionals.some((p, i) => cmd.positionals[i] !== p)) return false
  if (![...rule.flags].every((f) => cmd.flags.has(f))) return false
  if (pattern.prefix) return true
  return rule.positionals.length === cmd.positionals.length && [...cmd.flags].every((f) => rule.flags.has(f))
}
