/**
 * `POST /api/runs/:id/land` against the built `magi web`, with real git:
 * 202 and the landing runs in the background (a local merge moves the
 * base), 409 with the reason for a run that cannot land, 404 for no such
 * run, and the cross-site guard in front of it like every write.
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { ID, readyRun } from "./land-support.js"
import { eventually, postJson, startWeb, type Web } from "./web-support.js"

let web: Web | undefined
afterEach(async () => {
  await web?.stop()
  web = undefined
})

const land = (id: string, headers: Record<string, string> = {}) => postJson(`${web!.url}/api/runs/${id}/land`, {}, headers)

describe("POST /api/runs/:id/land", () => {
  it("answers 202 and lands the run in the background with magi land's driver: the base moves, the run is merged", { timeout: 90_000 }, async () => {
    const t = readyRun(`merge = "local"\nland_approval = false`)
    web = await startWeb(t.home)
    const r = await land(ID)
    expect(r.status, r.text).toBe(202)
    expect(r.json().said).toContain("in the background")
    const run = await eventually("the run merged", () => (t.read().status === "merged" ? t.read() : undefined), 60_000)
    expect(run.landing?.local?.sha).toBe(t.git(t.repo, "rev-parse", "HEAD"))
    expect(t.git(t.repo, "log", "-1", "--format=%s")).toBe("Add a cache (magi cd01)")
    expect(NodeFs.existsSync(NodePath.join(t.repo, "cache.ts"))).toBe(true)
    // Over now: a second press is refused with the reason, nothing merged twice.
    const again = await land(ID)
    expect(again.status).toBe(409)
    expect(again.json().error).toContain("it is merged; only a ready run lands")
  })

  it("refuses a run that is not ready, and a repository whose merge is none, with 409 and the reason; nothing is written", async () => {
    const running = readyRun(`merge = "local"`, { status: "running" })
    web = await startWeb(running.home)
    const r = await land(ID)
    expect(r.status).toBe(409)
    expect(r.json().error).toBe("run cd01 cannot land: it is running; only a ready run lands")
    expect(running.read().landing).toBeUndefined()
    const missing = await land("20261204-110000-ffff")
    expect(missing.status).toBe(404)
    await web.stop()

    const none = readyRun(`merge = "none"`)
    web = await startWeb(none.home)
    const n = await land(ID)
    expect(n.status).toBe(409)
    expect(n.json().error).toContain(`[graph] merge is "none"`)
    expect(none.read().landing).toBeUndefined()
    expect(none.read().status).toBe("ready")
  })

  it("refuses a cross-site write with 403 before the run is touched", async () => {
    const t = readyRun(`merge = "local"\nland_approval = false`)
    web = await startWeb(t.home)
    const foreign = await land(ID, { origin: "https://evil.example" })
    expect(foreign.status).toBe(403)
    const crossSite = await land(ID, { "sec-fetch-site": "cross-site" })
    expect(crossSite.status).toBe(403)
    expect(t.read().landing).toBeUndefined()
    expect(t.git(t.repo, "rev-parse", "HEAD")).toBe(t.base)
  })
})
