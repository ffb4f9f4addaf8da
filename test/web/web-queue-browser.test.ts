/**
 * The Queue and Runs pages in a real browser (Debian's Chromium through
 * playwright-core) against the built `magi web`: what the owner taps on the
 * phone is what lands in `<home>/queue`, and what another process writes
 * shows up without a reload.
 */
import { describe, expect, it } from "vitest"
import type { Page } from "playwright-core"
import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as Q from "../../src/questions/Question.js"
import * as T from "../../src/queue/Task.js"
import { TaskStore } from "../../src/queue/TaskStore.js"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { appendDecision, type DecisionRecord } from "../../src/daemon/ConductorLog.js"
import { sampleRun } from "../runSupport.js"
import { choiceQuestion, ok, tempDirSync } from "../support.js"
import { gitRepo, request, seed, seedRun, startWeb, withTasks } from "./web-support.js"
import { PHONE, phoneSession } from "./browser-support.js"
import { UNDO_MS } from "../../src/web/client/decisions.js"

/** The task files in `home`, read as the loop would. */
const stored = (home: string): Array<T.Task> => {
  const dir = NodePath.join(home, "queue")
  if (!NodeFs.existsSync(dir)) return []
  return NodeFs.readdirSync(dir)
    .filter((n) => n.endsWith(".json"))
    .map((n) => ok(T.decode(NodeFs.readFileSync(NodePath.join(dir, n), "utf8"), n)))
}

const file = (home: string, fields: Partial<T.NewTask> & { readonly instruction: string }, then: (t: T.Task) => T.Task = (t) => t) =>
  withTasks(
    home,
    Effect.gen(function* () {
      const store = yield* TaskStore
      const filed = yield* store.add({ repo: "/r", ...fields })
      const moved = then(filed)
      return moved === filed ? filed : yield* store.put(moved)
    })
  )

/** Unfold a card's less frequent controls (priority, edit, remove), unless they are showing. */
const unfold = async (card: ReturnType<Page["locator"]>) => {
  if ((await card.locator("details.more").getAttribute("open")) === null) await card.locator("details.more > summary").tap()
}

// A page test is a dozen real round trips through a browser and a server; on a
// loaded two-core machine that can take far longer than vitest's 30 s default.
describe("the queue and runs pages in Chromium", { timeout: 120_000 }, () => {
  const session = phoneSession()
  let page: Page
  let console: string[]

  const open = async (cwd = gitRepo()) => {
    const visit = await session.open(() => startWeb(tempDirSync(), 0, { cwd }))
    page = visit.page
    console = []
    page.on("console", (m) => console.push(m.text()))
    return { home: visit.web.home, web: visit.web, repo: cwd }
  }
  const close = session.close

  it("offers older done tasks only when there are some, and no default repository in magi's own checkout", async () => {
    // Started in this test's checkout of magi, as `npm start` runs it.
    const { web } = await open(NodeFs.realpathSync("."))
    try {
      await page.goto(`${web.url}/#/queue`)
      const picker = page.getByRole("combobox", { name: "Repository" })
      await expect.poll(() => picker.inputValue()).toBe("")
      await expect.poll(() => page.locator(".repo-hint").textContent()).toContain("[repos]")
      expect(await page.locator(".repo-hint code").first().textContent()).toBe("[repos]")
      await expect.poll(() => page.evaluate(() => performance.getEntriesByType("resource").some((r) => r.name.includes("/api/queue/history")))).toBe(true)
      expect(await page.getByRole("button", { name: "Show older done tasks" }).isVisible()).toBe(false)
    } finally {
      await close()
    }
    // One task done long ago, moved to its month's shelf by the first listing.
    const home = tempDirSync()
    const t = await withTasks(
      home,
      Effect.gen(function* () {
        const store = yield* TaskStore
        const filed = yield* store.add({ repo: "/r", instruction: "finished long ago" })
        return yield* store.put(ok(T.succeed(filed)))
      })
    )
    const path = NodePath.join(home, "queue", `${t.id}.json`)
    NodeFs.writeFileSync(path, JSON.stringify({ ...JSON.parse(NodeFs.readFileSync(path, "utf8")), updated_at: "2026-06-01T00:00:00Z" }))
    const visit = await session.open(() => startWeb(home, 0, { cwd: gitRepo() }))
    try {
      await expect.poll(async () => {
        await request(`${visit.web.url}/api/queue`)
        return (await request(`${visit.web.url}/api/queue/history`)).json().tasks.length
      }, { timeout: 20_000 }).toBe(1)
      await visit.page.goto(`${visit.web.url}/#/queue`)
      await expect.poll(() => visit.page.getByRole("button", { name: "Show older done tasks" }).isVisible()).toBe(true)
    } finally {
      await close()
    }
  })

  it("files a task from the phone into the queue, and shows one filed at a terminal without a reload", async () => {
    const { home, web, repo } = await open()
    try {
      await page.goto(`${web.url}/#/queue`)
      const form = page.locator("form.file-task")
      await form.getByRole("textbox", { name: "What should the agent do?" }).fill("# Fix the flaky login test\nIt fails one run in ten.")
      await form.getByRole("spinbutton", { name: "Priority" }).fill("4")
      // The repository magi web runs in is offered, and chosen, by default.
      await expect.poll(() => form.getByRole("combobox", { name: "Repository" }).inputValue()).toBe(repo)
      await form.getByRole("button", { name: "File task" }).tap()
      await form.getByText(/^Filed [0-9a-f]{4}: Fix the flaky login test$/).waitFor()
      const card = page.locator("section.open-tasks article.task", { hasText: "Fix the flaky login test" })
      await card.waitFor()
      expect(await card.locator(".priority").textContent()).toBe("p4")
      expect(stored(home)).toMatchObject([{ title: "Fix the flaky login test", priority: 4, repo, status: "queued", source: { kind: "human" } }])
      expect(await form.getByRole("textbox", { name: "What should the agent do?" }).inputValue()).toBe("")

      // Filed elsewhere: it appears, in its place by priority.
      await file(home, { instruction: "Urgent: rotate the leaked key", priority: 9 })
      await expect
        .poll(() => page.locator("section.open-tasks article.task .summary").allTextContents(), { timeout: 15_000 })
        .toEqual(["Urgent: rotate the leaked key", "Fix the flaky login test"])

      // No loop owns the home (magi web runs with --no-loop here): the page says nothing will start.
      const noLoop = page.locator(".no-loop")
      await expect.poll(() => noLoop.isVisible()).toBe(true)
      expect(await noLoop.textContent()).toContain("No magi loop is running, so nothing here will start")
      const beat = new Date().toISOString().replace(/\.\d+Z$/, "Z")
      NodeFs.writeFileSync(NodePath.join(home, "daemon.json"), JSON.stringify({ pid: 1, token: "a-loop", started_at: beat, beat_at: beat }))
      await expect.poll(() => noLoop.isVisible(), { timeout: 15_000 }).toBe(false)

      // An empty instruction is refused by the form itself.
      await form.getByRole("button", { name: "File task" }).tap()
      expect(await form.getByRole("textbox", { name: "What should the agent do?" }).evaluate((e) => (e as HTMLTextAreaElement).validity.valueMissing)).toBe(
        true
      )
      expect(stored(home).length).toBe(2)
      expect(console.filter((m) => /Content Security Policy|Refused|Uncaught/.test(m))).toEqual([])
    } finally {
      await close()
    }
  })

  it("holds with a reason, sets the priority, releases, edits and marks a task done", {
    // Five taps through a live page on a loaded machine: it failed twice in
    // loaded runs (a tapped change not shown within 30 s), never alone; a
    // retry keeps it honest about a flow that is broken always.
    retry: 2
  }, async () => {
    const { home, web } = await open()
    try {
      const t = await file(home, { instruction: "Write the queue docs", priority: 1 })
      await page.goto(`${web.url}/#/queue`)
      const card = page.locator(`article.task[data-id="${t.id}"]`)
      await card.waitFor({ timeout: 10_000 })

      await card.getByRole("textbox", { name: "Why hold it (optional)" }).fill("waiting for the API to settle")
      await card.getByRole("button", { name: "Hold" }).tap()
      await card.locator(".hold").getByText("You held it: waiting for the API to settle").waitFor()
      expect(stored(home)[0]).toMatchObject({ status: "held", hold_source: "manual", hold_reason: "waiting for the API to settle" })

      await unfold(card)
      await card.getByRole("spinbutton", { name: "New priority" }).fill("6")
      await card.getByRole("button", { name: "Set priority" }).tap()
      await card.getByText("Priority 6").waitFor()
      expect(stored(home)[0]!.priority).toBe(6)

      await card.getByRole("button", { name: "Release" }).tap()
      await card.getByText("Released: queued again, attempts reset").waitFor()
      expect(stored(home)[0]!.status).toBe("queued")

      await unfold(card)
      await card.locator("details.edit summary").tap()
      await card.getByRole("textbox", { name: "Instruction" }).fill("# Write the user docs for the queue\nwith examples")
      await card.getByRole("textbox", { name: "Title" }).fill("")
      await card.getByRole("button", { name: "Save" }).tap()
      await card.locator(".summary").getByText("Write the user docs for the queue").waitFor()
      expect(stored(home)[0]).toMatchObject({ title: "Write the user docs for the queue", instruction: "# Write the user docs for the queue\nwith examples" })

      await card.getByRole("button", { name: "Done" }).tap()
      // Held for Undo first (the test below), then sent.
      const done = page.locator(`section.task-history article.task[data-id="${t.id}"]`)
      await done.waitFor({ timeout: UNDO_MS + 15_000 })
      expect(await done.locator("button").count()).toBe(0)
      expect(stored(home)[0]!.status).toBe("done")
    } finally {
      await close()
    }
  })

  it("holds a tapped Done for Undo as an answer is: Undo sends nothing, and it is sent only when the window ends", async () => {
    const { home, web } = await open()
    try {
      // The page's timers on Playwright's clock: the window ends when the test says so.
      await page.clock.install()
      const t = await file(home, { instruction: "Ship the release notes" })
      await page.goto(`${web.url}/#/queue`)
      const card = page.locator(`article.task[data-id="${t.id}"]`)
      await card.getByRole("button", { name: "Done" }).waitFor({ timeout: 10_000 })
      await page.clock.pauseAt(Date.now() + 1_000)

      await card.getByRole("button", { name: "Done" }).tap()
      await card.getByText("Marking done… sent in 5 s").waitFor()
      // Nothing is sent yet; Hold and Release give way to Undo, a fingertip's size.
      expect(stored(home)[0]!.status).toBe("queued")
      expect(await card.getByRole("button", { name: "Hold" }).count()).toBe(0)
      const box = (await card.getByRole("button", { name: "Undo" }).boundingBox())!
      expect(box.width).toBeGreaterThanOrEqual(43.5)
      expect(box.height).toBeGreaterThanOrEqual(43.5)

      // Undo: the card is back as it was, and nothing is ever sent.
      await card.getByRole("button", { name: "Undo" }).tap()
      await card.getByRole("button", { name: "Done" }).waitFor()
      await page.clock.runFor(UNDO_MS + 1_000)
      // A round trip after the window: a Done sent at its end would have landed by now.
      await page.evaluate(() => fetch("/api/queue").then((r) => r.text()))
      expect(stored(home)[0]!.status).toBe("queued")
      expect(await card.getByRole("button", { name: "Done" }).isVisible()).toBe(true)

      // The real one: sent once the window has run out.
      await card.getByRole("button", { name: "Done" }).tap()
      await card.getByText("Marking done… sent in 5 s").waitFor()
      await page.clock.runFor(UNDO_MS - 1_000)
      expect(stored(home)[0]!.status).toBe("queued")
      await page.clock.runFor(1_000)
      await page.locator(`section.task-history article.task[data-id="${t.id}"]`).waitFor({ timeout: 15_000 })
      expect(stored(home)[0]!.status).toBe("done")
      expect(console.filter((m) => /Content Security Policy|Refused|Uncaught/.test(m))).toEqual([])
    } finally {
      await close()
    }
  })

  it("says an empty queue and an empty runs list in words with the commands as code, and shows no Done heading over nothing", async () => {
    const { home, web } = await open()
    try {
      await page.goto(`${web.url}/#/queue`)
      const empty = page.locator("section.open-tasks .empty")
      await empty.waitFor()
      expect(await empty.textContent()).toBe("Nothing queued. File something above, or with magi task add at a terminal.")
      expect(await empty.locator("code").allTextContents()).toEqual(["magi task add"])
      const done = page.locator("section.task-history")
      expect(await done.isVisible()).toBe(false)
      // Something done: now the heading has a list under it.
      await file(home, { instruction: "Write the queue docs" }, (t) => ({ ...t, status: "done" }))
      await done.locator("article.task").waitFor({ timeout: 15_000 })
      expect(await done.locator("h2").isVisible()).toBe(true)

      await page.goto(`${web.url}/#/runs`)
      const noRuns = page.locator(".runs-index .empty")
      await noRuns.waitFor()
      expect(await noRuns.textContent()).toBe("No runs yet. magi run TEXT starts one; the queue starts them for you.")
      expect(await noRuns.locator("code").allTextContents()).toEqual(["magi run TEXT"])
    } finally {
      await close()
    }
  })

  it("removes a task only after a second tap", async () => {
    const { home, web } = await open()
    try {
      const t = await file(home, { instruction: "Keep me" })
      const other = await file(home, { instruction: "Throw me away" })
      await page.goto(`${web.url}/#/queue`)
      const victim = page.locator(`article.task[data-id="${other.id}"]`)
      await victim.waitFor({ timeout: 15_000 })
      await unfold(victim)
      await victim.getByRole("button", { name: "Remove…" }).tap()
      // The first tap only asks.
      expect(stored(home).map((x) => x.id)).toContain(other.id)
      await victim.getByRole("button", { name: "Keep it" }).tap()
      await victim.getByRole("button", { name: "Remove…" }).tap()
      await victim.getByRole("button", { name: "Yes, remove" }).tap()
      await victim.waitFor({ state: "detached" })
      expect(stored(home).map((x) => x.id)).toEqual([t.id])
      await page.locator("form.file-task").getByText("Removed Throw me away").waitFor()
    } finally {
      await close()
    }
  })

  it("keeps a half-typed hold reason and edit, focused, when the task changes elsewhere meanwhile", async () => {
    const { home, web } = await open()
    try {
      const t = await file(home, { instruction: "Tidy the logs" })
      await page.goto(`${web.url}/#/queue`)
      const card = page.locator(`article.task[data-id="${t.id}"]`)
      await card.waitFor({ timeout: 10_000 })
      await unfold(card)
      await card.locator("details.edit summary").tap()
      await card.getByRole("textbox", { name: "Instruction" }).fill("Tidy the logs, and rotate them")
      await card.getByRole("textbox", { name: "Why hold it (optional)" }).fill("until the release")
      await withTasks(home, Effect.flatMap(TaskStore, (s) => s.update(t.id, (x) => T.reprioritize(x, 4))))
      await expect.poll(() => card.locator(".priority").textContent(), { timeout: 15_000 }).toBe("p4")
      expect(await card.getByRole("textbox", { name: "Why hold it (optional)" }).inputValue()).toBe("until the release")
      expect(await card.getByRole("textbox", { name: "Why hold it (optional)" }).evaluate((e) => e === document.activeElement)).toBe(true)
      expect(await card.getByRole("textbox", { name: "Instruction" }).inputValue()).toBe("Tidy the logs, and rotate them")
    } finally {
      await close()
    }
  })

  it("says a change was made elsewhere when the task moved under the owner's thumb", async () => {
    const { home, web } = await open()
    try {
      const t = await file(home, { instruction: "Change me" })
      await page.route("**/api/events", (route) => route.abort())
      await page.goto(`${web.url}/#/queue`)
      const card = page.locator(`article.task[data-id="${t.id}"]`)
      await card.waitFor({ timeout: 10_000 })
      // Started by the loop meanwhile: its priority can no longer change.
      await withTasks(home, Effect.flatMap(TaskStore, (s) => s.update(t.id, (x) => T.start(x, "20260903-170000-a0a0"))))
      await unfold(card)
      await card.getByRole("spinbutton", { name: "New priority" }).fill("3")
      await card.getByRole("button", { name: "Set priority" }).tap()
      await card.getByText(/Changed elsewhere: task [0-9a-f]{4} is running; change its priority once its run has ended/).waitFor()
      await expect.poll(() => card.locator(".status").textContent()).toBe("running")
      expect(stored(home)[0]).toMatchObject({ status: "running", priority: 0 })
    } finally {
      await close()
    }
  })

  it("shows status, attempts, the last error and what a task waits on, agent-written text as text", async () => {
    const { home, web } = await open()
    try {
      const question = { ...choiceQuestion("20260903-180001-c0c0"), summary: "Which <b>cache</b>?" }
      await seed(home, [{ q: question }])
      const first = await file(home, { instruction: "Set up the cache" })
      const failing = await file(
        home,
        { instruction: "<img src=x onerror=\"document.title='pwned'\">Flaky one" },
        (t) => ok(T.fail(ok(T.start(t, "20260903-180002-c1c1")), "the agent's turn failed (exit 3) <script>alert(1)</script>", 2))
      )
      const waiting = await file(home, { instruction: "Use the cache" }, (t) => ok(T.block(t, [first.id, question.id], "after both")))
      await page.goto(`${web.url}/#/queue`)
      const failed = page.locator(`article.task[data-id="${failing.id}"]`)
      await failed.waitFor({ timeout: 10_000 })
      expect(await failed.locator(".status").textContent()).toMatch(/^failed · will retry at .+ \(in [45] min\)$/)
      expect(await failed.locator(".attempts").textContent()).toBe("1 attempt")
      expect(await failed.locator(".last-error").textContent()).toBe("Last error: the agent's turn failed (exit 3) <script>alert(1)</script>")
      expect(await failed.locator(".summary").textContent()).toBe(failing.title)
      expect(await failed.locator("img, script").count()).toBe(0)
      expect(await page.title()).not.toContain("pwned")

      const blocked = page.locator(`article.task[data-id="${waiting.id}"]`)
      expect(await blocked.locator(".status").textContent()).toBe("blocked")
      expect(await blocked.locator(".blockers li").allTextContents()).toEqual([
        `task ${Q.shortId(first.id)}: Set up the cache (queued)`,
        "question: Which <b>cache</b>? (open)"
      ])
      // The question links to its card.
      await blocked.getByRole("link", { name: "question: Which <b>cache</b>?" }).tap()
      await page.locator(`article.card[data-id="${question.id}"]`).waitFor({ state: "visible" })
      expect(await page.locator("section.queue-view, div.queue-view").isVisible()).toBe(false)
    } finally {
      await close()
    }
  })

  it("shows each task's latest conductor decision on its card, as text, and the decisions newest first in a folded Conductor section, live", async () => {
    const { home, web } = await open()
    try {
      const append = (r: DecisionRecord) => Effect.runPromise(appendDecision(NodePath.join(home, "conduct"), r).pipe(Effect.provide(NodeFileSystem.layer)))
      const waiting = await file(home, { instruction: "Use the cache" })
      const other = await file(home, { instruction: "Set up the cache" })
      await append({
        at: "2026-01-01T00:00:00Z",
        turn: 1,
        task: waiting.id,
        decision: { id: waiting.id, recovery: "requeue" },
        outcome: "applied",
        why: "requeued"
      })
      await append({
        at: "2026-01-01T00:01:00Z",
        turn: 2,
        task: waiting.id,
        decision: { id: waiting.id, blocked_by: [waiting.id] },
        outcome: "refused",
        why: "<b>a task cannot wait on itself</b>"
      })
      await page.goto(`${web.url}/#/queue`)
      const card = page.locator(`article.task[data-id="${waiting.id}"]`)
      await card.waitFor({ timeout: 15_000 })
      await expect.poll(() => card.locator(".conductor-line").textContent(), { timeout: 15_000 }).toBe(
        "conductor: refused — <b>a task cannot wait on itself</b>"
      )
      expect(await card.locator(".conductor-line b").count()).toBe(0)
      expect(await page.locator(`article.task[data-id="${other.id}"] .conductor-line`).count()).toBe(0)

      // Folded until the owner opens it; then newest first.
      const section = page.locator("details.conductor")
      await expect.poll(() => section.isVisible(), { timeout: 15_000 }).toBe(true)
      expect(await section.getAttribute("open")).toBe(null)
      await section.locator("summary").tap()
      expect(await section.locator("li > div").allTextContents()).toEqual([
        "conductor: refused — <b>a task cannot wait on itself</b>",
        "conductor: applied — requeued"
      ])

      // A new decision arrives with the next queue change, without a reload.
      await append({
        at: "2026-01-01T00:02:00Z",
        turn: 3,
        task: other.id,
        decision: { id: other.id, recovery: "hold" },
        outcome: "applied",
        why: "held for review"
      })
      await file(home, { instruction: "Something new" })
      await expect
        .poll(() => section.locator("li > div").allTextContents(), { timeout: 20_000 })
        .toEqual(["conductor: applied — held for review", "conductor: refused — <b>a task cannot wait on itself</b>", "conductor: applied — requeued"])
      await expect
        .poll(() => page.locator(`article.task[data-id="${other.id}"] .conductor-line`).textContent(), { timeout: 20_000 })
        .toBe("conductor: applied — held for review")
      expect(console.filter((m) => /Content Security Policy|Refused|Uncaught/.test(m))).toEqual([])
    } finally {
      await close()
    }
  })

  it("lists runs and opens one: status, branch, seats, summary, the end of its output, its questions linked to their cards, live", async () => {
    const { home, web } = await open()
    try {
      const id = "20260903-190000-9fb7"
      seedRun(
        home,
        sampleRun(id, {
          status: "waiting",
          instruction: "Add an LRU cache in front of the store\n\nKeep it under 100 lines.",
          seats: [{ key: "impl", agent: "fake-claude", turns: 1, session: "s-1", write: true }]
        }),
        { "impl-1.prompt.md": "Add an LRU cache", "impl-1.out": "Reading the store…\n<b>Asked</b> which backend to use.\n", "impl-1.err": "" }
      )
      seedRun(home, sampleRun("20260903-180000-1111", { status: "done", instruction: "An older run" }))
      const question = { ...choiceQuestion("20260903-190001-9a9a"), run: id }
      await seed(home, [{ q: question }])
      const task = await file(home, { instruction: "Add an LRU cache" }, (t) => ok(T.start(t, id)))

      await page.goto(`${web.url}/#/runs`)
      const items = page.locator(".runs-list a.run-item")
      await items.first().waitFor({ timeout: 10_000 })
      expect(await items.locator(".summary").allTextContents()).toEqual(["Add an LRU cache in front of the store", "An older run"])
      expect(await items.first().locator(".notice").textContent()).toBe("1 question waits for you")
      await items.first().tap()

      const run = page.locator("article.run-detail")
      await run.waitFor()
      expect(await run.locator(".status").first().textContent()).toBe("waiting on you")
      expect(await run.locator(".fields").textContent()).toContain("magi/9fb7")
      expect(await run.locator(".seats li").allTextContents()).toEqual(["impl · fake-claude · 1 turn"])
      expect(await run.locator("pre.output").textContent()).toBe("Reading the store…\n<b>Asked</b> which backend to use.\n")
      expect(await run.locator("pre.output b").count()).toBe(0)
      expect(await run.getByRole("link", { name: `${task.title} (running)` }).getAttribute("href")).toBe(`#/queue/${task.id}`)
      expect(await run.locator(".artifacts a").allTextContents()).toEqual(["impl-1.prompt.md", "impl-1.out", "impl-1.err"])

      // Live: the run finishes while the owner looks.
      seedRun(home, sampleRun(id, { status: "done", summary: "Added the cache; 84 lines.", instruction: "Add an LRU cache in front of the store" }))
      await run.locator(".run-summary").getByText("Added the cache; 84 lines.").waitFor({ timeout: 15_000 })
      expect(await page.locator("article.run-detail .status").first().textContent()).toBe("done")

      // Its question links to the question's card.
      await page.locator("article.run-detail").getByRole("link", { name: question.summary }).tap()
      await page.locator(`article.card[data-id="${question.id}"]`).waitFor({ state: "visible" })
      expect(await page.locator("article.run-detail").isVisible()).toBe(false)
    } finally {
      await close()
    }
  })

  it("lists the 50 newest runs and shows older ones on request, even opened from a malformed link", async () => {
    const { home, web } = await open()
    try {
      for (let i = 0; i < 60; i++)
        seedRun(home, sampleRun(`20260904-10${String(i).padStart(2, "0")}00-${(0xc000 + i).toString(16)}`, { instruction: `Run number ${i}` }))
      // Opened with a malformed link (a hand-typed `%`): the list, not a blank page.
      await page.goto(`${web.url}/#/runs/%E0%A4%A`)
      const items = page.locator(".runs-list a.run-item")
      await expect.poll(() => items.count(), { timeout: 10_000 }).toBe(50)
      expect(await items.first().locator(".summary").textContent()).toBe("Run number 59")
      await page.getByRole("button", { name: "Show older runs" }).tap()
      await expect.poll(() => items.count()).toBe(60)
      expect(await items.last().locator(".summary").textContent()).toBe("Run number 0")
      expect(await page.getByRole("button", { name: "Show older runs" }).isVisible()).toBe(false)
    } finally {
      await close()
    }
  })

  it("shows an agent's failure in one line on its card, once, and links the run page's reason to the whole log", async () => {
    const { home, web } = await open()
    try {
      const id = "20260903-210000-5e5e"
      const stderr = [...Array.from({ length: 80 }, (_, i) => `debug: loading plugin ${i}`), "Error: no API key; set ANTHROPIC_API_KEY"].join("\n")
      // As the error was kept before it was cut to one line.
      const why = `the agent's turn failed (exit 1): ${stderr}`
      seedRun(home, sampleRun(id, { status: "failed", reason: "the agent's turn failed (exit 1): Error: no API key; set ANTHROPIC_API_KEY" }), {
        "impl-1.out": "",
        "impl-1.err": `${stderr}\n`
      })
      const failed = await file(home, { instruction: "Add a cache" }, (t) => ok(T.fail(ok(T.start(t, id)), why, 2)))
      const held = await file(home, { instruction: "Add a queue" }, (t) => ok(T.fail(ok(T.start(ok(T.fail(ok(T.start(t, id)), why, 2)), id)), why, 2)))
      await page.goto(`${web.url}/#/queue`)
      const card = (t: T.Task) => page.locator(`article.task[data-id="${t.id}"]`)
      await card(held).waitFor({ timeout: 10_000 })
      expect(await card(failed).locator(".last-error").textContent()).toBe("Last error: Error: no API key; set ANTHROPIC_API_KEY")
      expect(await card(held).locator(".hold").textContent()).toBe("magi gave up on it: failed 2 of 2 attempts; last: Error: no API key; set ANTHROPIC_API_KEY")
      expect(await card(held).locator(".last-error").count()).toBe(0)
      expect(await page.locator("article.task").allTextContents()).not.toContainEqual(expect.stringContaining("debug: loading plugin"))

      await page.goto(`${web.url}/#/runs/${id}`)
      const reason = page.locator("article.run-detail .reason")
      await reason.waitFor()
      expect(await reason.textContent()).toBe("the agent's turn failed (exit 1): Error: no API key; set ANTHROPIC_API_KEY Full log (impl-1.err)")
      expect(await reason.getByRole("link", { name: "Full log (impl-1.err)" }).getAttribute("href")).toContain(`/api/runs/${id}/artifacts/impl-1.err`)
    } finally {
      await close()
    }
  })

  it("fits a 390×844 phone, and leaves screenshots of the queue and a run in test-results/", async () => {
    const { home, web } = await open()
    try {
      const id = "20260903-200000-4c4c"
      seedRun(
        home,
        sampleRun(id, {
          status: "failed",
          reason: "the agent's turn failed (exit 1)",
          summary: "I could not find the config loader; the tests for it are missing as well.",
          repo: "/home/owner/src/a-repository-with-a-rather-long-name",
          worktree: "/home/owner/.local/share/magi/worktrees/20260903-200000-4c4c"
        }),
        { "impl-1.out": `${"a-very-long-unbroken-output-line-".repeat(20)}\nDone.\n`, "impl-1.err": "warning: something\n" }
      )
      const first = await file(home, { instruction: "Set up the cache", priority: 2 })
      await file(
        home,
        { instruction: "A task with a long title that goes on and on past what a phone shows in one line" },
        (t) => ok(T.fail(ok(T.start(t, id)), "the agent's turn failed (exit 1)", 2))
      )
      await file(home, { instruction: "Wait for the cache" }, (t) => ok(T.block(t, [first.id], "after it")))
      await file(home, { instruction: "Held for now" }, (t) => ok(T.hold(t, "not this week")))
      await file(home, { instruction: "Shipped" }, (t) => ok(T.succeed(t)))
      await page.goto(`${web.url}/#/queue`)
      await page.locator("article.task").nth(4).waitFor({ timeout: 10_000 })
      expect(await page.evaluate(() => document.scrollingElement!.scrollWidth)).toBeLessThanOrEqual(PHONE.width)
      NodeFs.mkdirSync("test-results", { recursive: true })
      await page.screenshot({ path: NodePath.join("test-results", "web-queue-phone.png"), fullPage: true })
      await page.goto(`${web.url}/#/runs/${id}`)
      await page.locator("article.run-detail pre.output").waitFor()
      expect(await page.evaluate(() => document.scrollingElement!.scrollWidth)).toBeLessThanOrEqual(PHONE.width)
      await page.screenshot({ path: NodePath.join("test-results", "web-run-phone.png"), fullPage: true })
      await page.goto(`${web.url}/#/runs`)
      await page.locator("a.run-item").waitFor()
      expect(await page.evaluate(() => document.scrollingElement!.scrollWidth)).toBeLessThanOrEqual(PHONE.width)
      await page.screenshot({ path: NodePath.join("test-results", "web-runs-phone.png"), fullPage: true })
      expect(console.filter((m) => /Content Security Policy|Refused|Uncaught/.test(m))).toEqual([])
    } finally {
      await close()
    }
  })
})
