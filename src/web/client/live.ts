/**
 * A seat's turn as it happens, on the run's page (issue 32.1): the seat's
 * live events (`GET /api/runs/:id/live`, server-sent) as lines: the
 * agent's messages, its tool calls (the tool, the command or file, and the
 * first line of the result once it comes) and its errors, and where each
 * turn ended. The log stays after the turn, so a finished seat reads the
 * same way.
 *
 * Bounded for an hour of ten events a second: at most `SHOWN` lines are in
 * the DOM, the oldest going as new ones come. Every string is a text node:
 * a tool result holding HTML or a `javascript:` link is those characters.
 * A dropped connection comes back by itself (the browser's own reconnect
 * sends the last event's id, so nothing is shown twice or missed); one the
 * server refused is tried again after a pause, from the last event seen.
 */
import type { RunDetail } from "./api.js"
import { el } from "./dom.js"

/** Lines kept on the page: the newest. */
export const SHOWN = 200
/** After the server refused the stream (a restart, a 404 while the seat starts), how long before asking again. */
const RETRY_MS = 5000

type LiveEntry =
  & { readonly seq: number; readonly at: number; readonly turn: number }
  & (
    | { readonly kind: "message"; readonly text: string }
    | { readonly kind: "tool"; readonly id: string; readonly name: string; readonly target: string }
    | { readonly kind: "result"; readonly id: string; readonly text: string; readonly failed: boolean }
    | { readonly kind: "error"; readonly text: string }
    | { readonly kind: "end"; readonly text: string; readonly failed: boolean }
  )

const liveUrl = (run: string, seat: string, after: number) =>
  `/api/runs/${encodeURIComponent(run)}/live?seat=${encodeURIComponent(seat)}${after > 0 ? `&after=${after}` : ""}`

interface Panel {
  readonly node: HTMLElement
  readonly close: () => void
}

/** One run's panel, following one seat; its own list, status line and connection. */
const panel = (run: string, seats: ReadonlyArray<string>): Panel => {
  let seat = seats[0] ?? ""
  let last = 0
  let turn = 0
  let source: EventSource | undefined
  let retry: ReturnType<typeof setTimeout> | undefined
  let closed = false
  const list = el("ol", { class: "live-events", attrs: { "aria-live": "polite" } })
  const status = el("p", { class: "live-status muted" }, "Connecting…")
  const empty = el("p", { class: "live-empty muted" }, "Nothing yet: this seat's events show here as its turn runs.")
  /** Tool lines still on the page, by call id, for their result to fill in. */
  const calls = new Map<string, HTMLElement>()

  const add = (li: HTMLElement) => {
    empty.hidden = true
    list.append(li)
    while (list.childElementCount > SHOWN) {
      const old = list.firstElementChild as HTMLElement
      const id = old.getAttribute("data-call")
      if (id !== null) calls.delete(id)
      old.remove()
    }
  }

  const show = (e: LiveEntry) => {
    if (e.seq <= last) return
    last = e.seq
    if (e.turn !== turn) {
      turn = e.turn
      add(el("li", { class: "live-turn muted" }, `turn ${e.turn}`))
    }
    switch (e.kind) {
      case "message":
        return add(el("li", { class: "live-message detail text" }, e.text))
      case "error":
        return add(el("li", { class: "live-error notice error" }, e.text))
      case "end":
        return add(
          el("li", { class: e.failed ? "live-end notice error" : "live-end muted" }, e.failed ? `turn ${e.turn} ended: ${e.text}` : `turn ${e.turn} ended`)
        )
      case "tool": {
        const li = el(
          "li",
          { class: "live-tool", attrs: { "data-call": e.id } },
          el("span", { class: "tool-name" }, `▸ ${e.name}`),
          e.target === "" ? null : el("code", { class: "tool-target" }, ` ${e.target}`)
        )
        if (e.id !== "") calls.set(e.id, li)
        return add(li)
      }
      case "result": {
        const call = calls.get(e.id)
        const words = el("span", { class: "tool-result muted" }, ` → ${e.text}`)
        if (call === undefined)
          return add(el("li", { class: `live-tool${e.failed ? " failed" : ""}` }, el("span", { class: "tool-name" }, e.failed ? "✗" : "→"), words))
        calls.delete(e.id)
        if (e.failed) {
          call.classList.add("failed")
          call.firstElementChild!.textContent = call.firstElementChild!.textContent!.replace("▸", "✗")
        }
        if (e.text !== "") call.append(words)
        return
      }
    }
  }

  const connect = () => {
    if (closed || seat === "") return
    source?.close()
    const s = new EventSource(liveUrl(run, seat, last))
    source = s
    s.addEventListener("open", () => {
      status.textContent = `Following ${seat}.`
    })
    s.addEventListener("live", (m) => {
      try {
        show(JSON.parse((m as MessageEvent<string>).data) as LiveEntry)
      } catch {
        // A frame that is not an event is skipped; the next one still shows.
      }
    })
    s.addEventListener("error", () => {
      if (s.readyState === EventSource.CLOSED) {
        status.textContent = "Live output is not reachable; trying again shortly."
        retry = setTimeout(connect, RETRY_MS)
      } else status.textContent = "Reconnecting…"
    })
  }

  const picker = seats.length < 2 ? null : el(
    "select",
    {
      class: "live-seat",
      attrs: { "aria-label": "Seat" },
      on: {
        change: (ev) => {
          seat = (ev.target as HTMLSelectElement).value
          last = 0
          turn = 0
          calls.clear()
          list.replaceChildren()
          empty.hidden = false
          clearTimeout(retry)
          connect()
        }
      }
    },
    ...seats.map((s) => el("option", { attrs: { value: s } }, s))
  )
  const node = el("section", { class: "live", attrs: { "data-run": run } }, el("h4", {}, "Live"), picker, status, empty, list)
  connect()
  return {
    node,
    close: () => {
      closed = true
      clearTimeout(retry)
      source?.close()
    }
  }
}

/** The open panel: one run's page at a time follows its seats. */
let open: { readonly run: string; readonly seats: string; readonly panel: Panel } | undefined

/** Stop following (the run's page was left or hidden). */
export const closeLive = (): void => {
  open?.panel.close()
  open = undefined
}

/** The run page's live section: kept across the page's redraws, so its connection and lines stay. */
export const liveSection = (r: RunDetail): ReadonlyArray<Node | null> | null => {
  if (r.seats.length === 0) return null
  const seats = r.seats.map((s) => s.key)
  if (open === undefined || open.run !== r.id || open.seats !== seats.join("\n")) {
    closeLive()
    open = { run: r.id, seats: seats.join("\n"), panel: panel(r.id, seats) }
  }
  return [open.panel.node]
}
