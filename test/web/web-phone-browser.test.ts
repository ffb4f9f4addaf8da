/**
 * The page as a phone app, in a real browser (Debian's Chromium through
 * playwright-core) at 390×844 against the built `magi web`: the dense list,
 * thumb-sized targets on every view, a header that never wraps, readable
 * contrast in both themes, the manifest and icons that install it, and an
 * empty state that says how agents ask. Screenshots go to test-results/.
 */
import { describe, expect, it } from "vitest"
import type { BrowserContext, Page } from "playwright-core"
import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as Q from "../../src/questions/Question.js"
import { TaskStore } from "../../src/queue/TaskStore.js"
import { sampleRun } from "../runSupport.js"
import { choiceQuestion, freeQuestion, ok, tempDirSync } from "../support.js"
import { request, seed, seedRun, startWeb, withTasks, writeNotice } from "./web-support.js"
import { phoneSession } from "./browser-support.js"
import { GROUP_BY_RUN_OVER } from "../../src/web/client/dense.js"
import * as C from "../../src/chat/Chat.js"
import { encode as encodeChat } from "../../src/chat/ChatRecords.js"
import { DRAFT } from "./chat-support.js"

type Theme = "light" | "dark"

const RUN_A = "20260902-201256-9fb7"
const RUN_B = "20260903-090000-a1a1"
const RUN_C = "20260903-100000-c3c3"
const PLAN = "20260903-130000-ca7a"

/** An open question `minutesAgo` old, in `run`. */
const asked = (i: number, run: string, summary: string, minutesAgo = i) => {
  const at = new Date(Date.now() - minutesAgo * 60_000)
  const id = `20260903-${String(1000000 + i).slice(1)}-${(0xd000 + i).toString(16)}`
  // A working directory: what an agent's `magi ask` records, and what lets the page say who waits.
  return { ...choiceQuestion(id, at), run, summary, cwd: "/r" }
}

/** The phone's screen as the owner sees it (a full-page shot would draw the bottom tabs mid-page). */
const shot = async (page: Page, name: string) => {
  NodeFs.mkdirSync("test-results", { recursive: true })
  const file = NodePath.join("test-results", name)
  await page.screenshot({ path: file })
  expect(NodeFs.statSync(file).size).toBeGreaterThan(5_000)
}

/**
 * Every visible button, link, input, select and summary smaller than 44×44
 * CSS px: Apple's and WCAG 2.5.5's size for a fingertip. Disabled controls
 * are not targets; links inside running text (markdown, a notice sentence)
 * are exempt, as WCAG 2.5.8 allows.
 */
const smallTargets = (page: Page) =>
  page.evaluate(() => {
    const small: Array<string> = []
    for (const node of document.querySelectorAll<HTMLElement>("button, a[href], input:not([type=hidden]), select, summary")) {
      if (!node.checkVisibility({ checkOpacity: false, checkVisibilityCSS: true })) continue
      if ((node as HTMLButtonElement).disabled) continue
      if (node.closest(".md, .text") !== null && node.tagName === "A") continue
      const box = node.getBoundingClientRect()
      if (box.width === 0 && box.height === 0) continue
      // Rounding: a 43.99 px box is drawn as 44 device pixels.
      if (box.width < 43.5 || box.height < 43.5)
        small.push(
          `${node.tagName.toLowerCase()}.${node.className} "${(node.textContent ?? node.getAttribute("aria-label") ?? "").trim().slice(0, 40)}" ${
            Math.round(box.width)
          }×${Math.round(box.height)}`
        )
    }
    return small
  })

/**
 * Every visible piece of text whose colour against what is behind it is
 * under 4.5:1 (WCAG AA for body text), computed from the browser's own
 * computed colours: the element's text colour over its ancestors'
 * backgrounds, each composited with its alpha and the opacity above it, on
 * the canvas. Disabled controls are exempt, as WCAG allows.
 */
const lowContrast = (page: Page) =>
  page.evaluate(() => {
    type Rgba = [number, number, number, number]
    const parse = (css: string): Rgba => {
      const srgb = /color\(srgb ([\d.e-]+) ([\d.e-]+) ([\d.e-]+)(?: \/ ([\d.e-]+))?\)/.exec(css)
      if (srgb) return [Number(srgb[1]) * 255, Number(srgb[2]) * 255, Number(srgb[3]) * 255, srgb[4] === undefined ? 1 : Number(srgb[4])]
      const rgb = /rgba?\(([\d.]+),? ([\d.]+),? ([\d.]+)(?:[,/] ?([\d.]+))?\)/.exec(css)
      if (rgb) return [Number(rgb[1]), Number(rgb[2]), Number(rgb[3]), rgb[4] === undefined ? 1 : Number(rgb[4])]
      throw new Error(`unparsed colour ${css}`)
    }
    const over = (top: Rgba, below: Rgba): Rgba => {
      const a = top[3]
      return [top[0] * a + below[0] * (1 - a), top[1] * a + below[1] * (1 - a), top[2] * a + below[2] * (1 - a), 1]
    }
    const luminance = ([r, g, b]: Rgba) => {
      const lin = (c: number) => {
        const s = c / 255
        return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4
      }
      return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b)
    }
    const dark = matchMedia("(prefers-color-scheme: dark)").matches
    // Chromium's canvas under `color-scheme: light dark`.
    const canvas: Rgba = dark ? [18, 18, 18, 1] : [255, 255, 255, 1]
    const low: Array<string> = []
    /** What is behind `node`: its and its ancestors' backgrounds on the canvas, and the opacity over it. */
    const behind = (node: Element) => {
      const chain: Array<Element> = []
      for (let e: Element | null = node; e !== null; e = e.parentElement) chain.unshift(e)
      let background = canvas
      let opacity = 1
      for (const e of chain) {
        const style = getComputedStyle(e)
        opacity *= Number(style.opacity)
        const bg = parse(style.backgroundColor)
        background = over([bg[0], bg[1], bg[2], bg[3] * opacity], background)
      }
      return { background, opacity }
    }
    const check = (node: Element, colour: string, background: Rgba, opacity: number, what: string) => {
      const fg = parse(colour)
      const ink = over([fg[0], fg[1], fg[2], fg[3] * opacity], background)
      const [hi, lo] = [luminance(ink), luminance(background)].sort((a, b) => b - a) as [number, number]
      const ratio = (hi + 0.05) / (lo + 0.05)
      if (ratio < 4.5) low.push(`${ratio.toFixed(2)}: ${node.tagName.toLowerCase()}.${node.className} "${what.slice(0, 40)}"`)
    }
    const seen = new Set<Element>()
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT)
    for (let text = walker.nextNode(); text !== null; text = walker.nextNode()) {
      if ((text.textContent ?? "").trim() === "") continue
      const node = text.parentElement
      if (node === null || seen.has(node)) continue
      seen.add(node)
      if (!node.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true })) continue
      if (node.closest("option, noscript, [disabled], :disabled") !== null) continue
      const { background, opacity } = behind(node)
      check(node, getComputedStyle(node).color, background, opacity, (node.textContent ?? "").trim())
    }
    // What fields show: their value, or their placeholder while empty.
    for (const field of document.querySelectorAll<HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement>("input, textarea, select")) {
      if (field.disabled || !field.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true })) continue
      if (field instanceof HTMLInputElement && (field.type === "checkbox" || field.type === "radio")) continue
      const { background, opacity } = behind(field)
      const empty = field.value === "" && "placeholder" in field && field.placeholder !== ""
      if (empty) check(field, getComputedStyle(field, "::placeholder").color, background, opacity, `placeholder ${field.placeholder}`)
      else if (field.value !== "") check(field, getComputedStyle(field).color, background, opacity, `value ${field.value}`)
    }
    return low
  })

/** Unfold every folded section, so what it holds is measured too. */
const unfoldAll = (page: Page) => page.evaluate(() => document.querySelectorAll("details").forEach((d) => (d.open = true)))

describe("the page as a phone app in Chromium", { timeout: 180_000 }, () => {
  const session = phoneSession()
  let context: BrowserContext
  let page: Page

  /** A fresh server on `home`, started outside any repository, and a phone-sized page in `theme`. */
  const open = async (home = tempDirSync(), theme: Theme = "light") => {
    const visit = await session.open(() => startWeb(home, 0, { cwd: tempDirSync() }), { colorScheme: theme })
    ;({ context, page } = visit)
    return visit.web
  }
  const close = session.close

  /** A home with something on every view: questions of each kind, a notice, tasks and a run. */
  const busyHome = async () => {
    const home = tempDirSync()
    const choice = { ...choiceQuestion("20260903-120001-e001"), summary: "Which storage backend should the cache use?" }
    const free = freeQuestion("20260903-120002-e002")
    const askedBack = ok(Q.say(choiceQuestion("20260903-120003-e003"), "Which one is cheaper to run?", new Date()))
    const answered = ok(Q.answer(choiceQuestion("20260903-110004-e004"), { choice: "SQLite" }, new Date()))
    await seed(home, [{ q: choice }, { q: free }, { q: askedBack }, { q: answered }])
    writeNotice(home, { id: "20260903-120500-f001", question: answered.id, summary: answered.summary, reason: "the agent's session could not be resumed" })
    seedRun(home, sampleRun(RUN_A, { status: "waiting", instruction: "Add a cache in front of the API" }), { "diff.patch": "+cache\n" })
    const task = await withTasks(
      home,
      Effect.gen(function* () {
        const store = yield* TaskStore
        yield* store.add({ repo: "/r", instruction: "Write the queue docs", priority: 2 })
        return yield* store.add({ repo: "/r", instruction: "# Fix the flaky login test\nIt fails one run in ten.", priority: 1 })
      })
    )
    // A planning chat with the agent's draft, written as the chat store writes it.
    const idea = C.build({ id: PLAN, idea: "Make the fetcher retry", repo: "/r", agent: "fake", from: null, now: new Date() })
    const chat = { ...idea, turns: [...idea.turns, { who: "agent" as const, body: `Here is the task file:\n\n${DRAFT}`, at: idea.created_at }], draft: DRAFT }
    NodeFs.mkdirSync(NodePath.join(home, "chats"), { recursive: true })
    NodeFs.writeFileSync(NodePath.join(home, "chats", `${PLAN}.json`), encodeChat(chat))
    return { home, choice, task }
  }

  /** The views a phone owner visits, by address, with the layout of the questions. */
  const views = (choice: string, task: string) => [
    { name: "questions (cards)", hash: "#/questions", layout: "cards", ready: ".open-questions article.card .choice:visible" },
    { name: "questions (list)", hash: "#/questions", layout: "list", ready: ".dense a.row" },
    { name: "one question from the list", hash: `#/questions/${choice}`, layout: "list", ready: "article.card.in-focus .choice:visible" },
    { name: "notices", hash: "#/notices", layout: "cards", ready: ".notice-item" },
    { name: "queue", hash: "#/queue", layout: "cards", ready: ".open-tasks article" },
    // With a removal being confirmed: the danger button is on screen too.
    { name: "one task", hash: `#/queue/${task}`, layout: "cards", ready: ".open-tasks article", tap: "button:text('Remove…')" },
    { name: "runs", hash: "#/runs", layout: "cards", ready: ".runs-view a.card" },
    { name: "one run", hash: `#/runs/${RUN_A}`, layout: "cards", ready: ".runs-view .artifacts a" },
    { name: "plan", hash: "#/chats", layout: "cards", ready: ".chats-view form textarea" },
    { name: "one plan", hash: `#/chats/${PLAN}`, layout: "cards", ready: ".chats-view pre.draft-text" }
  ]

  /** Open `hash` with the questions in `layout`, once `ready` (what it shows) has loaded. */
  const visit = async (url: string, view: { hash: string; layout: string; ready: string; tap?: string }) => {
    await page.goto(`${url}/`)
    await page.evaluate((l) => localStorage.setItem("magi.questions.layout", l), view.layout)
    await page.goto(`${url}/${view.hash}`)
    await page.reload()
    await page.locator(view.ready).first().waitFor()
    // The live status settles (the event stream is open) before the frame is measured.
    await expect.poll(() => page.locator(".connection").textContent()).toBe("live")
    await unfoldAll(page)
    if (view.tap !== undefined) await page.locator(view.tap).first().click()
  }

  it(`shows open questions as a compact list that opens a card on tap, comes back to the same scroll, groups by run beyond ${GROUP_BY_RUN_OVER}, and remembers the choice`, async () => {
    const home = tempDirSync()
    // A few questions: plain rows, newest first.
    await seed(home, [
      { q: asked(1, RUN_A, "Ship the release tonight?", 2) },
      { q: asked(2, "", "Rename the config key?", 30) },
      { q: ok(Q.say(asked(3, RUN_B, "Which migration order?", 90), "Can you list them?", new Date())) }
    ])
    const web = await open(home)
    try {
      await page.goto(web.url)
      await page.locator("article.card").first().waitFor()
      await page.getByRole("button", { name: "List" }).tap()
      const rows = page.locator(".dense a.row")
      await expect.poll(() => rows.count()).toBe(3)
      expect(await page.locator("article.card:visible").count()).toBe(0)
      expect(await rows.locator(".row-summary").allTextContents()).toEqual(["Ship the release tonight?", "Rename the config key?", "Which migration order?"])
      const first = rows.nth(0)
      expect(await first.locator(".status").textContent()).toBe("needs you")
      expect(await first.locator(".row-run").textContent()).toBe(`${RUN_A} · impl-A`)
      expect(await first.locator("time").textContent()).toBe("2 min ago")
      // Who is waiting, in the card's own words: no agent holds these, and no loop runs here.
      expect(await first.locator(".holder").textContent()).toContain("No agent is waiting")
      expect(await rows.nth(2).locator(".status").textContent()).toBe("waiting on the agent")
      expect(await page.locator(".run-group").count()).toBe(0)
      await shot(page, "phone-list-light.png")

      // A tap opens that card alone, answerable; the list's own back link returns.
      await rows.nth(1).tap()
      await expect.poll(() => page.evaluate(() => location.hash)).toBe(`#/questions/${encodeURIComponent(asked(2, "", "").id)}`)
      const opened = page.locator("article.card.in-focus")
      await opened.waitFor()
      expect(await opened.locator(".summary").textContent()).toBe("Rename the config key?")
      expect(await page.locator("article.card:visible").count()).toBe(1)
      expect(await opened.getByRole("button", { name: "SQLite" }).isVisible()).toBe(true)
      expect(await page.locator(".dense").isVisible()).toBe(false)
      await page.locator(".focus-bar .back").tap()
      await expect.poll(() => rows.nth(0).isVisible()).toBe(true)
      // Back is the browser's back: to the address the list had (here, the bare page).
      expect(await page.evaluate(() => location.hash)).toBe("")

      // The choice survives a reload.
      await page.reload()
      await expect.poll(() => rows.count()).toBe(3)
      expect(await page.getByRole("button", { name: "List" }).getAttribute("aria-pressed")).toBe("true")

      // Many questions: grouped by run, the run that asked last on top, with counts.
      const many = [
        ...Array.from({ length: 6 }, (_, i) => asked(10 + i, RUN_A, `Cache question ${i + 1}`, 100 + i)),
        ...Array.from({ length: 5 }, (_, i) => asked(20 + i, RUN_C, `Docs question ${i + 1}`, 10 + i))
      ]
      await seed(home, many.map((q) => ({ q })))
      // Eleven files land one by one, and a change event may come between
      // them: wait for the list to hold all fourteen, then look at its groups.
      await expect.poll(() => page.locator(".dense a.row").count(), { timeout: 30_000 }).toBe(14)
      await expect.poll(() => page.locator(".run-group").count(), { timeout: 15_000 }).toBe(4)
      expect(await page.locator(".run-group .group-run").allTextContents()).toEqual([RUN_A, RUN_C, "Not in a run", RUN_B])
      expect(await page.locator(".run-group").nth(0).locator(".group-head .muted").textContent()).toBe("7 open")
      expect(await page.locator(".run-group").nth(1).locator(".row-summary").allTextContents()).toEqual(
        Array.from({ length: 5 }, (_, i) => `Docs question ${i + 1}`)
      )
      // Under its run's heading a row names only the seat.
      expect(await page.locator(".run-group").nth(1).locator(".row-run").first().textContent()).toBe("impl-A")
      await shot(page, "phone-list-grouped-light.png")

      // Scrolled down, a tap and the phone's back button return to the same place.
      const target = page.locator(".dense a.row").last()
      await target.scrollIntoViewIfNeeded()
      const scrolled = await page.evaluate(() => window.scrollY)
      expect(scrolled).toBeGreaterThan(100)
      await target.tap()
      await page.locator("article.card.in-focus").waitFor()
      expect(await page.evaluate(() => window.scrollY)).toBe(0)
      await page.goBack()
      await expect.poll(() => page.evaluate(() => window.scrollY)).toBe(scrolled)
      expect(await target.isVisible()).toBe(true)

      // And back to cards: every open question as a card again.
      await page.getByRole("button", { name: "Cards" }).tap()
      await expect.poll(() => page.locator(".open-questions article.card").count()).toBe(14)
      expect(await page.locator(".dense a.row").count()).toBe(0)
    } finally {
      await close()
    }
  })

  it("opens a notification's link to a question as that card alone in the list layout", async () => {
    const home = tempDirSync()
    const q = asked(1, RUN_A, "Ship the release tonight?")
    await seed(home, [{ q }, { q: asked(2, RUN_A, "Another one") }])
    const web = await open(home, "dark")
    try {
      await page.goto(`${web.url}/`)
      await page.evaluate(() => localStorage.setItem("magi.questions.layout", "list"))
      await page.goto(`${web.url}/#/questions/${q.id}`)
      await page.reload()
      const opened = page.locator("article.card.in-focus")
      await opened.waitFor()
      expect(await opened.getAttribute("data-id")).toBe(q.id)
      expect(await page.locator(".dense").isVisible()).toBe(false)
      await shot(page, "phone-list-card-dark.png")
      // No list to go back to in this tab: the back link goes to it by address.
      await page.locator(".focus-bar .back").tap()
      await expect.poll(() => page.locator(".dense a.row").count()).toBe(2)
      await shot(page, "phone-list-dark.png")
    } finally {
      await close()
    }
  })

  it("opens a notification's link to a question as that card alone in the cards layout too", async () => {
    const home = tempDirSync()
    const q = asked(1, RUN_A, "Ship the release tonight?")
    await seed(home, [{ q }, { q: asked(2, RUN_A, "Another one") }])
    const web = await open(home)
    try {
      await page.goto(`${web.url}/`)
      await page.evaluate(() => localStorage.setItem("magi.questions.layout", "cards"))
      await page.goto(`${web.url}/#/questions/${q.id}`)
      await page.reload()
      await page.locator("article.card.in-focus").waitFor()
      const shown = page.locator(".open-questions article.card:visible")
      await expect.poll(() => shown.count()).toBe(1)
      expect(await shown.getAttribute("data-id")).toBe(q.id)
      await page.locator(".focus-bar .back").tap()
      await expect.poll(() => shown.count()).toBe(2)
    } finally {
      await close()
    }
  })

  for (const theme of ["light", "dark"] as const) {
    it(`gives every button, link, input, select and summary at least 44×44 px, and all text at least 4.5:1 contrast, on every view (${theme})`, async () => {
      const { home, choice, task } = await busyHome()
      const web = await open(home, theme)
      try {
        const small: Array<string> = []
        const low: Array<string> = []
        for (const view of views(choice.id, task.id)) {
          await visit(web.url, view)
          small.push(...(await smallTargets(page)).map((s) => `${view.name}: ${s}`))
          low.push(...(await lowContrast(page)).map((s) => `${view.name}: ${s}`))
          await shot(page, `phone-${view.name.replace(/[^a-z]+/g, "-").replace(/-$/, "")}-${theme}.png`)
        }
        expect(small).toEqual([])
        expect(low).toEqual([])
      } finally {
        await close()
      }
    })
  }

  it("keeps the header to one line at 320 and 390 px wide, with the tabs in one row, on every view", async () => {
    const { home, choice, task } = await busyHome()
    const web = await open(home)
    try {
      for (const width of [320, 390]) {
        await page.setViewportSize({ width, height: 740 })
        for (const view of views(choice.id, task.id)) {
          await visit(web.url, view)
          const frame = await page.evaluate(() => {
            const header = document.querySelector("header.top")!.getBoundingClientRect()
            const tabs = [...document.querySelectorAll("header.top nav a")].map((a) => a.getBoundingClientRect())
            const nav = document.querySelector("header.top nav")!
            return {
              header: header.height,
              tops: new Set(tabs.map((t) => Math.round(t.top))).size,
              navOverflow: nav.scrollWidth - nav.clientWidth,
              pageOverflow: document.scrollingElement!.scrollWidth - window.innerWidth
            }
          })
          // One line: the 32 px title line and its padding, never two.
          expect(frame.header, `${view.name} at ${width}`).toBeLessThanOrEqual(48)
          expect(frame.tops, `${view.name} at ${width}`).toBe(1)
          expect(frame.navOverflow, `${view.name} at ${width}`).toBe(0)
          expect(frame.pageOverflow, `${view.name} at ${width}`).toBeLessThanOrEqual(0)
        }
        await visit(web.url, views(choice.id, task.id)[0]!)
        await shot(page, `phone-header-${width}.png`)
      }
    } finally {
      await close()
    }
  })

  it("says 'offline' in the header, on one line, while the phone has no network, and 'live' once it is back", async () => {
    const web = await open()
    try {
      await page.setViewportSize({ width: 320, height: 640 })
      await page.goto(web.url)
      const status = page.locator("header.top .connection")
      await expect.poll(() => status.textContent()).toBe("live")
      await context.setOffline(true)
      await expect.poll(() => status.textContent()).toBe("offline")
      expect((await page.locator("header.top").boundingBox())!.height).toBeLessThanOrEqual(48)
      await context.setOffline(false)
      await expect.poll(() => status.textContent(), { timeout: 15_000 }).toBe("live")
    } finally {
      await close()
    }
  })

  it("installs to a home screen: a manifest Chromium accepts, its icons served as PNG and SVG, theme colours for both themes", async () => {
    const web = await open()
    try {
      await page.goto(web.url)
      const manifest = (await request(`${web.url}/manifest.webmanifest`)).json()
      expect(manifest).toMatchObject({ name: expect.stringContaining("magi"), short_name: "magi", start_url: "/#/questions", display: "standalone" })
      expect(manifest.theme_color).toMatch(/^#[0-9a-f]{6}$/)
      expect(manifest.background_color).toMatch(/^#[0-9a-f]{6}$/)
      const sizes = new Map<string, string>()
      for (const icon of manifest.icons as Array<{ src: string; sizes: string; type: string }>) {
        const reply = await request(`${web.url}${icon.src}`)
        expect(reply.status, icon.src).toBe(200)
        expect(reply.headers["content-type"], icon.src).toBe(icon.type)
        if (icon.type === "image/png") {
          // The PNG's own header says how big it is.
          expect(reply.body.subarray(1, 4).toString(), icon.src).toBe("PNG")
          sizes.set(`${reply.body.readUInt32BE(16)}x${reply.body.readUInt32BE(20)}`, icon.src)
          expect(icon.sizes).toBe(`${reply.body.readUInt32BE(16)}x${reply.body.readUInt32BE(20)}`)
        } else expect(reply.text).toContain("<svg")
      }
      expect([...sizes.keys()].sort()).toEqual(["192x192", "512x512"])

      // Chromium reads the manifest through the page's own link, under its CSP, without complaint.
      const cdp = await context.newCDPSession(page)
      const app = (await cdp.send("Page.getAppManifest")) as { url: string; errors: Array<{ message: string }>; data?: string }
      expect(app.url).toBe(`${web.url}/manifest.webmanifest`)
      expect(app.errors).toEqual([])
      expect(JSON.parse(app.data!)).toEqual(manifest)
      const touch = await page.locator('link[rel="apple-touch-icon"]').getAttribute("href")
      const touchIcon = await request(`${web.url}${touch}`)
      expect(touchIcon.headers["content-type"]).toBe("image/png")
      expect(touchIcon.body.readUInt32BE(16)).toBe(180)
      await shot(page, "phone-empty-light.png")

      // The theme colour is the page's own background, in either theme.
      for (const theme of ["light", "dark"] as const) {
        await page.emulateMedia({ colorScheme: theme })
        const colours = await page.evaluate(() => {
          const meta = [...document.querySelectorAll<HTMLMetaElement>('meta[name="theme-color"]')].find((m) => matchMedia(m.media).matches)
          return { meta: meta?.content, body: getComputedStyle(document.body).backgroundColor }
        })
        const hex = colours.meta!
        const rgb = `rgb(${parseInt(hex.slice(1, 3), 16)}, ${parseInt(hex.slice(3, 5), 16)}, ${parseInt(hex.slice(5, 7), 16)})`
        expect(rgb, theme).toBe(colours.body)
        if (theme === "light") expect(hex).toBe(manifest.theme_color)
      }
    } finally {
      await close()
    }
  })

  it("says on the empty page how agents ask, whether anyone is notified, and in which file to set it (from /api/health)", async () => {
    const web = await open()
    try {
      expect((await request(`${web.url}/api/health`)).json().notifications).toBe(false)
      await page.goto(web.url)
      await page.locator(".open-questions .empty").getByText("Nothing is waiting for you.").waitFor()
      const empty = page.locator(".open-questions .empty-help")
      expect(await empty.isVisible()).toBe(true)
      expect(await empty.textContent()).toContain('magi ask --summary "Ship tonight?"')
      expect(await empty.textContent()).toContain('--choice "ship it"')
      const line = empty.locator(".notify-state")
      await expect.poll(() => line.textContent()).toContain("Notifications are off: nobody is told when a question arrives")
      // The file the server reads (here under its XDG_CONFIG_HOME), as code: never a `~/.config` nothing reads.
      const file = NodePath.join(web.home, "config", "magi", "config.toml")
      expect(await line.textContent()).toContain(
        `Set [notify] ntfy (a topic on an ntfy server, which your phone's ntfy app subscribes to) or [notify] command in ${file}; magi notify --test checks it.`
      )
      expect(await line.locator("code").allTextContents()).toEqual(["[notify] ntfy", "[notify] command", file, "magi notify --test"])
      await shot(page, "phone-empty-no-notify-light.png")
      // A question arrives: the help goes with the empty line.
      await seed(web.home, [{ q: asked(1, RUN_A, "Ship the release tonight?") }])
      await page.locator(".open-questions article.card").waitFor({ timeout: 15_000 })
      expect(await empty.isVisible()).toBe(false)
    } finally {
      await close()
    }
    // With a notifier configured, it says they are on, and by what.
    for (
      const [notify, by] of [
        ['command = ["true"]', "your [notify] command"],
        ['ntfy = { topic = "magi-test-topic" }', "ntfy"]
      ] as const
    ) {
      const home = tempDirSync()
      NodeFs.mkdirSync(NodePath.join(home, "config", "magi"), { recursive: true })
      NodeFs.writeFileSync(NodePath.join(home, "config", "magi", "config.toml"), `[notify]\n${notify}\n`)
      const configured = await open(home, "dark")
      try {
        expect((await request(`${configured.url}/api/health`)).json().notifications).toBe(true)
        await page.goto(configured.url)
        const line = page.locator(".open-questions .empty-help .notify-state")
        await expect.poll(() => line.textContent()).toBe(`Notifications are on through ${by}: you are told when a question arrives.`)
        await shot(page, "phone-empty-dark.png")
      } finally {
        await close()
      }
    }
  })
})
