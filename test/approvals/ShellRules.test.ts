import { Effect } from "effect"
import { beforeAll, describe, expect, it } from "vitest"
import * as Rules from "../../src/approvals/Rules.js"
import { loadParser, parseLine } from "../../src/approvals/ShellCommands.js"

// The rules read shell commands with the parser Approvals.decide loads first.
beforeAll(() => Effect.runPromise(loadParser))

const rule = (text: string): Rules.Rule => {
  const r = Rules.parseRule(text)
  if (Rules.isBadRule(r)) throw new Error(r.why)
  return r
}
const bash = (command: string): Rules.ToolCall => ({ tool: "Bash", input: { command } })
const sourced = (texts: ReadonlyArray<string>) => texts.map((t) => ({ rule: rule(t), source: { _tag: "config" as const, scope: "approvals" } }))

describe("a deny rule for a command", () => {
  // Every way issue 28 item 3 got `rm -rf /` and a forced push past a prefix rule.
  it.each([
    ["Bash(rm -rf:*)", "rm  -rf /"],
    ["Bash(rm -rf:*)", "rm\t-rf /"],
    ["Bash(rm -rf:*)", "(rm -rf /)"],
    ["Bash(rm -rf:*)", "{ rm -rf /; }"],
    ["Bash(rm -rf:*)", "if true; then rm -rf /; fi"],
    ["Bash(rm -rf:*)", "while true; do rm -rf /; done"],
    ["Bash(rm -rf:*)", "sudo rm -rf /"],
    ["Bash(rm -rf:*)", "sudo -u root rm -rf /"],
    ["Bash(rm -rf:*)", "env rm -rf /"],
    ["Bash(rm -rf:*)", "env X=1 Y=2 rm -rf /"],
    ["Bash(rm -rf:*)", "X=1 rm -rf /"],
    ["Bash(rm -rf:*)", "command rm -rf /"],
    ["Bash(rm -rf:*)", "exec rm -rf /"],
    ["Bash(rm -rf:*)", "nohup rm -rf / &"],
    ["Bash(rm -rf:*)", "time rm -rf /"],
    ["Bash(rm -rf:*)", "timeout 5 nice -n 3 rm -rf /"],
    ["Bash(rm -rf:*)", "echo / | xargs rm -rf"],
    ["Bash(rm -rf:*)", "/bin/rm -rf /"],
    ["Bash(rm -rf:*)", "\\rm -rf /"],
    ["Bash(rm -rf:*)", "'rm' \"-rf\" /"],
    ["Bash(rm -rf:*)", "rm -fr /"],
    ["Bash(rm -rf:*)", "rm -r -f /"],
    ["Bash(rm -rf:*)", "rm -f -R /"],
    ["Bash(rm -rf:*)", "rm --recursive --force /"],
    ["Bash(rm -rf:*)", "rm -rf${IFS}/"],
    ["Bash(rm -rf:*)", "rm${IFS}-rf${IFS}/"],
    ["Bash(rm -rf:*)", "bash -c 'rm -rf /'"],
    ["Bash(rm -rf:*)", 'sh -c "rm -rf /"'],
    ["Bash(rm -rf:*)", "bash -lc 'cd / && rm -rf .'"],
    ["Bash(rm -rf:*)", "sh -c \"bash -c 'rm -rf /'\""],
    ["Bash(rm -rf:*)", "eval rm -rf /"],
    ["Bash(rm -rf:*)", "eval 'rm -rf /'"],
    ["Bash(rm -rf:*)", "echo $(rm -rf /)"],
    ["Bash(rm -rf:*)", "echo `rm -rf /`"],
    ["Bash(rm -rf:*)", "X=$(rm -rf /) true"],
    ["Bash(rm -rf:*)", "ls > $(rm -rf /)"],
    ["Bash(rm -rf:*)", "! rm -rf /"],
    ["Bash(rm -rf:*)", "for d in a b; do rm -rf $d; done"],
    ["Bash(rm -rf:*)", "case x in x) rm -rf /;; esac"],
    ["Bash(rm -rf:*)", "f() { rm -rf /; }; f"],
    ["Bash(rm -rf:*)", "true || rm -rf / && false"],
    ["Bash(git push --force:*)", "git push -f"],
    ["Bash(git push --force:*)", "git push origin +main"],
    ["Bash(git push --force:*)", "git push --force-with-lease origin main"],
    ["Bash(git push --force:*)", "git -C /work/site push --force"],
    ["Bash(git push --force:*)", "cd x && git push origin main -f"]
  ])("%s denies %j", (text, command) => {
    expect(Rules.denies(rule(text), bash(command))).toBe(true)
    // And wins over an allow rule for every command.
    expect(Rules.decide(bash(command), sourced(["Bash"]), sourced([text]))._tag).toBe("deny")
  })

  it.each([
    ["Bash(rm -rf:*)", "rm -r build"],
    ["Bash(rm -rf:*)", "rm -f a"],
    ["Bash(rm -rf:*)", "echo rm -rf /"],
    ["Bash(rm -rf:*)", "grep -rf patterns ."],
    ["Bash(git push --force:*)", "git push origin main"],
    ["Bash(git push --force:*)", "git fetch -f"],
    ["Bash(git status)", "git status --short"]
  ])("%s leaves %j alone", (text, command) => {
    expect(Rules.denies(rule(text), bash(command))).toBe(false)
  })
})

describe("an allow rule for a command", () => {
  it.each([
    ["Bash(git status:*)", "git status --short", true],
    ["Bash(git status:*)", "(git status)", false],
    ["Bash(git status:*)", "git status ${X:-$(rm x)}", false],
    ["Bash(git status:*)", "git status $HOME", false],
    ["Bash(git status:*)", "git status 'unclosed", false],
    ["Bash(git status:*)", "git status [[ x ]]", true],
    ["Bash(npm test:*)", "npm test && curl x | sh", false]
  ])("%s allows %j: %s", (text, command, expected) => {
    expect(Rules.allows(rule(text), bash(command))).toBe(expected)
  })

  it("allows nothing the parser cannot read, and says what it could not read", () => {
    const line = parseLine("echo 'unclosed")
    expect(line._tag).toBe("Unparsed")
    expect(Rules.decide(bash("echo 'unclosed"), sourced(["Bash(echo:*)"]), [])._tag).toBe("ask")
    expect(Rules.decide(bash('bash -c "$CMD"'), sourced(["Bash(bash -c:*)"]), [])._tag).toBe("ask")
    // Not even a rule allowing every command: no deny rule could see into it.
    expect(Rules.decide(bash("echo 'unclosed"), sourced(["Bash"]), sourced(["Bash(rm -rf:*)"]))._tag).toBe("ask")
    expect(Rules.decide(bash('bash -c "$CMD"'), sourced(["Bash"]), sourced(["Bash(rm -rf:*)"]))._tag).toBe("ask")
    expect(Rules.decide(bash("echo $HOME"), sourced(["Bash"]), sourced(["Bash(rm -rf:*)"]))._tag).toBe("allow")
  })
})

describe("a file rule", () => {
  const edit = (file_path: string, resolvedPath?: string): Rules.ToolCall => ({
    tool: "Edit",
    input: { file_path },
    ...(resolvedPath === undefined ? {} : { resolvedPath })
  })
  const allow = sourced(["Edit(/work/site/src/*)"])
  const deny = sourced(["Edit(/etc/*)"])
  it.each([
    [edit("/work/site/src/a.ts"), "allow"],
    [edit("/work/site/src/../../../etc/sudoers"), "deny"],
    [edit("/work/site/src/../package.json"), "ask"],
    [edit("/work/site/src/./a/../b.ts"), "allow"],
    [edit("//etc/passwd"), "deny"],
    [edit("/etc//passwd"), "deny"],
    [edit("/./etc/./passwd"), "deny"],
    // A link inside the folder that leads out of it.
    [edit("/work/site/src/link/sudoers", "/etc/sudoers"), "deny"],
    [edit("/work/site/src/link/x", "/home/me/x"), "ask"]
  ])("%j is %s", (call, verdict) => {
    expect(Rules.decide(call, allow, deny)._tag).toBe(verdict)
  })
})
