/**
 * The approvals section in a real browser on a phone-sized screen: the
 * rules "Always allow" saved are listed under the devices, numbered as
 * `magi approvals list` numbers them, with their repository and question,
 * and "Remove" takes one away for the terminal too.
 */
import { describe, expect, it } from "vitest"
import { phoneSession } from "./browser-support.js"
import { startWeb } from "./web-support.js"
import { plantRule, savedByCli } from "./approvals-support.js"
import { tempDirSync } from "../support.js"

describe("the approvals section in a real browser", { timeout: 120_000 }, () => {
  const session = phoneSession()

  it("lists the saved rules and removes the one tapped, which magi approvals list then no longer shows", async () => {
    const home = tempDirSync()
    plantRule(home, "20261201-120000000-000001", "Bash(git push:*)", "/work/site", "20261201-120000-ab12")
    plantRule(home, "20261201-120500000-000002", "Bash(npm publish)", "/work/other", "20261201-120500-cd34")
    const { web, page } = await session.open(() => startWeb(home))
    try {
      await page.goto(`${web.url}/#/devices`)
      const section = page.getByRole("region", { name: "Approvals" })
      const rows = section.locator("li.approval-rule")
      await rows.nth(1).waitFor()
      await expect(rows.allTextContents()).resolves.toEqual([
        expect.stringMatching(/^Bash\(git push:\*\) in \/work\/site · saved .* from question ab12Remove$/),
        expect.stringMatching(/^Bash\(npm publish\) in \/work\/other · saved .* from question cd34Remove$/)
      ])
      // Fits the phone: the rule's row is no wider than the screen.
      const box = await rows.first().boundingBox()
      expect(box!.x + box!.width).toBeLessThanOrEqual(390)

      await section.getByRole("button", { name: "Remove Bash(git push:*)" }).click()
      await section.locator("li.approval-rule", { hasText: "git push" }).waitFor({ state: "detached" })
      await expect(rows.allTextContents()).resolves.toEqual([expect.stringContaining("Bash(npm publish)")])
      expect(savedByCli(home)).toEqual(["Bash(npm publish)"])

      await section.getByRole("button", { name: "Remove Bash(npm publish)" }).click()
      await section.getByText("No saved rule: every tool call that needs permission asks you.").waitFor()
      expect(savedByCli(home)).toEqual([])
    } finally {
      await session.close()
    }
  })
})
