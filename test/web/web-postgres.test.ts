/**
 * `magi web` on the PostgreSQL backend, as real processes: an agent asks
 * through a home of its own with `MAGI_STORE_URL`, the page served from
 * another home lists the question, shows its panel from the database and
 * takes the answer, which reaches the waiting `magi ask`.
 */
import { describe, expect, it } from "vitest"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { owner } from "../cli/cliSupport.js"
import { freshDatabaseSync } from "../pgSupport.js"
import { tempDirSync } from "../support.js"
import { eventually, postJson, request, startWeb } from "./web-support.js"

describe("magi web on PostgreSQL", { timeout: 120_000 }, () => {
  it("lists a question another machine asked, serves its panel from the database, and its answer reaches the asker", async () => {
    const db = await freshDatabaseSync()
    const agent = owner({ storeUrl: db.url })
    const web = await startWeb(tempDirSync(), 0, { env: { MAGI_STORE_URL: db.url } })
    try {
      expect(web.stderr()).toContain("serving the questions in PostgreSQL at postgres://magi_test:***@127.0.0.1")
      expect(web.stderr()).not.toContain(":magi_test@")
      const panel = NodePath.join(agent.cwd, "why.html")
      NodeFs.writeFileSync(panel, '<h1>Redis is faster</h1><img src="chart.svg">')
      NodeFs.writeFileSync(NodePath.join(agent.cwd, "chart.svg"), "<svg/>")
      const ask = agent.start([
        "ask",
        "--summary",
        "Which backend?",
        "--choice",
        "SQLite",
        "--choice",
        "Redis",
        "--panel",
        panel,
        "--asset",
        NodePath.join(agent.cwd, "chart.svg")
      ])
      const [id] = await agent.filedId()
      const listed = await eventually("the page to list the question", async () => {
        const reply = await request(`${web.url}/api/questions`)
        const open = (reply.json() as { open: Array<{ id: string; summary: string }> }).open
        return open.some((q) => q.id === id) ? open : undefined
      }, 30_000)
      expect(listed.find((q) => q.id === id)?.summary).toBe("Which backend?")
      const html = await request(`${web.url}/api/questions/${id}/panel`)
      expect(html.status).toBe(200)
      expect(html.text).toContain("Redis is faster")
      const svg = await request(`${web.url}/api/questions/${id}/asset/chart.svg`)
      expect(svg.text).toBe("<svg/>")
      const answered = await postJson(`${web.url}/api/questions/${id}/answer`, { choice: "Redis" }, { origin: web.url })
      expect(answered.status).toBe(200)
      const done = await ask.done
      expect(done.code).toBe(0)
      expect(done.stdout).toBe("Redis\n")
      const history = await request(`${web.url}/api/questions/history?limit=5`)
      expect((history.json() as { history: Array<{ id: string; status: string }> }).history).toContainEqual(expect.objectContaining({ id, status: "answered" }))
    } finally {
      await web.stop()
      await db.drop()
    }
  })
})
