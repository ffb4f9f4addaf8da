/**
 * The dense view of the open questions: one compact row per question
 * (summary, status, run, age, and who is waiting), so an owner with twenty
 * questions sees them all on one phone screen and taps the one to answer.
 * The tap goes to `#/questions/<id>`, where that question's card is shown
 * alone; back returns to the list where it was scrolled.
 *
 * The rows mirror the open cards exactly (same questions, same order: the
 * page's cards stay the one source of what is open, held or kept), and the
 * card shown alone is the page's own card node, drafts and all: this module
 * only hides the others around it.
 *
 * Which view the owner chose (cards or list) is kept in localStorage, per
 * browser: a phone may want the list while a desktop keeps the cards.
 */
import type { QuestionView } from "./api.js"
import { holderText, time } from "./card.js"
import { el, withCode } from "./dom.js"

export type Layout = "cards" | "list"

const LAYOUT_KEY = "magi.questions.layout"

/** The owner's choice, or cards (the view every question could be answered from before). */
export const savedLayout = (): Layout => {
  try {
    return localStorage.getItem(LAYOUT_KEY) === "list" ? "list" : "cards"
  } catch {
    return "cards" // storage refused (private mode): the default every visit
  }
}

const saveLayout = (layout: Layout) => {
  try {
    localStorage.setItem(LAYOUT_KEY, layout)
  } catch {
    // Nothing to keep it in: the choice lasts until the page is closed.
  }
}

/**
 * Beyond this many open questions the list is grouped by run: about what a
 * 390×844 phone shows at once (rows are ~80 px), so grouping starts exactly
 * when the list stops fitting on one screen and the owner has to look for
 * the run they care about.
 */
export const GROUP_BY_RUN_OVER = 8

/** What a question without a run (asked from a plain shell) is grouped under. */
export const NO_RUN = "Not in a run"

export interface Group {
  readonly run: string
  readonly questions: ReadonlyArray<QuestionView>
}

/**
 * The questions by run, in the order given (newest first): groups ordered by
 * their newest question, so the run that asked last is on top, and a group
 * never reorders what is inside it.
 */
export const byRun = (questions: ReadonlyArray<QuestionView>): ReadonlyArray<Group> => {
  const groups = new Map<string, Array<QuestionView>>()
  for (const q of questions) {
    const run = q.run === "" ? NO_RUN : q.run
    const group = groups.get(run)
    if (group === undefined) groups.set(run, [q])
    else group.push(q)
  }
  return [...groups].map(([run, qs]) => ({ run, questions: qs }))
}

const status = (q: QuestionView): [string, string] =>
  q.status !== "open" ? [q.status, q.status] : q.waiting_on_agent ? ["waiting on the agent", "waiting"] : ["needs you", "open"]

const row = (q: QuestionView, now: number, loopRunning: boolean | undefined, grouped: boolean, opening: () => void) => {
  const [label, kind] = status(q)
  // Under its run's heading, a row names only the seat.
  const where = [grouped ? "" : q.run, q.seat].filter((s) => s !== "").join(" · ")
  // The card's own words, so a row and its card never disagree.
  const holder = holderText(q, loopRunning)
  return el(
    "a",
    { class: `row ${kind}`, attrs: { href: `#/questions/${encodeURIComponent(q.id)}`, "data-id": q.id }, on: { click: opening } },
    el("span", { class: "row-summary" }, q.summary),
    el(
      "span",
      { class: "row-meta" },
      el("span", { class: `status ${kind}` }, label),
      where === "" ? null : el("span", { class: "row-run" }, where),
      time(q.asked_at, now)
    ),
    holder === undefined ? null : el("span", { class: `holder ${q.holder}`, attrs: { "data-holder": q.holder } }, ...withCode(holder))
  )
}

/** What the dense view needs of the page. */
export interface DensePage {
  /** The questions view, whose open list this lays out. */
  readonly view: HTMLElement
  /** Where the open cards are drawn (the switch and the list go beside it). */
  readonly openList: HTMLElement
  /**
   * The ids of the open questions, in the order the page shows their cards:
   * all of them, including cards not built yet (the page builds them a
   * frame's budget at a time), so a row never appears under another's finger.
   */
  readonly openIds: () => Iterable<string>
  /** The question a `#…` address names, as the page reads its links. */
  readonly questionInHash: (hash: string) => string | undefined
}

/**
 * Add the layout switch and the compact list to the questions view. Call
 * `draw` after every redraw of the cards, with every question the page has.
 */
export const denseLayout = (page: DensePage) => {
  let layout = savedLayout()
  let questions: ReadonlyArray<QuestionView> = []
  let now = Date.now()
  let loopRunning: boolean | undefined
  /** Where the list was scrolled when a row opened its card, to come back to. */
  let listScroll: number | undefined
  /** The card shown alone was reached from the list, so "back" is the browser's back. */
  let fromList = false

  const node = el("div", { class: "dense", attrs: { "aria-label": "Open questions, compact" } })
  const opening = () => {
    listScroll = window.scrollY
    fromList = true
  }
  const choice = (value: Layout, label: string) =>
    el(
      "button",
      {
        class: "layout-choice",
        attrs: { type: "button", "data-layout": value, "aria-pressed": String(layout === value) },
        on: {
          click: () => {
            layout = value
            saveLayout(value)
            for (const b of toggle.children) b.setAttribute("aria-pressed", String(b.getAttribute("data-layout") === value))
            render()
          }
        }
      },
      label
    )
  const toggle = el("div", { class: "layout-switch", attrs: { role: "group", "aria-label": "Show questions as" } })
  toggle.append(choice("cards", "Cards"), choice("list", "List"))
  const back = el(
    "a",
    {
      class: "back",
      attrs: { href: "#/questions" },
      on: {
        click: (event) => {
          // Back to where the list was, without leaving the card in the history.
          if (fromList) {
            event.preventDefault()
            history.back()
          }
        }
      }
    },
    "← All questions"
  )
  const bar = el("div", { class: "focus-bar" }, back)

  // Beside the open cards: the switch above them, the list after them, and
  // the way back at the top of the view for a card shown alone.
  const heading = page.openList.parentElement?.querySelector("h2")
  heading?.before(toggle)
  page.openList.after(node)
  page.view.prepend(bar)

  /** Show the card the address names alone, in either layout (a notification's link is about that one); else the layout chosen. */
  const focus = () => {
    const id = page.questionInHash(location.hash)
    const card = id === undefined ? null : document.getElementById(`q-${id}`)
    page.view.classList.toggle("focused", card !== null)
    for (const other of page.view.querySelectorAll(".in-focus")) if (other !== card) other.classList.remove("in-focus")
    card?.classList.add("in-focus")
    return card !== null
  }

  const render = () => {
    page.view.dataset["layout"] = layout
    focus()
    if (layout !== "list") {
      node.replaceChildren()
      return
    }
    const byId = new Map(questions.map((q) => [q.id, q]))
    const open = [...page.openIds()].map((id) => byId.get(id)).filter((q): q is QuestionView => q !== undefined)
    const rows = (qs: ReadonlyArray<QuestionView>, grouped: boolean) => qs.map((q) => row(q, now, loopRunning, grouped, opening))
    if (open.length <= GROUP_BY_RUN_OVER) {
      node.replaceChildren(...rows(open, false))
      return
    }
    node.replaceChildren(
      ...byRun(open).map((g) =>
        el(
          "section",
          { class: "run-group", attrs: { "aria-label": g.run, "data-run": g.run } },
          el("h3", { class: "group-head" }, el("span", { class: "group-run" }, g.run), el("span", { class: "muted" }, `${g.questions.length} open`)),
          ...rows(g.questions, true)
        )
      )
    )
  }

  // Registered before the page's own handler: the view is laid out before
  // the page scrolls to what the address names.
  window.addEventListener("hashchange", () => {
    if (focus()) {
      window.scrollTo(0, 0)
      return
    }
    if (listScroll !== undefined && page.questionInHash(location.hash) === undefined) {
      const y = listScroll
      // After the page's own handler has drawn the list again.
      requestAnimationFrame(() => window.scrollTo(0, y))
    }
    listScroll = undefined
    fromList = false
  })

  return {
    draw: (all: ReadonlyArray<QuestionView>, at: number, loop: boolean | undefined) => {
      questions = all
      now = at
      loopRunning = loop
      render()
    }
  }
}
