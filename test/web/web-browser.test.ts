/**
 * The phone page in a real browser (Debian's Chromium through playwright-core)
 * against the built `magi web`, with real `magi ask` processes on the other
 * end: what the owner sees and taps is what the agent receives.
 */
import { describe, expect, it } from "vitest"
import type { Page } from "playwright-core"
import { spawn, type ChildProcess } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeHttp from "node:http"
import * as NodePath from "node:path"
import type { AddressInfo } from "node:net"
import * as Q from "../../src/questions/Question.js"
import { answerQuestion } from "../../src/questions/Answers.js"
import { choiceQuestion, freeQuestion, ok, tempDirSync } from "../support.js"
import { MAGI, request, seed, startWeb, withStore, writeNotice } from "./web-support.js"
import { PHONE, phoneSession, tinyPng } from "./browser-support.js"

// Locally a machine without Chromium skips these; in CI a missing browser is
// a broken runner, and skipping would report the page as tested when it was not.

/** `magi ask` as an agent runs it, against `home`; its output and exit code when it ends. */
const ask = (home: string, args: ReadonlyArray<string>) => {
  const child: ChildProcess = spawn(process.execPath, [MAGI, "ask", ...args], {
    env: {
      ...process.env,
      MAGI_HOME: home,
      XDG_CONFIG_HOME: NodePath.join(home, "config"),
      MAGI_WAIT_SLICE: "60",
      MAGI_RUN: "20260902-201256-9fb7",
      MAGI_NODE: "implement",
      MAGI_SEAT: "impl-A"
    },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stdout = ""
  let stderr = ""
  child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()))
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()))
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.once("exit", (code) => resolve({ code, stdout, stderr }))
  )
  return { child, done, stderr: () => stderr }
}

/** A second web server on another origin: the attacker's page, and a trap counting requests to it. */
const otherOrigin = async (page: (port: number) => string) => {
  const hits: string[] = []
  const server = NodeHttp.createServer((req, res) => {
    hits.push(req.url ?? "")
    if (req.url === "/" || req.url === "/submit") {
      res.writeHead(200, { "content-type": "text/html" })
      res.end(page((server.address() as AddressInfo).port))
    } else {
      res.writeHead(200, { "content-type": "image/png" })
      res.end()
    }
  })
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    close: () => new Promise<void>((r) => server.close(() => r()))
  }
}

/**
 * For a test whose tap waits out the Undo window (`UNDO_MS`) and the decided
 * card's stay (`DECIDED_MS`) in real time, on top of starting a server,
 * a browser and an agent on a busy machine.
 */
const TAP_DEADLINE_MS = 60_000

describe("the phone page in Chromium", () => {
  const session = phoneSession()
  let page: Page
  let console: string[]

  /** A fresh home, server and phone-sized page for one test. */
  const open = async (home = tempDirSync()) => {
    const visit = await session.open(() => startWeb(home))
    page = visit.page
    console = []
    page.on("console", (m) => console.push(m.text()))
    return { home, web: visit.web }
  }
  const close = session.close

  it("answers a waiting `magi ask` when the owner taps a choice, and the agent prints it", async () => {
    const { home, web } = await open()
    try {
      const agent = ask(home, ["--summary", "Ship the release tonight?", "--detail", "CI is green.", "--choice", "ship it", "--choice", "hold"])
      await page.goto(web.url)
      const card = page.locator("article.card", { hasText: "Ship the release tonight?" })
      await card.waitFor({ timeout: 10_000 })
      await expect.poll(() => page.title()).toBe("(1) magi")
      // Its `magi ask` beats the lease, so the card says someone is there.
      await expect.poll(() => card.locator(".holder").textContent()).toBe("The agent is waiting.")
      await card.getByRole("button", { name: "ship it" }).tap()
      const result = await agent.done
      expect(result.stdout).toBe("ship it\n")
      expect(result.code).toBe(0)
      await page.locator("section.history article.card", { hasText: "Ship the release tonight?" }).waitFor()
      await expect.poll(() => page.title()).toBe("magi")
      // The page itself runs cleanly under its own strict policy.
      expect(console.filter((m) => /Content Security Policy|Refused|Uncaught/.test(m))).toEqual([])
    } finally {
      await close()
    }
  }, TAP_DEADLINE_MS)

  it("delivers the owner's ask-back to the waiting `magi ask`, and locks the answer until the agent replies", async () => {
    const { home, web } = await open()
    try {
      const agent = ask(home, ["--summary", "What should the error message say?"])
      await page.goto(web.url)
      const card = page.locator("article.card", { hasText: "What should the error message say?" })
      await card.waitFor({ timeout: 10_000 })
      await card.getByRole("textbox", { name: /Ask back/ }).fill("Which error: the missing file or the bad flag?")
      await card.getByRole("button", { name: "Ask back" }).tap()
      const result = await agent.done
      expect(result.code).toBe(0)
      expect(result.stdout).toContain("The owner replied on question")
      expect(result.stdout).toContain("Which error: the missing file or the bad flag?")
      // The owner's turn is the last word: deciding waits for the agent,
      // and deciding anyway is folded away.
      await card.getByText("the agent owes you a reply").waitFor()
      expect(await card.getByRole("button", { name: "Send answer" }).isVisible()).toBe(false)
      expect(await card.locator("details.decide-anyway").getAttribute("open")).toBeNull()
      await expect.poll(() => page.title()).toBe("magi")
    } finally {
      await close()
    }
  })

  it("shows a panel that can neither run its script nor load a remote image", async () => {
    const trap = await otherOrigin(() => "")
    const { home, web } = await open()
    try {
      const evidence = choiceQuestion("20260902-231501-0b0b")
      await seed(home, [
        {
          q: evidence,
          panel: `<!doctype html><style>p{font:16px sans-serif}</style>
<p id="script">script did not run</p>
<script>document.getElementById("script").textContent = "script ran"; fetch("${trap.url}/script-ran")</script>
<img id="remote" src="${trap.url}/remote.png" alt="remote">
<img id="own" src="asset/chart.png" alt="own" width="40" height="40">`,
          assets: { "chart.png": tinyPng() }
        }
      ])
      await page.goto(web.url)
      const frame = page.frameLocator("article.card iframe")
      await frame.locator("#script").waitFor({ timeout: 10_000 })
      expect(await page.locator("article.card iframe").getAttribute("sandbox")).toBe("allow-same-origin")
      await page.waitForTimeout(500)
      expect(await frame.locator("#script").textContent()).toBe("script did not run")
      expect(trap.hits).toEqual([])
      const messages = console.join("\n")
      expect(messages).toMatch(/Blocked script execution .* sandboxed/)
      // Chromium's wording changed across versions; both name the image and the directive.
      expect(messages).toMatch(/(Refused to load|Loading) the image '[^']*\/remote\.png'.*"img-src 'self' data:"/)
      // The choices beside the panel still work.
      await page.getByRole("button", { name: "Redis" }).tap()
      await page.locator("section.history article.card").waitFor()
    } finally {
      await close()
      await trap.close()
    }
  }, TAP_DEADLINE_MS)

  it("fits a panel's frame to its content up to a cap, past which the panel scrolls inside, and nothing a panel does moves the cap", async () => {
    const trap = await otherOrigin(() => "")
    const { home, web } = await open()
    try {
      const short = { ...choiceQuestion("20260902-231504-1a1a"), summary: "A short panel" }
      const tall = { ...choiceQuestion("20260902-231505-1b1b"), summary: "A tall panel" }
      const hostile = { ...choiceQuestion("20260902-231506-1c1c"), summary: "A hostile panel" }
      await seed(home, [
        { q: short, panel: `<!doctype html><p id="line" style="font:16px sans-serif">One line of evidence.</p>` },
        { q: tall, panel: `<!doctype html><p id="top">top</p><div style="height:3000px"></div><p id="bottom">bottom</p>` },
        {
          q: hostile,
          // Everything a panel can try without a script: a height that follows
          // its frame's, a name that shadows what the page reads, a refresh
          // away, and the scripts that must not run (one posting a forged size).
          panel: `<!doctype html><meta http-equiv="refresh" content="0;url=${trap.url}/refreshed">
<style>html { height: 100% } body { min-height: 300vh }</style>
<img name="documentElement" src="nothing.png" alt="" width="1" height="1">
<p id="script">script did not run</p>
<script>document.getElementById("script").textContent = "script ran"; parent.postMessage({ height: 50000 }, "*"); parent.postMessage(50000, "*")</script>
<img src="nothing.png" alt="" onerror="document.getElementById('script').textContent = 'handler ran'">`
        }
      ])
      await page.goto(web.url)
      const frameOf = (q: Q.Question) => page.locator(`article.card[data-id="${q.id}"] iframe`)
      const heightOf = (q: Q.Question) => frameOf(q).evaluate((f) => f.getBoundingClientRect().height)
      /** The panel's own scrolling: how tall its content is, and how much of it the frame shows. */
      const scrollOf = (q: Q.Question) =>
        page.frameLocator(`article.card[data-id="${q.id}"] iframe`).locator("html").evaluate((h) => ({ content: h.scrollHeight, shown: h.clientHeight }))
      const cap = await page.evaluate(() => Math.min(window.innerHeight * 0.6, 560))
      for (const q of [short, tall, hostile])
        await page.frameLocator(`article.card[data-id="${q.id}"] iframe`).locator("p").first().waitFor({ timeout: 10_000 })
      expect(await frameOf(short).getAttribute("sandbox")).toBe("allow-same-origin")

      // A line of text gets a frame a line tall, all of it shown.
      await expect.poll(() => heightOf(short), { timeout: 10_000 }).toBeLessThan(100)
      const shortScroll = await scrollOf(short)
      expect(shortScroll.content).toBeLessThanOrEqual(shortScroll.shown)
      expect(await heightOf(short)).toBeGreaterThan(20)

      // A page of 3,000 px stops at the cap (about 500 px at 844) and scrolls inside its frame.
      await expect.poll(() => heightOf(tall), { timeout: 10_000 }).toBeCloseTo(cap, 0)
      const tallScroll = await scrollOf(tall)
      expect(tallScroll.content).toBeGreaterThan(3000)
      expect(tallScroll.shown).toBeLessThan(cap)
      const tallFrame = page.frameLocator(`article.card[data-id="${tall.id}"] iframe`)
      await tallFrame.locator("#bottom").scrollIntoViewIfNeeded()
      expect(await tallFrame.locator("html").evaluate((h) => h.ownerDocument.defaultView!.scrollY)).toBeGreaterThan(2000)

      // The hostile one: never past the cap, its scripts and handlers never ran, and its frame never left it.
      await page.waitForTimeout(1_000)
      expect(await heightOf(hostile)).toBeLessThanOrEqual(cap + 0.5)
      const hostileFrame = page.frameLocator(`article.card[data-id="${hostile.id}"] iframe`)
      expect(await hostileFrame.locator("#script").textContent()).toBe("script did not run")
      expect(trap.hits).toEqual([])
      expect(page.frames().map((f) => f.url())).not.toContain(`${trap.url}/refreshed`)

      // Sizes posted to the page from anywhere else change nothing: the page measures, it never listens.
      const before = await Promise.all([short, tall, hostile].map(heightOf))
      await page.evaluate(() => {
        window.postMessage({ height: 50000 }, "*")
        window.postMessage(50000, "*")
        window.dispatchEvent(new MessageEvent("message", { data: 50000 }))
      })
      await page.waitForTimeout(500)
      expect(await Promise.all([short, tall, hostile].map(heightOf))).toEqual(before)
      NodeFs.mkdirSync("test-results", { recursive: true })
      await page.screenshot({ path: NodePath.join("test-results", "panel-frames.png"), fullPage: true })

      // The choices beside a panel still work.
      await page.locator(`article.card[data-id="${short.id}"]`).getByRole("button", { name: "Redis" }).tap()
      await page.locator(`section.history article.card[data-id="${short.id}"]`).waitFor()
    } finally {
      await close()
      await trap.close()
    }
  }, TAP_DEADLINE_MS)

  it("says so when the panel cannot be loaded, and keeps the choices working", async () => {
    const { home, web } = await open()
    try {
      // The record claims a panel the store does not have (deleted by hand).
      await seed(home, [{ q: { ...choiceQuestion("20260902-231501-0c0c"), panel: true } }])
      await page.goto(web.url)
      const card = page.locator("article.card").first()
      await card.getByText("could not be loaded (HTTP 404)").waitFor({ timeout: 10_000 })
      await card.getByRole("button", { name: "SQLite" }).tap()
      await page.locator("section.history article.card").waitFor()
    } finally {
      await close()
    }
  }, TAP_DEADLINE_MS)

  it("refuses a form that another site's page posts to the API, and the question stays open", async () => {
    const { home, web } = await open()
    const question = choiceQuestion("20260902-231501-0d0d")
    await seed(home, [{ q: question }])
    const target = `${web.url}/api/questions/${question.id}/answer`
    // The classic JSON CSRF: a text/plain form whose one field spells JSON,
    // submitted by the attacker's page as soon as it loads at /submit.
    const evil = await otherOrigin(
      () =>
        `<!doctype html><form id="f" method="POST" action="${target}" enctype="text/plain">
<input name='{"choice":"Redis","pad":"' value='"}'></form>
<script>if (location.pathname === "/submit") document.getElementById("f").submit()</script>`
    )
    try {
      const statuses: number[] = []
      page.on("response", (r) => {
        if (r.url() === target) statuses.push(r.status())
      })
      await page.goto(evil.url)
      // A script on that page: a JSON POST needs a CORS preflight magi never
      // grants, and a "simple" one is refused by the server.
      const attempts = await page.evaluate(async (url) => {
        const json = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: '{"choice":"Redis"}' }).then(
          (r) => `status ${r.status}`,
          () => "blocked"
        )
        const simple = await fetch(url, { method: "POST", mode: "no-cors", headers: { "content-type": "text/plain" }, body: '{"choice":"Redis"}' }).then(
          (r) => r.type,
          () => "blocked"
        )
        return { json, simple }
      }, target)
      expect(attempts.json).toBe("blocked")
      expect(attempts.simple).toBe("opaque")
      await page.goto(`${evil.url}/submit`)
      await page.waitForURL(target)
      expect(await page.locator("body").textContent()).toContain("refused")
      expect(statuses.length).toBeGreaterThanOrEqual(2)
      expect(statuses.every((s) => s === 403)).toBe(true)
      const list = (await request(`${web.url}/api/questions`)).json() as { open: Array<{ id: string; status: string }> }
      expect(list.open.find((q) => q.id === question.id)?.status).toBe("open")
    } finally {
      await close()
      await evil.close()
    }
  })

  it("says 'answered elsewhere' when a decision lost the race, and shows what was decided", async () => {
    const { home, web } = await open()
    try {
      const question = choiceQuestion("20260902-231501-0e0e")
      await seed(home, [{ q: question }])
      // No live updates, so the page still shows the question open when the
      // terminal answers it: the tap is what finds out.
      await page.route("**/api/events", (route) => route.abort())
      await page.goto(web.url)
      const card = page.locator("article.card").first()
      await card.getByRole("button", { name: "Redis" }).waitFor({ timeout: 10_000 })
      await withStore(home, answerQuestion(question.id, { choice: "SQLite" }))
      await card.getByRole("button", { name: "Redis" }).tap()
      const moved = page.locator("section.history article.card")
      await moved.getByText(/Answered elsewhere/).waitFor()
      expect(await moved.locator(".resolution").textContent()).toContain("SQLite")
    } finally {
      await close()
    }
  }, TAP_DEADLINE_MS)

  it("follows the store live: a new question raises the badge and title without a reload", async () => {
    const { home, web } = await open()
    try {
      await seed(home, [{ q: choiceQuestion("20260902-231501-0f0f") }])
      await page.goto(web.url)
      await expect.poll(() => page.title()).toBe("(1) magi")
      await seed(home, [{ q: freeQuestion("20260902-231502-1f1f") }])
      await expect.poll(() => page.title(), { timeout: 5_000 }).toBe("(2) magi")
      expect(await page.locator('nav a[href="#/questions"] .badge').textContent()).toBe("2")
      await withStore(home, answerQuestion("20260902-231501-0f0f", { choice: "SQLite" }))
      await expect.poll(() => page.title(), { timeout: 5_000 }).toBe("(1) magi")
    } finally {
      await close()
    }
  })

  it("lists what the waiter could not deliver on the notices page, live and as text, and links back to the question", async () => {
    const { home, web } = await open()
    try {
      const question = { ...choiceQuestion("20260902-231501-3c3c"), cwd: "/work/agent" }
      await seed(home, [{ q: question }])
      await page.goto(web.url)
      const card = page.locator("article.card", { hasText: question.summary })
      // Filed by an agent whose `magi ask` is gone: nobody holds it, and this
      // server runs no loop, so the page promises nothing.
      await expect
        .poll(() => card.locator(".holder").textContent())
        .toBe("No agent is waiting, and no magi loop is running to resume it: start magi serve (or magi web without --no-loop).")
      // The commands are code, not words in backticks.
      expect(await card.locator(".holder code").allTextContents()).toEqual(["magi serve", "magi web", "--no-loop"])
      // A loop takes the home (its heartbeat file appears): now magi will.
      const beat = new Date().toISOString().replace(/\.\d+Z$/, "Z")
      NodeFs.writeFileSync(
        NodePath.join(home, "daemon.json"),
        JSON.stringify({ pid: 1, token: "a-loop", started_at: beat, beat_at: beat })
      )
      await expect
        .poll(() => card.locator(".holder").textContent(), { timeout: 5_000 })
        .toBe("No agent is waiting; magi will resume it when you answer.")

      await page.getByRole("link", { name: /^Notices/ }).tap()
      const view = page.locator("section.notices-view")
      await view.getByText("Nothing undelivered").waitFor()
      expect(await page.locator("section.open-questions").isVisible()).toBe(false)

      const summary = "Could not reach impl-A <b>again</b>"
      const reason = "impl-A has no session to resume <script>document.title='pwned'</script>; magi starts no fresh agent"
      writeNotice(home, { id: "20260902-231600-4d4d", question: question.id, summary, reason })
      const item = view.locator("article.notice-item")
      await item.waitFor({ timeout: 5_000 })
      expect(await item.locator(".summary").textContent()).toBe(summary)
      expect(await item.locator(".detail").textContent()).toBe(reason)
      expect(await item.locator("b, script").count()).toBe(0)
      expect(await page.title()).not.toContain("pwned")

      await item.getByRole("link", { name: "Show the question" }).tap()
      await card.waitFor({ state: "visible" })
      expect(await view.isVisible()).toBe(false)
    } finally {
      await close()
    }
  })

  it("keeps working when opened with a malformed question link in the URL hash", async () => {
    const { home, web } = await open()
    try {
      const errors: string[] = []
      page.on("pageerror", (e) => errors.push(e.message))
      await seed(home, [{ q: { ...choiceQuestion("20260902-231501-2b2b", new Date()), summary: "Still answerable?" } }])
      await page.goto(`${web.url}/#/questions/%E0%A4%A`)
      const card = page.locator("article.card", { hasText: "Still answerable?" })
      await card.waitFor({ timeout: 10_000 })
      await page.evaluate(() => (location.hash = "#/questions/%"))
      await page.evaluate(() => new Promise((r) => setTimeout(r, 100)))
      expect(errors).toEqual([])
      await card.getByRole("button", { name: "SQLite" }).tap()
      await page.locator("section.history article.card", { hasText: "Still answerable?" }).waitFor()
    } finally {
      await close()
    }
  }, TAP_DEADLINE_MS)

  it("renders agent-written markup as text, never as elements", async () => {
    const { home, web } = await open()
    try {
      const hostile = Q.make({
        id: "20260902-231501-1a1a",
        run: "<b>run</b>",
        node: "implement",
        seat: "impl-A",
        summary: `<img src=x onerror="document.title='pwned'">Pick one`,
        detail: "<script>document.title='pwned'</script>\n**bold?**",
        choices: ["<i>a</i>", "b"],
        now: new Date()
      })
      await seed(home, [{ q: ok(Q.say(hostile, "<u>owner</u>", new Date())) }])
      await page.goto(web.url)
      const card = page.locator("article.card").first()
      await card.waitFor({ timeout: 10_000 })
      expect(await card.locator(".summary").textContent()).toBe(hostile.summary)
      // The detail is markdown (rendered once the renderer is in, just after
      // the first screen): its emphasis renders, its markup stays characters.
      await card.locator(".detail.md:not(.pending)").waitFor({ timeout: 10_000 })
      expect((await card.locator(".detail").textContent())?.trim()).toBe("<script>document.title='pwned'</script>\nbold?")
      expect(await card.locator(".detail strong").textContent()).toBe("bold?")
      expect(await card.locator("img, script, i, u, b").count()).toBe(0)
      expect(await page.title()).not.toContain("pwned")
    } finally {
      await close()
    }
  })

  it("fits a 390×844 phone screen and a desktop, and leaves screenshots in test-results/ for a person to look at", async () => {
    const { home, web } = await open()
    try {
      const panelled = choiceQuestion("20260902-231503-2a2a")
      const asked = freeQuestion("20260902-231502-2b2b")
      const done = choiceQuestion("20260902-231501-2c2c")
      await seed(home, [
        {
          q: {
            ...panelled,
            summary: "Which layout should the settings page use?",
            detail: "Two options, sketched in the panel. Both fit the current design system."
          },
          panel: `<!doctype html><style>body{font:15px sans-serif;margin:12px}td{padding:4px 8px;border:1px solid #ccc}</style>
<h3>Options</h3><table><tr><td>Tabs</td><td>3 screens</td></tr><tr><td>One page</td><td>1 long screen</td></tr></table>
<p><img src="asset/chart.png" width="32" height="32" alt="chart"> benchmark</p>`,
          assets: { "chart.png": tinyPng() }
        },
        { q: ok(Q.say(asked, "Which audience is this message for?", new Date())) },
        { q: ok(Q.answer(done, { choice: "SQLite" }, new Date())) }
      ])
      await page.goto(web.url)
      await page.frameLocator("article.card iframe").locator("table").waitFor({ timeout: 10_000 })
      const width = await page.evaluate(() => document.scrollingElement!.scrollWidth)
      expect(width).toBeLessThanOrEqual(PHONE.width)
      NodeFs.mkdirSync("test-results", { recursive: true })
      const file = NodePath.join("test-results", "web-phone.png")
      await page.screenshot({ path: file, fullPage: true })
      expect(NodeFs.statSync(file).size).toBeGreaterThan(10_000)
      // And on a desktop: one readable column, nothing overflowing.
      await page.setViewportSize({ width: 1280, height: 800 })
      expect(await page.evaluate(() => document.scrollingElement!.scrollWidth)).toBeLessThanOrEqual(1280)
      const column = await page.locator("main").boundingBox()
      expect(column!.width).toBeLessThanOrEqual(800)
      await page.screenshot({ path: NodePath.join("test-results", "web-desktop.png") })
    } finally {
      await close()
    }
  })
})
