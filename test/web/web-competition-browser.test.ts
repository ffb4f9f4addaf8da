/**
 * A competition and its candidates' diffs on a phone (issues 29 and 32.2),
 * against the built `magi web` and a real repository: the candidates
 * stacked at 390 px, each one's diff with its file list and a `+`/`-`
 * gutter, a big file folded, a binary file named, the diff paged; the
 * judges' reasons, the tally and the owner's pick; the authors hidden until
 * the tally. Everything the agents wrote is shown as text.
 */
import { describe, expect, it } from "vitest"
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import type { Run } from "../../src/runs/Runs.js"
import { sampleRun } from "../runSupport.js"
import { tempDirSync } from "../support.js"
import { phoneSession } from "./browser-support.js"
import { postJson, request, seedRun, startWeb } from "./web-support.js"

const HOSTILE = `<img src=x onerror="document.title='owned'">`
const ID = "20261203-101500-c0c0"

/** `main` and two candidate branches: A adds 2,000 lines, a binary file and a hostile line; B changes one line. */
const competitionRepo = () => {
  const repo = NodePath.join(tempDirSync(), "repo")
  NodeFs.mkdirSync(repo)
  const git = (...args: string[]) => execFileSync("git", args, { cwd: repo, encoding: "utf8", stdio: "pipe" }).trim()
  git("init", "-q", "-b", "main")
  git("config", "user.email", "t@example.invalid")
  git("config", "user.name", "t")
  NodeFs.writeFileSync(NodePath.join(repo, "README.md"), "hello\nworld\n")
  git("add", ".")
  git("commit", "-qm", "base")
  const base = git("rev-parse", "HEAD")
  git("checkout", "-qb", "magi/c0c0-A")
  NodeFs.writeFileSync(NodePath.join(repo, "big.ts"), Array.from({ length: 2000 }, (_, i) => `export const v${i} = ${i}\n`).join(""))
  NodeFs.writeFileSync(NodePath.join(repo, "logo.png"), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 1, 2, 3, 0]))
  NodeFs.writeFileSync(NodePath.join(repo, "README.md"), `hello\n${HOSTILE}\n`)
  git("add", ".")
  git("commit", "-qm", "A: the cache")
  const a = git("log", "--format=%h %s", "-1")
  git("checkout", "-q", "main")
  git("checkout", "-qb", "magi/c0c0-B")
  NodeFs.writeFileSync(NodePath.join(repo, "README.md"), "hello\nthere\n")
  git("commit", "-qam", "B: a word")
  const b = git("log", "--format=%h %s", "-1")
  git("checkout", "-q", "main")
  return { repo, base, a, b }
}

const candidate = (label: string, agent: string, commit: string, repo: string) => ({
  label,
  seat: `impl-${label}`,
  agent,
  branch: `magi/c0c0-${label}`,
  worktree: NodePath.join(repo, "..", label),
  status: "viable" as const,
  commits: [commit],
  numstat: "",
  summary: `I did it ${HOSTILE}`,
  dropped: "",
  checks: [{ command: "npm test", exit: label === "A" ? 0 : 1, duration_ms: 1200, timed_out: false, tail: "" }],
  leaks: [],
  redacted: false,
  implement_ms: 0,
  fallback_from: []
})

const competitionRun = (repo: string, base: string, a: string, b: string, tallied: boolean): Run =>
  sampleRun(ID, {
    status: tallied ? "done" : "running",
    repo,
    base_commit: base,
    branch: tallied ? "magi/c0c0-A" : "main",
    worktree: NodePath.join(repo, "..", "A"),
    seats: [
      { key: "impl-A", agent: "secretclaude", turns: 1, session: null, write: true },
      { key: "impl-B", agent: "secretcodex", turns: 1, session: null, write: true },
      { key: "judge-1", agent: "opencode", turns: 1, session: null, write: false }
    ],
    competition: {
      seed: 7,
      step: tallied ? "elected" : "judge",
      candidates: [candidate("A", "secretclaude", a, repo), candidate("B", "secretcodex", b, repo)],
      judges: [{
        seat: "judge-1",
        agent: "opencode",
        worktree: "/j",
        order: ["B", "A"],
        status: tallied ? "answered" : "pending",
        ranking: tallied ? ["A", "B"] : [],
        reasons: tallied ? { A: `tests pass ${HOSTILE}`, B: "its check fails" } : {},
        confidence: tallied ? 0.8 : null,
        retries: 0,
        failure: ""
      }],
      deliberation: [],
      votes: tallied ? [{ seat: "judge-1", label: "A", failure: "", retries: 0 }] : [],
      tally: tallied
        ? {
          winner: "A",
          first_choices: { A: 1, B: 0 },
          borda: { A: 1, B: 0 },
          unanimous_first: true,
          unanimous_final: true,
          votes_changed: 0,
          tie_break: "none",
          answered: 1,
          quorum: 1
        }
        : null,
      winner: tallied ? "A" : null,
      keep_losers: false
    }
  })

describe("a competition on the phone", () => {
  const session = phoneSession()

  it("shows the candidates stacked with their diffs paged, the judges' reasons, the tally, and takes the owner's pick", { timeout: 90_000 }, async () => {
    const home = tempDirSync()
    const { a, b, base, repo } = competitionRepo()
    seedRun(home, competitionRun(repo, base, a, b, true))
    const visit = await session.open(() => startWeb(home))
    try {
      const page = visit.page
      await page.goto(`${visit.web.url}/#/runs/${ID}`)
      const cands = page.locator(".competition .candidate")
      await cands.first().waitFor({ timeout: 10_000 })
      expect(await cands.count()).toBe(2)
      // Stacked at 390 px: B is below A, not beside it; nothing wider than the screen.
      // Read in one go: a change event may redraw the page between two reads.
      const boxes = await page.evaluate(() =>
        [...document.querySelectorAll(".competition .candidate")].map((e) => ({ top: e.getBoundingClientRect().top, bottom: e.getBoundingClientRect().bottom }))
      )
      expect(boxes[1]!.top).toBeGreaterThan(boxes[0]!.bottom - 1)
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390)
      // Revealed after the tally; the judge's reasons and the tally's why.
      expect(await cands.nth(0).innerText()).toContain("secretclaude")
      const judges = await page.locator(".competition .judges").innerText()
      expect(judges).toContain("judge-1 (opencode): A > B, confidence 0.8")
      expect(judges).toContain(`tests pass ${HOSTILE}`)
      expect(await page.locator(".competition .tally").innerText()).toContain("A had 1 of 1 first choice, unanimous")

      // B's diff: the file list with its counts, and the gutter's characters as text.
      const diffB = page.locator('.candidate[data-label="B"] details.diff')
      await diffB.locator("summary").first().click()
      await diffB.locator(".dl.add").first().waitFor({ timeout: 10_000 })
      expect(await diffB.locator(".diff-files").innerText()).toContain("+1 -1")
      const lines = await diffB.locator(".dl").allInnerTexts()
      expect(lines.map((l) => l.replace(/\s+/, " "))).toEqual(expect.arrayContaining(["- world", "+ there"]))

      // A's diff: a big file folded, a binary file named, the hostile line as text, paged.
      const diffA = page.locator('.candidate[data-label="A"] details.diff')
      await diffA.locator("summary").first().click()
      await diffA.locator(".diff-files li").first().waitFor({ timeout: 10_000 })
      const files = await diffA.locator(".diff-files").innerText()
      expect(files).toContain("+2000 -0")
      expect(files).toMatch(/binary\s+logo\.png/)
      expect(await diffA.locator('.diff-file[data-path="big.ts"]').getAttribute("open")).toBeNull()
      expect(await diffA.locator('.diff-file[data-path="big.ts"] summary').innerText()).toContain("2000 lines, folded")
      const more = diffA.locator(".diff-more")
      expect(await more.isVisible()).toBe(true)
      const before = await diffA.locator(".dl").count()
      expect(before).toBeLessThanOrEqual(400)
      // Each page in turn: a tap, then its lines drawn, until no page is left.
      while (await more.isVisible()) {
        const shown = await diffA.locator(".dl").count()
        await more.click()
        await page.waitForFunction((n) => document.querySelectorAll('.candidate[data-label="A"] .dl').length > n, shown, { timeout: 10_000 })
      }
      expect(await diffA.locator('.diff-file[data-path="logo.png"]').innerText()).toContain("Binary file: not shown.")
      expect(await diffA.locator('.diff-file[data-path="README.md"]').innerText()).toContain(HOSTILE)
      expect(await diffA.locator(".dl").count()).toBeGreaterThan(2000)
      expect(await page.locator(".run-detail img").count()).toBe(0)
      expect(await page.title()).not.toBe("owned")

      // The owner's pick: B becomes the winner, recorded beside the panel's.
      await page.locator('.candidate[data-label="B"] button.pick').click()
      await page.locator('.candidate[data-label="B"].winner').waitFor({ timeout: 10_000 })
      const after = (await request(`${visit.web.url}/api/runs/${ID}`)).json() as Run
      expect(after.competition?.winner).toBe("B")
      expect(after.competition?.pick?.label).toBe("B")
      expect(after.branch).toBe("magi/c0c0-B")
      expect(await page.locator(".competition .tally").innerText()).toContain("You picked B; the panel elected A.")
    } finally {
      await session.close()
    }
  })

  it("hides the authors until the tally, on the card, the page and the API", { timeout: 60_000 }, async () => {
    const home = tempDirSync()
    const { a, b, base, repo } = competitionRepo()
    seedRun(home, competitionRun(repo, base, a, b, false))
    const visit = await session.open(() => startWeb(home))
    try {
      const page = visit.page
      await page.goto(`${visit.web.url}/#/runs`)
      const card = page.locator(`.run-item[data-id="${ID}"]`)
      await card.waitFor({ timeout: 10_000 })
      expect(await card.locator(".step").innerText()).toBe("competition: the judges rank the candidates · 2 candidates, 2 viable")
      expect(await card.innerText()).not.toContain("secret")
      await page.goto(`${visit.web.url}/#/runs/${ID}`)
      await page.locator(".competition .candidate").first().waitFor({ timeout: 10_000 })
      expect(await page.locator(".run-detail").innerText()).not.toContain("secret")
      expect(await page.locator(".competition .candidate").first().innerText()).toContain("(hidden until the tally)")
      // No pick before a winner is elected.
      expect(await page.locator("button.pick").count()).toBe(0)
      for (const path of [`/api/runs/${ID}`, "/api/runs"]) expect((await request(`${visit.web.url}${path}`)).text).not.toContain("secret")
    } finally {
      await session.close()
    }
  })

  it("refuses what a URL or body makes up: labels, paging, prefixes, picks before the tally", { timeout: 60_000 }, async () => {
    const home = tempDirSync()
    const { a, b, base, repo } = competitionRepo()
    seedRun(home, competitionRun(repo, base, a, b, false))
    const web = await startWeb(home)
    try {
      const diff = (q: string) => request(`${web.url}/api/runs/${ID}/diff${q}`)
      expect((await diff("?candidate=%3Cscript%3E")).status).toBe(400)
      expect((await diff("?candidate=Z")).status).toBe(404)
      expect((await diff("?from=-1")).status).toBe(400)
      expect((await diff("?limit=0")).status).toBe(400)
      expect((await request(`${web.url}/api/runs/nosuchrun/diff`)).status).toBe(404)
      const page = (await diff("?candidate=a&limit=5")).json() as { lines: string[]; next: number | null; files: unknown[] }
      expect(page.lines).toHaveLength(5)
      expect(page.next).toBe(5)
      expect(page.files).toHaveLength(3)
      const second = (await diff("?candidate=A&from=5&limit=5")).json() as { lines: string[]; files: unknown }
      expect(second.files).toBeNull()
      expect(second.lines).toHaveLength(5)
      // A pick before the tally, by a prefix, or with a stray field: refused, nothing recorded.
      expect((await postJson(`${web.url}/api/runs/${ID}/pick`, { label: "B" })).status).toBe(409)
      expect((await postJson(`${web.url}/api/runs/${ID.slice(0, 10)}/pick`, { label: "B" })).status).toBe(404)
      expect((await postJson(`${web.url}/api/runs/${ID}/pick`, { label: "B", force: true })).status).toBe(400)
      // The cross-site guard holds on the new write route.
      const forged = await request(`${web.url}/api/runs/${ID}/pick`, {
        method: "POST",
        headers: { "content-type": "application/json", origin: "https://evil.example" },
        body: JSON.stringify({ label: "B" })
      })
      expect(forged.status).toBe(403)
      const run = (await request(`${web.url}/api/runs/${ID}`)).json() as Run
      expect(run.competition?.winner).toBeNull()
    } finally {
      await web.stop()
    }
  })
})
