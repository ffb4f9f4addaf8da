/**
 * `magi approvals hook opencode` as a real process, on the home folder and
 * on PostgreSQL: what magi's opencode plugin runs for a tool call that needs
 * permission, the call as JSON on stdin and the decision as JSON on stdout.
 * The deciding is the one claude's `approve` tool uses (Approvals.ts):
 * rules first, else a question to the owner, waited on for one slice.
 */
import { describe, expect, it } from "vitest"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { storeBackends } from "./cliSupport.js"

const HOOK = ["approvals", "hook", "opencode"]
/** The seat the call comes from, as magi sets it for every agent. */
const SEAT = { MAGI_RUN: "20261202-010000-aa11", MAGI_NODE: "implement", MAGI_SEAT: "impl", MAGI_AGENT: "oc" }
const push = (directory: string) => JSON.stringify({ tool: "bash", args: { command: "git push origin trunk", description: "Push" }, directory })

const auditLog = (home: string) =>
  NodeFs.readFileSync(NodePath.join(home, "approvals.jsonl"), "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l))

for (const backend of storeBackends)
  describe(`magi approvals hook opencode on ${backend.name}`, () => {
    it(
      "puts a call no rule decides to the owner; with no decision in the slice it refuses, saying to make the same call again; after Allow the same call runs, asking nothing more",
      async () => {
        const o = await backend.owner()
        const env = { ...SEAT, MAGI_REPO: o.cwd }
        const first = await o.run([...HOOK, "--slice", "1"], env, push(o.cwd))
        expect(first.code, first.stderr).toBe(0)
        const [id] = await o.filedId()
        const q = o.read(id!)
        expect(q.summary).toBe("Bash: `git push origin trunk`")
        expect(q.choices).toEqual(["Allow", "Deny", "Always allow Bash(git push:*)"])
        expect(q.seat).toBe("impl")
        expect(JSON.parse(first.stdout)).toEqual({
          decision: "deny",
          message: expect.stringContaining("Make exactly the same tool call again to keep waiting for the decision, or end your turn")
        })

        const answered = await o.run(["answer", id!, "--reply", "Allow"])
        expect(answered.code, answered.stderr).toBe(0)
        const again = await o.run([...HOOK, "--slice", "1"], env, push(o.cwd))
        expect(again.code, again.stderr).toBe(0)
        expect(JSON.parse(again.stdout)).toEqual({ decision: "allow" })
        expect(await o.filedId()).toEqual([id])
        expect(auditLog(o.home).map((e) => [e.tool, e.decision, e.by, e.question])).toEqual([["Bash", "allow", "owner", id]])
      },
      90_000
    )

    it("reads opencode's tool names and arguments as the rules spell them: a deny rule refuses and an allow rule lets through, neither asking", async () => {
      const o = await backend.owner()
      NodeFs.writeFileSync(
        NodePath.join(o.cwd, "magi.toml"),
        ["[approvals]", 'deny = ["Bash(rm -rf:*)"]', 'allow = ["Write(/srv/notes/*)"]', ""].join("\n")
      )
      // A repository's allow rules apply once the owner trusts its config.
      const trusted = await o.run(["approvals", "trust"])
      expect(trusted.code, trusted.stderr).toBe(0)
      const env = { ...SEAT, MAGI_REPO: o.cwd }
      const denied = await o.run(HOOK, env, JSON.stringify({ tool: "bash", args: { command: "cd build && rm -rf ." }, directory: o.cwd }))
      expect(denied.code, denied.stderr).toBe(0)
      expect(JSON.parse(denied.stdout)).toEqual({ decision: "deny", message: "magi's approval rule Bash(rm -rf:*) denies this tool call." })
      const written = await o.run(HOOK, env, JSON.stringify({ tool: "write", args: { filePath: "/srv/notes/today.md", content: "hi" }, directory: o.cwd }))
      expect(JSON.parse(written.stdout)).toEqual({ decision: "allow" })
      expect(auditLog(o.home).map((e) => [e.tool, e.decision, e.by, e.rule])).toEqual([
        ["Bash", "deny", "rule", "Bash(rm -rf:*)"],
        ["Write", "allow", "rule", "Write(/srv/notes/*)"]
      ])
      // No question was filed for either.
      expect(await o.filedId(0)).toEqual([])
    }, 60_000)

    it("denies, saying why, input that is no tool call, filing nothing", async () => {
      const o = await backend.owner()
      for (
        const [input, said] of [
          ["git push", "the hook's input is not JSON"],
          [JSON.stringify({ args: {} }), "the hook's input has no tool name"],
          [JSON.stringify({ tool: "bash", args: "ls" }), "the hook's input has no args object"]
        ] as const
      ) {
        // A hook always answers: the plugin throws the denial's message, and the model reads why.
        const r = await o.run(HOOK, SEAT, input)
        expect(r.code, input).toBe(0)
        const printed = JSON.parse(r.stdout) as { decision: string; message: string }
        expect(printed.decision).toBe("deny")
        expect(printed.message).toContain(`magi could not put this call to the owner, so it is denied: ${said}`)
        expect(r.stderr).toMatch(new RegExp(`^magi: ${said}`))
      }
      const wrong = await o.run(["approvals", "hook", "claude"], SEAT, push(o.cwd))
      expect(wrong.code).toBe(2)
      expect(await o.filedId(0)).toEqual([])
    }, 60_000)
  })
