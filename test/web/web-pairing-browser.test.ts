/**
 * Issue 18, point 5, in a real browser: a phone opening a `magi web` that is
 * reachable beyond its machine lands on the pairing page, pairs with the
 * code the real `magi web pair` printed (from the QR's link, the code in
 * the address's fragment), gets an HttpOnly, SameSite=Strict cookie, sees
 * its questions and itself in the Devices section, and is sent back to the
 * pairing page from its next load once revoked.
 */
import { describe, expect, it } from "vitest"
import { phoneSession } from "./browser-support.js"
import { homeWithPublicUrl, magi } from "./pairing-support.js"
import { seed, startWeb } from "./web-support.js"
import { choiceQuestion } from "../support.js"

describe("pairing a phone in a real browser", { timeout: 120_000 }, () => {
  const session = phoneSession()

  it("pairs by the QR's link, shows the questions and the device, and is refused once revoked", async () => {
    const home = homeWithPublicUrl()
    await seed(home, [{ q: choiceQuestion("20261201-150000-ab12") }])
    const { web, page } = await session.open(() => startWeb(home))
    try {
      await page.goto(web.url)
      expect(new URL(page.url()).pathname).toBe("/pair")
      await expect(page.locator("h1").textContent()).resolves.toBe("Pair this device")

      // A wrong code is refused in full sentences, the command as code and no backticks.
      await page.fill("#code", "AAAA-AAAA")
      await page.fill("#name", "my phone")
      await page.click("button[type=submit]")
      await expect.poll(() => page.locator("#result").textContent()).toContain("magi web pair printed")
      expect(await page.locator("#result").textContent()).not.toContain("`")
      expect(await page.locator("#result code").allTextContents()).toEqual(["magi web pair"])

      const printed = magi(home, ["web", "pair", "--url", web.url])
      const link = /open (\S+\/pair#code=\S+)$/m.exec(printed)?.[1]
      expect(link).toBeDefined()
      await page.goto(link!)
      // The code came from the fragment, which is then dropped from the address.
      expect(await page.inputValue("#code")).toMatch(/^[0-9A-Z]{4}-[0-9A-Z]{4}$/)
      expect(page.url()).not.toContain("code=")
      await page.fill("#name", "my phone")
      await page.click("button[type=submit]")
      await page.waitForURL((url) => url.pathname === "/")
      await page.locator(".open-questions").getByText("Which storage backend should the cache use?").first().waitFor({ timeout: 30_000 })

      const cookies = await page.context().cookies()
      const cookie = cookies.find((c) => c.name === "magi_device")
      expect(cookie).toEqual(expect.objectContaining({ httpOnly: true, sameSite: "Strict", secure: false }))
      // HttpOnly: the page's own script cannot read it.
      expect(await page.evaluate(() => document.cookie)).not.toContain("magi_device")

      await page.goto(`${web.url}/#/devices`)
      const row = page.locator("li.device", { hasText: "my phone" })
      await row.waitFor()
      await expect(row.textContent()).resolves.toContain("(this device)")
      // magi's sentences on Devices show commands as code, never backticks (the Web Push line among them).
      await expect.poll(() => page.locator(".devices-view .push-status").textContent()).toContain("Web Push")
      expect(await page.locator(".devices-view").textContent()).not.toContain("`")

      expect(magi(home, ["web", "revoke", "my phone"])).toContain("revoked my phone")
      await page.goto(web.url)
      expect(new URL(page.url()).pathname).toBe("/pair")
    } finally {
      await session.close()
    }
  })
})
