/**
 * The page in Chromium's mobile emulation, as a phone browser lays it out:
 * a 390 × 844 screen at three device pixels per CSS pixel, touch, and a
 * layout viewport as wide as the widest thing on the page. Nothing on any
 * view may be wider than the screen, or the layout viewport widens, the
 * bottom tab bar slides below the screen and a tap meant for a tab lands
 * on whatever is drawn there instead.
 */
import { describe, expect, it } from "vitest"
import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { TaskStore } from "../../src/queue/TaskStore.js"
import { sampleRun } from "../runSupport.js"
import { choiceQuestion, tempDirSync } from "../support.js"
import { seed, seedRun, startWeb, withTasks } from "./web-support.js"
import { phoneSession } from "./browser-support.js"

const RUN = "20260903-085209-9b96"
const MOBILE = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 3, isMobile: true, hasTouch: true }

describe("the page in mobile emulation at 390 × 844", { timeout: 180_000 }, () => {
  const session = phoneSession()

  it("keeps the layout viewport 390 px wide on every view, the tab bar on screen, and a tap on Runs lands on Runs", async () => {
    const home = tempDirSync()
    // Long unbroken words, as agents write them: ids, paths, branch names.
    const long = "src/platform/PgRecordStore.ts:".repeat(4)
    await seed(home, [{
      q: { ...choiceQuestion("20260903-120001-e001"), run: RUN, node: "impl", seat: "impl", summary: `Which storage backend? ${long}`, cwd: "/r" }
    }])
    seedRun(
      home,
      sampleRun(RUN, { status: "done", instruction: `Add a cache ${long}`, summary: `Added it in ${long}`, repo: `/srv/${"deep/".repeat(12)}repo` }),
      {
        "diff.patch": `+${"x".repeat(300)}\n`
      }
    )
    await withTasks(
      home,
      Effect.gen(function* () {
        yield* (yield* TaskStore).add({ repo: `/srv/${"deep/".repeat(12)}repo`, instruction: `Fix ${long}` })
      })
    )
    const visit = await session.open(() => startWeb(home, 0, { cwd: tempDirSync() }), MOBILE)
    const { page, web } = visit
    try {
      const views = [
        { name: "questions", hash: "#/questions", ready: "article.card" },
        { name: "queue", hash: "#/queue", ready: ".open-tasks article" },
        { name: "runs", hash: "#/runs", ready: ".runs-view a.card" },
        { name: "a run", hash: `#/runs/${RUN}`, ready: ".runs-view .artifacts a" },
        { name: "plan", hash: "#/chats", ready: ".chats-view form textarea" },
        { name: "devices", hash: "#/devices", ready: ".devices-view h2" }
      ]
      const wide: Array<string> = []
      for (const view of views) {
        await page.goto(`${web.url}/${view.hash}`)
        await page.locator(view.ready).first().waitFor()
        const frame = await page.evaluate(() => {
          const nav = document.querySelector("header.top nav")!.getBoundingClientRect()
          return {
            scrollWidth: document.documentElement.scrollWidth,
            innerWidth: window.innerWidth,
            innerHeight: window.innerHeight,
            nav: { left: nav.left, right: nav.right, top: nav.top, bottom: nav.bottom },
            widest: [...document.querySelectorAll("body *")]
              .filter((n) => n.getBoundingClientRect().right > 390.5)
              .slice(0, 3)
              .map((n) => `${n.tagName.toLowerCase()}.${n.className}`)
          }
        })
        NodeFs.mkdirSync("test-results", { recursive: true })
        await page.screenshot({ path: NodePath.join("test-results", `mobile-${view.name.replace(/ /g, "-")}.png`) })
        if (frame.scrollWidth > 390 || frame.innerWidth !== 390) wide.push(`${view.name}: ${frame.scrollWidth} px wide (${frame.widest.join(", ")})`)
        expect(frame.nav.left, view.name).toBeGreaterThanOrEqual(0)
        expect(frame.nav.right, view.name).toBeLessThanOrEqual(390)
        expect(frame.nav.top, view.name).toBeGreaterThanOrEqual(0)
        expect(frame.nav.bottom, view.name).toBeLessThanOrEqual(frame.innerHeight)
      }
      expect(wide).toEqual([])
      // The Plan tab's fields show their whole placeholder at this width.
      await page.goto(`${web.url}/#/chats`)
      await page.locator(".chats-view form textarea").first().waitFor()
      const cut = await page.evaluate(() =>
        [...document.querySelectorAll<HTMLInputElement>(".chats-view form input[placeholder]")].flatMap((input) => {
          const style = getComputedStyle(input)
          const context = document.createElement("canvas").getContext("2d")!
          context.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`
          const room = input.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight)
          return context.measureText(input.placeholder).width > room ? [input.placeholder] : []
        })
      )
      expect(cut).toEqual([])
      // A card says which run asked by its short id, the seat once, and what the run is for.
      await page.goto(`${web.url}/#/questions`)
      await expect.poll(() => page.locator("article.card .who").first().textContent()).toBe(`run 9b96 · impl · ${`Add a cache ${long}`.slice(0, 99)}…`)
      // From the queue, a tap where the Runs tab is drawn opens the Runs tab.
      await page.goto(`${web.url}/#/queue`)
      await page.locator(".open-tasks article").first().waitFor()
      const tab = await page.locator('header.top nav a[href="#/runs"]').boundingBox()
      expect(tab).not.toBeNull()
      await page.touchscreen.tap(tab!.x + tab!.width / 2, tab!.y + tab!.height / 2)
      await expect.poll(() => page.evaluate(() => location.hash)).toBe("#/runs")
      await page.locator(".runs-view a.card").first().waitFor()
    } finally {
      await session.close()
    }
  })

  it("fits the empty page's notification line however long the config file's path is", async () => {
    const home = tempDirSync()
    const config = NodePath.join(home, "a-rather-long-folder-name", "that-holds-the-owners-config")
    const visit = await session.open(() => startWeb(home, 0, { cwd: tempDirSync(), env: { XDG_CONFIG_HOME: config } }), MOBILE)
    try {
      await visit.page.goto(visit.web.url)
      await visit.page.locator(".notify-state code").first().waitFor()
      expect(await visit.page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth])).toEqual([390, 390])
    } finally {
      await session.close()
    }
  })
})
