/**
 * `--help` and usage mistakes, as the built `magi` prints them (issue 11,
 * points 8 and 9).
 */
import { describe, expect, it } from "vitest"
import { spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import { MAGI, owner } from "./cliSupport.js"
import { ASK_OUTCOMES, outcomesMarkdown } from "../../src/cli/askOutcomes.js"

const ANSI = /\x1b\[/

/** The commands a help lists under "Commands:". */
const commandsIn = (help: string): string[] => {
  const at = help.split("\n").indexOf("Commands:")
  if (at < 0) return []
  const names: string[] = []
  for (const line of help.split("\n").slice(at + 1)) {
    if (line.trim() === "") break
    const m = /^ {2}(\S+)/.exec(line)
    if (m) names.push(m[1]!)
  }
  return names
}

/** Each entry of a section ("Options:", "Arguments:") and the words describing it. */
const entriesIn = (help: string, section: string): Array<{ name: string; text: string }> => {
  const lines = help.split("\n")
  const at = lines.indexOf(section)
  if (at < 0) return []
  const entries: Array<{ name: string; text: string }> = []
  for (const line of lines.slice(at + 1)) {
    if (line.trim() === "") break
    const head = /^ {2}(\S.*?)(?: {2,}(.*))?$/.exec(line)
    if (head && !line.startsWith("    ")) entries.push({ name: head[1]!, text: head[2] ?? "" })
    else entries.at(-1)!.text += " " + line.trim()
  }
  return entries
}

describe("magi --help", () => {
  it("describes every option and argument of every command, hides @effect/cli's built-ins, and prints no ANSI into a pipe", { timeout: 180_000 }, async () => {
    const o = owner()
    const seen: string[] = []
    const walk = async (path: string[]) => {
      const done = await o.run([...path, "--help"])
      expect(done.code, path.join(" ")).toBe(0)
      expect(done.stderr).toBe("")
      const help = done.stdout
      seen.push(path.join(" ") || "magi")
      expect(help).not.toMatch(ANSI)
      expect(help).not.toContain("A user-defined piece of text")
      for (const builtIn of ["--completions", "--log-level", "--wizard"]) expect(help, path.join(" ")).not.toContain(builtIn)
      for (const { name, text } of [...entriesIn(help, "Options:"), ...entriesIn(help, "Arguments:")])
        expect(text.trim(), `${path.join(" ")} ${name}`).not.toBe("")
      for (const child of commandsIn(help)) await walk([...path, child])
    }
    await walk([])
    // Every command and every task subcommand was reached.
    expect(seen).toEqual(expect.arrayContaining(["magi", "ask", "answer", "run", "show", "task", "task add", "task priority", "doctor"]))
    expect(seen.length).toBeGreaterThan(20)
  })

  it("marks a required argument required, and `-h` is the same as --help", async () => {
    const o = owner()
    const help = await o.run(["task", "show", "-h"])
    expect(help.code).toBe(0)
    expect(entriesIn(help.stdout, "Arguments:")).toEqual([{ name: "ID", text: expect.stringContaining("(required)") }])
    expect(help.stdout).toContain("Usage:\n  magi task show [options] ID\n")
  })

  it("magi help and magi help CMD print what --help prints", async () => {
    const o = owner()
    for (const path of [[], ["task", "add"], ["start"]]) {
      const asked = await o.run(["help", ...path])
      expect(asked.code, path.join(" ")).toBe(0)
      expect(asked.stdout, path.join(" ")).toBe((await o.run([...path, "--help"])).stdout)
    }
    // `magi start`'s help offers the --port that a taken port's refusal tells the owner to pass.
    expect((await o.run(["help", "start"])).stdout).toContain("--port")
  })

  it("magi start --port serves on that port, as the refusal of a taken one says to pass", { timeout: 60_000 }, async () => {
    const o = owner()
    const started = o.start(["start", "--port", "0"])
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = ""
        started.child.stdout!.on("data", (c) => {
          out += c
          if (out.includes("\n")) resolve(out.split("\n")[0]!)
        })
        void started.done.then((d) => reject(new Error(`magi start ended (${d.code}): ${d.stderr}`)))
      })
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
      expect(url).not.toBe("http://127.0.0.1:7878")
      expect((await fetch(`${url}/api/health`)).ok).toBe(true)
    } finally {
      started.child.kill("SIGTERM")
      await started.done
    }
  })

  it("gives magi ask its forms, how panels name their files, examples, and the exit-code table docs/protocol.md has", async () => {
    const o = owner()
    const { stdout } = await o.run(["ask", "--help"])
    expect(stdout).toContain("magi ask --wait ID")
    expect(stdout).toContain("Examples:\n")
    expect(stdout).toContain('magi ask --summary "Which backend for the cache?" --choice SQLite --choice Redis')
    expect(stdout).toContain('<img src="chart.png">')
    expect(stdout).toContain("Outcomes and exit codes:")
    for (const row of ASK_OUTCOMES) expect(stdout.replace(/\s+/g, " ")).toContain(`${row.outcome}: exit ${row.exit}`)
    expect(entriesIn(stdout, "Options:").find((e) => e.name.startsWith("--summary"))!.text).toContain("required")
  })

  // The agent protocol's reference is docs/protocol.md; the README only links to it.
  it("keeps docs/protocol.md's exit-code table the same as the one magi ask --help prints", () => {
    expect(NodeFs.readFileSync("docs/protocol.md", "utf8")).toContain(outcomesMarkdown())
  })

  it("prints bold headings on a terminal, and none when NO_COLOR is set", () => {
    // `script` gives magi a real terminal for stdout.
    const onTty = (env: Record<string, string>) =>
      spawnSync("script", ["-qec", `${process.execPath} ${MAGI} ask --help`, "/dev/null"], {
        env: { PATH: process.env.PATH ?? "", TERM: "xterm", ...env },
        encoding: "utf8",
        timeout: 60_000
      }).stdout
    expect(onTty({})).toContain("\x1b[1mUsage:\x1b[0m")
    const plain = onTty({ NO_COLOR: "1" })
    expect(plain).toContain("Usage:")
    expect(plain).not.toMatch(ANSI)
  })
})

describe("usage mistakes", () => {
  const mistake = async (args: string[]) => {
    const o = owner()
    const done = await o.run(args)
    expect(done.code, args.join(" ")).toBe(2)
    expect(done.stdout).toBe("")
    const lines = done.stderr.trimEnd().split("\n")
    expect(lines, done.stderr).toHaveLength(1)
    expect(lines[0]).toMatch(/^magi: /)
    expect(NodeFs.existsSync(o.questionsDir)).toBe(false)
    return lines[0]!
  }

  it("suggests the flag meant by a near miss", async () => {
    expect(await mistake(["ask", "--sumary", "Ship it?"])).toBe("magi: magi ask has no option --sumary; did you mean --summary?")
    expect(await mistake(["answer", "--rply", "yes"])).toContain("did you mean --reply?")
  })

  it("suggests the command or flag a slip meant: a dropped letter or two swapped ones", async () => {
    expect(await mistake(["tsk"])).toContain("magi has no command `tsk`; did you mean `magi task`?")
    expect(await mistake(["web", "--prot", "8080"])).toBe("magi: magi web has no option --prot; did you mean --port?")
  })

  it("says what a priority is when given a word for one", async () => {
    expect(await mistake(["task", "priority", "ab12", "high"])).toBe(
      "magi: magi task priority: the priority is a whole number, higher runs first (10 before 0, 0 before -5); `high` is not one"
    )
  })

  it("never takes an unknown flag for a question id", async () => {
    const line = await mistake(["answer", "--bogus"])
    expect(line).toContain("magi answer has no option --bogus; its options: --reply, --say, --withdraw, --reason, --list, --all, --json")
    expect(line).not.toContain("no question matches")
  })

  it("names the flag whose value is wrong or missing", async () => {
    expect(await mistake(["ask", "--summary", "x", "--timeout", "soon"])).toBe("magi: --timeout takes a whole number (SECONDS), not `soon`")
    expect(await mistake(["answer", "--reply"])).toMatch(/^magi: --reply needs a value \(TEXT\)/)
    expect(await mistake(["answer", "--reply", "--say", "hm"])).toMatch(/^magi: --reply needs a value/)
    expect(await mistake(["web", "--port", "eighty"])).toContain("--port takes a whole number")
    expect(await mistake(["start", "--port", "70000"])).toBe("magi: --port must be 0-65535, not 70000")
  })

  it("says which command was meant, and what a command takes", async () => {
    expect(await mistake(["anwser"])).toContain("magi has no command `anwser`; did you mean `magi answer`?")
    expect(await mistake(["ask", "Which backend?"])).toBe("magi: magi ask takes options only, not `Which backend?` (magi ask --help lists them)")
    expect(await mistake(["task", "show"])).toContain("magi task show needs <id>")
    expect(await mistake(["ask", "--summary", "a", "--summary", "b"])).toContain("--summary was given more than once")
  })

  it("says a missing panel file or asset in one line, and files nothing", { timeout: 60_000 }, async () => {
    const o = owner()
    const panel = await o.run(["ask", "--summary", "Look", "--panel", "nope.html"])
    expect(panel.code).toBe(1)
    expect(panel.stderr).toBe("magi: --panel nope.html: there is no such file\n")
    NodeFs.writeFileSync(`${o.cwd}/p.html`, "<p>hi</p>")
    const asset = await o.run(["ask", "--summary", "Look", "--panel", "p.html", "--asset", "gone.png"])
    expect(asset.code).toBe(1)
    expect(asset.stderr).toBe("magi: panel asset gone.png: there is no such file\n")
    expect(NodeFs.existsSync(o.questionsDir) ? NodeFs.readdirSync(o.questionsDir).filter((n) => n.endsWith(".json")) : []).toEqual([])
  })
})

describe("magi completion", () => {
  /** What bash offers for the last of `words` with magi's script sourced, as a user pressing TAB would get. */
  const offered = (script: string, words: string): string[] => {
    const done = spawnSync(
      "bash",
      [
        "-c",
        'source "$1"; COMP_WORDS=($2); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); ' +
        '_magi_bash_completions magi "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"; printf "%s\\n" "${COMPREPLY[@]}"',
        "bash",
        script,
        words
      ],
      { encoding: "utf8", timeout: 60_000 }
    )
    expect(done.stderr).toBe("")
    return done.stdout.split("\n").filter((w) => w !== "")
  }

  it("prints a bash script that completes commands, subcommands two levels down and their options, not the hidden built-ins", async () => {
    const o = owner()
    const printed = await o.run(["completion", "bash"])
    expect(printed.code).toBe(0)
    const script = `${o.cwd}/magi.bash`
    NodeFs.writeFileSync(script, printed.stdout)
    expect(offered(script, "magi ta")).toEqual(["task"])
    expect(offered(script, "magi task a")).toEqual(["add"])
    expect(offered(script, "magi task add --pr")).toEqual(["--priority"])
    expect(offered(script, "magi web --p")).toEqual(["--port"])
    expect(offered(script, "magi --")).toEqual(["--help", "--version"])
  })

  it("prints zsh and fish scripts, and refuses another shell in one line", async () => {
    const o = owner()
    expect((await o.run(["completion", "zsh"])).stdout).toContain("#compdef magi")
    const fish = await o.run(["completion", "fish"])
    expect(fish.stdout).toContain('complete -c magi -n "__fish_use_subcommand" -f -a "task"')
    expect(fish.stdout).not.toContain("wizard")
    const tcsh = await o.run(["completion", "tcsh"])
    expect(tcsh.code).toBe(2)
    expect(tcsh.stderr).toBe("magi: magi completion: the shell is one of bash, zsh, fish, not `tcsh`\n")
  })
})
