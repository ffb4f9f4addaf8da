/**
 * Issue 18, point 3, as real processes: a phone paired with a `magi web`
 * reached over HTTPS subscribes to Web Push; `magi ask` pushes the question
 * to a stand-in push service on 127.0.0.1, which decrypts it with the
 * phone's own keys and checks the VAPID signature; the token a button
 * carries answers the waiting ask. A push service that says a subscription
 * is gone has it forgotten, and revoking a device stops its pushes. On both
 * store backends (on PostgreSQL every host pushes with one shared key pair).
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { describe, expect, it, onTestFinished } from "vitest"
import type { Payload } from "../../src/questions/WebPush.js"
import { storeBackends } from "../cli/cliSupport.js"
import { phoneKeys, standInPushService, vapidClaims, type Phone } from "./push-support.js"
import { postJson, request, startWeb } from "./web-support.js"

const PUBLIC = "https://phone.example"

type Owner = Awaited<ReturnType<(typeof storeBackends)[number]["owner"]>>

const cookieOf = (setCookie: ReadonlyArray<string> | undefined) => (setCookie?.[0] ?? "").split(";")[0]!

const pushOwner = async (makeOwner: () => Promise<Owner>, publicUrl = PUBLIC) => {
  const o = await makeOwner()
  const dir = NodePath.join(o.env.XDG_CONFIG_HOME!, "magi")
  NodeFs.mkdirSync(dir, { recursive: true })
  NodeFs.writeFileSync(NodePath.join(dir, "config.toml"), `[web]\npublic_url = "${publicUrl}"\n`)
  const service = await standInPushService()
  const web = await startWeb(o.home, 0, { env: o.env, cwd: o.cwd })
  onTestFinished(async () => {
    await web.stop()
    await service.close()
  })
  /** A device paired by the code the real `magi web pair` printed: its cookie. */
  const pair = async (name: string) => {
    const printed = await o.run(["web", "pair"])
    const code = /^pairing code: (\S+)$/m.exec(printed.stdout)?.[1]
    const paired = await postJson(`${web.url}/api/pair`, { code, name })
    expect(paired.status).toBe(200)
    return cookieOf(paired.headers["set-cookie"])
  }
  const subscribe = (cookie: string, endpoint: string, phone: Pick<Phone, "p256dh" | "auth">) =>
    postJson(`${web.url}/api/push/subscriptions`, { endpoint, keys: { p256dh: phone.p256dh, auth: phone.auth } }, { cookie })
  const status = (cookie: string) => request(`${web.url}/api/push`, { headers: { cookie } })
  return { o, web, service, pair, subscribe, status }
}

for (const backend of storeBackends)
  describe(`Web Push, records in ${backend.name}`, { timeout: 180_000 }, () => {
    it("pushes a question encrypted to the phone's keys and signed by VAPID; its button's token answers the waiting ask", async () => {
      const t = await pushOwner(backend.owner)
      const phoneCookie = await t.pair("phone")
      const tabletCookie = await t.pair("tablet")
      const phone = phoneKeys()
      const tablet = phoneKeys()

      const offered = await t.status(phoneCookie)
      expect(offered.status).toBe(200)
      const publicKey = offered.json().public_key as string
      expect(offered.json()).toMatchObject({ offered: true, subscriptions: [] })
      expect(Buffer.from(publicKey, "base64url")).toHaveLength(65)

      expect((await t.subscribe(phoneCookie, t.service.endpoint("phone"), phone)).status).toBe(200)
      // The tablet's browser has since dropped its subscription: its push service says 410.
      expect((await t.subscribe(tabletCookie, t.service.endpoint("tablet", 410), tablet)).status).toBe(200)
      const listed = (await t.status(phoneCookie)).json().subscriptions as ReadonlyArray<{ device: string; this_device: boolean }>
      expect(listed.map((s) => [s.device, s.this_device]).sort()).toEqual([["phone", true], ["tablet", false]])
      expect((await t.o.run(["web", "devices"])).stdout).toMatch(/^phone .* notified via 127\.0\.0\.1:\d+$/m)

      const asking = t.o.start(["ask", "--summary", "Ship the release?", "--choice", "Ship it", "--choice", "Hold"])
      onTestFinished(() => void asking.child.kill("SIGKILL"))
      const [id] = await t.o.filedId(1)
      const [push] = await t.service.waitFor("phone")
      await t.service.waitFor("tablet")

      // What a push service checks: the content coding, a day's TTL, high urgency, and a VAPID JWT by this magi's key.
      expect(push!.headers["content-encoding"]).toBe("aes128gcm")
      expect(push!.headers["ttl"]).toBe(String(24 * 60 * 60))
      expect(push!.headers["urgency"]).toBe("high")
      const claims = vapidClaims(push!, t.service.origin)
      expect(claims.key).toBe(publicKey)
      expect(claims.sub).toBe(PUBLIC)
      const nowSecs = Date.now() / 1000
      expect(claims.exp).toBeGreaterThan(nowSecs)
      expect(claims.exp).toBeLessThanOrEqual(nowSecs + 24 * 60 * 60)

      // What the phone decrypts: the question in full, a button per choice.
      const payload = JSON.parse(phone.decrypt(push!.body)) as Payload
      expect(payload).toMatchObject({ v: 1, question: id, body: "Ship the release?\n1. Ship it\n2. Hold" })
      expect(payload.title).toMatch(/^magi asks · /)
      expect(payload.actions.map((a) => a.title)).toEqual(["Ship it", "Hold"])
      // Nothing readable travels: neither the summary nor a token is in the bytes the service saw.
      expect(push!.body.toString("latin1")).not.toContain("Ship the release")
      expect(() => tablet.decrypt(push!.body)).toThrow()

      // The push service said the tablet's subscription is gone: it is forgotten.
      await expect
        .poll(async () => ((await t.status(phoneCookie)).json().subscriptions as ReadonlyArray<{ device: string }>).map((s) => s.device), {
          timeout: 30_000
        })
        .toEqual(["phone"])

      const pressed = await postJson(`${t.web.url}/api/answer-by-token`, { token: payload.actions[1]!.token })
      expect(pressed.status).toBe(200)
      expect(pressed.json()).toMatchObject({ answered: "Hold" })
      const done = await asking.done
      expect(done.stdout).toBe("Hold\n")
      expect(done.stderr).not.toContain(payload.actions[1]!.token)
    })

    it("stops pushing to a device once it is revoked", async () => {
      const t = await pushOwner(backend.owner)
      const cookie = await t.pair("phone")
      expect((await t.subscribe(cookie, t.service.endpoint("phone"), phoneKeys())).status).toBe(200)
      expect((await t.o.run(["web", "revoke", "phone"])).stdout).toContain("revoked phone")
      expect((await t.o.run(["web", "devices"])).stdout).toBe("no device is paired (`magi web pair` pairs one)\n")
      const asking = t.o.start(["ask", "--summary", "Anyone there?", "--choice", "yes"])
      onTestFinished(() => void asking.child.kill("SIGKILL"))
      const [id] = await t.o.filedId(1)
      // The asker records when it has notified (`Announcements.ts`): after that, no push can still be on its way.
      await t.o.until(() => {
        const announced = t.o.announcement(id!)
        return announced !== undefined && announced.state !== "sending"
      }, "the ask to notify")
      expect(t.service.received).toEqual([])
    })
  })

describe("Web Push where it cannot work", { timeout: 120_000 }, () => {
  it("is not offered on a page reached over plain HTTP, and says why", async () => {
    const t = await pushOwner(storeBackends[0]!.owner, "http://phone.example:7878")
    const cookie = await t.pair("phone")
    const status = await t.status(cookie)
    expect(status.json()).toMatchObject({ offered: false, reason: expect.stringContaining("HTTPS") })
    const refused = await t.subscribe(cookie, t.service.endpoint("phone"), phoneKeys())
    expect(refused.status).toBe(409)
  })

  it("refuses a subscription that is not one (no https endpoint, a wrong-sized key), keeping nothing, and an unpaired device altogether", async () => {
    const t = await pushOwner(storeBackends[0]!.owner)
    const cookie = await t.pair("phone")
    const phone = phoneKeys()
    const cases: ReadonlyArray<[string, { p256dh: string; auth: string }, string]> = [
      ["http://push.example/x", phone, "https"],
      [t.service.endpoint("phone"), { p256dh: phone.p256dh.slice(4), auth: phone.auth }, "p256dh"],
      [t.service.endpoint("phone"), { p256dh: phone.p256dh, auth: "AAAA" }, "auth"]
    ]
    for (const [endpoint, keys, says] of cases) {
      const refused = await t.subscribe(cookie, endpoint, keys)
      expect(refused.status).toBe(400)
      expect(refused.json().error).toContain(says)
    }
    expect((await t.status(cookie)).json().subscriptions).toEqual([])
    expect((await t.subscribe("", t.service.endpoint("phone"), phone)).status).toBe(401)
    expect(NodeFs.existsSync(NodePath.join(t.o.home, "push-subscriptions"))).toBe(false)
  })
})
