/**
 * Several hosts on one PostgreSQL store, as real processes, for what every
 * host must see the same way: a change made on one host reaches a page
 * served by another (the database's `LISTEN`), and a question is notified
 * once installation-wide however many hosts' loops could do it. Each host is
 * a home folder of its own with its own config (`[host] name`); every
 * process reaches the one database by `MAGI_STORE_URL`.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import Pg from "pg"
import { freshDatabaseSync } from "../pgSupport.js"
import { tempDirSync, until } from "../support.js"
import { makeHost, pageUrl, type Started, start } from "./hostsSupport.js"

/** Generous: the suite runs on a busy 2-core box. */
const PROCESS_DEADLINE = 90_000

// A database per test: each counts what is in it.
let db: { readonly url: string; readonly drop: () => Promise<void> }
beforeEach(async () => {
  db = await freshDatabaseSync()
})
afterEach(async () => {
  await db.drop()
})

/** The page's live stream, read as a browser's EventSource reads it: each `change` event's data. */
const follow = async (url: string) => {
  const changes: Array<{ revisions: Record<string, number> }> = []
  const controller = new AbortController()
  const response = await fetch(`${url}/api/events`, { signal: controller.signal, headers: { accept: "text/event-stream" } })
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  let buffered = ""
  const reading = (async () => {
    for (;;) {
      const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }))
      if (done) return
      buffered += decoder.decode(value, { stream: true })
      let end: number
      while ((end = buffered.indexOf("\n\n")) !== -1) {
        const event = buffered.slice(0, end)
        buffered = buffered.slice(end + 2)
        const data = event.split("\n").find((l) => l.startsWith("data: "))
        if (event.includes("event: change") && data !== undefined) changes.push(JSON.parse(data.slice(6)) as { revisions: Record<string, number> })
      }
    }
  })()
  return {
    changes,
    close: async () => {
      controller.abort()
      await reading
    }
  }
}

const rows = async (text: string, values: ReadonlyArray<unknown> = []) => {
  const client = new Pg.Client({ connectionString: db.url })
  await client.connect()
  try {
    return (await client.query(text, [...values])).rows as Array<Record<string, unknown>>
  } finally {
    await client.end()
  }
}

describe("several hosts, one inbox, live everywhere", { timeout: 300_000 }, () => {
  it("a page open on beta's magi web is told of a question gamma's agent asked, and lists it", async () => {
    const dir = tempDirSync()
    const beta = makeHost(db.url, dir, "beta")
    const gamma = makeHost(db.url, dir, "gamma")
    const web = start(beta, dir, {}, "web", "--bind", "127.0.0.1", "--port", "0", "--no-loop")
    let asker: Started | undefined
    try {
      const url = await pageUrl(web, "beta's page to listen", PROCESS_DEADLINE)
      const page = await follow(url)
      try {
        await until("the page's first event", () => page.changes.length > 0, PROCESS_DEADLINE)
        const before = page.changes[0]!.revisions.questions
        asker = start(gamma, dir, {}, "ask", "--summary", "Ship the migration tonight?", "--choice", "yes", "--choice", "no")
        await until("a change event naming a new revision of the questions", () => page.changes.some((c) => c.revisions.questions !== before), PROCESS_DEADLINE)
        // What the event told the page to fetch is there on the next request.
        const list = (await (await fetch(`${url}/api/questions`)).json()) as { open: Array<{ summary: string }> }
        expect(list.open.map((q) => q.summary)).toContain("Ship the migration tonight?")
      } finally {
        await page.close()
      }
    } finally {
      await asker?.stop()
      await web.stop()
    }
  })

  it("a question whose sandboxed asker on a host with no loop could not notify is published once, by one of two other hosts' loops", async () => {
    const dir = tempDirSync()
    const published = NodePath.join(dir, "published.log")
    // A stand-in notifier: the asker's sandbox has no network (it fails
    // there), the loops outside reach it and it records each publication.
    const notifier = NodePath.join(dir, "notify.mjs")
    NodeFs.writeFileSync(
      notifier,
      `import { appendFileSync } from "node:fs"
if (process.env.SANDBOXED === "1") { process.stderr.write("could not resolve the ntfy server\\n"); process.exit(1) }
appendFileSync(${JSON.stringify(published)}, JSON.stringify({ summary: process.argv[2], url: process.argv[3] }) + "\\n")
`
    )
    const notify = `[notify]\ncommand = ["node", ${JSON.stringify(notifier)}, "{summary}", "{url}"]\n[web]\npublic_url = "https://inbox.example.test"\n`
    const alpha = makeHost(db.url, dir, "alpha", { config: notify })
    const beta = makeHost(db.url, dir, "beta", { config: notify })
    // The asker's host runs no loop of its own: only the store tells the others.
    const gamma = makeHost(db.url, dir, "gamma", { config: notify })
    const publications = () =>
      NodeFs.existsSync(published)
        ? NodeFs.readFileSync(published, "utf8").trim().split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as { summary: string; url: string })
        : []
    const loops = [start(alpha, dir, {}, "serve"), start(beta, dir, {}, "serve")]
    let asker: Started | undefined
    try {
      await until(
        "both hosts' loops to run",
        () => loops.every((l) => l.stderr().includes("magi serve")),
        PROCESS_DEADLINE
      )
      asker = start(gamma, dir, { SANDBOXED: "1" }, "ask", "--summary", "Which region?", "--choice", "eu", "--choice", "us")
      await until("the question to be published", () => publications().length > 0, PROCESS_DEADLINE)
      const records = await rows(`SELECT body FROM magi_records WHERE kind = 'questions/announced'`)
      expect(records).toHaveLength(1)
      const record = records[0]
      const announced = JSON.parse(String(record!.body)) as { state: string; by: string; host: string }
      expect(announced).toMatchObject({ state: expect.stringMatching(/^(sending|sent)$/), by: "loop" })
      expect(["alpha", "beta"]).toContain(announced.host)
      // Both loops look at every question on each beat (five seconds) and on
      // every change: three beats later, the other has long seen it too.
      await new Promise((r) => setTimeout(r, 16_000))
      expect(publications()).toEqual([{ summary: "Which region?", url: "https://inbox.example.test/#/questions" }])
      const [settled] = await rows(`SELECT body FROM magi_records WHERE kind = 'questions/announced'`)
      expect(JSON.parse(String(settled!.body))).toMatchObject({ state: "sent", by: "loop", host: announced.host })
    } finally {
      await asker?.stop()
      for (const l of loops) await l.stop()
    }
  })
})
