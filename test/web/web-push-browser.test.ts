/**
 * Issue 18, point 3, the phone's side in a real Chromium, as far as it goes
 * with no network: the Devices view offers "Notify this phone" on a page
 * reached over HTTPS, registers magi's service worker; a push delivered
 * through the browser's own push path (the DevTools protocol's
 * `ServiceWorker.deliverPushMessage`, since no push service is reachable)
 * shows the question as a notification with a button per choice; pressing
 * a button answers through the capability token, and a tap opens the card.
 *
 * `public_url = "https://localhost"` makes the page one that offers push
 * without pairing (a loopback address); Chromium takes http://127.0.0.1 as
 * a secure context, as service workers need.
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { describe, expect, it } from "vitest"
import * as AnswerLinks from "../../src/questions/AnswerLinks.js"
import * as WebPush from "../../src/questions/WebPush.js"
import { choiceQuestion, tempDirSync } from "../support.js"
import { phoneSession } from "./browser-support.js"
import { request, seed, startWeb } from "./web-support.js"

const ID = "20261201-150000-ab12"
/** Each delivery gets 20 s to show (generous on a busy 2-core machine); four tries bound the test well inside its timeout. */
const PUSH_PATIENCE_MS = 20_000
const PUSH_ATTEMPTS = 4

/** A home whose page is reached at https://localhost, with one open question (choices SQLite, Redis). */
const homeWithPush = async () => {
  const home = tempDirSync()
  NodeFs.mkdirSync(NodePath.join(home, "config", "magi"), { recursive: true })
  NodeFs.writeFileSync(NodePath.join(home, "config", "magi", "config.toml"), `[web]\npublic_url = "https://localhost"\n`)
  await seed(home, [{ q: choiceQuestion(ID) }])
  return home
}

interface Shown {
  readonly title: string
  readonly body: string
  readonly tag: string
  readonly actions: ReadonlyArray<string>
}

describe("the service worker in a real browser", { timeout: 240_000 }, () => {
  const session = phoneSession()

  it("registers from Notify this phone, shows a pushed question with its choices, answers from a button and opens the card on a tap", async () => {
    const home = await homeWithPush()
    const { web, page, context } = await session.open(() => startWeb(home))
    try {
      await context.grantPermissions(["notifications"], { origin: web.url })
      await page.goto(`${web.url}/#/devices`)
      const button = page.getByRole("button", { name: "Notify this phone" })
      await button.waitFor({ timeout: 30_000 })
      await button.click()
      // Registration works offline; subscribing needs the browser's push service, which is not reachable here.
      const scope = await page.evaluate(async () => (await navigator.serviceWorker.ready).scope)
      expect(scope).toBe(`${web.url}/`)
      await expect.poll(() => page.locator(".push-status").textContent(), { timeout: 30_000 }).not.toMatch(/^Asking/)

      const cdp = await context.newCDPSession(page)
      const registrationId = new Promise<string>((resolve) =>
        cdp.on("ServiceWorker.workerRegistrationUpdated", (e) => {
          const found = e.registrations.find((r) => r.scopeURL === `${web.url}/` && !r.isDeleted)
          if (found) resolve(found.registrationId)
        })
      )
      await cdp.send("ServiceWorker.enable")
      const secret = await Effect.runPromise(AnswerLinks.secret(home).pipe(Effect.provide(NodeFileSystem.layer)))
      const q = choiceQuestion(ID)
      const tokens = q.choices.map((_, index) => AnswerLinks.mint(secret, { question: ID, choices: q.choices, index, expiresAt: Date.now() + 3_600_000 }))
      const payload = WebPush.payload({ question: q, tokens, notice: false })

      const shown = () =>
        page.evaluate(async () =>
          (await (await navigator.serviceWorker.ready).getNotifications()).map((n) => ({
            title: n.title,
            body: n.body,
            tag: n.tag,
            actions: ((n as unknown as { actions?: ReadonlyArray<{ title: string }> }).actions ?? []).map((a) => a.title)
          }))
        )
      /**
       * Delivers the push until the browser shows what `until` looks for. A
       * push that reaches the worker while Chromium is still starting it can
       * be dropped on a loaded machine; a phone's push service retries the
       * same way, and a second delivery replaces the first (same tag).
       */
      const deliverUntil = async (until: (now: ReadonlyArray<Shown>) => boolean) => {
        const id = await registrationId
        for (let attempt = 0; attempt < PUSH_ATTEMPTS; attempt++) {
          await cdp.send("ServiceWorker.deliverPushMessage", { origin: web.url, registrationId: id, data: JSON.stringify(payload) })
          const ok = await expect
            .poll(async () => until(await shown()), { timeout: PUSH_PATIENCE_MS })
            .toBe(true)
            .then(() => true, () => false)
          if (ok) return
        }
        expect(await shown(), `no notification after ${PUSH_ATTEMPTS} deliveries`).toSatisfy(until)
      }
      await deliverUntil((now) => now.length === 1)
      expect((await shown())[0]).toEqual(
        {
          title: payload.title,
          body: "Which storage backend should the cache use?\n1. SQLite\n2. Redis",
          tag: ID,
          actions: ["SQLite", "Redis"]
        } satisfies Shown
      )

      // Press "Redis": the worker's own click handler, given the notification the browser showed.
      const worker = context.serviceWorkers().find((w) => w.url() === `${web.url}/sw.js`)
      expect(worker).toBeDefined()
      const said = await worker!.evaluate(async () => {
        const [n] = await (self as unknown as { registration: ServiceWorkerRegistration }).registration.getNotifications()
        return (self as unknown as { handleClick: (n: Notification, action: string) => Promise<string> }).handleClick(n!, "1")
      })
      expect(said).toBe("answered: Redis")
      const view = (await request(`${web.url}/api/questions/${ID}`)).json() as { status: string; answer: unknown; answered_via?: string }
      expect(view).toMatchObject({ status: "answered", answer: { choice: "Redis" }, answered_via: "link" })
      // The notification now says what was sent, in place of the question.
      await expect.poll(async () => (await shown()).map((n) => [n.tag, n.body])).toEqual([[ID, "answered: Redis"]])

      // A second press of the other button finds the question settled.
      await deliverUntil((now) => now.length === 1 && now[0]!.actions.length === 2)
      const again = await worker!.evaluate(async () => {
        const [n] = await (self as unknown as { registration: ServiceWorkerRegistration }).registration.getNotifications()
        return (self as unknown as { handleClick: (n: Notification, action: string) => Promise<string> }).handleClick(n!, "0")
      })
      expect(again).toBe("already answered: Redis")

      // A tap on the notification itself (here, the one saying it was answered already) opens the question's card in the open page.
      const tapped = await worker!.evaluate(async () => {
        const [n] = await (self as unknown as { registration: ServiceWorkerRegistration }).registration.getNotifications()
        return (self as unknown as { handleClick: (n: Notification, action: string) => Promise<string> }).handleClick(n!, "")
      })
      const card = `${web.url}/#/questions/${ID}`
      expect(tapped).toBe(card)
      await expect.poll(() => page.url(), { timeout: 30_000 }).toBe(card)
    } finally {
      await session.close()
    }
  })
})
