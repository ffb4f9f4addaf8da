/**
 * The Plan page on a phone-sized Chromium against the built `magi web` and a
 * scripted interviewer: start a chat, watch the reply arrive live, answer,
 * see the draft pass review, file it, and follow the link to the task.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Browser, Page } from "playwright-core"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { tempDirSync } from "../support.js"
import { startWeb, type Web } from "./web-support.js"
import { chatRepo, DRAFT } from "./chat-support.js"
import { launchChromium, PHONE } from "./browser-support.js"

let browser: Browser

beforeAll(async () => {
  browser = await launchChromium()
}, 60_000)
afterAll(async () => {
  await browser?.close()
})

const open = async (web: Web): Promise<Page> => {
  const context = await browser.newContext({ viewport: PHONE, isMobile: true, hasTouch: true })
  const page = await context.newPage()
  page.on("dialog", (d) => void d.accept())
  await page.goto(`${web.url}/#/chats`)
  return page
}

describe("planning from the phone page", () => {
  it("starts a chat, shows the reply live as safe markdown, takes a second message, files the draft, and shows the task on the Queue page", async () => {
    const setup = chatRepo([
      { gate: true, reply: "**Which** fetcher? <img src=x onerror=\"document.title='pwned'\">\n\n- the `http` one\n- the other" },
      { reply: "Here is the task:\n\n```task\n" + DRAFT + "\n```" }
    ])
    const web = await startWeb(tempDirSync(), 0, { cwd: setup.repo })
    try {
      const page = await open(web)
      await page.getByRole("link", { name: "Plan" }).click()
      const plan = page.locator(".chats-view")
      await plan.getByLabel("Your idea").fill("retry the fetcher")
      await plan.getByRole("button", { name: "Start planning" }).click()
      await page.waitForURL(/#\/chats\/\d{8}-\d{6}-[0-9a-f]{4}$/)
      const id = decodeURIComponent(page.url().split("#/chats/")[1]!)
      await page.locator(".bubble.operator", { hasText: "retry the fetcher" }).waitFor()
      await plan.getByText("the agent is thinking…").waitFor()

      NodeFs.writeFileSync(NodePath.join(setup.dir, "gate"), "")
      const reply = page.locator(".bubble.agent").first()
      await reply.locator("strong", { hasText: "Which" }).waitFor({ timeout: 30_000 })
      expect(await reply.locator("li code").textContent()).toBe("http")
      expect(await reply.textContent()).toContain("<img src=x")
      expect(await page.locator(".conversation img").count()).toBe(0)
      expect(await page.title()).not.toBe("pwned")
      await plan.getByText("the agent is thinking…").waitFor({ state: "hidden" })

      await plan.getByLabel("Your message").fill("the HTTP one, GETs only")
      await plan.getByRole("button", { name: "Send" }).click()
      await page.locator(".bubble.operator", { hasText: "GETs only" }).waitFor()
      expect(await plan.getByLabel("Your message").inputValue()).toBe("")
      await page.locator(".review-ok", { hasText: "Passes review." }).waitFor({ timeout: 30_000 })
      expect(await page.locator("pre.draft-text").textContent()).toBe(DRAFT)
      // The task file is shown once: as the draft, not again inside the reply that wrote it.
      expect(await page.getByText("# Retry failed GETs in the fetcher").count()).toBe(1)
      await page.locator(".bubble.agent", { hasText: "The task file: shown below, under Draft task." }).waitFor()

      // For a person to look at: the interview on a phone, draft and all.
      NodeFs.mkdirSync("test-results", { recursive: true })
      await page.screenshot({ path: NodePath.join("test-results", "web-plan.png"), fullPage: true })
      await plan.getByLabel("Priority").fill("2")
      await plan.getByRole("button", { name: "File as task" }).click()
      const link = page.locator("a.task-link")
      await link.waitFor()
      expect(await link.textContent()).toContain("Retry failed GETs in the fetcher")
      const chat = JSON.parse(NodeFs.readFileSync(NodePath.join(web.home, "chats", `${id}.json`), "utf8"))
      expect(chat.status).toBe("filed")
      const task = JSON.parse(NodeFs.readFileSync(NodePath.join(web.home, "queue", `${chat.task}.json`), "utf8"))
      expect(task).toMatchObject({ priority: 2, instruction: DRAFT, status: "queued" })
      await expect(plan.getByRole("button", { name: "File as task" }).isVisible()).resolves.toBe(false)
      await expect(plan.getByLabel("Your message").isVisible()).resolves.toBe(false)

      await link.click()
      await page.waitForURL(new RegExp(`#/queue/${chat.task}$`))
      const card = page.locator(`#t-${chat.task}`)
      await card.waitFor()
      expect(await card.textContent()).toContain("Retry failed GETs in the fetcher")
      await page.goto(`${web.url}/#/chats`)
      await page.locator(`.chat-item[data-id="${id}"]`, { hasText: "filed" }).waitFor()
    } finally {
      await web.stop()
    }
  }, 120_000)

  it("shows a failed turn as magi's note with a retry that gets the answer", async () => {
    const setup = chatRepo([{ mode: "fail" }, { reply: "Back now: which fetcher?" }])
    const web = await startWeb(tempDirSync(), 0, { cwd: setup.repo })
    try {
      const page = await open(web)
      const plan = page.locator(".chats-view")
      await plan.getByLabel("Your idea").fill("retry the fetcher")
      await plan.getByRole("button", { name: "Start planning" }).click()
      const note = page.locator(".bubble.note")
      await note.waitFor({ timeout: 30_000 })
      expect(await note.textContent()).toContain("Your message is saved")
      await plan.getByRole("button", { name: "Retry" }).click()
      await page.locator(".bubble.agent", { hasText: "Back now: which fetcher?" }).waitFor({ timeout: 30_000 })
      await plan.getByRole("button", { name: "Retry" }).waitFor({ state: "hidden" })
    } finally {
      await web.stop()
    }
  }, 120_000)
})
