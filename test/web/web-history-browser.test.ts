/**
 * The questions page at scale, in Chromium at 390×844: open questions and a
 * first page of history at once, older history as the owner scrolls, a search
 * that asks the server, a link to a question deep in the archive, and a
 * change that refetches only the first page and keeps what was scrolled in.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Browser } from "playwright-core"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as Q from "../../src/questions/Question.js"
import { choiceQuestion, ok, tempDirSync } from "../support.js"
import { eventually, seed, startWeb, type Web } from "./web-support.js"
import { launchChromium, PHONE, PHONE_CONTEXT } from "./browser-support.js"

/** `count` questions settled in July 2026, a minute apart, read by their agents: on the month's shelf once the server starts. */
const settledInJuly = (count: number) =>
  Array.from({ length: count }, (_, i) => {
    const at = new Date(2026, 6, 1, 8, i)
    const id = `${Q.makeId(at, 0).slice(0, 15)}-${(0xc000 + i).toString(16)}`
    const summary = i === 3 ? "Should the cache evict zeppelins first?" : `Old decision number ${i}`
    return { ...ok(Q.answer({ ...choiceQuestion(id, at), summary }, { choice: "SQLite" }, at)), answer_delivered: true }
  })

describe("history on the phone page", () => {
  let browser: Browser
  let web: Web
  const home = tempDirSync()
  const old = settledInJuly(75)
  const open = [0, 1].map((i) => ({ ...choiceQuestion(`20261001-12000${i}-0${i}0${i}`, new Date(2026, 9, 1, 12, 0, i)), summary: `Open question ${i}` }))

  beforeAll(async () => {
    await seed(home, [...old.map((q) => ({ q })), ...open.map((q) => ({ q }))])
    web = await startWeb(home)
    await eventually(
      "the settled questions moved to their month",
      () => (NodeFs.readdirSync(NodePath.join(home, "questions")).filter((n) => n.endsWith(".json")).length === 2 ? true : undefined),
      60_000
    )
    browser = await launchChromium()
  }, 90_000)
  afterAll(async () => {
    await browser?.close()
    await web?.stop()
  })

  const phone = async () => {
    const context = await browser.newContext(PHONE_CONTEXT)
    return { context, page: await context.newPage() }
  }

  it("draws the open questions and 30 of history at once, then older history as the owner scrolls, and keeps it across a change", async () => {
    const { context, page } = await phone()
    try {
      const requests: string[] = []
      page.on("request", (r) => requests.push(new URL(r.url()).pathname + new URL(r.url()).search))
      await page.goto(web.url)
      const history = page.locator("section.history article.card")
      await page.locator("section.open-questions article.card", { hasText: "Open question 1" }).waitFor({ timeout: 15_000 })
      await expect.poll(() => page.locator("section.open-questions article.card").count()).toBe(2)
      await expect.poll(() => history.count()).toBe(30)

      // Scrolling to the end brings the next page, and the next, to the start of history.
      for (let i = 0; i < 20 && (await history.count()) < 75; i++) {
        await page.evaluate(() => window.scrollTo(0, document.scrollingElement!.scrollHeight))
        await page.waitForTimeout(250)
      }
      await expect.poll(() => history.count(), { timeout: 10_000 }).toBe(75)
      await expect.poll(() => page.locator(".history-status").textContent()).toBe("That is the whole history.")
      expect(requests.some((r) => r.startsWith("/api/questions/history?before="))).toBe(true)

      // A new question: only the first page is refetched, and what was scrolled in stays.
      const before = requests.length
      await seed(home, [{ q: { ...choiceQuestion("20261001-130000-0a0a", new Date(2026, 9, 1, 13)), summary: "A question that just arrived" } }])
      await page.locator("section.open-questions article.card", { hasText: "A question that just arrived" }).waitFor({ timeout: 10_000 })
      const since = requests.slice(before).filter((r) => r.startsWith("/api/questions"))
      expect(since.every((r) => r === "/api/questions")).toBe(true)
      expect(await history.count()).toBe(75)

      // The screenshot: where history starts, with its search box.
      await page.locator(".questions-view section.history > h2").evaluate((h) => window.scrollTo(0, h.getBoundingClientRect().top + window.scrollY - 140))
      NodeFs.mkdirSync("test-results", { recursive: true })
      await page.screenshot({ path: NodePath.join("test-results", "web-history.png") })
      expect(await page.evaluate(() => document.scrollingElement!.scrollWidth)).toBeLessThanOrEqual(PHONE.width)
    } finally {
      await context.close()
    }
  }, 60_000)

  it("searches history on the server, and shows everything again when the box is cleared", async () => {
    const { context, page } = await phone()
    try {
      await page.goto(web.url)
      const history = page.locator("section.history article.card")
      await expect.poll(() => history.count(), { timeout: 15_000 }).toBe(30)
      await page.locator(".history-search").fill("ZEPPELINS evict")
      await expect.poll(() => history.count()).toBe(1)
      await expect.poll(() => history.first().locator(".summary").textContent()).toBe("Should the cache evict zeppelins first?")
      // Many matches come by pages too; "Show older" fetches the next without any scrolling.
      await page.locator(".history-search").fill("old decision")
      await expect.poll(() => history.count()).toBe(30)
      await page.locator(".history-more").evaluate((b) => (b as HTMLButtonElement).click())
      await expect.poll(() => history.count()).toBe(60)
      await page.locator(".history-search").fill("nothing like this")
      await expect.poll(() => page.locator(".history-status").textContent()).toBe("No settled question has every word searched for.")
      await page.locator(".history-search").fill("")
      await expect.poll(() => history.count()).toBe(30)
    } finally {
      await context.close()
    }
  }, 60_000)

  it("fetches no older history while the open cards are still being built, only once the owner nears the real end", async () => {
    // Forty open questions on a phone-speed CPU: the page builds them a few
    // at a time, and until they are all there the end of history sits just
    // below the first screen.
    const manyHome = tempDirSync()
    const many = Array.from({ length: 40 }, (_, i) => ({
      ...choiceQuestion(`20261002-1200${String(i).padStart(2, "0")}-${(0xd000 + i).toString(16)}`, new Date(2026, 9, 2, 12, 0, i)),
      summary: `Open question ${i}`
    }))
    await seed(manyHome, [...settledInJuly(45).map((q) => ({ q })), ...many.map((q) => ({ q }))])
    const manyWeb = await startWeb(manyHome)
    const { context, page } = await phone()
    try {
      await eventually(
        "the settled questions moved to their month",
        () => (NodeFs.readdirSync(NodePath.join(manyHome, "questions")).filter((n) => n.endsWith(".json")).length === 40 ? true : undefined),
        60_000
      )
      const cdp = await context.newCDPSession(page)
      await cdp.send("Emulation.setCPUThrottlingRate", { rate: 4 })
      const older: string[] = []
      page.on("request", (r) => {
        if (new URL(r.url()).pathname === "/api/questions/history") older.push(r.url())
      })
      await page.goto(manyWeb.url)
      await expect.poll(() => page.locator("section.open-questions article.card").count(), { timeout: 30_000 }).toBe(40)
      const history = page.locator("section.history article.card")
      await expect.poll(() => history.count(), { timeout: 15_000 }).toBe(30)
      // Every card drawn, and the page left alone a moment: still the first page only.
      await page.waitForTimeout(1_000)
      expect(older).toEqual([])
      expect(await history.count()).toBe(30)
      // The owner scrolls to the end: now the next page comes.
      await page.evaluate(() => window.scrollTo(0, document.scrollingElement!.scrollHeight))
      await expect.poll(() => history.count(), { timeout: 15_000 }).toBe(45)
      expect(older.length).toBeGreaterThan(0)
    } finally {
      await context.close()
      await manyWeb.stop()
    }
  }, 120_000)

  it("opens a link to a question deep in the archive, though its page of history was never loaded", async () => {
    const { context, page } = await phone()
    try {
      const oldest = old[0]!
      await page.goto(`${web.url}/#/questions/${oldest.id}`)
      const card = page.locator(`#q-${oldest.id}`)
      await card.waitFor({ timeout: 15_000 })
      await expect.poll(() => card.locator(".summary").textContent()).toBe("Old decision number 0")
      await expect.poll(() => card.isVisible()).toBe(true)
    } finally {
      await context.close()
    }
  }, 60_000)
})
