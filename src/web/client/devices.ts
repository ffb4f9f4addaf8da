/**
 * The Devices view (`#/devices`): the phones and browsers paired with this
 * magi, by name and last use, each with "Revoke". Pairing matters only when
 * the page is reachable beyond its machine; on a loopback-only page the
 * list is simply empty. Below them, the saved approval rules (approvals.ts):
 * looked at as rarely, and kept off the tab bar for the same reason.
 *
 * Above the list, "Notify this phone" (where the page is reached over HTTPS
 * and the browser has push): it registers the service worker (`/sw.js`),
 * subscribes with this magi's VAPID key and hands the subscription to the
 * server; each device's row then says it is notified, with "Stop".
 */
import * as Api from "./api.js"
import { el, withCode } from "./dom.js"
import { relative } from "./card.js"
import { message, type View } from "./view.js"
import { approvalsSection } from "./approvals.js"

export const isDevicesAddress = (hash: string): boolean => hash === "#/devices"

/** The VAPID key as the bytes `pushManager.subscribe` takes. */
const keyBytes = (b64url: string): Uint8Array<ArrayBuffer> => {
  const text = atob(b64url.replace(/-/g, "+").replace(/_/g, "/") + "=".repeat((4 - (b64url.length % 4)) % 4))
  const bytes = new Uint8Array(new ArrayBuffer(text.length))
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i)
  return bytes
}

/** Whether this browser can take pushes at all (an installed page on iOS 16.4+, any recent Android or desktop browser). */
const canPush = () => isSecureContext && "serviceWorker" in navigator && "PushManager" in window && "Notification" in window

/** Register the worker, ask for permission, subscribe, and give the subscription to magi. */
const notifyThisPhone = async (publicKey: string): Promise<void> => {
  const permission = await Notification.requestPermission()
  if (permission !== "granted") throw new Error("notifications are not allowed for this page; allow them in the browser's settings")
  const registration = await navigator.serviceWorker.register("/sw.js", { scope: "/" })
  await navigator.serviceWorker.ready
  const existing = await registration.pushManager.getSubscription()
  const subscription = existing ?? (await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: keyBytes(publicKey) }))
  const json = subscription.toJSON()
  await Api.keepPushSubscription({ endpoint: subscription.endpoint, keys: { p256dh: json.keys?.["p256dh"] ?? "", auth: json.keys?.["auth"] ?? "" } })
}

export const devicesView = (): View => {
  const list = el("ul", { class: "devices" })
  const status = el("p", { class: "muted", attrs: { role: "status" } })
  const approvals = approvalsSection()
  const pushStatus = el("p", { class: "muted push-status", attrs: { role: "status" } })
  const pushButton = el("button", { class: "notify-phone", attrs: { type: "button", hidden: true } }, "Notify this phone")
  const pushSection = el("div", { class: "push" }, pushButton, pushStatus)
  const node = el(
    "section",
    { class: "view devices-view", attrs: { "aria-label": "Devices", hidden: true } },
    el("h2", {}, "Paired devices"),
    el("p", { class: "muted intro" }, ...withCode("Each device that may answer here, and when it was last used. Pair another with `magi web pair`.")),
    pushSection,
    status,
    list,
    approvals.node
  )
  let publicKey: string | undefined
  pushButton.addEventListener("click", () => {
    if (publicKey === undefined) return
    pushButton.disabled = true
    pushStatus.textContent = "Asking this browser for notifications…"
    notifyThisPhone(publicKey).then(
      () => {
        pushStatus.textContent = "This phone is notified of new questions."
        void load()
      },
      (e: unknown) => {
        pushStatus.replaceChildren(...withCode(message(e)))
        pushButton.disabled = false
      }
    )
  })
  const stopButton = (id: string) =>
    el(
      "button",
      {
        class: "stop-push",
        attrs: { type: "button" },
        on: { click: () => void Api.stopPushSubscription(id).then(() => void load(), (e: unknown) => status.replaceChildren(...withCode(message(e)))) }
      },
      "Stop notifications"
    )
  const load = async () => {
    try {
      const push = await Api.pushStatus()
      publicKey = push.offered ? push.public_key : undefined
      pushButton.hidden = !push.offered || !canPush()
      if (!push.offered) pushStatus.replaceChildren(...withCode(push.reason))
      else if (!canPush()) pushStatus.textContent = "This browser cannot take notifications from a page (on an iPhone: add the page to the home screen first)."
      const pushOf = (deviceName: string | null) => push.subscriptions.filter((s) => s.device === deviceName)
      const devices = await Api.listDevices()
      const now = Date.now()
      status.textContent = devices.length === 0 ? "No device is paired." : ""
      list.replaceChildren(
        ...devices.map((d) =>
          el(
            "li",
            { class: "device" },
            el("strong", {}, d.name),
            d.this_device ? el("span", { class: "muted" }, " (this device)") : null,
            el("span", { class: "muted" }, ` · last used ${relative(d.last_used_at, now)}`),
            ...pushOf(d.name).map((p) => el("span", { class: "pushed" }, el("span", { class: "muted" }, ` · notified via ${p.service}`), stopButton(p.id))),
            el(
              "button",
              {
                attrs: { type: "button" },
                on: {
                  click: () => {
                    const sure = d.this_device ? confirm(`Revoke ${d.name}? This page will need pairing again.`) : true
                    if (!sure) return
                    Api.revokeDevice(d.id).then(
                      () => (d.this_device ? location.reload() : void load()),
                      (e: unknown) => status.replaceChildren(...withCode(message(e)))
                    )
                  }
                }
              },
              "Revoke"
            )
          )
        ),
        // Subscriptions from a page that needed no pairing (loopback only).
        ...pushOf(null).map((p) =>
          el(
            "li",
            { class: "device" },
            el("strong", {}, "a browser (not paired)"),
            el("span", { class: "muted" }, ` · notified via ${p.service}`),
            stopButton(p.id)
          )
        )
      )
    } catch (e) {
      status.replaceChildren(...withCode(message(e)))
    }
  }
  return {
    node,
    matches: isDevicesAddress,
    show: () => {
      node.hidden = false
      void load()
      void approvals.load()
    },
    hide: () => {
      node.hidden = true
    },
    changed: () => undefined
  }
}
