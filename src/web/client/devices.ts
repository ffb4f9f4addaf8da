/**
 * The Devices view (`#/devices`): the phones and browsers paired with this
 * magi, by name and last use, each with "Revoke". Pairing matters only when
 * the page is reachable beyond its machine; on a loopback-only page the
 * list is simply empty. Below them, the saved approval rules (approvals.ts):
 * looked at as rarely, and kept off the tab bar for the same reason.
 */
import * as Api from "./api.js"
import { el, withCode } from "./dom.js"
import { relative } from "./card.js"
import { message, type View } from "./view.js"
import { approvalsSection } from "./approvals.js"

export const isDevicesAddress = (hash: string): boolean => hash === "#/devices"

export const devicesView = (): View => {
  const list = el("ul", { class: "devices" })
  const status = el("p", { class: "muted", attrs: { role: "status" } })
  const approvals = approvalsSection()
  const node = el(
    "section",
    { class: "view devices-view", attrs: { "aria-label": "Devices", hidden: true } },
    el("h2", {}, "Paired devices"),
    el("p", { class: "muted intro" }, ...withCode("Each device that may answer here, and when it was last used. Pair another with `magi web pair`.")),
    status,
    list,
    approvals.node
  )
  const load = async () => {
    try {
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
                      (e: unknown) => (status.textContent = message(e))
                    )
                  }
                }
              },
              "Revoke"
            )
          )
        )
      )
    } catch (e) {
      status.textContent = message(e)
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
