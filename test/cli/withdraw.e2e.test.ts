/**
 * Withdrawing a question (issue 27.2): the owner's `magi answer ID
 * --withdraw`, and the waiting asker's `abandoned` outcome in the owner's
 * words, on both backends; an answer already given cannot be withdrawn.
 */
import { describe, expect, it } from "vitest"
import { storeBackends } from "./cliSupport.js"

for (const backend of storeBackends)
  describe(`magi answer --withdraw, records in ${backend.name}`, { timeout: 120_000 }, () => {
    it("tells the waiting asker no answer will come, in the owner's words, and exits 1", async () => {
      const o = await backend.owner()
      const asking = o.start(["ask", "--summary", "Which storage backend?", "--choice", "SQLite", "--choice", "Redis"])
      const [id] = await o.filedId()
      const withdrawn = await o.run(["answer", id!, "--withdraw", "--reason", "we are dropping the cache."])
      expect(withdrawn.code, withdrawn.stderr).toBe(0)
      expect(withdrawn.stdout).toContain(`withdrew ${id!.split("-").at(-1)} Which storage backend?: the agent is told no answer will come\n`)
      const asked = await asking.done
      expect(asked.code).toBe(1)
      expect(asked.stdout).toBe("")
      expect(asked.stderr).toContain("is abandoned: the owner withdrew it: we are dropping the cache; no answer will come")
      expect(o.read(id!)).toMatchObject({ status: "abandoned" })
      // The next wait reads the same.
      const again = await o.run(["ask", "--wait", id!, "--json"])
      expect(again.code).toBe(1)
      expect(JSON.parse(again.stdout)).toMatchObject({
        outcome: "abandoned",
        message: expect.stringContaining("the owner withdrew it: we are dropping the cache")
      })
    })

    it("refuses to withdraw an answered question, which would lose the answer, and needs the id named", async () => {
      const o = await backend.owner()
      const asking = o.start(["ask", "--summary", "Ship it?", "--choice", "yes", "--choice", "no"], { MAGI_WAIT_SLICE: "1" })
      const [id] = await o.filedId()
      await asking.done
      const bare = await o.run(["answer", "--withdraw"])
      expect(bare.code).toBe(2)
      expect(bare.stderr).toBe("magi: --withdraw needs the question's id: magi answer ID --withdraw (magi answer lists them)\n")
      expect((await o.run(["answer", id!, "--reply", "yes"])).code).toBe(0)
      const refused = await o.run(["answer", id!, "--withdraw"])
      expect(refused.code).toBe(1)
      expect(refused.stderr).toContain("was already answered; there is nothing to withdraw")
      expect(o.read(id!)).toMatchObject({ status: "answered" })
    })
  })
