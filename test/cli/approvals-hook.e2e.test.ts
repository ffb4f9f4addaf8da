/**
 * `magi approvals hook codex` as a real process, on the home folder and on
 * PostgreSQL: codex's `PermissionRequest` request on stdin, codex's hook
 * answer on stdout. It decides by the config's rules, asks the owner and
 * waits one slice, denies with "make the same call again" when the slice
 * ends first, and the same call after the owner's answer gets the decision.
 * Whatever goes wrong is a denial that says why, never silence (which would
 * leave the call to codex's automatic reviewer).
 * (The real codex running it: test/compat/codex-approvals.compat.test.ts.)
 */
import { describe, expect, it } from "vitest"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { storeBackends } from "./cliSupport.js"

/** What codex 0.169.0 sends the hook for a shell command that asks to leave its sandbox. */
const request = (command: string, cwd: string) =>
  JSON.stringify({
    session_id: "01a23433-2fc3-7981-b17c-97389348e591",
    turn_id: "01a23433-2fe2-7e92-893c-26513f4f2afb",
    transcript_path: null,
    cwd,
    hook_event_name: "PermissionRequest",
    model: "gpt-5",
    permission_mode: "default",
    tool_name: "Bash",
    tool_input: { command, description: "Tag the release" }
  })

/** The decision in a hook's stdout, as codex reads it. */
const decisionOf = (stdout: string) => JSON.parse(stdout).hookSpecificOutput as { hookEventName: string; decision: { behavior: string; message?: string } }

/** The seat codex runs in, as magi sets it for the agents it starts. */
const SEAT = { MAGI_RUN: "20261202-010000-abcd", MAGI_NODE: "impl", MAGI_SEAT: "impl", MAGI_AGENT: "codex" }

for (const backend of storeBackends)
  describe(`magi approvals hook codex on ${backend.name}`, () => {
    it("denies by a config rule without asking, and logs it", async () => {
      const o = await backend.owner()
      NodeFs.writeFileSync(NodePath.join(o.cwd, "magi.toml"), '[approvals]\nask = true\ndeny = ["Bash(git push:*)"]\n')
      const r = await o.run(["approvals", "hook", "codex"], { ...SEAT, MAGI_REPO: o.cwd }, request("git push origin trunk", o.cwd))
      expect(r.code, r.stderr).toBe(0)
      expect(decisionOf(r.stdout)).toEqual({
        hookEventName: "PermissionRequest",
        decision: { behavior: "deny", message: "magi's approval rule Bash(git push:*) denies this tool call." }
      })
      const log = NodeFs.readFileSync(NodePath.join(o.home, "approvals.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l))
      expect(log).toMatchObject([{ tool: "Bash", decision: "deny", by: "rule", rule: "Bash(git push:*)", seat: "impl", run: SEAT.MAGI_RUN }])
    }, 60_000)

    it("asks the owner, denies with 'make the same call again' when the slice ends first, and the same call after the owner's Allow is allowed", async () => {
      const o = await backend.owner()
      NodeFs.writeFileSync(NodePath.join(o.cwd, "magi.toml"), '[approvals]\nask = true\n\n[notify]\ncommand = ["true"]\n')
      const env = { ...SEAT, MAGI_REPO: o.cwd }
      const first = await o.run(["approvals", "hook", "codex", "--slice", "1"], env, request("git tag v1", o.cwd))
      expect(first.code, first.stderr).toBe(0)
      const pending = decisionOf(first.stdout).decision
      expect(pending.behavior).toBe("deny")
      expect(pending.message).toContain("Make exactly the same tool call again to keep waiting for the decision, or end your turn")
      const [id] = await o.filedId()
      expect(o.read(id!)).toMatchObject({
        status: "open",
        summary: "Bash: `git tag v1`",
        seat: "impl",
        choices: ["Allow", "Deny", "Always allow Bash(git tag:*)"]
      })

      const answered = await o.run(["answer", id!, "--reply", "Allow"])
      expect(answered.code, answered.stderr).toBe(0)
      const again = await o.run(["approvals", "hook", "codex", "--slice", "1"], env, request("git tag v1", o.cwd))
      expect(again.code, again.stderr).toBe(0)
      expect(decisionOf(again.stdout).decision).toEqual({ behavior: "allow" })
      // The same call found its question: no second one was filed.
      expect(await o.filedId()).toEqual([id])
    }, 60_000)

    it("denies, saying why, a request it cannot read, and --slice 0 is a usage error", async () => {
      const o = await backend.owner()
      const r = await o.run(["approvals", "hook", "codex"], SEAT, '{"hook_event_name":"PreToolUse"}')
      expect(r.code).toBe(0)
      const d = decisionOf(r.stdout).decision
      expect(d.behavior).toBe("deny")
      expect(d.message).toContain("magi could not put this call to the owner, so it is denied: the request on stdin is not codex's PermissionRequest")
      expect(r.stderr).toMatch(/^magi: the request on stdin is not codex's PermissionRequest/)
      const zero = await o.run(["approvals", "hook", "codex", "--slice", "0"], SEAT, request("ls", o.cwd))
      expect(zero.code).toBe(2)
      expect(zero.stderr).toContain("--slice must be a number of seconds above 0")
    }, 60_000)
  })
