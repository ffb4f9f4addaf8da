/**
 * Issue 28, point 9: guessing pairing codes in parallel, against the real
 * `magi web` on files and on PostgreSQL. Every guess is checked against
 * the limit and counted in one locked step, so a flood of wrong codes sent
 * at once cannot carry the real code through; the limit is per address as
 * well as overall, so one guesser does not lock the owner out elsewhere; and
 * a new code from `magi web pair` opens pairing again.
 *
 * The addresses are told by `X-Forwarded-For` from loopback, as a proxy in
 * front of `magi web` (Tailscale's `serve`) says who it forwards for.
 */
import * as NodeHttp from "node:http"
import { describe, expect, it } from "vitest"
import * as Device from "../../src/devices/Device.js"
import { freshDatabaseSync } from "../pgSupport.js"
import { homeWithPublicUrl, pairingCode } from "./pairing-support.js"
import { startWeb, type Web } from "./web-support.js"

/** Many requests in flight at once, over at most 200 connections (the server keeps 400). */
const agent = new NodeHttp.Agent({ keepAlive: true, maxSockets: 200 })

const guess = (web: Web, code: string, from: string, name = "phone") =>
  new Promise<{ status: number; body: string; cookie: boolean }>((resolve, reject) => {
    const body = JSON.stringify({ code, name })
    const req = NodeHttp.request(`${web.url}/api/pair`, {
      method: "POST",
      agent,
      headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body), "x-forwarded-for": from }
    }, (res) => {
      let text = ""
      res.on("data", (d: Buffer) => (text += d.toString()))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text, cookie: res.headers["set-cookie"] !== undefined }))
      res.on("error", reject)
    })
    req.on("error", reject)
    req.end(body)
  })

/** `n` wrong codes, all different, none of them the real one. */
const wrongCodes = (n: number, real: string, salt: number) =>
  Array.from({ length: n }, (_, i) => {
    const c = (salt * 100_000 + i).toString(32).toUpperCase().replace(/[ILOU]/g, "Z").padStart(8, "2").slice(-8)
    return `${c.slice(0, 4)}-${c.slice(4)}`
  }).filter((c) => Device.normalizeCode(c) !== Device.normalizeCode(real))

const backends: ReadonlyArray<readonly [string, () => Promise<{ env: Record<string, string>; done: () => Promise<void> }>]> = [
  ["files", () => Promise.resolve({ env: {}, done: () => Promise.resolve() })],
  ["PostgreSQL", async () => {
    const db = await freshDatabaseSync()
    return { env: { MAGI_STORE_URL: db.url }, done: () => db.drop() }
  }]
]

describe.each(backends)("pairing guesses on %s", (_name, backend) => {
  it.each([30, 300, 1000])("%i wrong codes sent at once, then the real one: at most ten are looked at, and the real code does not pair from there", {
    timeout: 300_000
  }, async (n) => {
    const store = await backend()
    const home = homeWithPublicUrl()
    const web = await startWeb(home, 0, { env: store.env })
    try {
      const code = pairingCode(home, store.env)
      const wrong = wrongCodes(n, code, n)
      const attempts = [...wrong.map((c) => guess(web, c, "203.0.113.7", "guesser")), guess(web, code, "203.0.113.7")]
      const replies = await Promise.all(attempts)
      const statuses = replies.map((r) => r.status)
      expect(statuses.filter((s) => s === 403).length).toBeLessThanOrEqual(Device.MAX_FAILED_GUESSES)
      expect(statuses.filter((s) => s !== 403 && s !== 429), replies.find((r) => r.status !== 403 && r.status !== 429)?.body).toEqual([])
      // The real one, last: refused, whatever order the checks ran in.
      expect(replies.at(-1)!.status).toBe(429)
      expect(replies.some((r) => r.cookie)).toBe(false)
      // The owner, at another address, pairs with that same code.
      const owner = await guess(web, code, "198.51.100.20")
      expect(owner.status, owner.body).toBe(200)
      expect(owner.cookie).toBe(true)
    } finally {
      await web.stop()
      await store.done()
    }
  })

  it("a lock-out of every address is lifted by a new code from `magi web pair`", {
    timeout: 300_000
  }, async () => {
    const store = await backend()
    const home = homeWithPublicUrl()
    const web = await startWeb(home, 0, { env: store.env })
    try {
      const code = pairingCode(home, store.env)
      // Ten wrong codes from each of enough addresses to fill the overall count.
      const addresses = Array.from({ length: Device.MAX_FAILED_GUESSES_OVERALL / Device.MAX_FAILED_GUESSES }, (_, i) => `203.0.113.${i + 1}`)
      const wrong = wrongCodes(Device.MAX_FAILED_GUESSES_OVERALL, code, 7)
      const replies = await Promise.all(wrong.map((c, i) => guess(web, c, addresses[i % addresses.length]!, "guesser")))
      expect(replies.filter((r) => r.status === 403)).toHaveLength(Device.MAX_FAILED_GUESSES_OVERALL)
      const lockedOut = await guess(web, code, "198.51.100.20")
      expect(lockedOut.status).toBe(429)
      expect(JSON.parse(lockedOut.body).error).toContain("magi web pair")
      const fresh = pairingCode(home, store.env)
      expect((await guess(web, fresh, "198.51.100.20")).status).toBe(200)
    } finally {
      await web.stop()
      await store.done()
    }
  })
})
