/**
 * What the questions page says when nothing is open: how an agent asks (the
 * one command, to paste into an agent's instructions), and whether anyone is
 * told when a question arrives. An owner who set up `magi web` but no
 * notifier would otherwise wait for taps that never come.
 */
import * as Api from "./api.js"
import { el } from "./dom.js"

/**
 * Shown after the page's "Nothing is waiting" line, and hidden with it (by
 * CSS). `shown()` when the page shows it: only then is the server asked
 * whether notifications are set (once), so a page with questions open does
 * not spend a request on its first screen for a line nobody sees.
 */
export const emptyHelp = () => {
  const notify = el("p", { class: "notify-state", attrs: { hidden: true } })
  let asked = false
  const shown = () => {
    if (asked) return
    asked = true
    void askHealth(notify)
  }
  const node = el(
    "div",
    { class: "empty-help" },
    el("p", { class: "muted" }, "An agent asks you from its shell, and the question appears here at once:"),
    el("pre", { class: "example" }, el("code", {}, 'magi ask --summary "Ship tonight?" \\\n  --choice "ship it" --choice "hold"')),
    notify
  )
  return { node, shown }
}

const askHealth = (notify: HTMLElement) =>
  Api.health().then(
    (h) => {
      if (typeof h.notifications !== "boolean") return // an older server: say nothing rather than guess
      notify.hidden = false
      notify.className = `notify-state ${h.notifications ? "on" : "off"}`
      const via = (h.notify_via ?? []).map((v) => (v === "ntfy" ? "ntfy" : "your [notify] command"))
      if (h.notifications)
        notify.replaceChildren(`Notifications are on${via.length === 0 ? "" : ` through ${via.join(" and ")}`}: you are told when a question arrives.`)
      else
        notify.replaceChildren(
          "Notifications are off: nobody is told when a question arrives. Set ",
          el("code", {}, "[notify] ntfy"),
          " (a topic on an ntfy server, which your phone's ntfy app subscribes to) or ",
          el("code", {}, "[notify] command"),
          " in ",
          // The file the server reads; an older server does not say, and the repository's own file works for any.
          el("code", {}, h.notify_config ?? "magi.toml"),
          "; ",
          el("code", {}, "magi notify --test"),
          " checks it."
        )
    },
    () => undefined // No health, no line: the rest still holds.
  )
