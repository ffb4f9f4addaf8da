/**
 * The dense view of the open questions: one compact row per question
 * (summary, status, run, age, and who is waiting, in the card's own words),
 * so an owner with twenty questions sees them all on one phone screen and
 * taps the one to answer. The tap opens the full card at `#/questions/<id>`;
 * going back returns to the list where it was scrolled.
 *
 * Which view the owner chose (cards or list) is kept in localStorage, per
 * browser: a phone may want the list while a desktop keeps the cards.
 */
import type { QuestionView } from "./api.js"
import { holderLine, time } from "./card.js"
import { el } from "./dom.js"

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

export const saveLayout = (layout: Layout) => {
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

/** The address that opens one question's card. */
export const questionHref = (id: string) => `#/questions/${encodeURIComponent(id)}`

const row = (q: QuestionView, now: number, loopRunning: boolean | undefined, opening: () => void, grouped: boolean) => {
  const [label, kind] = status(q)
  // Under its run's heading, a row names only the seat.
  const where = [grouped ? "" : q.run, q.seat].filter((s) => s !== "").join(" · ")
  return el(
    "a",
    { class: `row ${kind}`, attrs: { href: questionHref(q.id), "data-id": q.id }, on: { click: opening } },
    el("span", { class: "row-summary" }, q.summary),
    el(
      "span",
      { class: "row-meta" },
      el("span", { class: `status ${kind}` }, label),
      where === "" ? null : el("span", { class: "row-run" }, where),
      time(q.asked_at, now)
    ),
    holderLine(q, loopRunning)
  )
}

/**
 * The list, redrawn from the open questions on every change (rows hold no
 * state: no draft, no frame). `opening` is told before a row's card opens,
 * so the page can come back to where the list was.
 */
export const denseList = (opening: () => void) => {
  const node = el("div", { class: "dense", attrs: { "aria-label": "Open questions, compact" } })
  const draw = (open: ReadonlyArray<QuestionView>, now: number, loopRunning: boolean | undefined) => {
    const rows = (qs: ReadonlyArray<QuestionView>, grouped: boolean) => qs.map((q) => row(q, now, loopRunning, opening, grouped))
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
  return { node, draw }
}
