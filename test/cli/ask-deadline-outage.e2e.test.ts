/**
 * A question's deadline that passes while the database is away (issue 28,
 * item 11), as real processes on a PostgreSQL server of the test's own
 * (stopped under a waiting asker; the suite's shared one never is): the
 * slice ends `pending` with the exact `--wait` hint, exit 0, as a slice that
 * ran out, saying the deadline waits for the store; once the store is back
 * the next `--wait` applies it.
 */
import { describe, expect, it } from "vitest"
import { owner } from "./cliSupport.js"

describe("magi ask when its deadline passes while the database is away", { timeout: 180_000 }, () => {
  it("ends the slice pending with the --wait hint, and the next --wait applies the deadline once the store is back", async () => {
    // @ts-expect-error: a plain .mjs script without types
    const { startServer } = (await import("../../scripts/pg/server.mjs")) as {
      startServer: () => Promise<{ url: string; stop: () => void; pause: () => void; resume: () => void }>
    }
    const server = await startServer()
    let down = false
    try {
      const laptop = owner()
      const store = { MAGI_STORE_URL: server.url }
      // A slice longer than the deadline: the deadline is what ends this call.
      const ask = laptop.start(["ask", "--summary", "Still there?", "--choice", "yes", "--choice", "no", "--timeout", "6"], {
        ...store,
        MAGI_WAIT_SLICE: "60"
      })
      for (let i = 0; i < 1200 && !ask.stderr().includes("waiting up to"); i++) await new Promise((r) => setTimeout(r, 25))
      server.pause()
      down = true
      const pending = await ask.done
      expect(pending.code, pending.stderr).toBe(0)
      expect(pending.stderr).not.toContain("Failed to acquire connection\n")
      expect(pending.stderr).toMatch(/deadline has passed, but the store cannot be reached .*; it is applied once the store answers/)
      const id = /magi ask --wait (\S+)/.exec(pending.stdout)?.[1]
      expect(id, pending.stdout).toBeDefined()
      server.resume()
      down = false
      const again = await laptop.run(["ask", "--wait", id!], store)
      expect(again.code).not.toBe(0)
      expect(again.stderr).toMatch(/unanswered|abandoned/)
      const listed = await laptop.run(["answer", "--list"], store)
      expect(listed.stdout).not.toContain("Still there?")
    } finally {
      if (down) server.resume()
      server.stop()
    }
  })
})
