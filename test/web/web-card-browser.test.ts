/**
 * One question's card on a phone-sized Chromium against the built `magi web`:
 * a tap held for Undo with nothing moving, panels with their own files,
 * markdown that stays inert, a card that says when an answer was not
 * delivered, deciding anyway after an ask-back, and failures said next to
 * the control with the draft kept. Screenshots are left in test-results/.
 *
 * The page's timers run on Playwright's clock, paused: the Undo window ends
 * when the test says so, never because a busy machine was slow.
 */
import { describe, expect, it } from "vitest"
import type { BrowserContext, Page } from "playwright-core"
import { spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as Q from "../../src/questions/Question.js"
import { answerQuestion, answerWithLink } from "../../src/questions/Answers.js"
import { choicesDigest } from "../../src/questions/AnswerLinks.js"
import { UNDO_MS, DECIDED_MS } from "../../src/web/client/decisions.js"
import { choiceQuestion, freeQuestion, ok, tempDirSync } from "../support.js"
import { eventually, MAGI, seed, startWeb, withStore, writeNotice } from "./web-support.js"
import { PHONE, phoneSession, tinyPng } from "./browser-support.js"

const shot = async (page: Page, name: string) => {
  NodeFs.mkdirSync("test-results", { recursive: true })
  await page.screenshot({ path: NodePath.join("test-results", name), fullPage: true })
}

/** The question as it is on disk now. */
const onDisk = (home: string, id: string) => JSON.parse(NodeFs.readFileSync(NodePath.join(home, "questions", `${id}.json`), "utf8")) as Q.Question

/** Each card's top edge in the document, by id: what must not move under a finger. */
const tops = (page: Page) =>
  page.evaluate(() =>
    Object.fromEntries(
      [...document.querySelectorAll<HTMLElement>("section.open-questions article.card")].map((c) => [
        c.dataset["id"],
        Math.round(c.getBoundingClientRect().top + window.scrollY)
      ])
    )
  )

const asked = (id: string, minutesAgo: number, summary: string) => ({
  ...choiceQuestion(id, new Date(Date.now() - minutesAgo * 60_000)),
  summary
})

describe("one question's card in Chromium", () => {
  const session = phoneSession()
  let context: BrowserContext
  let page: Page
  let errors: string[]

  /** A fresh home, server and phone-sized page whose timers wait for the test. */
  const open = async (home = tempDirSync()) => {
    const visit = await session.open(() => startWeb(home))
    ;({ context, page } = visit)
    const web = visit.web
    errors = []
    page.on("pageerror", (e) => errors.push(e.message))
    await page.clock.install()
    await page.clock.pauseAt(Date.now() + 1_000)
    return { home, web }
  }
  const close = session.close

  it("holds a tapped choice for Undo without moving any card, sends it when the window ends, and only then lets it leave", async () => {
    const { home, web } = await open()
    try {
      const newest = asked("20260902-231503-3a3a", 1, "Newest: rename the flag?")
      const middle = asked("20260902-231502-3b3b", 2, "Middle: which storage backend?")
      const oldest = asked("20260902-231501-3c3c", 3, "Oldest: ship tonight?")
      await seed(home, [{ q: newest }, { q: middle }, { q: oldest }])
      await page.goto(web.url)
      const card = page.locator(`article.card[data-id="${middle.id}"]`)
      await card.getByRole("button", { name: "Redis" }).waitFor({ timeout: 10_000 })
      const before = await tops(page)

      await card.getByRole("button", { name: "Redis" }).tap()
      await card.getByText("Sending Redis in 5 s").waitFor()
      // Nothing is sent yet, and nothing moved.
      expect(onDisk(home, middle.id).status).toBe("open")
      expect(await tops(page)).toEqual(before)

      // Undo: the card is back as it was, and still nothing was sent.
      await card.getByRole("button", { name: "Undo" }).tap()
      await card.getByRole("button", { name: "SQLite" }).waitFor()
      await page.clock.runFor(UNDO_MS + 1_000)
      expect(onDisk(home, middle.id).status).toBe("open")

      // The real decision. A question arriving during the window waits.
      await card.getByRole("button", { name: "SQLite" }).tap()
      await card.getByText("Sending SQLite in 5 s").waitFor()
      await seed(home, [{ q: asked("20260902-231504-3d3d", 0, "Arrived mid-window") }])
      await page.locator(".arriving", { hasText: "1 more after this answer" }).waitFor({ timeout: 5_000 })
      expect(await page.locator("article.card", { hasText: "Arrived mid-window" }).count()).toBe(0)
      expect(await tops(page)).toEqual(before)
      await shot(page, "card-undo.png")

      await page.clock.runFor(UNDO_MS)
      await card.getByText("Answered: SQLite").waitFor()
      expect(onDisk(home, middle.id).answer).toEqual({ choice: "SQLite" })
      // Decided, and still in its place in the open list.
      expect(await page.locator(`section.open-questions article.card[data-id="${middle.id}"]`).count()).toBe(1)
      expect(await tops(page)).toEqual(before)

      await page.clock.runFor(DECIDED_MS)
      await page.locator(`section.history article.card[data-id="${middle.id}"]`).waitFor()
      await page.locator("section.open-questions article.card", { hasText: "Arrived mid-window" }).waitFor()
      expect(await page.locator(".arriving").isVisible()).toBe(false)
      expect(errors).toEqual([])
    } finally {
      await close()
    }
  })

  it("fills the room a tapped card keeps with what is being sent, and lets it go with the card", async () => {
    const { home, web } = await open()
    try {
      const above = asked("20260902-231503-5a5a", 1, "Above: rename the flag?")
      const tapped = asked("20260902-231502-5b5b", 2, "Which storage backend?")
      const below = asked("20260902-231501-5c5c", 3, "Below: ship tonight?")
      await seed(home, [{ q: above }, { q: tapped }, { q: below }])
      await page.goto(web.url)
      const card = page.locator(`article.card[data-id="${tapped.id}"]`)
      await card.getByRole("button", { name: "Redis" }).waitFor({ timeout: 10_000 })
      const before = await tops(page)
      /** How much of the card below what it says is empty. */
      const emptyBelow = () =>
        card.evaluate((c) => {
          const last = [...c.querySelectorAll<HTMLElement>(".deciding")].at(-1)!
          const padding = parseFloat(getComputedStyle(c).paddingBottom) + parseFloat(getComputedStyle(c).borderBottomWidth)
          return Math.round(c.getBoundingClientRect().bottom - padding - last.getBoundingClientRect().bottom)
        })

      await card.getByRole("button", { name: "Redis" }).tap()
      await card.getByText("Sending Redis in 5 s").waitFor()
      // The card below stays where it was, and the room kept is what is being sent, not a blank.
      expect(await tops(page)).toEqual(before)
      expect(await emptyBelow()).toBeLessThanOrEqual(2)
      expect(await card.locator(".deciding").evaluate((d) => d.getBoundingClientRect().height)).toBeGreaterThan(100)
      await shot(page, "card-held-filled.png")

      await page.clock.runFor(UNDO_MS)
      await card.getByText("Answered: Redis").waitFor()
      expect(await emptyBelow()).toBeLessThanOrEqual(2)
      await page.clock.runFor(DECIDED_MS)
      await page.locator(`section.history article.card[data-id="${tapped.id}"]`).waitFor()
      // Gone from the open list, it keeps no height of its own in history.
      const settled = page.locator(`section.history article.card[data-id="${tapped.id}"]`)
      expect(await settled.evaluate((c) => c.style.minHeight)).toBe("")
      expect(errors).toEqual([])
    } finally {
      await close()
    }
  })

  it("scrolls a markdown table sideways at 390 px, like code, never breaking a word", async () => {
    const { home, web } = await open()
    try {
      const table = [
        "| option | meaning | default |",
        "| --- | --- | --- |",
        "| answer_timeout | how long a question waits for the owner before it is abandoned | 86400 |",
        "| notify_command | the command that tells the owner a question is waiting | none |"
      ].join("\n")
      const q = { ...asked("20260902-231501-6a6a", 1, "Which options?"), detail: `Proposed:\n\n${table}\n` }
      await seed(home, [{ q }])
      await page.goto(web.url)
      const grid = page.locator(`article.card[data-id="${q.id}"] .md table`)
      // The markdown renderer arrives once the first screen is drawn, on the page's (paused) clock.
      for (let tick = 0; tick < 40 && (await grid.count()) === 0; tick++) await page.clock.runFor(250)
      await grid.waitFor({ timeout: 10_000 })
      const measured = await grid.evaluate((t) => {
        // Each cell's words: a word split over two lines has more than one box.
        const broken: string[] = []
        for (const cell of t.querySelectorAll("td, th"))
          for (const word of (cell.textContent ?? "").split(/\s+/).filter((w) => w !== "")) {
            const text = cell.firstChild!
            const at = (text.textContent ?? "").indexOf(word)
            const range = document.createRange()
            range.setStart(text, at)
            range.setEnd(text, at + word.length)
            if (range.getClientRects().length > 1) broken.push(word)
          }
        return { broken, scrolls: t.scrollWidth > t.clientWidth, width: t.getBoundingClientRect().width, page: document.documentElement.scrollWidth }
      })
      expect(measured.broken).toEqual([])
      expect(measured.scrolls).toBe(true)
      // The table scrolls inside the card; the page itself does not.
      expect(measured.page).toBeLessThanOrEqual(PHONE.width)
      await shot(page, "card-table.png")
      expect(errors).toEqual([])
    } finally {
      await close()
    }
  })

  it("sends a held answer at once when the page is closed, and Undo brings a typed answer back", async () => {
    const { home, web } = await open()
    try {
      const question = freeQuestion("20260902-231501-4a4a")
      await seed(home, [{ q: question }])
      await page.goto(web.url)
      const card = page.locator(`article.card[data-id="${question.id}"]`)
      const box = card.getByRole("textbox", { name: "Your answer" })
      await box.fill("Say the file is missing, and name it.")
      await card.getByRole("button", { name: "Send answer" }).tap()
      await card.getByText("Sending Say the file is missing").waitFor()
      await card.getByRole("button", { name: "Undo" }).tap()
      expect(await box.inputValue()).toBe("Say the file is missing, and name it.")

      await card.getByRole("button", { name: "Send answer" }).tap()
      await card.getByRole("button", { name: "Undo" }).waitFor()
      // The clock is paused: only the page going away can send it now.
      await page.goto("about:blank")
      const answered = await eventually("the answer on disk", () => {
        const q = onDisk(home, question.id)
        return q.status === "answered" ? q : undefined
      })
      expect(answered.answer).toEqual({ text: "Say the file is missing, and name it." })
    } finally {
      await close()
    }
  })

  it("never sends a held answer that an answer from elsewhere overtook, and keeps what was typed", async () => {
    const { home, web } = await open()
    try {
      const question = freeQuestion("20260902-231501-4b4b")
      await seed(home, [{ q: question }])
      await page.goto(web.url)
      const card = page.locator(`article.card[data-id="${question.id}"]`)
      await card.getByRole("textbox", { name: "Your answer" }).fill("Name the flag.")
      await card.getByRole("button", { name: "Send answer" }).tap()
      await card.getByRole("button", { name: "Undo" }).waitFor()
      await withStore(home, answerQuestion(question.id, { text: "From the terminal." }))
      await card.getByText("Decided elsewhere before your answer was sent, so it was not sent.").waitFor({ timeout: 10_000 })
      expect(await card.locator(".lost-draft pre").textContent()).toBe("Name the flag.")
      await page.clock.runFor(UNDO_MS + DECIDED_MS)
      expect(onDisk(home, question.id).answer).toEqual({ text: "From the terminal." })
    } finally {
      await close()
    }
  })

  it("frames a panel at its folder, so its relative image loads and its stylesheet applies, and its script still does not run", async () => {
    const { home, web } = await open()
    try {
      const question = choiceQuestion("20260902-231501-5a5a")
      await seed(home, [
        {
          q: question,
          panel: `<!doctype html><link rel="stylesheet" href="panel.css">
<h3 id="styled">Benchmark</h3>
<p id="script">script did not run</p>
<script>document.getElementById("script").textContent = "script ran"</script>
<img id="chart" src="chart.png" alt="chart" width="120" height="120">
<img id="old" src="asset/chart.png" alt="old-style" width="40" height="40">`,
          assets: { "chart.png": tinyPng(), "panel.css": "#styled { color: rgb(200, 10, 10); font-size: 30px }" }
        }
      ])
      await page.goto(web.url)
      const frame = page.frameLocator("article.card iframe")
      await frame.locator("#styled").waitFor({ timeout: 10_000 })
      expect(await page.locator("article.card iframe").getAttribute("sandbox")).toBe("allow-same-origin")
      expect(await page.locator("article.card iframe").getAttribute("src")).toBe(`/api/questions/${question.id}/panel/`)
      await expect.poll(() => frame.locator("#chart").evaluate((img: HTMLImageElement) => img.naturalWidth)).toBe(2)
      await expect.poll(() => frame.locator("#old").evaluate((img: HTMLImageElement) => img.naturalWidth)).toBe(2)
      expect(await frame.locator("#styled").evaluate((h) => getComputedStyle(h).color)).toBe("rgb(200, 10, 10)")
      expect(await frame.locator("#script").textContent()).toBe("script did not run")
      await shot(page, "card-panel.png")
    } finally {
      await close()
    }
  })

  it("renders the detail and the agent's turns as markdown, keeps agent markup inert, scrolls code sideways and folds a long detail", async () => {
    const { home, web } = await open()
    try {
      const long = Array.from({ length: 30 }, (_, i) => `- finding ${i + 1}`).join("\n")
      const detail = [
        "## What changed",
        "",
        "The **cache** moved; see [the design](https://example.com/design) and [this](javascript:document.title='pwned').",
        "",
        "<script>document.title='pwned'</script> <img src=x onerror=\"document.title='pwned'\">",
        "",
        "```diff",
        `-  const cache = new Map<string, Entry>() // ${"a very long line that must not wrap ".repeat(4)}`,
        "+  const cache = new LruCache(1000)",
        "```",
        "",
        long
      ].join("\n")
      const question = { ...choiceQuestion("20260902-231501-6a6a", new Date()), detail }
      const replied = ok(
        Q.reply(ok(Q.say(question, "Which *cache*?", new Date())), "The `entries` one:\n\n1. read path\n2. write path", question.choices, new Date())
      )
      await seed(home, [{ q: replied }])
      await page.goto(web.url)
      const card = page.locator("article.card").first()
      const body = card.locator(".detail")
      // Shown as written at first; rendered once the renderer is in, which
      // the page fetches in idle time after its first screen (idle time runs
      // on this file's paused clock: let some pass).
      await body.waitFor({ timeout: 10_000 })
      expect(await body.evaluate((d) => d.classList.contains("pending"))).toBe(true)
      expect(await body.textContent()).toContain("## What changed")
      await page.clock.runFor(1_000)
      await card.locator(".detail.md:not(.pending)").waitFor({ timeout: 10_000 })
      // `##` under the card's own title: a small heading (h5), never one louder than the summary.
      expect(await body.locator("h5").textContent()).toBe("What changed")
      expect(await body.locator("strong").first().textContent()).toBe("cache")
      const link = body.getByRole("link", { name: "the design" })
      expect(await link.getAttribute("href")).toBe("https://example.com/design")
      expect(await link.getAttribute("target")).toBe("_blank")
      expect(await link.getAttribute("rel")).toBe("noopener noreferrer")
      // A javascript: link is no link at all.
      expect(await body.getByRole("link", { name: "this" }).count()).toBe(0)
      expect(await body.textContent()).toContain("<script>document.title='pwned'</script>")
      expect(await card.locator("script, img").count()).toBe(0)
      expect(await page.title()).not.toContain("pwned")
      // Code keeps its lines and scrolls sideways.
      const pre = body.locator("pre")
      expect(await pre.evaluate((p) => getComputedStyle(p).whiteSpace)).toBe("pre")
      expect(await pre.evaluate((p) => p.scrollWidth > p.clientWidth)).toBe(true)
      expect(await page.evaluate(() => document.scrollingElement!.scrollWidth)).toBeLessThanOrEqual(PHONE.width)
      // The agent's turn is markdown too; the owner's is shown as typed.
      expect(await card.locator(".turn.agent li").count()).toBe(2)
      expect(await card.locator(".turn.agent code").textContent()).toBe("entries")
      expect(await card.locator(".turn.operator").textContent()).toContain("Which *cache*?")
      // Long: folded, with the choices still in reach; "Show more" opens it.
      expect(await body.evaluate((d) => d.scrollHeight > d.clientHeight)).toBe(true)
      await shot(page, "card-markdown.png")
      await card.getByRole("button", { name: "Show more" }).tap()
      expect(await body.evaluate((d) => d.scrollHeight <= d.clientHeight + 1)).toBe(true)
      expect(await card.getByRole("button", { name: "Show less" }).isVisible()).toBe(true)
    } finally {
      await close()
    }
  })

  it("says 'not delivered' with a link to the notice once the waiter gave up on the answer", async () => {
    const { home, web } = await open()
    try {
      const question = { ...choiceQuestion("20260902-231501-7a7a", new Date(Date.now() - 60_000)), cwd: "/work/agent" }
      await seed(home, [{ q: ok(Q.answer(question, { choice: "Redis" }, new Date(Date.now() - 30_000))) }])
      await page.goto(web.url)
      const card = page.locator(`article.card[data-id="${question.id}"]`)
      await card.locator(".holder").waitFor({ timeout: 10_000 })
      expect(await card.locator(".holder").textContent()).not.toContain("Not delivered")
      writeNotice(home, {
        id: "20260902-231600-7b7b",
        question: question.id,
        summary: "impl-A could not be resumed",
        reason: "impl-A has no session to resume; magi starts no fresh agent"
      })
      const line = card.locator(".holder.undelivered")
      await line.waitFor({ timeout: 10_000 })
      expect(await line.textContent()).toContain("Not delivered: impl-A could not be resumed")
      expect(await card.textContent()).not.toContain("magi will resume it")
      await shot(page, "card-not-delivered.png")
      await line.getByRole("link", { name: "See the notice" }).tap()
      await page.locator("section.notices-view article.notice-item", { hasText: "impl-A could not be resumed" }).waitFor()
    } finally {
      await close()
    }
  })

  it("stops saying 'the agent is waiting' once the asking `magi ask` has exited", {
    // A real `magi ask` process starting and stopping: generous for a loaded
    // machine. It once failed about 2 runs in 10 under load with the lease
    // file gone but the card unchanged: the lease index trusted a folder
    // mtime as young as the read that filled it (a removal in the same tick
    // went unseen). `Memo` now trusts only an mtime safely older than the
    // read; what this logs on failure says which side (server or page) was behind.
    timeout: 120_000
  }, async () => {
    const { home, web } = await open()
    try {
      const agent = spawn(process.execPath, [MAGI, "ask", "--summary", "Keep the old flag?", "--choice", "keep", "--choice", "drop"], {
        env: { ...process.env, MAGI_HOME: home, XDG_CONFIG_HOME: NodePath.join(home, "config"), MAGI_WAIT_SLICE: "120" },
        stdio: "ignore"
      })
      const exited = new Promise((resolve) => agent.once("exit", resolve))
      await page.goto(web.url)
      const card = page.locator("article.card", { hasText: "Keep the old flag?" })
      await expect.poll(() => card.locator(".holder").textContent(), { timeout: 60_000 }).toBe("The agent is waiting.")
      // What a shell tool's timeout sends; the lease goes with the process, not after its ttl.
      agent.kill("SIGTERM")
      await exited
      expect(NodeFs.readdirSync(NodePath.join(home, "questions", "leases")).filter((f) => f.endsWith(".lease"))).toEqual([])
      try {
        await expect.poll(() => card.locator(".holder").textContent(), { timeout: 30_000 }).toMatch(/^No agent is waiting/)
      } catch (e) {
        const list = await (await fetch(`${web.url}/api/questions`)).json()
        // Which side is behind: the server's holders, or the page (and its event stream).
        console.log(
          "still 'waiting' after the asker exited: server holders",
          JSON.stringify(list.open.map((q: { holder: string }) => q.holder)),
          "page connection",
          await page.evaluate(() => document.querySelector(".connection")?.textContent)
        )
        throw e
      }
    } finally {
      await close()
    }
  })

  it("lets the owner decide anyway after asking back, from a folded control", async () => {
    const { home, web } = await open()
    try {
      const question = choiceQuestion("20260902-231501-8a8a", new Date())
      await seed(home, [{ q: ok(Q.say(question, "Is Redis already deployed?", new Date())) }])
      await page.goto(web.url)
      const card = page.locator(`article.card[data-id="${question.id}"]`)
      await card.getByText("the agent owes you a reply").waitFor({ timeout: 10_000 })
      expect(await card.getByRole("button", { name: "Redis" }).isVisible()).toBe(false)
      await card.getByText("Decide anyway").tap()
      await shot(page, "card-decide-anyway.png")
      await card.getByRole("button", { name: "Redis" }).tap()
      await card.getByRole("button", { name: "Undo" }).waitFor()
      await page.clock.runFor(UNDO_MS)
      await card.getByText("Answered: Redis").waitFor()
      expect(onDisk(home, question.id).answer).toEqual({ choice: "Redis" })
    } finally {
      await close()
    }
  })

  it("says a failed send in words next to the control and keeps the typed answer, offline or refused by the network", async () => {
    const { home, web } = await open()
    try {
      const question = freeQuestion("20260902-231501-9a9a")
      await seed(home, [{ q: question }])
      await page.goto(web.url)
      const card = page.locator(`article.card[data-id="${question.id}"]`)
      const box = card.getByRole("textbox", { name: "Your answer" })
      await box.fill("Name the missing file.")
      const notice = card.locator("section.decide .notice.error")

      // The phone loses its network during the Undo window.
      await context.setOffline(true)
      await card.getByRole("button", { name: "Send answer" }).tap()
      await page.clock.runFor(UNDO_MS)
      await notice.waitFor()
      expect(await notice.textContent()).toBe(
        "Your answer was not sent: this phone is offline. It is kept here; send it again once you are back online."
      )
      expect(await box.inputValue()).toBe("Name the missing file.")
      await shot(page, "card-send-failed.png")
      expect(onDisk(home, question.id).status).toBe("open")

      // Online, but the request dies on the way.
      await context.setOffline(false)
      await page.route("**/api/questions/*/answer", (route) => route.abort("connectionreset"))
      await card.getByRole("button", { name: "Send answer" }).tap()
      await page.clock.runFor(UNDO_MS)
      await expect.poll(() => notice.textContent()).toMatch(/^Your answer was not sent: magi could not be reached .*It is kept here; try again\.$/)
      expect(await box.inputValue()).toBe("Name the missing file.")

      // And once it gets through, the kept answer is what arrives.
      await page.unroute("**/api/questions/*/answer")
      await card.getByRole("button", { name: "Send answer" }).tap()
      await page.clock.runFor(UNDO_MS)
      await card.getByText("Answered: Name the missing file.").waitFor()
      expect(onDisk(home, question.id).answer).toEqual({ text: "Name the missing file." })
    } finally {
      await close()
    }
  })

  it("shows an answer given by a notification's button like any other, saying how it came", async () => {
    const { home, web } = await open()
    try {
      const question = choiceQuestion("20260902-231501-b1b1")
      await seed(home, [{ q: question }])
      await page.goto(web.url)
      await page.locator(`article.card[data-id="${question.id}"]`).getByRole("button", { name: "Redis" }).waitFor({ timeout: 10_000 })
      // The press, as the token route records it: through the same answer path, under the lock.
      const claim = { question: question.id, index: 1, digest: choicesDigest(question.choices), expiresAt: Date.now() + 60_000 }
      await withStore(home, answerWithLink(claim))
      const settled = page.locator(`section.history article.card[data-id="${question.id}"]`)
      await settled.waitFor({ timeout: 10_000 })
      const resolution = await settled.locator(".resolution").textContent()
      expect(resolution).toContain("Redis")
      expect(resolution).toContain("by a notification button")
      expect(errors).toEqual([])
    } finally {
      await close()
    }
  })

  it("keeps a half-typed answer, with a warning, when the question is decided elsewhere", async () => {
    const { home, web } = await open()
    try {
      const question = freeQuestion("20260902-231501-aa1a")
      await seed(home, [{ q: question }])
      await page.goto(web.url)
      const card = page.locator(`article.card[data-id="${question.id}"]`)
      await card.getByRole("textbox", { name: "Your answer" }).fill("Say which flag was wrong")
      await withStore(home, answerQuestion(question.id, { text: "Use the terminal's wording." }))
      const warning = card.locator(".lost-draft")
      await warning.waitFor({ timeout: 10_000 })
      expect(await warning.textContent()).toContain("decided elsewhere while you were typing")
      expect(await warning.locator("pre").textContent()).toBe("Say which flag was wrong")
      expect(await card.locator(".resolution").textContent()).toContain("Use the terminal's wording.")
      // In its place in the open list until the owner lets the draft go.
      expect(await page.locator(`section.open-questions article.card[data-id="${question.id}"]`).count()).toBe(1)
      await shot(page, "card-lost-draft.png")
      await warning.getByRole("button", { name: "Discard the draft" }).tap()
      await page.locator(`section.history article.card[data-id="${question.id}"]`).waitFor()
      expect(await page.locator(".lost-draft").count()).toBe(0)
    } finally {
      await close()
    }
  })
})
