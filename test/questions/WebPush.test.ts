import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import * as PushSubscription from "../../src/devices/PushSubscription.js"
import * as Q from "../../src/questions/Question.js"
import * as WebPush from "../../src/questions/WebPush.js"
import { choiceQuestion, freeQuestion } from "../support.js"
import { phoneKeys } from "../web/push-support.js"

const TOKENS = ["t0", "t1", "t2"]

describe("a question as a push payload", () => {
  it("carries the summary with the choices in full and a button per choice, each with its token", () => {
    const q = choiceQuestion()
    const p = WebPush.payload({ question: q, tokens: TOKENS.slice(0, 2), notice: false })
    expect(p).toEqual({
      v: 1,
      title: `magi asks · ${q.run}`,
      body: "Which storage backend should the cache use?\n1. SQLite\n2. Redis",
      question: q.id,
      actions: [
        { title: "SQLite", token: "t0" },
        { title: "Redis", token: "t1" }
      ]
    })
  })

  it("has no buttons for three choices (phones show two), a free-text question, a notice, a settled question, or no tokens", () => {
    const three = { ...choiceQuestion(), choices: ["a", "b", "c"] }
    expect(WebPush.payload({ question: three, tokens: TOKENS, notice: false }).actions).toEqual([])
    expect(WebPush.payload({ question: freeQuestion(), tokens: [], notice: false }).actions).toEqual([])
    expect(WebPush.payload({ question: choiceQuestion(), tokens: TOKENS, notice: true })).toMatchObject({
      actions: [],
      title: expect.stringMatching(/^magi notice/)
    })
    const settled = { ...choiceQuestion(), status: "abandoned" } as Q.Question
    expect(WebPush.payload({ question: settled, tokens: TOKENS, notice: false }).actions).toEqual([])
    expect(WebPush.payload({ question: choiceQuestion(), tokens: undefined, notice: false }).actions).toEqual([])
  })

  it("stays inside a push service's 4 KB however long the summary and labels", () => {
    const long = { ...choiceQuestion(), summary: "x".repeat(20_000), choices: ["y".repeat(500), "z".repeat(500)] }
    const token = "v1." + "a".repeat(200) + "." + "b".repeat(43)
    const p = WebPush.payload({ question: long, tokens: [token, token], notice: false })
    // aes128gcm adds 86 bytes of header, a delimiter and a 16-byte tag to the plaintext.
    expect(Buffer.byteLength(JSON.stringify(p)) + 86 + 1 + 16).toBeLessThanOrEqual(4096)
    expect(p.actions.map((a) => a.title.length)).toEqual([WebPush.LABEL_MAX_CHARS, WebPush.LABEL_MAX_CHARS])
  })

  it("is offered only where the page's public address is https", () => {
    expect(WebPush.offered("https://phone.tail1234.ts.net")).toBe(true)
    expect(WebPush.offered("http://phone.example:7878")).toBe(false)
    expect(WebPush.offered(null)).toBe(false)
  })
})

describe("a browser's subscription, checked", () => {
  const phone = phoneKeys()
  const check = (endpoint: string, keys: { p256dh: string; auth: string } = phone) =>
    Either.match(PushSubscription.check({ endpoint, ...keys }), { onLeft: (e) => e, onRight: () => "ok" })

  it("takes an https endpoint with a P-256 key and a 16-byte secret, and a plain-http one only on this machine", () => {
    expect(check("https://fcm.googleapis.com/fcm/send/abc")).toBe("ok")
    expect(check("http://127.0.0.1:9/push/x")).toBe("ok")
    expect(check("http://push.example/x")).toMatch(/https/)
    expect(check("file:///etc/passwd")).toMatch(/https/)
    expect(check("not a url")).toMatch(/not an address/)
    expect(check("https://p.example/" + "x".repeat(PushSubscription.ENDPOINT_MAX_CHARS))).toMatch(/at most/)
  })

  it("refuses keys that are not what a browser makes", () => {
    expect(check("https://p.example/x", { p256dh: phone.p256dh.slice(2), auth: phone.auth })).toMatch(/p256dh/)
    expect(check("https://p.example/x", { p256dh: "AA" + phone.p256dh.slice(2), auth: phone.auth })).toMatch(/p256dh/)
    expect(check("https://p.example/x", { p256dh: phone.p256dh, auth: phone.auth + "AAAA" })).toMatch(/auth/)
    expect(check("https://p.example/x", { p256dh: "!!!", auth: phone.auth })).toMatch(/p256dh/)
  })

  it("is kept under a hash of its endpoint, which is never shown: only the service's host", () => {
    expect(PushSubscription.subscriptionId("https://a.example/1")).toMatch(/^[0-9a-f]{32}$/)
    expect(PushSubscription.subscriptionId("https://a.example/1")).not.toBe(PushSubscription.subscriptionId("https://a.example/2"))
    expect(PushSubscription.serviceOf("https://fcm.googleapis.com/fcm/send/secret-part")).toBe("fcm.googleapis.com")
  })
})
