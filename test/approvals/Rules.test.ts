import { Effect } from "effect"
import { beforeAll, describe, expect, it } from "vitest"
import * as Rules from "../../src/approvals/Rules.js"
import { loadParser } from "../../src/approvals/ShellCommands.js"
import * as Approval from "../../src/approvals/Approval.js"

// The rules read shell commands with the parser Approvals.decide loads first.
beforeAll(() => Effect.runPromise(loadParser))

const rule = (text: string): Rules.Rule => {
  const r = Rules.parseRule(text)
  if (Rules.isBadRule(r)) throw new Error(r.why)
  return r
}
const bash = (command: string): Rules.ToolCall => ({ tool: "Bash", input: { command, description: "x" } })
const sourced = (texts: ReadonlyArray<string>) => texts.map((t) => ({ rule: rule(t), source: { _tag: "config" as const, scope: "approvals.allow" } }))

describe("approval rules", () => {
  it.each(
    [
      ["Bash", bash("anything at all"), true],
      ["Bash(git status)", bash("git status"), true],
      ["Bash(git status)", bash("git status --short"), false],
      ["Bash(npm test:*)", bash("npm test"), true],
      ["Bash(npm test:*)", bash("npm test -- --watch"), true],
      ["Bash(npm test:*)", bash("npm testing"), false],
      ["Bash(git log *)", bash("git log --oneline -5"), true],
      ["Edit(/work/site/src/*)", { tool: "Edit", input: { file_path: "/work/site/src/a/b.ts" } }, true],
      ["Edit(/work/site/src/*)", { tool: "Edit", input: { file_path: "/work/site/package.json" } }, false],
      ["mcp__github__*", { tool: "mcp__github__create_issue", input: { title: "t" } }, true],
      ["Read", bash("cat x"), false]
    ] as const
  )("%s allows %j: %s", (text, call, expected) => {
    expect(Rules.allows(rule(text), call)).toBe(expected)
  })

  it("never lets an allow rule for one command through a chained, substituted or redirected second one", () => {
    for (
      const command of [
        "git status; rm -rf ~",
        "git status && curl x | sh",
        "git status `rm x`",
        "git status $(rm x)",
        "git status > /etc/passwd",
        "git status\nrm -rf ~"
      ]
    )
      expect(Rules.allows(rule("Bash(git status:*)"), bash(command)), command).toBe(false)
  })

  it("stops a denied command hidden in a chain", () => {
    expect(Rules.denies(rule("Bash(rm -rf:*)"), bash("cd build && rm -rf ."))).toBe(true)
    expect(Rules.denies(rule("Bash(rm -rf:*)"), bash("echo $(rm -rf /tmp/x)"))).toBe(true)
    expect(Rules.denies(rule("Bash(rm -rf:*)"), bash("rm -r build"))).toBe(false)
  })

  it("lets a deny rule win over an allow rule, and asks when no rule matches", () => {
    const allow = sourced(["Bash"])
    const deny = sourced(["Bash(rm:*)"])
    expect(Rules.decide(bash("rm -f a"), allow, deny)._tag).toBe("deny")
    expect(Rules.decide(bash("ls"), allow, deny)._tag).toBe("allow")
    expect(Rules.decide(bash("ls"), [], deny)._tag).toBe("ask")
  })

  it("refuses what is no rule, saying why", () => {
    for (const text of ["", "   ", "Bash(", "Bash()", "rm -rf /", "Bash(x) y"]) expect(Rules.isBadRule(Rules.parseRule(text)), text).toBe(true)
  })

  it('suggests a narrow rule for "Always allow": program and subcommand, else the exact command or path', () => {
    expect(Rules.suggestRule(bash("git push origin main"))).toBe("Bash(git push:*)")
    expect(Rules.suggestRule(bash("rm -rf build/"))).toBe("Bash(rm -rf build/)")
    expect(Rules.suggestRule(bash("make && make install"))).toBe("Bash(make && make install)")
    expect(Rules.suggestRule({ tool: "Write", input: { file_path: "/r/a.ts", content: "x" } })).toBe("Write(/r/a.ts)")
    expect(Rules.suggestRule({ tool: "mcp__x__y", input: { a: 1 } })).toBe("mcp__x__y")
  })

  it("makes every suggested rule match the call it was suggested for", () => {
    for (const call of [bash("git push origin main"), bash("rm -rf build/"), bash("make && make install"), { tool: "Write", input: { file_path: "/r/a.ts" } }])
      expect(Rules.allows(rule(Rules.suggestRule(call)), call), JSON.stringify(call)).toBe(true)
  })
})

describe("an approval question", () => {
  const call = bash("rm -rf build/")
  const shown = Approval.questionFor({ call, run: "20261201-1200-ab12", seat: "impl", rule: "Bash(rm -rf build/)", repo: "/r" })

  it("names the tool and the command, shows the input as a code block, the seat and the run", () => {
    expect(shown.summary).toBe("Bash: `rm -rf build/`")
    expect(shown.detail).toContain('```json\n{\n  "command": "rm -rf build/"')
    expect(shown.detail).toContain("seat `impl`")
    expect(shown.detail).toContain("run `20261201-1200-ab12`")
  })

  it("offers Allow, Deny and an Always allow that shows the rule it saves", () => {
    expect(shown.choices).toEqual(["Allow", "Deny", "Always allow Bash(rm -rf build/)"])
    expect(shown.detail).toContain("saves the rule `Bash(rm -rf build/)` for /r")
  })

  it("keeps an input full of backquotes inside its code block", () => {
    const q = Approval.questionFor({ call: bash("echo ```` done"), run: "", seat: "s", rule: "r", repo: "/r" })
    expect(q.detail).toContain("`````json")
  })

  it("reads the owner's answer as the decision", () => {
    expect(Approval.decisionOf("Allow")).toEqual({ _tag: "allow", always: false })
    expect(Approval.decisionOf("Always allow Bash(x)")).toEqual({ _tag: "allow", always: true })
    expect(Approval.decisionOf("Deny")._tag).toBe("deny")
    expect(Approval.decisionOf("use make clean instead")).toMatchObject({ _tag: "deny", message: expect.stringContaining("use make clean instead") })
  })

  it("digests the same call the same, whatever the order of its input's keys", () => {
    expect(Approval.inputDigest({ tool: "Bash", input: { a: 1, b: 2 } })).toBe(Approval.inputDigest({ tool: "Bash", input: { b: 2, a: 1 } }))
    expect(Approval.inputDigest(bash("a"))).not.toBe(Approval.inputDigest(bash("b")))
  })

  it("answers claude's permission prompt in the shape its pinned CLI reads", () => {
    expect(JSON.parse(Approval.permissionPromptResult({ _tag: "allow", always: false }, { command: "ls" }))).toEqual({
      behavior: "allow",
      updatedInput: { command: "ls" },
      decisionClassification: "user_temporary"
    })
    expect(JSON.parse(Approval.permissionPromptResult({ _tag: "deny", message: "no" }, {}))).toMatchObject({ behavior: "deny", message: "no" })
  })
})
