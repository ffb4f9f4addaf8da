/**
 * magi's phone page: the questions agents are waiting on, live.
 *
 * The page follows `/api/events` and refetches the list on every change, so
 * an answer given at a terminal or a new question shows up without a reload.
 * Cards are redrawn only when their question changed, so a half-typed reply
 * and a loaded panel survive other questions changing around them.
 */
import * as Api from "./api.js"
import type { QuestionView } from "./api.js"
import { card, relative, type Notice } from "./card.js"
import { el } from "./dom.js"

/** Without live events (an old browser, a proxy that buffers), poll this often. */
const POLL_MS = 5000

const drafts = new Map<string, string>()
const notices = new Map<string, Notice>()
/** What each card was drawn from, to redraw only cards that changed. */
const drawn = new Map<string, { key: string; node: HTMLElement }>()
let questions: ReadonlyArray<QuestionView> = []
let loadError: string | undefined

// -- the frame of the page ----------------------------------------------------

const badge = el("span", { class: "badge", attrs: { "aria-label": "questions that need you", hidden: true } })
const connection = el("span", { class: "connection muted", attrs: { role: "status" } }, "connecting…")
const openList = el("div", { class: "list" })
const historyList = el("div", { class: "list" })
const openEmpty = el("p", { class: "empty muted" }, "Nothing is waiting for you.")
const banner = el("p", { class: "notice error", attrs: { hidden: true, role: "alert" } })

document.body.append(
  el(
    "header",
    { class: "top" },
    el("h1", {}, "magi"),
    el("nav", {}, el("a", { attrs: { href: "#/questions" } }, "Questions ", badge)),
    connection
  ),
  el(
    "main",
    {},
    banner,
    el("section", { class: "open-questions", attrs: { "aria-label": "Open questions" } }, el("h2", {}, "Waiting for you"), openEmpty, openList),
    el("section", { class: "history", attrs: { "aria-label": "History" } }, el("h2", {}, "History"), historyList)
  )
)

// -- drawing ------------------------------------------------------------------

/** Open and not waiting on the agent: the number on the badge and in the title. */
const needsOwner = (qs: ReadonlyArray<QuestionView>) =>
  qs.filter((q) => q.status === "open" && !q.waiting_on_agent).length

/** Newest asked first; never by last activity, so cards do not jump around. */
const byAsked = (a: QuestionView, b: QuestionView) => b.asked_at.localeCompare(a.asked_at) || b.id.localeCompare(a.id)

/** Put `nodes` in `list` in order, moving only what is out of place (a moved frame reloads). */
const place = (list: HTMLElement, nodes: ReadonlyArray<HTMLElement>) => {
  nodes.forEach((node, i) => {
    if (list.children[i] !== node) list.insertBefore(node, list.children[i] ?? null)
  })
  while (list.children.length > nodes.length) list.lastElementChild!.remove()
}

const act = (q: QuestionView, send: () => Promise<QuestionView>, done: string) => {
  notices.delete(q.id)
  void send().then(
    (updated) => {
      drafts.delete(`${q.id}:answer`)
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
        notices.set(q.id, { text: e instanceof Error ? e.message : String(e), kind: "error" })
      }
      draw()
    }
  )
}

const draw = () => {
  const now = Date.now()
  const focused = document.activeElement instanceof HTMLTextAreaElement ? document.activeElement.dataset["draft"] : undefined
  const seen = new Set<string>()
  const nodeFor = (q: QuestionView) => {
    seen.add(q.id)
    const notice = notices.get(q.id)
    const key = JSON.stringify([q, notice])
    const old = drawn.get(q.id)
    if (old !== undefined && old.key === key) return old.node
    const node = card(q, { drafts, notice, act, now })
    drawn.set(q.id, { key, node })
    return node
  }
  const open = questions.filter((q) => q.status === "open").sort(byAsked)
  const history = questions.filter((q) => q.status !== "open").sort(byAsked)
  place(openList, open.map(nodeFor))
  place(historyList, history.map(nodeFor))
  for (const id of drawn.keys()) if (!seen.has(id)) drawn.delete(id)
  openEmpty.hidden = open.length > 0

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
}

// -- keeping up with the store ---------------------------------------------------

let inFlight: Promise<void> | undefined
let again = false

/** Refetch the list; changes arriving mid-fetch cause exactly one more fetch. */
const refresh = (): Promise<void> => {
  if (inFlight !== undefined) {
    again = true
    return inFlight
  }
  inFlight = Api.listQuestions()
    .then(
      (qs) => {
        questions = qs
        loadError = undefined
      },
      (e: unknown) => {
        loadError = e instanceof Error ? e.message : String(e)
      }
    )
    .then(() => {
      draw()
      inFlight = undefined
      if (again) {
        again = false
        void refresh()
      }
    })
  return inFlight
}

const follow = () => {
  if (typeof EventSource === "undefined") {
    connection.textContent = "polling"
    setInterval(() => void refresh(), POLL_MS)
    return
  }
  const events = new EventSource("/api/events")
  events.addEventListener("open", () => {
    connection.textContent = "live"
  })
  // Every change, and the first event after a reconnect, means "look again".
  events.addEventListener("change", () => void refresh())
  events.addEventListener("error", () => {
    connection.textContent = "reconnecting…"
  })
}

/** `#/questions/<id>` (a notification's link) scrolls to that question. */
const focusFromHash = () => {
  const id = /^#\/questions\/(.+)$/.exec(location.hash)?.[1]
  if (id === undefined) return
  document.getElementById(`q-${decodeURIComponent(id)}`)?.scrollIntoView({ block: "start" })
}

// Relative times ("3 min ago") drift; refresh the words, not the cards.
setInterval(() => {
  const now = Date.now()
  for (const t of document.querySelectorAll<HTMLTimeElement>("time[data-relative]")) t.textContent = relative(t.dateTime, now)
}, 30_000)

void refresh().then(focusFromHash)
window.addEventListener("hashchange", focusFromHash)
follow()
