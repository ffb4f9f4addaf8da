/**
 * Issue 18, point 5: paired devices. The real `magi web` is started with
 * `[web] public_url` naming a host beyond this machine (what a Tailscale
 * `serve` or a reverse proxy in front of it means), so a device must pair
 * before it sees anything; devices pair with the code the real
 * `magi web pair` prints, and are listed and revoked by the real CLI.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as Api from "../../src/web/Api.js"
import * as RunsApi from "../../src/web/RunsApi.js"
import * as SayApi from "../../src/web/SayApi.js"
import * as ImagesApi from "../../src/web/ImagesApi.js"
import * as QueueApi from "../../src/web/QueueApi.js"
import * as ChatsApi from "../../src/web/ChatsApi.js"
import * as Device from "../../src/devices/Device.js"
import { freshDatabaseSync } from "../pgSupport.js"
import { postJson, request, startWeb, type Web } from "./web-support.js"
import { homeWithPublicUrl, magi, pairingCode } from "./pairing-support.js"

const cookieOf = (setCookie: ReadonlyArray<string> | undefined) => (setCookie?.[0] ?? "").split(";")[0]!

/** Every API route the page's routers declare, its parameters filled in. */
const apiRoutes = (): ReadonlyArray<{ method: string; path: string }> =>
  [Api.router, RunsApi.router, SayApi.router, ImagesApi.router, QueueApi.router, ChatsApi.router].flatMap((router: HttpRouter.HttpRouter<unknown, unknown>) =>
    [...router.routes].map((r) => ({ method: r.method === "*" ? "GET" : r.method, path: r.path.replace(/:[A-Za-z]+/g, "x").replace(/\*/g, "x") }))
  )

/** The page's own files (`Page.router`, which the bundle's script makes unreadable here). */
const PAGE_PATHS = ["/", "/app.js"]

describe("magi web reachable beyond loopback", { timeout: 120_000 }, () => {
  let web: Web
  let home: string
  beforeAll(async () => {
    home = homeWithPublicUrl()
    web = await startWeb(home)
  })
  afterAll(async () => {
    await web?.stop()
  })

  it("says that devices pair first", () => {
    expect(web.stderr()).toContain("each device pairs first: run `magi web pair`")
  })

  it("refuses an unpaired device on every route but the pairing page and the capability links", async () => {
    const routes = apiRoutes()
    expect(routes.length).toBeGreaterThan(20)
    for (
      const { method, path } of [...routes, ...PAGE_PATHS.map((path) => ({ method: "GET", path })), { method: "GET", path: "/api/devices" }, {
        method: "DELETE",
        path: "/api/devices/x"
      }]
    ) {
      const reply = await request(`${web.url}${path}`, {
        method,
        headers: method === "GET" ? {} : { "content-type": "application/json" },
        ...(method === "GET" ? {} : { body: "{}" })
      })
      expect({ method, path, status: reply.status }).toEqual({ method, path, status: 401 })
      // A HEAD answer has no body to say why.
      if (method !== "HEAD") expect({ path, error: reply.json().error }).toEqual({ path, error: expect.stringContaining("not paired") })
    }
    // A browser loading the page is sent to the pairing page.
    const page = await request(`${web.url}/`, { headers: { accept: "text/html" } })
    expect(page.status).toBe(303)
    expect(page.headers.location).toBe("/pair")
    expect((await request(`${web.url}/pair`)).status).toBe(200)
    expect((await request(`${web.url}/pair.js`)).status).toBe(200)
    // The capability links' routes are not refused for want of pairing (no
    // such route in this build: 404, not 401).
    for (const path of ["/api/answer-by-token", "/api/answer-by-token/abc", "/t/abc"])
      expect((await request(`${web.url}${path}`)).status).not.toBe(401)
    // Near-misses of an open path are not open.
    for (const path of ["/pairx", "/api/answer-by-tokenx", "/tx/abc", "/api/pair/../questions"])
      expect((await request(`${web.url}${path}`)).status).toBe(401)
  })

  it("answers to the public address's host (a proxy forwards it), and still refuses any other", async () => {
    expect((await request(`${web.url}/api/health`, { headers: { host: "phone.example:7878" } })).status).toBe(401)
    expect((await request(`${web.url}/api/health`, { headers: { host: "evil.example" } })).status).toBe(421)
  })

  it("pairs a device with a code from `magi web pair`, lets it in with its cookie, and lists it", async () => {
    const code = pairingCode(home)
    const paired = await postJson(`${web.url}/api/pair`, { code: code.toLowerCase(), name: "phone" })
    expect(paired.status).toBe(200)
    const setCookie = paired.headers["set-cookie"]![0]!
    expect(setCookie).toMatch(/^magi_device=[0-9a-f]{16}\.[A-Za-z0-9_-]{43}; /)
    expect(setCookie).toContain("HttpOnly")
    expect(setCookie).toContain("SameSite=Strict")
    // Over plain HTTP a Secure cookie would be dropped by the browser.
    expect(setCookie).not.toContain("Secure")
    const cookie = cookieOf(paired.headers["set-cookie"])
    const list = await request(`${web.url}/api/questions`, { headers: { cookie } })
    expect(list.status).toBe(200)
    const devices = await request(`${web.url}/api/devices`, { headers: { cookie } })
    expect(devices.json().devices).toEqual([expect.objectContaining({ name: "phone", this_device: true })])
    expect(magi(home, ["web", "devices"])).toMatch(/^phone {2}last used \d{4}-\d\d-\d\d \d\d:\d\d {2}paired /)
    // Only the hash of the cookie's secret is stored.
    const stored = NodeFs.readdirSync(NodePath.join(home, "devices")).map((f) => NodeFs.readFileSync(NodePath.join(home, "devices", f), "utf8"))
    expect(stored.join("")).not.toContain(cookie.split(".")[1])
    // Nor is the code.
    const codes = NodeFs.readdirSync(NodePath.join(home, "pairing")).map((f) => NodeFs.readFileSync(NodePath.join(home, "pairing", f), "utf8"))
    expect(codes.join("")).not.toContain(code.replace("-", ""))
  })

  it("refuses a code used once already, and a second device under a name taken", async () => {
    const code = pairingCode(home)
    expect((await postJson(`${web.url}/api/pair`, { code, name: "tablet" })).status).toBe(200)
    const again = await postJson(`${web.url}/api/pair`, { code, name: "laptop" })
    expect(again.status).toBe(410)
    expect(again.json().error).toContain("was used already")
    expect(again.headers["set-cookie"]).toBeUndefined()
    const taken = await postJson(`${web.url}/api/pair`, { code: pairingCode(home), name: "Tablet" })
    expect(taken.status).toBe(400)
    expect(taken.json().error).toContain("is paired already")
  })

  it("refuses an expired code", async () => {
    const code = pairingCode(home)
    const file = NodePath.join(home, "pairing", `${Device.codeId(code)}.json`)
    const record = JSON.parse(NodeFs.readFileSync(file, "utf8")) as Device.PairingCode
    NodeFs.writeFileSync(file, Device.encode({ ...record, expires_at: Date.now() - 1 }))
    const expired = await postJson(`${web.url}/api/pair`, { code, name: "old" })
    expect(expired.status).toBe(410)
    expect(expired.json().error).toContain("has expired")
  })

  it("sets the cookie Secure when the page is reached over HTTPS", async () => {
    const paired = await postJson(`${web.url}/api/pair`, { code: pairingCode(home), name: "secure" }, { "x-forwarded-proto": "https" })
    expect(paired.status).toBe(200)
    expect(paired.headers["set-cookie"]![0]).toContain("; Secure")
  })

  it("refuses a revoked device from its very next request", async () => {
    const paired = await postJson(`${web.url}/api/pair`, { code: pairingCode(home), name: "lost phone" })
    const cookie = cookieOf(paired.headers["set-cookie"])
    expect((await request(`${web.url}/api/questions`, { headers: { cookie } })).status).toBe(200)
    expect(magi(home, ["web", "revoke", "lost phone"])).toBe("revoked lost phone: magi web refuses it from its next request\n")
    expect((await request(`${web.url}/api/questions`, { headers: { cookie } })).status).toBe(401)
    expect(magi(home, ["web", "devices"])).not.toContain("lost phone")
  })

  it("refuses a forged or malformed cookie", async () => {
    const paired = await postJson(`${web.url}/api/pair`, { code: pairingCode(home), name: "real" })
    const [id] = cookieOf(paired.headers["set-cookie"]).slice("magi_device=".length).split(".")
    for (const cookie of [`magi_device=${id}.${"A".repeat(43)}`, "magi_device=garbage", `magi_device=${"0".repeat(16)}.${"A".repeat(43)}`, "other=1"])
      expect((await request(`${web.url}/api/questions`, { headers: { cookie } })).status).toBe(401)
  })
})

describe("guessing pairing codes", { timeout: 120_000 }, () => {
  it("closes pairing after ten wrong codes, even to the right one, until the window passes", async () => {
    const home = homeWithPublicUrl()
    const web = await startWeb(home)
    try {
      const code = pairingCode(home)
      for (let i = 0; i < Device.MAX_FAILED_GUESSES; i++) {
        const wrong = await postJson(`${web.url}/api/pair`, { code: `AAAA-AAA${i}`, name: "guesser" })
        expect(wrong.status).toBe(403)
      }
      const right = await postJson(`${web.url}/api/pair`, { code, name: "phone" })
      expect(right.status).toBe(429)
      expect(right.json().error).toContain("too many wrong pairing codes")
      expect(right.headers["set-cookie"]).toBeUndefined()
      // The window passes (every count's start moved back past GUESS_WINDOW_MS): the code works again.
      const folder = NodePath.join(home, "pairing-guesses")
      for (const name of NodeFs.readdirSync(folder).filter((f) => f.endsWith(".json"))) {
        const file = NodePath.join(folder, name)
        const count = JSON.parse(NodeFs.readFileSync(file, "utf8")) as Device.Guesses
        NodeFs.writeFileSync(file, Device.encode({ ...count, window_start: Date.now() - Device.GUESS_WINDOW_MS - 1 }))
      }
      expect((await postJson(`${web.url}/api/pair`, { code, name: "phone" })).status).toBe(200)
    } finally {
      await web.stop()
    }
  })
})

describe("magi web on loopback with no public address", { timeout: 60_000 }, () => {
  it("stays open to whoever reaches it, as before", async () => {
    const web = await startWeb()
    try {
      expect((await request(`${web.url}/api/questions`)).status).toBe(200)
      expect(web.stderr()).not.toContain("pairs first")
    } finally {
      await web.stop()
    }
  })
})

describe("paired devices on PostgreSQL", { timeout: 120_000 }, () => {
  it("are shared by every magi web on the database: paired at one, let in and revoked at both", async () => {
    const db = await freshDatabaseSync()
    const env = { MAGI_STORE_URL: db.url }
    const homeA = homeWithPublicUrl()
    const homeB = homeWithPublicUrl()
    const a = await startWeb(homeA, 0, { env })
    const b = await startWeb(homeB, 0, { env })
    try {
      const paired = await postJson(`${a.url}/api/pair`, { code: pairingCode(homeB, env), name: "phone" })
      expect(paired.status).toBe(200)
      const cookie = cookieOf(paired.headers["set-cookie"])
      expect((await request(`${b.url}/api/questions`, { headers: { cookie } })).status).toBe(200)
      expect(magi(homeA, ["web", "devices"], env)).toContain("phone")
      magi(homeB, ["web", "revoke", "phone"], env)
      expect((await request(`${a.url}/api/questions`, { headers: { cookie } })).status).toBe(401)
      expect((await request(`${b.url}/api/questions`, { headers: { cookie } })).status).toBe(401)
      expect(NodeFs.existsSync(NodePath.join(homeA, "devices"))).toBe(false)
    } finally {
      await a.stop()
      await b.stop()
      await db.drop()
    }
  })
})
