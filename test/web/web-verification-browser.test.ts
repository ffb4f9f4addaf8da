/**
 * The verification on a phone (issue 30), against the built `magi web`:
 * each round's findings worst first with the fixer's reply, the e2e and
 * gate results with a failing command's output folded until tapped, and
 * why the run stopped where it did, at 390 px. Every word an agent or a
 * command wrote is shown as text.
 */
import { describe, expect, it } from "vitest"
import * as NodePath from "node:path"
import type { Run } from "../../src/runs/Runs.js"
import * as V from "../../src/runs/Verification.js"
import { sampleRun } from "../runSupport.js"
import { tempDirSync } from "../support.js"
import { phoneSession } from "./browser-support.js"
import { seedRun, startWeb } from "./web-support.js"

const HOSTILE = `<img src=x onerror="document.title='owned'">`
const ID = "20261204-101500-beef"

const finding = (id: string, severity: V.Severity, title: string, reply?: V.Reply): V.Finding => ({
  id,
  seat: "review-1",
  severity,
  file: "src/a.ts",
  line: 4,
  title,
  body: `why ${HOSTILE}`,
  ...(reply === undefined ? {} : { reply })
})

const verifiedRun = (): Run =>
  sampleRun(ID, {
    status: "blocked",
    reason: "the gate failed",
    worktree: NodePath.join(tempDirSync(), "wt"),
    verification: {
      ...V.fresh("impl"),
      step: "blocked",
      stopped: `the gate \`npm test\` failed after 2 fix round(s) ${HOSTILE}`,
      sync: { attempts: 1, onto: "a".repeat(40), rebase_fix_rounds: 0, conflicts: [] },
      rounds: [{
        n: 1,
        head: "b".repeat(40),
        tree: "t",
        revoted: false,
        fixed_to: "c".repeat(40),
        e2e: [{ command: "npm run e2e", exit: 1, duration_ms: 2100, timed_out: false, tail: `e2e broke ${HOSTILE}\n` }],
        reviews: [{
          seat: "review-1",
          agent: "codex",
          status: "answered",
          verdict: "reject",
          retries: 0,
          failure: "",
          findings: [
            finding("R1-1-1", "nit", "a nit"),
            finding("R1-1-2", "blocker", `drops the data ${HOSTILE}`, { kind: "fixed", commit: "c".repeat(12), argument: "" }),
            finding("R1-1-3", "minor", "naming", { kind: "rejected", commit: null, argument: `it is the house style ${HOSTILE}` })
          ]
        }]
      }],
      gates: [{
        n: 1,
        head: "c".repeat(40),
        at: "2026-12-04T10:20:00Z",
        results: [{ command: "npm test", exit: 1, duration_ms: 900, timed_out: false, tail: `1 failing ${HOSTILE}\n` }]
      }]
    }
  })

describe("the verification on the phone", () => {
  const session = phoneSession()

  it("shows findings worst first with the fixer's replies, folded command output, and why it stopped", { timeout: 90_000 }, async () => {
    const home = tempDirSync()
    seedRun(home, verifiedRun())
    const visit = await session.open(() => startWeb(home))
    try {
      const page = visit.page
      await page.goto(`${visit.web.url}/#/runs/${ID}`)
      const section = page.locator("section.verification")
      await section.waitFor({ timeout: 10_000 })
      expect(await section.locator(".stopped").innerText()).toBe(`Why it stopped here: the gate \`npm test\` failed after 2 fix round(s) ${HOSTILE}`)
      expect(await section.locator(".finding").evaluateAll((ns) => ns.map((n) => n.getAttribute("data-severity")))).toEqual(["blocker", "minor", "nit"])
      expect(await section.locator('.finding[data-id="R1-1-2"] .reply').innerText()).toBe(`Fixer: fixed in ${"c".repeat(12)}`)
      expect(await section.locator('.finding[data-id="R1-1-3"] .reply').innerText()).toBe(`Fixer: rejected: it is the house style ${HOSTILE}`)
      expect(await section.locator('.finding[data-id="R1-1-1"] .reply').innerText()).toBe("Fixer: open")
      // A failing command's output is folded: hidden until its line is tapped.
      const gate = section.locator(".gates details")
      expect(await gate.locator("pre.tail").isVisible()).toBe(false)
      expect(await gate.locator("summary").innerText()).toBe("gate npm test: exit 1 in 0.9 s")
      await gate.locator("summary").click()
      expect(await gate.locator("pre.tail").isVisible()).toBe(true)
      expect(await gate.locator("pre.tail").innerText()).toContain(`1 failing ${HOSTILE}`)
      await section.locator(".round details summary").click()
      expect(await section.locator(".round pre.tail").innerText()).toContain(`e2e broke ${HOSTILE}`)
      // Text only, and nothing wider than the phone.
      expect(await page.locator(".run-detail img").count()).toBe(0)
      expect(await page.title()).not.toBe("owned")
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390)
    } finally {
      await session.close()
    }
  })
})
