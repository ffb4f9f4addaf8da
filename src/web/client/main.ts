/**
 * magi's phone page: the questions agents are waiting on, live.
 *
 * The page follows `/api/events` and refetches the list on every change, so
 * an answer given at a terminal or a new question shows up without a reload.
 * Cards are redrawn only when their question changed, so a half-typed reply
 * and a loaded panel survive other questions changing around them.
 *
 * A second view, `#/notices`, lists what the waiter could not deliver and
 * why; it is refetched only when the events say the notices changed.
 */
import * as Api from "./api.js"
import type { QuestionView } from "./api.js"
import type { WaiterNotice } from "./api.js"
import { card, holderText, relative, time, type Notice } from "./card.js"
import { decisions, type Given } from "./decisions.js"
import { failureText, undeliveredFor } from "./truth.js"
import { decoded } from "./view.js"
import { el } from "./dom.js"
import { denseLayout } from "./dense.js"
import { emptyHelp } from "./empty.js"
import { isQueueAddress, queueView } from "./queue.js"
import { isRunsAddress, runsView } from "./runs.js"
import { chatsView, isChatsAddress } from "./chats.js"
import { devicesView, isDevicesAddress } from "./devices.js"
import { historyFeed } from "./history.js"
import { loadMarkdown } from "./richText.js"
import { coalesced, lazyView, message, type Revisions, type View } from "./view.js"

/** Without live events (an old browser, a proxy that buffers), poll this often. */
const POLL_MS = 5000

const drafts = new Map<string, string>()
const notices = new Map<string, Notice>()
/** What each card was drawn from, to redraw only cards that changed. */
const drawn = new Map<string, { key: string; node: HTMLElement }>()
/** What the page draws: the open questions, then the settled ones loaded (or found by a search). */
let questions: ReadonlyArray<QuestionView> = []
/** The open questions as last fetched. */
let openQuestions: ReadonlyArray<QuestionView> = []
let loadError: string | undefined
/** The server's tag for the list last drawn (`ETag`), to be told when it has not changed. */
let listTag: string | undefined
/** Whether a list has come at all. */
let listArrived = false
let waiterNotices: ReadonlyArray<WaiterNotice> = []
let noticesError: string | undefined
/** The notices revision last fetched, from the change events. */
let noticesRevision: number | undefined
/** Whether a magi loop owns the home, from the change events. */
let loopRunning: boolean | undefined

/** The newest notice the owner has looked at, kept across visits (so the badge counts only new ones). */
const SEEN_KEY = "magi.notices.seen"
const seenNotice = (): string => {
  try {
    return localStorage.getItem(SEEN_KEY) ?? ""
  } catch {
    return "" // storage refused (private mode): every notice counts as new
  }
}
const markNoticesSeen = (newest: string) => {
  try {
    localStorage.setItem(SEEN_KEY, newest)
  } catch {
    // Nothing to keep it in; the badge just stays.
  }
}

// -- the frame of the page ----------------------------------------------------

const badge = el("span", { class: "badge", attrs: { "aria-label": "questions that need you", hidden: true } })
const noticeBadge = el("span", { class: "badge quiet", attrs: { "aria-label": "new notices", hidden: true } })
const connection = el("span", { class: "connection muted", attrs: { role: "status" } }, "connecting…")
const openList = el("div", { class: "list" })
const historyList = el("div", { class: "list" })
/** Hidden until a list has come: a page still loading cannot say nothing is waiting. */
const openEmpty = el("p", { class: "empty muted", attrs: { hidden: true } }, "Nothing is waiting for you.")
const banner = el("p", { class: "notice error", attrs: { hidden: true, role: "alert" } })
const noticeList = el("div", { class: "list" })
const noticesEmpty = el("p", { class: "empty muted" }, "Nothing undelivered: every word you sent reached its agent or is on its way.")
const noticesBanner = el("p", { class: "notice error", attrs: { hidden: true, role: "alert" } })
const questionsLink = el("a", { attrs: { href: "#/questions" } }, "Questions ", badge)
const noticesLink = el("a", { attrs: { href: "#/notices" } }, "Notices ", noticeBadge)
const runsLink = el("a", { attrs: { href: "#/runs" } }, "Runs")
const queueLink = el("a", { attrs: { href: "#/queue" } }, "Queue")
/** The views beyond questions and notices, each in its own module. */
const views: ReadonlyArray<{ readonly view: View; readonly link: HTMLElement }> = [
  { view: lazyView(isQueueAddress, queueView), link: queueLink },
  { view: lazyView(isRunsAddress, runsView), link: runsLink },
  { view: lazyView(isChatsAddress, chatsView), link: el("a", { attrs: { href: "#/chats" } }, "Plan") },
  // In the header rather than the tab bar: looked at rarely, and a sixth tab does not fit a phone.
  { view: lazyView(isDevicesAddress, devicesView), link: el("a", { class: "devices-link", attrs: { href: "#/devices" } }, "Devices") }
]
const navViews = views.filter((v) => !v.link.classList.contains("devices-link"))
/** Settled questions by pages: the first with every refetch, older ones as the owner scrolls or searches. */
const history = historyFeed(
  () => {
    questions = [...openQuestions, ...history.shown()]
    draw()
  },
  () => allDrawn
)
const questionsView = el(
  "div",
  { class: "view questions-view" },
  banner,
  el("section", { class: "open-questions", attrs: { "aria-label": "Open questions" } }, el("h2", {}, "Waiting for you"), openEmpty, openList),
  el("section", { class: "history", attrs: { "aria-label": "History" } }, el("h2", {}, "History"), history.controls, historyList, history.footer)
)
const noticesView = el(
  "section",
  { class: "view notices-view", attrs: { "aria-label": "Notices", hidden: true } },
  el("h2", {}, "Not delivered"),
  el("p", { class: "muted intro" }, "What magi could not carry to an agent, and why. It never starts a fresh agent instead."),
  noticesBanner,
  noticesEmpty,
  noticeList
)

const frame = [
  el(
    "header",
    { class: "top" },
    el("h1", {}, "magi"),
    el("nav", {}, questionsLink, ...navViews.map((v) => v.link), noticesLink),
    connection,
    views.at(-1)!.link
  ),
  el("main", {}, questionsView, noticesView, ...views.map((v) => v.view.node))
]

/**
 * How long the page waits for its first list before it shows its frame
 * anyway (saying "connecting…"). Shown at once, the empty frame cost the
 * phone a layout and a paint of its own just before the cards came (the
 * list is usually there by the time the script has run: the page preloads
 * it), and the screen went blank → header → cards instead of blank → cards.
 */
const FRAME_WAIT_MS = 1000
const mount = () => {
  if (!frame[0]!.isConnected) document.body.append(...frame)
}
setTimeout(mount, FRAME_WAIT_MS)

/** The compact list beside the cards (the owner's choice), and the empty state's help. */
const dense = denseLayout({ view: questionsView, openList, openIds: () => shownOpen, questionInHash: (hash) => questionInHash(hash) })
const help = emptyHelp()
openEmpty.after(help.node)

// -- drawing ------------------------------------------------------------------

/** Open and not waiting on the agent: the number on the badge and in the title. */
const needsOwner = (qs: ReadonlyArray<QuestionView>) => qs.filter((q) => q.status === "open" && !q.waiting_on_agent).length

/** `a` before `b` in plain code-unit order (`localeCompare` collates, and is many times slower). */
const ordinal = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/**
 * Newest asked first; never by last activity, so cards do not jump around.
 * Ask times are UTC ISO stamps and ids ASCII, so code-unit order is time order.
 */
const byAsked = (a: QuestionView, b: QuestionView) => ordinal(b.asked_at, a.asked_at) || ordinal(b.id, a.id)

/**
 * History: the one settled last first, as the server pages it (an answer
 * given today to a question asked last week is today's history).
 */
const bySettled = (a: QuestionView, b: QuestionView) => ordinal(b.settled_at ?? "", a.settled_at ?? "") || ordinal(b.id, a.id)

const act = (q: QuestionView, send: () => Promise<QuestionView>, done: string) => {
  notices.delete(q.id)
  void send().then(
    (updated) => {
      drafts.delete(`${q.id}:say`)
      notices.set(q.id, { text: done, kind: "ok" })
      questions = questions.map((x) => (x.id === updated.id ? updated : x))
      draw()
    },
    (e: unknown) => {
      if (e instanceof Api.ApiError && e.settled) {
        notices.set(q.id, {
          text: `Answered elsewhere: ${e.message}. The card now shows what was decided.`,
          kind: "elsewhere"
        })
        void refresh()
      } else {
        notices.set(q.id, { text: failureText(e, "Your words were not sent"), kind: "error", where: "ask-back" })
      }
      draw()
    }
  )
}

/** New questions kept out of the open list while a decision runs, counted in its heading (out of the flow: it never moves a card). */
const arrivingNote = el("span", { class: "arriving", attrs: { role: "status", hidden: true } })
questionsView.querySelector("section.open-questions > h2")?.append(" ", arrivingNote)

/** Decisions held for Undo, sent, then shown until they leave the open list. */
const held = decisions({
  send: (id, given, keepalive) => Api.answer(id, given, { keepalive }),
  sent: (updated) => {
    drafts.delete(`${updated.id}:answer`)
    drafts.delete(`${updated.id}:say`)
    // The card's own line says "Answered: …" while it stays in place, and
    // its resolution says it in history.
    notices.delete(updated.id)
    questions = questions.map((x) => (x.id === updated.id ? updated : x))
  },
  failed: (q, _given, e) => {
    if (e instanceof Api.ApiError && e.settled) {
      notices.set(q.id, { text: `Answered elsewhere: ${e.message}. The card now shows what was decided.`, kind: "elsewhere" })
      void refresh()
    } else notices.set(q.id, { text: failureText(e, "Your answer was not sent"), kind: "error", where: "decide" })
  },
  redraw: () => draw()
})

/**
 * Each deciding card's height when the owner tapped: the card keeps at
 * least that height until its decision ends, so the cards below it stay
 * exactly where they were while the thumb may be on its way to Undo.
 */
const heights = new Map<string, number>()

const decide = (q: QuestionView, given: Given) => {
  notices.delete(q.id)
  const node = drawn.get(q.id)?.node
  if (node !== undefined) heights.set(q.id, node.offsetHeight)
  held.start(q, given, Date.now())
}

/**
 * Questions seen open that were then settled elsewhere while the owner had a
 * draft on them: they stay in the open list, in their place, showing the
 * draft, until the owner discards it.
 */
const lostDrafts = new Map<string, QuestionView>()
const hasDraft = (id: string) => [`${id}:answer`, `${id}:say`].some((k) => (drafts.get(k) ?? "").trim() !== "")
const forgetDraft = (id: string) => {
  drafts.delete(`${id}:answer`)
  drafts.delete(`${id}:say`)
  lostDrafts.delete(id)
  drawn.delete(id)
  draw()
}

// A page being closed or put away sends what it holds: the owner saw
// "Sending…", and a decision must not die with the tab.
window.addEventListener("pagehide", () => held.flush())
document.addEventListener("visibilitychange", () => {
  if (document.visibilityState === "hidden") held.flush()
})

/** The open list as last drawn: to tell a question settled elsewhere under a draft. */
let shownOpen = new Set<string>()

/**
 * How long one drawing pass may spend building new cards before the browser
 * gets to paint and to take a tap. A full card (markdown, controls, holder
 * line) takes a few milliseconds to build on a phone, and a hundred open
 * questions built in one go froze a 4x-throttled page for seconds. A pass
 * builds cards top-down within this budget (about one 60 Hz frame) and the
 * next pass continues below them, so what is on screen never moves.
 *
 * The first screen is the exception: until cards reach the bottom of the
 * screen there is nothing to tap, and filling it a card per pass cost a
 * frame's layout and paint per card, so the first pass builds on until the
 * screen is full.
 */
const BUILD_BUDGET_MS = 12
/** A next pass is coming, while cards are left to build. */
let continuing = false

/**
 * Call `pass` with a budget when the page has a moment for the cards left
 * to build: in the browser's idle time, with the time left before the next
 * frame as its budget, so neither a frame nor a tap waits for a card below
 * the screen; where there are no idle callbacks (Safari), or the page is
 * never idle for `IDLE_WAIT_MS`, after the next frame with `BUILD_BUDGET_MS`.
 */
const IDLE_WAIT_MS = 100
const whenIdle = (pass: (budgetMs: number) => void) => {
  if (typeof requestIdleCallback === "function")
    requestIdleCallback((idle) => pass(idle.didTimeout ? BUILD_BUDGET_MS : idle.timeRemaining()), { timeout: IDLE_WAIT_MS })
  else requestAnimationFrame(() => setTimeout(() => pass(BUILD_BUDGET_MS), 0))
}
/** Whether cards have once reached the bottom of the screen (see `BUILD_BUDGET_MS`). */
let screenFilled = false
/** Whether the last pass built every card there is. */
let allDrawn = false

const draw = (budgetMs = BUILD_BUDGET_MS) => {
  const now = Date.now()
  const passStarted = performance.now()
  // A linked question is always built, however far down it is: the page is
  // about to scroll to it.
  const linked = questionInHash(location.hash)
  let reachedLinked = linked === undefined || !questions.some((q) => q.id === linked)
  const focused = document.activeElement instanceof HTMLTextAreaElement ? document.activeElement.dataset["draft"] : undefined
  const seen = new Set<string>()
  /** New cards built in this pass. */
  let built = 0
  /** The card for `q`, or none when it is new and this pass has spent its budget. */
  const nodeFor = (q: QuestionView): HTMLElement | undefined => {
    const notice = notices.get(q.id)
    const decision = held.of(q.id)
    const undelivered = undeliveredFor(q, waiterNotices)
    // The loop's state only as the card words it: a loop found running or
    // stopped rebuilds only the cards whose line about it changes.
    const key = JSON.stringify([q, notice, holderText(q, loopRunning), decision, undelivered?.id])
    const old = drawn.get(q.id)
    if (q.id === linked) reachedLinked = true
    if (old !== undefined && old.key === key) {
      seen.add(q.id)
      return old.node
    }
    // Every pass builds at least one card, so a slow first card (the page's
    // code still cold) cannot stall the list.
    if (reachedLinked && built > 0 && screenFilled && performance.now() - passStarted > budgetMs) return undefined
    built++
    seen.add(q.id)
    const node = card(q, {
      drafts,
      notice,
      act,
      decide,
      undo: held.undo,
      decision,
      undelivered,
      forgetDraft,
      now,
      loopRunning
    })
    const height = heights.get(q.id)
    if (held.of(q.id) === undefined) heights.delete(q.id)
    else if (height !== undefined) node.style.minHeight = `${height}px`
    drawn.set(q.id, { key, node })
    return node
  }
  // A decision held for Undo that someone else's answer overtook is never
  // sent (the server would refuse it); what was typed is kept below.
  for (const q of questions)
    if (q.status !== "open" && held.of(q.id)?.state === "holding") {
      held.cancel(q.id)
      notices.set(q.id, { text: "Decided elsewhere before your answer was sent, so it was not sent.", kind: "elsewhere" })
    }
  for (const q of questions)
    if (q.status !== "open" && shownOpen.has(q.id) && held.of(q.id) === undefined && hasDraft(q.id)) lostDrafts.set(q.id, q)
  const listed = new Set(questions.map((q) => q.id))
  const open = [
    ...questions.filter((q) => q.status === "open" || lostDrafts.has(q.id)),
    // Kept as last seen when the list no longer carries it (history is paged).
    ...[...lostDrafts.values()].filter((q) => !listed.has(q.id))
  ].sort(byAsked)
  const { shown, held: arriving } = held.openList(questions, open)
  shownOpen = new Set(shown.map((q) => q.id))
  const settled = questions.filter((q) => q.status !== "open" && !shownOpen.has(q.id)).sort(bySettled)
  let complete = true
  /**
   * Put the cards of `qs` in `list` in order, each as soon as it is built, up
   * to the first one this pass could not build, moving only what is out of
   * place (a moved frame reloads); cards left after that point are taken out.
   */
  const drawPrefix = (list: HTMLElement, qs: ReadonlyArray<QuestionView>) => {
    let i = 0
    for (const q of complete ? qs : []) {
      const node = nodeFor(q)
      if (node === undefined) {
        complete = false
        break
      }
      if (list.children[i] !== node) list.insertBefore(node, list.children[i] ?? null)
      i++
      // Placed at once so the page can tell when the first screen is full
      // (looked at only once the budget is spent: it costs a layout); with
      // the questions not shown (another view is), there is no screen to fill.
      if (!screenFilled && performance.now() - passStarted > budgetMs) {
        screenFilled = questionsView.hidden || node.getBoundingClientRect().bottom >= window.innerHeight
        // Once, in the browser's timeline, for whoever profiles the page.
        if (screenFilled) performance.mark("magi:first-screen")
      }
    }
    while (list.children.length > i) list.lastElementChild!.remove()
  }
  // "Nothing is waiting" only once a list has said so; set before the cards
  // are placed, which tell by their place whether the screen is full.
  openEmpty.hidden = !listArrived || shown.length > 0
  if (!openEmpty.hidden) help.shown()
  drawPrefix(openList, shown)
  drawPrefix(historyList, settled)
  allDrawn = complete
  if (complete) {
    for (const id of drawn.keys()) if (!seen.has(id)) drawn.delete(id)
    history.drawn()
  } else if (!continuing) {
    continuing = true
    // The renderer first (in idle time too), then the cards below: they are
    // built with their markdown, instead of as text rendered again when it comes.
    whenIdle(() =>
      void loadMarkdown().then(() =>
        whenIdle((budgetMs) => {
          continuing = false
          draw(budgetMs)
        })
      )
    )
  }
  arrivingNote.hidden = arriving === 0
  arrivingNote.textContent = `${arriving} more after this answer`

  if (focused !== undefined) {
    const box = document.querySelector<HTMLTextAreaElement>(`textarea[data-draft="${CSS.escape(focused)}"]`)
    if (box !== null && document.activeElement !== box) {
      box.focus()
      box.setSelectionRange(box.value.length, box.value.length)
    }
  }

  const count = needsOwner(questions)
  badge.textContent = String(count)
  badge.hidden = count === 0
  document.title = count > 0 ? `(${count}) magi` : "magi"
  banner.hidden = loadError === undefined
  banner.textContent = loadError === undefined ? "" : `Could not load the questions: ${loadError}`
  dense.draw(questions, now, loopRunning)
}

const showingNotices = () => location.hash.startsWith("#/notices")

const noticeItem = (n: WaiterNotice, now: number) =>
  el(
    "article",
    { class: "card notice-item", attrs: { "data-id": n.id, id: `n-${n.id}` } },
    el(
      "header",
      { class: "card-head" },
      el("span", { class: "status abandoned" }, "not delivered"),
      " ",
      time(n.at, now),
      el("span", { class: "short" }, n.question.slice(n.question.lastIndexOf("-") + 1))
    ),
    el("h3", { class: "summary" }, n.summary),
    el("p", { class: "who" }, [n.run, n.seat].filter((s) => s !== "").join(" · ")),
    el("div", { class: "detail text" }, n.reason),
    el("a", { class: "panel-link", attrs: { href: `#/questions/${encodeURIComponent(n.question)}` } }, "Show the question")
  )

const drawNotices = () => {
  const now = Date.now()
  noticeList.replaceChildren(...waiterNotices.map((n) => noticeItem(n, now)))
  noticesEmpty.hidden = waiterNotices.length > 0 || noticesError !== undefined
  noticesBanner.hidden = noticesError === undefined
  noticesBanner.textContent = noticesError === undefined ? "" : `Could not load the notices: ${noticesError}`
  const newest = waiterNotices[0]?.id
  if (showingNotices() && newest !== undefined) markNoticesSeen(newest)
  const seen = seenNotice()
  const unseen = waiterNotices.filter((n) => n.id > seen).length
  noticeBadge.textContent = String(unseen)
  noticeBadge.hidden = unseen === 0
}

/** Show the view the address names: `#/notices`, `#/runs…`, …, else the questions. */
const route = () => {
  const hash = location.hash
  const other = views.find((v) => v.view.matches(hash))
  const notices = other === undefined && showingNotices()
  questionsView.hidden = notices || other !== undefined
  noticesView.hidden = !notices
  const current = other?.link ?? (notices ? noticesLink : questionsLink)
  for (const link of [questionsLink, noticesLink, ...views.map((v) => v.link)]) {
    if (link === current) link.setAttribute("aria-current", "page")
    else link.removeAttribute("aria-current")
  }
  for (const v of views) {
    if (v === other) v.view.show(hash)
    else v.view.hide()
  }
  drawNotices()
}

// -- keeping up with the store ---------------------------------------------------

/**
 * Refetch the open questions and the first page of history; changes arriving
 * mid-fetch cause exactly one more fetch. Older pages already loaded stay.
 */
const refresh = coalesced(() =>
  Api.listQuestions(listTag).then(
    (fetched) => {
      mount()
      if (fetched === "unchanged") {
        // Most change events are another store's (or the first on
        // connecting): the list drawn is the list.
        if (loadError === undefined) return
      } else {
        const { list, tag } = fetched
        listTag = tag
        listArrived = true
        openQuestions = list.open
        history.firstPage(list.history, list.next)
        questions = [...openQuestions, ...history.shown()]
      }
      loadError = undefined
      draw()
    },
    (e: unknown) => {
      mount()
      loadError = message(e)
      draw()
    }
  )
)

const refreshNotices = coalesced(() =>
  Api.listNotices().then(
    (ns) => {
      waiterNotices = ns
      noticesError = undefined
      drawNotices()
      // A card says "not delivered" once a notice names its question.
      draw()
    },
    (e: unknown) => {
      noticesError = message(e)
      drawNotices()
    }
  )
)

const follow = () => {
  if (typeof EventSource === "undefined") {
    connection.textContent = "polling"
    void refreshNotices()
    setInterval(() => {
      void refresh()
      void refreshNotices()
      for (const v of views) v.view.changed({}, loopRunning)
    }, POLL_MS)
    return
  }
  const events = new EventSource("/api/events")
  events.addEventListener("open", () => {
    connection.textContent = "live"
  })
  // Every change, and the first event after a reconnect, means "look again";
  // the notices only when their revision moved (or is not known).
  events.addEventListener("change", (event) => {
    void refresh()
    let revisions: Revisions = {}
    let loop: unknown
    try {
      const data = JSON.parse((event as MessageEvent<string>).data) as { revisions?: Revisions; loop?: unknown }
      revisions = data.revisions ?? {}
      loop = data.loop
    } catch {
      revisions = {}
    }
    // The cards' keys include this: a loop started or stopped redraws them
    // even when the list itself did not change (the refetch is then a 304).
    const running = loop === undefined ? undefined : typeof loop === "number"
    if (running !== loopRunning) {
      loopRunning = running
      draw()
    }
    const notices = revisions["notices"]
    if (typeof notices !== "number" || notices !== noticesRevision) {
      noticesRevision = typeof notices === "number" ? notices : undefined
      void refreshNotices()
    }
    for (const v of views) v.view.changed(revisions, loopRunning)
  })
  events.addEventListener("error", () => {
    connection.textContent = navigator.onLine ? "reconnecting…" : "offline"
  })
  // The phone knows before the stream does: say so at once, in the header.
  window.addEventListener("offline", () => {
    connection.textContent = "offline"
  })
  // A short drop may not have broken the stream: say what it is now.
  window.addEventListener("online", () => {
    connection.textContent = events.readyState === EventSource.OPEN ? "live" : "reconnecting…"
  })
}

/** `#/questions/<id>` (or `#q=<id>`) with the id decoded; none for another route or a hash that does not decode. */
export const questionInHash = (hash: string): string | undefined => {
  const id = /^#(?:\/questions\/|q=)(.+)$/.exec(hash)?.[1]
  if (id === undefined) return undefined
  try {
    return decodeURIComponent(id)
  } catch {
    // A hand-typed or mangled link (`%E0%A4%A`): the page still works, it
    // just has nothing to scroll to.
    return undefined
  }
}

/**
 * `#/questions/<id>` (a notification's or a notice's link) scrolls to that
 * question; one not among those loaded (older history, on a month's shelf)
 * is fetched by its id first.
 */
const focusFromHash = async () => {
  const id = questionInHash(location.hash)
  if (id === undefined) return
  if (document.getElementById(`q-${id}`) === null && !questions.some((q) => q.id === id)) {
    try {
      history.keep(await Api.getQuestion(id))
      questions = [...openQuestions, ...history.shown()]
      draw()
    } catch (e) {
      loadError = `the linked question ${id}: ${message(e)}`
      draw()
      return
    }
  }
  document.getElementById(`q-${id}`)?.scrollIntoView({ block: "start" })
}

// The Undo countdown, in whole seconds, while a decision is held.
setInterval(() => {
  for (const s of document.querySelectorAll<HTMLElement>("[data-deadline]"))
    s.textContent = `${Math.max(1, Math.ceil((Number(s.dataset["deadline"]) - Date.now()) / 1000))} s`
}, 250)

// Relative times ("3 min ago") drift; refresh the words, not the cards.
setInterval(() => {
  const now = Date.now()
  for (const t of document.querySelectorAll<HTMLTimeElement>("time[data-relative]")) t.textContent = relative(t.dateTime, now)
}, 30_000)

route()
// The first screen first: the list (preloaded by the HTML) and the cards it
// needs. Only then what can wait, each a request whose answer would
// otherwise be handled before the first screen: the live stream (its first
// event brings a refetch, so nothing that changed in between is missed, and
// the notices, a card's "not delivered"), and markdown (the text shows as
// written until then; see richText.ts). The cards below the first screen
// wait for markdown, and are built in idle time too.
void refresh().then(() => {
  follow()
  // Its first rendering is most of a frame on a phone's CPU: in idle time,
  // once the first screen is painted and can take a tap.
  whenIdle(() => void loadMarkdown())
  return focusFromHash()
})
/** `#/notices/<id>` (a card's "See the notice") scrolls to that notice. */
const focusNoticeFromHash = () => {
  const id = /^#\/notices\/(.+)$/.exec(location.hash)?.[1]
  if (id !== undefined) document.getElementById(`n-${decoded(id) ?? ""}`)?.scrollIntoView({ block: "start" })
}
window.addEventListener("hashchange", focusNoticeFromHash)
window.addEventListener("hashchange", () => {
  route()
  void focusFromHash()
})
