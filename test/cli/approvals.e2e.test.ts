/**
 * `magi approvals list` and `magi approvals rm N` as real processes, on the
 * home folder and on PostgreSQL: the rules "Always allow" saved (records of
 * the kind `approval-rules`, planted as an approving process leaves them)
 * listed by number and removed, and the config's rules listed with where
 * they are written.
 */
import { describe, expect, it } from "vitest"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { storeBackends } from "./cliSupport.js"

const savedRule = (id: string, rule: string, repo = "/work/site") =>
  JSON.stringify({ schema: 1, id, rule, repo, added_at: "2026-12-01T12:00:00.000Z", question: "20261201-120000-ab12" })

for (const backend of storeBackends)
  describe(`magi approvals on ${backend.name}`, () => {
    it("says there are no rules, and how one is made, before any exists", async () => {
      const o = await backend.owner()
      const listed = await o.run(["approvals", "list"])
      expect(listed.code, listed.stderr).toBe(0)
      expect(listed.stdout).toContain("no approval rules")
      expect(listed.stdout).toContain("Always allow")
    }, 60_000)

    it("lists the saved rules oldest first by number, and rm N removes exactly that one", async () => {
      const o = await backend.owner()
      // The store exists (its schema migrated, on PostgreSQL) before rules are planted in it.
      expect((await o.run(["approvals", "list"])).code).toBe(0)
      o.plant("approval-rules", "20261201-120000000-000001", savedRule("20261201-120000000-000001", "Bash(git push:*)"))
      o.plant("approval-rules", "20261201-120500000-000002", savedRule("20261201-120500000-000002", "Bash(npm publish)"))
      o.plant("approval-rules", "20261201-121000000-000003", savedRule("20261201-121000000-000003", "Write(/work/site/a.ts)"))
      const before = await o.run(["approvals", "list"])
      expect(before.code, before.stderr).toBe(0)
      expect(before.stdout).toMatch(/1 {2}allow Bash\(git push:\*\) {2}in \/work\/site/)
      expect(before.stdout).toMatch(/2 {2}allow Bash\(npm publish\)/)
      expect(before.stdout).toMatch(/3 {2}allow Write\(\/work\/site\/a\.ts\)/)

      const removed = await o.run(["approvals", "rm", "2"])
      expect(removed.code, removed.stderr).toBe(0)
      expect(removed.stdout).toBe("removed allow Bash(npm publish) in /work/site\n")

      const after = await o.run(["approvals", "list", "--json"])
      expect(JSON.parse(after.stdout).saved.map((r: { rule: string }) => r.rule)).toEqual(["Bash(git push:*)", "Write(/work/site/a.ts)"])
    }, 60_000)

    it("refuses a number that names no saved rule, with one message and exit 1, removing nothing", async () => {
      const o = await backend.owner()
      // The store exists (its schema migrated, on PostgreSQL) before rules are planted in it.
      expect((await o.run(["approvals", "list"])).code).toBe(0)
      o.plant("approval-rules", "20261201-120000000-000001", savedRule("20261201-120000000-000001", "Bash(git push:*)"))
      for (const which of ["0", "2", "nope"]) {
        const r = await o.run(["approvals", "rm", which])
        expect(r.code, which).toBe(1)
        expect(r.stderr).toBe(`magi: no saved approval rule ${which}: give a number from 1 to 1 (magi approvals list), or a rule's id\n`)
      }
      const still = await o.run(["approvals", "list", "--json"])
      expect(JSON.parse(still.stdout).saved).toHaveLength(1)
    }, 60_000)

    it("lists the config's rules with the key each is written under, and says which it ignores and why", async () => {
      const o = await backend.owner()
      const config = NodePath.join(o.env.XDG_CONFIG_HOME!, "magi", "config.toml")
      NodeFs.mkdirSync(NodePath.dirname(config), { recursive: true })
      NodeFs.writeFileSync(
        config,
        ["[approvals]", 'allow = ["Bash(git status:*)"]', 'deny = ["Bash(rm -rf:*)"]', "[approvals.agents.codex]", 'allow = ["Bash(x"]', ""].join("\n")
      )
      const listed = await o.run(["approvals", "list"])
      expect(listed.code, listed.stderr).toBe(0)
      expect(listed.stdout).toContain("deny  Bash(rm -rf:*)  (approvals.deny)")
      expect(listed.stdout).toContain("allow Bash(git status:*)  (approvals.allow)")
      expect(listed.stdout).toContain("allow Bash(x  (approvals.agents.codex.allow)  IGNORED: `Bash(x` is not a rule")
    }, 60_000)
  })
