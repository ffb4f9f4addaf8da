/**
 * Stopping from the phone (issue 27.2), on a phone-sized Chromium against the
 * built `magi web`: a question's Withdraw, and a run's Stop.
 */
import { describe, expect, it } from "vitest"
import type { Page } from "playwright-core"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { sampleRun } from "../runSupport.js"
import { choiceQuestion, tempDirSync } from "../support.js"
import { eventually, seed, seedRun, startWeb } from "./web-support.js"
import { phoneSession } from "./browser-support.js"

const questionOnDisk = (home: string, id: string) => JSON.parse(NodeFs.readFileSync(NodePath.join(home, "questions", `${id}.json`), "utf8"))
const runOnDisk = (home: string, id: string) => JSON.parse(NodeFs.readFileSync(NodePath.join(home, "runs", id, "run.json"), "utf8"))

describe("stopping things from the page", () => {
  const session = phoneSession()
  let page: Page

  it("withdraws a question from its card, in the owner's words", { timeout: 60_000 }, async () => {
    const home = tempDirSync()
    const q = choiceQuestion("20260902-231503-3a3a")
    await seed(home, [{ q }])
    const visit = await session.open(() => startWeb(home))
    page = visit.page
    try {
      await page.goto(visit.web.url)
      const card = page.locator(`article.card[data-id="${q.id}"]`)
      await card.getByText("Withdraw this question").tap({ timeout: 10_000 })
      await card.getByLabel("Why withdraw it (optional; the agent reads it)").fill("asked by mistake")
      await card.getByRole("button", { name: "Withdraw", exact: true }).tap()
      await eventually("the question to be abandoned", () => (questionOnDisk(home, q.id).status === "abandoned" ? true : undefined), 10_000)
      expect(questionOnDisk(home, q.id).detail).toContain("_Abandoned: the owner withdrew it: asked by mistake._")
    } finally {
      await session.close()
    }
  })

  it("stops a run from its page, and shows it stopped; a done run has no Stop", { timeout: 60_000 }, async () => {
    const home = tempDirSync()
    const live = sampleRun("20260903-101500-5a5a", { status: "running" })
    const done = sampleRun("20260903-101400-5b5b", { status: "done", reason: "interrupted; continue with magi run --resume" })
    seedRun(home, live)
    seedRun(home, done)
    const visit = await session.open(() => startWeb(home))
    page = visit.page
    try {
      await page.goto(`${visit.web.url}/#/runs/${live.id}`)
      await page.getByRole("button", { name: "Stop" }).tap({ timeout: 10_000 })
      // No process runs its turn (it was planted): it is marked stopped at once, and said so.
      await page.getByText("run 5a5a stopped; continue it with magi run --resume 5a5a (no turn of it was running)").waitFor({ timeout: 15_000 })
      expect(runOnDisk(home, live.id).status).toBe("stopped")
      await page.locator(".run-detail .status", { hasText: "stopped by you" }).waitFor({ timeout: 10_000 })
      expect(await page.getByRole("button", { name: "Stop" }).count()).toBe(0)

      // A done run: no Stop, and no leftover "interrupted" beside "done" (issue 27.5).
      await page.goto(`${visit.web.url}/#/runs/${done.id}`)
      await page.locator(".run-detail .status", { hasText: "done" }).waitFor({ timeout: 10_000 })
      expect(await page.getByRole("button", { name: "Stop" }).count()).toBe(0)
      expect(await page.locator(".run-detail .reason").count()).toBe(0)
    } finally {
      await session.close()
    }
  })
})
