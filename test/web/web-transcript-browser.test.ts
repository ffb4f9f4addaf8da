/**
 * A finished turn is readable on the run's page (issue 32.1): its `.out`
 * read as messages, tool calls with a one-line result, and errors, on a
 * phone-sized Chromium against the built `magi web`. A tool result holding
 * HTML or a `javascript:` link is shown as its characters, never run.
 */
import { describe, expect, it } from "vitest"
import { sampleRun } from "../runSupport.js"
import { tempDirSync } from "../support.js"
import { phoneSession } from "./browser-support.js"
import { seedRun, startWeb } from "./web-support.js"

const HOSTILE = `<a href="javascript:document.title='owned'">click</a><img src=x onerror="document.title='owned'">`

describe("a run's turns on its page", () => {
  const session = phoneSession()

  it("reads each finished turn as a transcript, as text", { timeout: 60_000 }, async () => {
    const home = tempDirSync()
    const id = "20261203-111500-7a7a"
    const events = [
      { type: "thread.started", thread_id: "t" },
      {
        type: "item.completed",
        item: { type: "command_execution", command: "npm test", aggregated_output: `\u001b[32m${HOSTILE}\u001b[0m\nmore`, exit_code: 1 }
      },
      { type: "item.completed", item: { type: "agent_message", text: `Fixed it ${HOSTILE}` } }
    ]
    seedRun(home, sampleRun(id, { status: "done", seats: [{ key: "impl", agent: "codex", turns: 2, session: "t", write: true }] }), {
      "impl-1.out": "first turn's words\n",
      "impl-2.out": events.map((e) => JSON.stringify(e)).join("\n") + "\n"
    })
    const visit = await session.open(() => startWeb(home))
    try {
      const page = visit.page
      await page.goto(`${visit.web.url}/#/runs/${id}`)
      const turns = page.locator(".run-detail .turns details.transcript")
      await turns.first().waitFor({ timeout: 10_000 })
      expect(await turns.locator("summary").allInnerTexts()).toEqual(["impl · turn 2", "impl · turn 1"])
      await turns.first().locator("summary").click()
      const tool = turns.first().locator(".tx.tool")
      await tool.waitFor({ timeout: 10_000 })
      expect(await tool.innerText()).toBe(`✗ shell npm test → ${HOSTILE}`)
      expect(await turns.first().locator(".tx.message").innerText()).toBe(`Fixed it ${HOSTILE}`)
      expect(await page.locator(".run-detail .turns a, .run-detail .turns img").count()).toBe(0)
      expect(await page.title()).not.toBe("owned")
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390)
    } finally {
      await session.close()
    }
  })
})
