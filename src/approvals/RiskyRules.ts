/**
 * Allow rules that let more through than they read: a prefix rule (`:*`) or
 * a glob for a program one of whose options runs another program or writes
 * a file (`Bash(git log:*)` allows `git log --output=/etc/x`; `Bash(npm
 * test:*)` allows `npm test --script-shell=/tmp/evil`). `magi doctor` flags
 * them; magi cannot tell such an option from a harmless one for every
 * program, so the owner decides whether the rule stays. Pure.
 */
import { type Rule } from "./Rules.js"

/** Programs with an option or argument that runs or writes things, with one example of it. */
const RISKY: Readonly<Record<string, string>> = {
  git: "`git -c core.pager=…`/`-c core.fsmonitor=…` runs a program, `git log --output=FILE` writes a file",
  npm: "`--script-shell=PROGRAM` runs any program, and scripts run the package's own code",
  npx: "runs any package's code",
  pnpm: "`--script-shell`, and scripts run the package's own code",
  yarn: "scripts run the package's own code",
  find: "`-exec`/`-execdir` run a program, `-delete` and `-fprint` write",
  sed: "`-i` rewrites files and the `e` command runs one",
  awk: "`system()` runs a program and `print >` writes a file",
  gawk: "`system()` runs a program and `print >` writes a file",
  xargs: "runs whatever program its arguments name",
  env: "runs whatever program its arguments name",
  sudo: "runs whatever program its arguments name, as another user",
  bash: "`-c` runs any command line",
  sh: "`-c` runs any command line",
  zsh: "`-c` runs any command line",
  eval: "runs any command line",
  make: "runs the recipes of any Makefile (`-f FILE`)",
  tar: "`--to-command=`/`--checkpoint-action=exec=` run a program, extracting writes anywhere",
  rsync: "`-e PROGRAM` runs a program, and it writes where told",
  ssh: "`-o ProxyCommand=` runs a program",
  curl: "`-o FILE` writes a file, `-K FILE` reads options from one",
  wget: "`-O FILE` writes a file",
  python: "`-c` runs any code",
  python3: "`-c` runs any code",
  node: "`-e` runs any code",
  perl: "`-e` runs any code",
  ruby: "`-e` runs any code",
  docker: "runs containers with whatever mounts it is given",
  less: "`!command` runs a program",
  vim: "`:!command` runs a program",
  cargo: "build scripts and `--config` run code",
  go: "`go run`, `go generate` and `-exec` run programs",
  pytest: "runs the repository's own code and plugins",
  vitest: "runs the repository's own code"
}

const SHELL_TOOL = /^(Bash|bash|shell|Shell|\*)$/

/** Why `rule` (an allow rule) lets more through than it reads, or undefined. */
export const riskyAllow = (rule: Rule): string | undefined => {
  if (!SHELL_TOOL.test(rule.tool)) return undefined
  if (rule.pattern === undefined) return "it allows every shell command"
  const open = rule.pattern.endsWith(":*") || rule.pattern.includes("*")
  if (!open) return undefined
  const program = rule.pattern.replace(/:\*$/, "").trim().split(/\s+/)[0] ?? ""
  const name = program.slice(program.lastIndexOf("/") + 1)
  if (name === "" || name.includes("*")) return "its program is a pattern: it allows every command whose name matches"
  const why = RISKY[name]
  return why === undefined ? undefined : `it allows any options of ${name}, and ${why}`
}
