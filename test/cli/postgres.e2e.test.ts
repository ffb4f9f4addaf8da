/**
 * The built `magi` as real processes on the PostgreSQL backend: two homes
 * (as two machines would have) sharing one database through
 * `MAGI_STORE_URL`, against the real server the test run started.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { Effect } from "effect"
import { owner } from "./cliSupport.js"
import { freshDatabaseSync, query } from "../pgSupport.js"

let db: { readonly url: string; readonly drop: () => Promise<void> }
beforeAll(async () => {
  db = await freshDatabaseSync()
})
afterAll(async () => {
  await db.drop()
})

/** The ids of the questions in the database, once there are `count`. */
const filedIds = async (count = 1): Promise<string[]> => {
  for (let i = 0; i < 1200; i++) {
    const rows = await Effect.runPromise(query(db.url, "SELECT id FROM magi_records WHERE kind = 'questions' ORDER BY id")).catch(() => [])
    if (rows.length >= count) return rows.map((r) => String(r.id))
    await new Promise((r) => setTimeout(r, 25))
  }
  throw new Error("magi ask never filed its question in the database")
}

describe("magi on PostgreSQL, as real processes", { timeout: 120_000 }, () => {
  it("delivers an answer given from another home to the waiting `magi ask`, with no question file on either", async () => {
    const laptop = owner()
    const phone = owner()
    const store = { MAGI_STORE_URL: db.url }
    const ask = laptop.start(["ask", "--summary", "Which backend?", "--choice", "SQLite", "--choice", "Redis"], { ...store, MAGI_RUN: "run-1" })
    const [id] = await filedIds()
    const listed = await phone.run(["answer", "--list"], store)
    expect(listed.code).toBe(0)
    expect(listed.stdout).toContain("Which backend?")
    const answered = await phone.run(["answer", id!, "--reply", "SQLite"], store)
    expect(answered.code).toBe(0)
    const done = await ask.done
    expect(done.code).toBe(0)
    expect(done.stdout).toBe("SQLite\n")
    // The records live in the database: neither home holds a question file.
    for (const home of [laptop, phone]) {
      const files = NodeFs.existsSync(home.questionsDir) ? NodeFs.readdirSync(home.questionsDir).filter((n) => n.endsWith(".json")) : []
      expect(files).toEqual([])
    }
    const [row] = await Effect.runPromise(query(db.url, "SELECT body FROM magi_records WHERE kind = 'questions' AND id = $1", [id]))
    expect(JSON.parse(String(row!.body))).toMatchObject({ status: "answered", answer: { choice: "SQLite" }, run: "run-1" })
    await db.drop().then(() => undefined)
    db = await freshDatabaseSync()
  })

  it("ends a slice with the exact --wait hint, and --wait from the other home prints the answer", async () => {
    const laptop = owner()
    const phone = owner()
    const store = { MAGI_STORE_URL: db.url }
    const first = await laptop.run(["ask", "--summary", "Ship it?", "--choice", "yes", "--choice", "no"], { ...store, MAGI_WAIT_SLICE: "1" })
    expect(first.code).toBe(0)
    const [id] = await filedIds()
    expect(first.stdout).toContain(`magi ask --wait ${id}`)
    const resumed = phone.start(["ask", "--wait", id!], { ...store, MAGI_WAIT_SLICE: "60" })
    await new Promise((r) => setTimeout(r, 500))
    expect((await laptop.run(["answer", "--reply", "yes"], store)).code).toBe(0)
    const done = await resumed.done
    expect(done.stdout).toBe("yes\n")
    await db.drop().then(() => undefined)
    db = await freshDatabaseSync()
  })

  it("says the database cannot be reached, naming it with the password masked, and exits 1", async () => {
    const o = owner()
    const url = "postgres://magi:s3cret-word@127.0.0.1:9/magi"
    const asked = await o.run(["ask", "--summary", "Anyone there?"], { MAGI_STORE_URL: url })
    expect(asked.code).toBe(1)
    expect(asked.stderr).toContain("postgres://magi:***@127.0.0.1:9/magi")
    expect(asked.stderr).not.toContain("s3cret-word")
    const listed = await o.run(["answer", "--list"], { MAGI_STORE_URL: url })
    expect(listed.code).toBe(1)
    expect(listed.stderr).not.toContain("s3cret-word")
  })

  it("refuses a store URL that is not PostgreSQL, saying what it takes", async () => {
    const o = owner()
    const asked = await o.run(["ask", "--summary", "Anyone there?"], { MAGI_STORE_URL: "mysql://root:hunter2@db/magi" })
    expect(asked.code).toBe(1)
    expect(asked.stderr).toContain("is not a PostgreSQL URL")
    expect(asked.stderr).not.toContain("hunter2")
  })

  it("keeps the queue in the database named only by the config file, for `magi task` as for every command", async () => {
    const laptop = owner()
    const configDir = NodePath.join(laptop.top, "config", "magi")
    NodeFs.mkdirSync(configDir, { recursive: true })
    NodeFs.writeFileSync(NodePath.join(configDir, "config.toml"), `[store]\nurl = "${db.url}"\n`)
    spawnSync("git", ["init", "-q", laptop.cwd])
    const filed = await laptop.run(["task", "add", "Document the retries", "--repo", laptop.cwd])
    expect(filed.code, filed.stderr).toBe(0)
    const rows = await Effect.runPromise(query(db.url, "SELECT body FROM magi_records WHERE kind = 'queue'"))
    expect(rows.map((r) => JSON.parse(String(r.body)).instruction)).toEqual(["Document the retries"])
    // Another machine, told by the environment: the same queue.
    const other = owner()
    const listed = await other.run(["task", "list"], { MAGI_STORE_URL: db.url })
    expect(listed.stdout).toContain("Document the retries")
    expect(
      NodeFs.existsSync(NodePath.join(laptop.home, "queue")) ? NodeFs.readdirSync(NodePath.join(laptop.home, "queue")).filter((n) => n.endsWith(".json")) : []
    ).toEqual([])
  })

  it("takes the database from `[store] url` in the config file", async () => {
    const laptop = owner()
    NodeFs.mkdirSync(NodePath.join(laptop.top, "config", "magi"), { recursive: true })
    NodeFs.writeFileSync(NodePath.join(laptop.top, "config", "magi", "config.toml"), `[store]\nurl = "${db.url}"\n`)
    const first = await laptop.run(["ask", "--summary", "From the config?", "--choice", "yes"], { MAGI_WAIT_SLICE: "1" })
    expect(first.code).toBe(0)
    expect(await filedIds()).toHaveLength(1)
  })
})

describe("magi on PostgreSQL when the database goes away mid-wait", { timeout: 180_000 }, () => {
  it("ends the slice pending with the exact --wait hint, and the answer given once it is back reaches the next --wait", async () => {
    // A server of this test's own, since it is stopped under a waiting asker.
    // @ts-expect-error: a plain .mjs script without types
    const { startServer } = (await import("../../scripts/pg/server.mjs")) as {
      startServer: () => Promise<{ url: string; stop: () => void; pause: () => void; resume: () => void }>
    }
    const server = await startServer()
    try {
      const laptop = owner()
      const store = { MAGI_STORE_URL: server.url }
      const ask = laptop.start(["ask", "--summary", "Still there?", "--choice", "yes", "--choice", "no"], { ...store, MAGI_WAIT_SLICE: "8" })
      for (let i = 0; i < 1200 && !ask.stderr().includes("waiting up to"); i++) await new Promise((r) => setTimeout(r, 25))
      server.pause()
      const pending = await ask.done
      expect(pending.code, pending.stderr).toBe(0)
      const id = /magi ask --wait (\S+)/.exec(pending.stdout)?.[1]
      expect(id).toBeDefined()
      server.resume()
      expect((await laptop.run(["answer", id!, "--reply", "yes"], store)).code).toBe(0)
      const again = await laptop.run(["ask", "--wait", id!], store)
      expect(again.stdout).toBe("yes\n")
    } finally {
      server.stop()
    }
  })
})
