/**
 * The history section's data: settled questions fetched by pages.
 *
 * `GET /api/questions` brings the first page with the open questions, and a
 * change event refetches only that; older pages come from
 * `GET /api/questions/history` as the owner scrolls to the end of the list
 * (an IntersectionObserver on a sentinel below it, with a "Show older" button
 * for a browser without one, or a list too short to scroll), and a search
 * box asks the server for history with every word typed. Pages already
 * loaded are kept across refetches: a settled question does not change, and
 * re-reading a hundred pages on every change is what the paging avoids.
 */
import * as Api from "./api.js"
import type { QuestionView } from "./api.js"
import { el } from "./dom.js"
import { message } from "./view.js"

/** Typing settles for this long before a search is sent: one request per pause, not per key. */
const SEARCH_PAUSE_MS = 300

export interface HistoryFeed {
  /** The search box, above the list. */
  readonly controls: HTMLElement
  /** The status line, the "Show older" button and the sentinel, below the list. */
  readonly footer: HTMLElement
  /** What `GET /api/questions` just sent as history. */
  readonly firstPage: (history: ReadonlyArray<QuestionView>, next: string | null) => void
  /** The settled questions to draw now: those loaded, or the search's results while searching. */
  readonly shown: () => ReadonlyArray<QuestionView>
  /** A question fetched on its own (a link to it); kept with the loaded history. */
  readonly keep: (q: QuestionView) => void
  /** Every card the page has is drawn now (see `historyFeed`). */
  readonly drawn: () => void
}

/**
 * `redraw` draws the page again; `allDrawn` tells whether every card it has
 * is built. The page builds its cards a few at a time, and until the last
 * one is there the end of the list is near the top of the screen: an older
 * page is loaded only once the list is whole and the owner nears its end.
 */
export const historyFeed = (redraw: () => void, allDrawn: () => boolean): HistoryFeed => {
  /** Every settled question received so far, by id: first pages and older ones. */
  const loaded = new Map<string, QuestionView>()
  /** The cursor past the oldest page loaded; null once the start of history is reached. */
  let next: string | null = null
  /** Whether an older page was loaded, so a refetch of the first page keeps the cursor further on. */
  let scrolled = false
  let query = ""
  let results: ReadonlyArray<QuestionView> = []
  let resultsNext: string | null = null
  let loading = false
  let failed: string | undefined
  /** Each search's number, so a slow answer to an older search never replaces a newer one's. */
  let searchSeq = 0

  const box = el("input", {
    class: "history-search",
    attrs: { type: "search", placeholder: "Search history", "aria-label": "Search history", autocomplete: "off", enterkeyhint: "search" }
  })
  const status = el("p", { class: "history-status muted", attrs: { role: "status" } })
  const older = el("button", { class: "history-more", attrs: { type: "button" } }, "Show older")
  const sentinel = el("div", { class: "history-end", attrs: { "aria-hidden": "true" } })
  const controls = el("div", { class: "history-controls" }, box)
  const footer = el("div", { class: "history-footer" }, status, older, sentinel)

  const searching = () => query.trim() !== ""
  const cursor = () => (searching() ? resultsNext : next)

  const show = () => {
    describe()
    redraw()
  }

  /** The status line and the button, for the state now. */
  const describe = () => {
    const more = cursor() !== null
    older.hidden = !more || loading
    status.textContent = loading
      ? "Loading…"
      : failed !== undefined
      ? `Could not load older questions: ${failed}`
      : searching() && results.length === 0
      ? "No settled question has every word searched for."
      : more
      ? ""
      : searching()
      ? "That is every match."
      : loaded.size > 0
      ? "That is the whole history."
      : ""
  }

  const loadOlder = async () => {
    const before = cursor()
    if (loading || before === null) return
    loading = true
    failed = undefined
    show()
    const seq = searchSeq
    try {
      const page = await Api.listHistory({ before, q: searching() ? query : undefined })
      if (seq !== searchSeq) return
      if (searching()) {
        results = [...results, ...page.history]
        resultsNext = page.next
      } else {
        for (const q of page.history) loaded.set(q.id, q)
        next = page.next
        scrolled = true
      }
    } catch (e) {
      if (seq === searchSeq) failed = message(e)
    } finally {
      if (seq === searchSeq) {
        loading = false
        show()
      }
    }
  }

  const search = async () => {
    const seq = ++searchSeq
    loading = false
    failed = undefined
    results = []
    resultsNext = null
    if (!searching()) return show()
    loading = true
    show()
    try {
      const page = await Api.listHistory({ q: query })
      if (seq !== searchSeq) return
      results = page.history
      resultsNext = page.next
    } catch (e) {
      if (seq === searchSeq) failed = message(e)
    } finally {
      if (seq === searchSeq) {
        loading = false
        show()
      }
    }
  }

  let pause: ReturnType<typeof setTimeout> | undefined
  box.addEventListener("input", () => {
    query = box.value
    if (pause !== undefined) clearTimeout(pause)
    pause = setTimeout(() => void search(), SEARCH_PAUSE_MS)
  })
  box.addEventListener("keydown", (event) => {
    if (event.key !== "Enter") return
    if (pause !== undefined) clearTimeout(pause)
    void search()
  })
  older.addEventListener("click", () => void loadOlder())

  /** The end came into view while cards were still being built: look again once they are. */
  let endSeenEarly = false
  // A margin so the next page is on its way before the owner reaches the end.
  const nearEnd = typeof IntersectionObserver === "undefined"
    ? undefined
    : new IntersectionObserver(
      (entries) => {
        if (!entries.some((e) => e.isIntersecting)) return
        if (allDrawn()) void loadOlder()
        else endSeenEarly = true
      },
      { rootMargin: "600px 0px" }
    )
  nearEnd?.observe(sentinel)

  return {
    controls,
    footer,
    firstPage: (history, first) => {
      for (const q of history) loaded.set(q.id, q)
      if (!scrolled) next = first
      describe()
    },
    shown: () => (searching() ? results : [...loaded.values()]),
    keep: (q) => {
      if (q.status !== "open") loaded.set(q.id, q)
    },
    drawn: () => {
      if (!endSeenEarly || nearEnd === undefined) return
      endSeenEarly = false
      // Observed afresh, the observer says at once whether the end is still near.
      nearEnd.unobserve(sentinel)
      nearEnd.observe(sentinel)
    }
  }
}
