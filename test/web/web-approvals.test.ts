/**
 * The approvals section's API: the rules "Always allow" saved, listed as
 * `magi approvals list` numbers them, and removed one at a time as
 * `magi approvals rm` removes them, behind the same guards as every write.
 */
import { describe, expect, it } from "vitest"
import { request, startWeb } from "./web-support.js"
import { plantRule, savedByCli } from "./approvals-support.js"
import { tempDirSync } from "../support.js"

const FIRST = "20261201-120000000-000001"
const SECOND = "20261201-120500000-000002"

const homeWithRules = () => {
  const home = tempDirSync()
  plantRule(home, SECOND, "Bash(npm publish)", "/work/other", "20261201-120500-cd34")
  plantRule(home, FIRST, "Bash(git push:*)")
  return home
}

const del = (url: string, headers: Record<string, string> = { "content-type": "application/json" }) =>
  // As the page's fetch sends it: a sized body, not a chunked one.
  request(url, { method: "DELETE", headers: { "content-length": "2", ...headers }, body: "{}" })

describe("the approvals API", { timeout: 60_000 }, () => {
  it("lists the saved rules oldest first, with their repository, when and which question saved them", async () => {
    const web = await startWeb(homeWithRules())
    try {
      const r = await request(`${web.url}/api/approvals/rules`)
      expect(r.status).toBe(200)
      expect(r.json().rules).toEqual([
        expect.objectContaining({
          id: FIRST,
          rule: "Bash(git push:*)",
          repo: "/work/site",
          added_at: "2026-12-01T12:00:00.000Z",
          question: "20261201-120000-ab12"
        }),
        expect.objectContaining({ id: SECOND, rule: "Bash(npm publish)", repo: "/work/other", question: "20261201-120500-cd34" })
      ])
    } finally {
      await web.stop()
    }
  })

  it("says there is none when nothing was saved", async () => {
    const web = await startWeb()
    try {
      expect((await request(`${web.url}/api/approvals/rules`)).json()).toEqual({ rules: [] })
    } finally {
      await web.stop()
    }
  })

  it("removes exactly the rule named, and magi approvals list no longer shows it", async () => {
    const web = await startWeb(homeWithRules())
    try {
      const r = await del(`${web.url}/api/approvals/rules/${FIRST}`)
      expect(r.status, r.text).toBe(200)
      expect(r.json().removed).toEqual(expect.objectContaining({ id: FIRST, rule: "Bash(git push:*)" }))
      expect(savedByCli(web.home)).toEqual(["Bash(npm publish)"])
      // Removed already (here, or from the terminal): a clear 404, nothing else touched.
      const again = await del(`${web.url}/api/approvals/rules/${FIRST}`)
      expect(again.status).toBe(404)
      expect(again.json().error).toContain("removed already")
      expect(savedByCli(web.home)).toEqual(["Bash(npm publish)"])
    } finally {
      await web.stop()
    }
  })

  it("refuses a removal another site's page could have sent, and an id that is not a rule's, removing nothing", async () => {
    const web = await startWeb(homeWithRules())
    try {
      const crossSite = await del(`${web.url}/api/approvals/rules/${FIRST}`, { "content-type": "application/json", origin: "https://evil.example" })
      expect(crossSite.status).toBe(403)
      const asForm = await del(`${web.url}/api/approvals/rules/${FIRST}`, { "content-type": "text/plain" })
      expect(asForm.status).toBe(403)
      const foreignHost = await del(`${web.url}/api/approvals/rules/${FIRST}`, { "content-type": "application/json", host: "attacker.example" })
      expect(foreignHost.status).toBe(421)
      for (const bad of ["..%2F..%2Fdevices%2Fx", "nope", `${FIRST}.json`]) {
        const r = await del(`${web.url}/api/approvals/rules/${bad}`)
        expect(r.status, bad).toBe(400)
        expect(r.json().error).toBe("not a saved approval rule's id")
      }
      expect(savedByCli(web.home)).toEqual(["Bash(git push:*)", "Bash(npm publish)"])
    } finally {
      await web.stop()
    }
  })
})
