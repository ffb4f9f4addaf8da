/**
 * The landing on a phone (issue 31), against the built `magi web`: the
 * mode, the pull request with its link (an `https:` href only), its checks,
 * each land round, why it stopped and the approval's state, at 390 px. The
 * forge's and agents' words are shown as text. The Land button of a
 * `ready` run starts the landing (`POST /api/runs/:id/land`) and the page
 * follows it to the approval; a refusal shows its reason.
 */
import { describe, expect, it } from "vitest"
import * as NodePath from "node:path"
import type { Run } from "../../src/runs/Runs.js"
import type * as L from "../../src/runs/Landing.js"
import * as Q from "../../src/questions/Question.js"
import { sampleRun } from "../runSupport.js"
import { tempDirSync } from "../support.js"
import { phoneSession } from "./browser-support.js"
import { ID as READY, readyRun } from "./land-support.js"
import { seed, seedRun, startWeb } from "./web-support.js"

const HOSTILE = `<img src=x onerror="document.title='owned'">`
const ID = "20261204-101500-la01"
const EVIL = "20261204-101600-la02"
const QUESTION = "20261204-102000-ab12"
const LONG_CHECK = `integration-tests-on-every-supported-platform-and-node-version-${"x".repeat(60)}`

const landing = (over: Partial<L.Landing>): L.Landing => ({
  mode: "pr",
  step: "loop",
  subject: `Add a cache (magi la01) ${HOSTILE}`,
  rounds: [],
  stopped: "",
  started_at: "2026-12-04T10:15:00Z",
  updated_at: "2026-12-04T10:30:00Z",
  ...over
})

const prRun = (): Run =>
  sampleRun(ID, {
    status: "ready",
    worktree: NodePath.join(tempDirSync(), "wt"),
    landing: landing({
      question: QUESTION,
      pr: { number: 42, url: "https://github.com/octo/app/pull/42", head_sha: "d".repeat(40) },
      loop: {
        rounds_used: 1,
        waiting_since: 0,
        checks_missing_since: null,
        asked_head: "d".repeat(40),
        last_seen: "",
        checks: [
          { name: "build", outcome: "success", conclusion: "success", url: "https://github.com/runs/1" },
          { name: `${LONG_CHECK} ${HOSTILE}`, outcome: "failure", conclusion: "timed_out", url: "javascript:alert(1)" }
        ]
      },
      rounds: [
        { at: "2026-12-04T10:20:00Z", observed: `red: 1 failing check ${HOSTILE}`, action: "a fix round by the fixer", fix_commit: "e".repeat(40) },
        { at: "2026-12-04T10:28:00Z", observed: "green and clean", action: "asked the owner to approve the merge" }
      ]
    })
  })

const evilRun = (): Run =>
  sampleRun(EVIL, {
    status: "ready",
    worktree: NodePath.join(tempDirSync(), "wt"),
    landing: landing({
      step: "done",
      answer: "hold",
      question: "20261204-102100-cd34",
      stopped: `held: the owner answered "hold", not merge ${HOSTILE}`,
      pr: { number: 7, url: "javascript:document.title='owned'", head_sha: "f".repeat(40) }
    })
  })

describe("the landing on the phone", () => {
  const session = phoneSession()

  it("shows the mode, the PR and its checks, each round, why it stopped and the approval, as text", { timeout: 90_000 }, async () => {
    const home = tempDirSync()
    seedRun(home, prRun())
    seedRun(home, evilRun())
    await seed(home, [{
      q: Q.make({ id: QUESTION, run: ID, node: "land", seat: "land", summary: "Merge magi/la01 into main?", detail: "", choices: [], now: new Date() })
    }])
    const visit = await session.open(() => startWeb(home))
    try {
      const page = visit.page
      await page.goto(`${visit.web.url}/#/runs/${ID}`)
      const section = page.locator("section.landing")
      await section.waitFor({ timeout: 10_000 })
      expect(await section.locator(".mode").innerText()).toBe("Mode: a pull request")
      expect(await section.locator(".step").innerText()).toBe("Where it is: green: waiting for your approval of the merge")
      expect(await section.locator(".subject").innerText()).toBe(`Merge subject: Add a cache (magi la01) ${HOSTILE}`)
      const pr = section.locator(".pr")
      expect(await pr.innerText()).toBe("Pull request #42: https://github.com/octo/app/pull/42")
      expect(await pr.locator("a").getAttribute("href")).toBe("https://github.com/octo/app/pull/42")
      expect(await section.locator(".check").evaluateAll((ns) => ns.map((n) => n.textContent))).toEqual([
        "build: success",
        `${LONG_CHECK} ${HOSTILE}: failure (timed_out)`
      ])
      expect(await section.locator(".land-round").count()).toBe(2)
      expect(await section.locator(".land-round").first().innerText()).toContain(`saw red: 1 failing check ${HOSTILE}; a fix round by the fixer`)
      expect(await section.locator(".approval").innerText()).toBe("The merge approval: waiting for your answer (only merge merges)")
      expect(await section.locator(".approval a").getAttribute("href")).toBe(`#/questions/${QUESTION}`)
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390)

      // A PR URL that is not https is shown, never linked; the reason it stopped is text.
      await page.goto(`${visit.web.url}/#/runs/${EVIL}`)
      const held = page.locator(`.run-detail[data-id="${EVIL}"] section.landing`)
      await held.waitFor({ timeout: 10_000 })
      expect(await held.locator(".step").innerText()).toBe("Where it is: stopped")
      expect(await held.locator(".stopped").innerText()).toBe(`Why it stopped: held: the owner answered "hold", not merge ${HOSTILE}`)
      expect(await held.locator(".pr").innerText()).toBe("Pull request #7: javascript:document.title='owned'")
      expect(await held.locator(".pr a").count()).toBe(0)
      expect(await held.locator(".approval").innerText()).toBe('The merge approval: answered "hold": held')
      expect(await page.locator(".run-detail img").count()).toBe(0)
      expect(await page.title()).not.toBe("owned")
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390)
    } finally {
      await session.close()
    }
  })

  it("lands a ready run from its Land button: the landing starts and the page follows it to the approval", { timeout: 90_000 }, async () => {
    const t = readyRun(`merge = "local"`)
    const visit = await session.open(() => startWeb(t.home))
    try {
      const page = visit.page
      await page.goto(`${visit.web.url}/#/runs/${READY}`)
      const section = page.locator("section.landing")
      await section.waitFor({ timeout: 10_000 })
      expect(await section.locator(".step").count()).toBe(0)
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390)
      await section.locator("button.land-run").click()
      // The record changes, the page follows: the approval asked, the button gone (the question is the next step).
      await section.locator('.step[data-step="approval"]').waitFor({ timeout: 30_000 })
      expect(await section.locator(".step").innerText()).toBe("Where it is: waiting for your approval of the merge")
      await section.locator(".approval a").waitFor({ timeout: 10_000 })
      expect(await section.locator("button.land-run").count()).toBe(0)
      expect(t.read().landing?.question).toBeDefined()
      expect(t.git(t.repo, "rev-parse", "HEAD")).toBe(t.base)
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390)
    } finally {
      await session.close()
    }
  })

  it("shows why a run cannot land when its Land button is refused", { timeout: 90_000 }, async () => {
    const t = readyRun(`merge = "none"`)
    const visit = await session.open(() => startWeb(t.home))
    try {
      const page = visit.page
      await page.goto(`${visit.web.url}/#/runs/${READY}`)
      const button = page.locator("section.landing button.land-run")
      await button.waitFor({ timeout: 10_000 })
      await button.click()
      const said = page.locator("section.landing .land-said.error")
      await said.waitFor({ timeout: 10_000 })
      expect(await said.innerText()).toContain(`Not landed: run cd01 cannot land: [graph] merge is "none"`)
      expect(await button.isEnabled()).toBe(true)
      expect(t.read().landing).toBeUndefined()
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390)
    } finally {
      await session.close()
    }
  })
})
