/**
 * A seat's turn as it happens, on the run's page (issue 32.1), on a
 * phone-sized Chromium against the built `magi web`: an event appended to
 * the seat's live log shows on the page, as text, the page keeping a
 * bounded number of lines; the stream itself picks up after Last-Event-ID
 * and never takes the seat for a path.
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { describe, expect, it } from "vitest"
import { sampleRun } from "../runSupport.js"
import { tempDirSync } from "../support.js"
import { phoneSession } from "./browser-support.js"
import { seedRun, startWeb } from "./web-support.js"

const HOSTILE = `<a href="javascript:document.title='owned'">click</a><img src=x onerror="document.title='owned'">`
const ID = "20261204-090000-1ive"

let seq = 0
const line = (turn: number, e: Record<string, unknown>) => `${JSON.stringify({ seq: ++seq, at: Date.now(), turn, ...e })}\n`

/** Read an SSE response until `done` says enough, or a generous deadline passes. */
const readFrames = async (url: string, headers: Record<string, string>, done: (text: string) => boolean) => {
  const ac = new AbortController()
  const res = await fetch(url, { headers, signal: ac.signal })
  let text = ""
  if (res.body === null) return { status: res.status, text }
  const reader = res.body.getReader()
  const deadline = setTimeout(() => ac.abort(), 15_000)
  try {
    while (!done(text)) {
      const { value, done: ended } = await reader.read()
      if (ended) break
      text += new TextDecoder().decode(value)
    }
  } catch {
    // Aborted at the deadline: the assertions say what was missing.
  } finally {
    clearTimeout(deadline)
    ac.abort()
  }
  return { status: res.status, text }
}

describe("a seat's live output on the run's page", () => {
  const session = phoneSession()

  it("shows an event appended to the seat's log, as text, within the page's bound", { timeout: 90_000 }, async () => {
    const home = tempDirSync()
    seq = 0
    seedRun(home, sampleRun(ID, { status: "running", seats: [{ key: "impl", agent: "codex", turns: 1, session: "t", write: true }] }), {
      "impl.live.jsonl": line(1, { kind: "message", text: "Reading the store." })
    })
    const log = NodePath.join(home, "runs", ID, "artifacts", "impl.live.jsonl")
    const visit = await session.open(() => startWeb(home))
    try {
      const page = visit.page
      await page.goto(`${visit.web.url}/#/runs/${ID}`)
      const events = page.locator(".run-detail section.live .live-events")
      await events.locator(".live-message").first().waitFor({ timeout: 15_000 })
      expect(await events.locator(".live-message").first().innerText()).toBe("Reading the store.")

      // Appended while the page is open: the call, then its result filling it in.
      const wrote = Date.now()
      NodeFs.appendFileSync(log, line(1, { kind: "tool", id: "c1", name: "shell", target: `npm test ${HOSTILE}` }))
      const tool = events.locator(".live-tool")
      await tool.waitFor({ timeout: 15_000 })
      console.log(`live: an appended event showed on the page after ${Date.now() - wrote} ms`)
      NodeFs.appendFileSync(log, line(1, { kind: "result", id: "c1", text: HOSTILE, failed: true }))
      await page.waitForFunction(() => document.querySelector(".live-tool .tool-result") !== null, undefined, { timeout: 15_000 })
      expect(await tool.innerText()).toBe(`✗ shell npm test ${HOSTILE} → ${HOSTILE}`)
      expect(await page.locator(".run-detail section.live a, .run-detail section.live img").count()).toBe(0)
      expect(await page.title()).not.toBe("owned")

      // Many more than the page keeps: the newest stay, the count is bounded.
      NodeFs.appendFileSync(
        log,
        Array.from({ length: 400 }, (_, i) => line(1, { kind: "message", text: `step ${i}` })).join("") + line(1, { kind: "end", text: "", failed: false })
      )
      await page.waitForFunction(() => document.querySelector(".live-events")?.lastElementChild?.textContent === "turn 1 ended", undefined, { timeout: 15_000 })
      expect(await events.locator("li").count()).toBeLessThanOrEqual(200)
      expect(await events.locator("li").nth(-2).innerText()).toBe("step 399")
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390)
    } finally {
      await session.close()
    }
  })

  it("the stream picks up after Last-Event-ID, and a seat not in the record is refused, never read as a path", { timeout: 60_000 }, async () => {
    const home = tempDirSync()
    seq = 0
    seedRun(home, sampleRun(ID, { status: "done", seats: [{ key: "impl", agent: "codex", turns: 1, session: "t", write: true }] }), {
      "impl.live.jsonl": [1, 2, 3].map((n) => line(1, { kind: "message", text: `m${n}` })).join("")
    })
    // A file a crafted seat would name, if the seat were a path.
    NodeFs.writeFileSync(NodePath.join(home, "runs", ID, "secret.live.jsonl"), line(1, { kind: "message", text: "secret" }))
    const visit = await session.open(() => startWeb(home))
    try {
      const url = `${visit.web.url}/api/runs/${ID}/live?seat=impl`
      const resumed = await readFrames(url, { "last-event-id": "2" }, (t) => t.includes("id: 3"))
      expect(resumed.status).toBe(200)
      expect(resumed.text).toContain('"text":"m3"')
      expect(resumed.text).not.toContain('"text":"m2"')
      const whole = await readFrames(url, {}, (t) => t.includes("id: 3"))
      expect(whole.text.match(/^id: \d+$/gm)).toEqual(["id: 1", "id: 2", "id: 3"])
      const crafted = await fetch(`${visit.web.url}/api/runs/${ID}/live?seat=${encodeURIComponent("../secret")}`)
      expect(crafted.status).toBe(404)
      const said = (await crafted.json()) as { error: string }
      expect(JSON.stringify(said)).toContain("has no seat")
      expect(JSON.stringify(said)).not.toContain('secret"')
    } finally {
      await session.close()
    }
  })
})
