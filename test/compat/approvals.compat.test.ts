/**
 * Tool approvals against the real, pinned `claude` on the local Anthropic
 * stand-in: with `[approvals] ask = true`, a writing seat's shell commands
 * that need permission reach the owner as approval questions through
 * `magi mcp`'s `approve` tool (claude's `--permission-prompt-tool`); Deny is
 * obeyed, Allow runs the command, and "Always allow" saves a rule that lets
 * the next matching command through with no question. Nothing leaves
 * 127.0.0.1 (see claude.compat.test.ts for the isolation).
 */
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { describe, expect, it } from "vitest"
import { audited, DEADLINE_MS, expectOwnerDecisionsObeyed, magiIn, OWNER_COMMANDS, repoOnTrunk, runAnsweredByOwner } from "./approvalsSupport.js"
import { afterTest, need } from "./processes.js"
import { type MessagesBody, claudeEnv, startAnthropic, textOf } from "./standins/anthropic.js"

/** Every tool result in the conversation so far, oldest first. */
const toolResults = (body: MessagesBody): string[] =>
  body.messages.flatMap((m) => typeof m.content === "string" ? [] : m.content.filter((b) => b.type === "tool_result").map((b) => textOf([b])))

describe("tool approvals with the real claude", () => {
  it(
    "puts each command that needs permission to the owner; Deny is obeyed, Allow runs it, and Always allow lets the next matching one through unasked",
    async () => {
      const claude = need("claude")
      const dir = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "magi-approvals-")))
      afterTest(() => NodeFs.rmSync(dir, { recursive: true, force: true }))
      const results: string[][] = []
      const api = await startAnthropic((body) => {
        const seen = toolResults(body)
        results.push(seen)
        const next = OWNER_COMMANDS[seen.length]
        return next === undefined ? { text: "Done." } : { tool: "Bash", input: { command: next, description: "Mark the repository" } }
      })
      afterTest(() => api.close())

      const repo = NodePath.join(dir, "repo")
      const git = repoOnTrunk(repo, { "README.md": "hello\n" })
      const claudeHome = NodePath.join(dir, "claude-home")
      NodeFs.mkdirSync(claudeHome)
      const { HOME: _h, CLAUDE_CONFIG_DIR: _c, ...network } = claudeEnv(api.url, claudeHome)
      const envToml = Object.entries({ ...network, IS_SANDBOX: "1" })
        .map(([k, v]) => `${k} = ${JSON.stringify(v)}`)
        .join(", ")
      NodeFs.writeFileSync(
        NodePath.join(repo, "magi.toml"),
        `[agents.claude]\nkind = "claude"\ncommand = ${
          JSON.stringify(claude)
        }\nenv = { ${envToml} }\n\n[notify]\ncommand = ["true"]\n\n[approvals]\nask = true\n`
      )
      const home = NodePath.join(dir, "magi-home")
      // IS_SANDBOX only ever from magi.toml: the machine running the suite may set one.
      const env = {
        IS_SANDBOX: undefined,
        MAGI_HOME: home,
        XDG_CONFIG_HOME: NodePath.join(dir, "no-config"),
        HOME: claudeHome,
        CLAUDE_CONFIG_DIR: NodePath.join(claudeHome, ".claude")
      }
      const magi = magiIn(repo, env)

      // The owner, at the terminal: each approval as it arrives.
      const answered = await runAnsweredByOwner(repo, env, home)

      // Three questions, the fourth command went through by the saved rule;
      // Deny obeyed, Allow and the rule ran their commands.
      expectOwnerDecisionsObeyed(answered, git)
      // The model was told of the denial.
      const last = results.at(-1)!
      expect(last).toHaveLength(4)
      expect(last[0]).toContain("The owner denied this tool call")
      // Every decision is in the audit log, by the owner or by the rule.
      expect(audited(home).map((e) => [e.decision, e.by, e.rule ?? null])).toEqual([
        ["deny", "owner", null],
        ["allow", "owner", null],
        ["allow", "owner", "Bash(git branch:*)"],
        ["allow", "rule", "Bash(git branch:*)"]
      ])
      expect(await magi("approvals", "list")).toContain("allow Bash(git branch:*)")
    },
    DEADLINE_MS + 60_000
  )
})
