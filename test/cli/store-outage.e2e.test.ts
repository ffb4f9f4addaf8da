/**
 * Issue 28, point 10: the store going away in the middle of a command. The
 * test's own database; `magi answer`'s connection is terminated by the
 * server (`pg_terminate_backend`, from the test's superuser connection) while
 * it waits for the question's lock, which the test holds so the moment is
 * certain. The refusal is one line saying what failed and what to do.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Effect } from "effect"
import Pg from "pg"
import { owner } from "./cliSupport.js"
import { freshDatabaseSync, query } from "../pgSupport.js"

let db: { readonly url: string; readonly drop: () => Promise<void> }
beforeAll(async () => {
  db = await freshDatabaseSync()
})
afterAll(async () => {
  await db.drop()
})

const until = async <A>(what: string, probe: () => Promise<A | undefined>): Promise<A> => {
  for (let i = 0; i < 2400; i++) {
    const got = await probe().catch(() => undefined)
    if (got !== undefined) return got
    await new Promise((r) => setTimeout(r, 25))
  }
  throw new Error(`gave up waiting for ${what}`)
}

describe("a store that stops answering mid-command", { timeout: 180_000 }, () => {
  it("`magi answer` says in one line which store failed, while doing what, and what to do; no stack trace", async () => {
    const home = owner()
    const store = { MAGI_STORE_URL: db.url }
    // Asked, and the asker gone (as an agent's shell kills it): the question stays open.
    const asking = home.start(["ask", "--summary", "Ship it?", "--choice", "yes", "--choice", "no"], store)
    const id = await until("the question to be filed", async () => {
      const rows = await Effect.runPromise(query(db.url, "SELECT id FROM magi_records WHERE kind = 'questions'"))
      return rows.length > 0 ? String(rows[0]!.id) : undefined
    })
    asking.child.kill("SIGTERM")
    await asking.done
    // The test holds the question's lock: the answer waits for it, with its connection open.
    const holder = new Pg.Client({ connectionString: db.url })
    await holder.connect()
    try {
      await holder.query("BEGIN")
      await holder.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [`questions/${id}`])
      const answer = home.start(["answer", id!, "--reply", "yes"], store)
      const waiting = await until("the answer to wait on the lock", async () => {
        const rows = await Effect.runPromise(
          query(db.url, "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> $1", [
            (holder as unknown as { processID: number }).processID
          ])
        )
        return rows.length > 0 ? Number(rows[0]!.pid) : undefined
      })
      await Effect.runPromise(query(db.url, "SELECT pg_terminate_backend($1)", [waiting]))
      const done = await answer.done
      expect(done.code).toBe(1)
      const lines = done.stderr.trimEnd().split("\n")
      expect(lines, done.stderr).toHaveLength(1)
      expect(done.stderr).not.toMatch(/^\s+at /m)
      expect(done.stderr).not.toContain("unexpected failure")
      expect(lines[0]).toMatch(/^magi: the store at postgres(ql)?:\/\/\S+ stopped answering as magi tried to hold question \S+: /)
      expect(lines[0]).toContain(id!)
      expect(lines[0]).toContain("Check the server and try again.")
      // The password never printed.
      const password = new URL(db.url).password
      if (password !== "") expect(lines[0]).not.toContain(`:${password}@`)
    } finally {
      await holder.query("ROLLBACK").catch(() => undefined)
      await holder.end()
    }
    // Nothing half-written: the question is still open, and answers once the store is back.
    const again = await home.run(["answer", id!, "--reply", "yes"], store)
    expect(again.code, again.stderr).toBe(0)
  })
})
