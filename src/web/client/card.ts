/**
 * One question as a card: what was asked, by whom and when, the evidence,
 * the conversation, and the controls to decide or ask back.
 */
import * as Api from "./api.js"
import type { QuestionView } from "./api.js"
import { el } from "./dom.js"
import { mayBeHeld } from "../Holding.js"

/** A line shown on a card after the owner acted, until they act again. */
export interface Notice {
  readonly text: string
  readonly kind: "ok" | "error" | "elsewhere"
}

/** What a card needs from the page around it. */
export interface CardContext {
  /** Text the owner typed and has not sent, kept across re-renders. */
  readonly drafts: Map<string, string>
  readonly notice: Notice | undefined
  /** Send; the page shows the outcome on the card. */
  readonly act: (q: QuestionView, send: () => Promise<Api.QuestionView>, done: string) => void
  readonly now: number
  /**
   * Whether a magi loop owns the home (from the change events): without one,
   * "magi will resume it" would be a promise nothing keeps. Unknown until the
   * first event.
   */
  readonly loopRunning: boolean | undefined
}

const who = (q: QuestionView) => [q.run, q.node, q.seat].filter((s) => s !== "").join(" · ")

/** "3 min ago": phones show little, and the exact time is in the tooltip. */
export const relative = (iso: string, now: number): string => {
  const secs = Math.max(0, Math.round((now - Date.parse(iso)) / 1000))
  if (secs < 45) return "just now"
  const mins = Math.round(secs / 60)
  if (mins < 60) return `${mins} min ago`
  const hours = Math.round(mins / 60)
  if (hours < 36) return `${hours} h ago`
  return `${Math.round(hours / 24)} d ago`
}

export const time = (iso: string, now: number) =>
  el(
    "time",
    { attrs: { datetime: iso, title: new Date(iso).toLocaleString(), "data-relative": "" } },
    relative(iso, now)
  )

const statusLabel = (q: QuestionView): [string, string] => {
  if (q.status === "answered") return ["answered", "answered"]
  if (q.status === "abandoned") return ["abandoned", "abandoned"]
  return q.waiting_on_agent ? ["waiting on the agent", "waiting"] : ["needs you", "open"]
}

/**
 * Who is on the other end, in a few words: whether tapping an answer reaches
 * a live agent now, is being carried by magi, or waits for magi to resume it.
 * Nothing for history, where nobody waits by definition.
 */
const holderLine = (q: QuestionView, loopRunning: boolean | undefined) => {
  if (!mayBeHeld(q)) return null
  const yours = q.status === "answered" ? "your answer" : "your words"
  const text =
    q.holder === "asker"
      ? "The agent is waiting."
      : q.holder === "daemon"
        ? `magi is delivering ${yours} to the agent.`
        : loopRunning === false
          ? "No agent is waiting, and no magi loop is running to resume it: start `magi serve` (or magi web without --no-loop)."
          : q.status === "answered"
            ? "No agent is waiting; magi will resume it with your answer."
            : "No agent is waiting; magi will resume it when you answer."
  return el("p", { class: `holder ${q.holder}`, attrs: { "data-holder": q.holder } }, text)
}

const resolution = (q: QuestionView): string | undefined =>
  q.answer === null ? undefined : "choice" in q.answer ? q.answer.choice : q.answer.text

/**
 * The panel in a frame with no permissions at all (`sandbox=""`): no script,
 * no forms, no same-origin access to this page. It is checked with a HEAD
 * first, because a frame that fails to load shows nothing and says nothing.
 */
const panel = (q: QuestionView) => {
  const url = Api.panelUrl(q.id)
  const box = el("div", { class: "panel" }, el("p", { class: "muted" }, "Loading the agent's panel…"))
  void Api.panelStatus(q.id).then((status) => {
    if (status === 200 || status === 204) {
      box.replaceChildren(
        el("iframe", {
          attrs: {
            sandbox: "",
            src: url,
            title: `Evidence panel for: ${q.summary}`,
            referrerpolicy: "no-referrer",
            loading: "lazy"
          }
        }),
        el("a", { class: "panel-link", attrs: { href: url, target: "_blank", rel: "noopener noreferrer" } }, "Open the panel full size")
      )
    } else {
      box.replaceChildren(
        el(
          "p",
          { class: "notice error" },
          `The agent's panel could not be loaded (${status === 0 ? "network error" : `HTTP ${status}`}). The question and its choices below still work.`
        )
      )
    }
  })
  return box
}

const thread = (q: QuestionView, now: number) =>
  q.thread.length === 0
    ? null
    : el(
        "ol",
        { class: "thread", attrs: { "aria-label": "Conversation" } },
        ...q.thread.map((turn) =>
          el(
            "li",
            { class: `turn ${turn.who}` },
            el("div", { class: "turn-head" }, el("strong", {}, turn.who === "operator" ? "You" : "Agent"), " ", time(turn.at, now)),
            el("div", { class: "text" }, turn.body)
          )
        )
      )

/** A text box whose contents survive the card being redrawn. */
const draftBox = (ctx: CardContext, key: string, label: string, disabled: boolean) => {
  const box = el("textarea", {
    attrs: { rows: "3", "aria-label": label, placeholder: label, "data-draft": key, disabled }
  })
  box.value = ctx.drafts.get(key) ?? ""
  box.addEventListener("input", () => ctx.drafts.set(key, box.value))
  return box
}

const answerControls = (q: QuestionView, ctx: CardContext) => {
  const locked = q.waiting_on_agent
  const parts: Array<Node> = []
  if (locked)
    parts.push(
      el(
        "p",
        { class: "notice waiting" },
        "You asked back: the agent owes you a reply before you decide. Its reply will appear here."
      )
    )
  if (q.choices.length > 0) {
    parts.push(
      el(
        "div",
        { class: "choices", attrs: { role: "group", "aria-label": "Choices" } },
        ...q.choices.map((choice) =>
          el(
            "button",
            {
              class: "choice",
              attrs: { type: "button", disabled: locked },
              on: { click: () => ctx.act(q, () => Api.answer(q.id, { choice }), `Answered: ${choice}`) }
            },
            choice
          )
        )
      )
    )
  } else {
    const key = `${q.id}:answer`
    const box = draftBox(ctx, key, "Your answer", locked)
    parts.push(
      el(
        "form",
        {
          class: "reply",
          on: {
            submit: (event) => {
              event.preventDefault()
              ctx.act(q, () => Api.answer(q.id, { text: box.value }), "Answer sent")
            }
          }
        },
        box,
        el("button", { class: "primary", attrs: { type: "submit", disabled: locked } }, "Send answer")
      )
    )
  }
  return el("section", { class: "decide", attrs: { "aria-label": "Answer" } }, ...parts)
}

const askBack = (q: QuestionView, ctx: CardContext) => {
  const key = `${q.id}:say`
  const box = draftBox(ctx, key, "Ask back: a question for the agent (this stays open)", false)
  return el(
    "form",
    {
      class: "ask-back",
      on: {
        submit: (event) => {
          event.preventDefault()
          ctx.act(q, () => Api.say(q.id, box.value), "Sent to the agent; the question stays open")
        }
      }
    },
    el("label", { class: "muted" }, "Not ready to decide?"),
    box,
    el("button", { attrs: { type: "submit" } }, "Ask back")
  )
}

export const card = (q: QuestionView, ctx: CardContext): HTMLElement => {
  const [label, kind] = statusLabel(q)
  const answer = resolution(q)
  return el(
    "article",
    { class: `card ${kind}`, attrs: { "data-id": q.id, id: `q-${q.id}` } },
    el(
      "header",
      { class: "card-head" },
      el("span", { class: `status ${kind}` }, label),
      " ",
      time(q.asked_at, ctx.now),
      el("span", { class: "short" }, q.id.slice(q.id.lastIndexOf("-") + 1))
    ),
    el("h3", { class: "summary" }, q.summary),
    who(q) === "" ? null : el("p", { class: "who" }, who(q)),
    holderLine(q, ctx.loopRunning),
    ctx.notice === undefined ? null : el("p", { class: `notice ${ctx.notice.kind}`, attrs: { role: "status" } }, ctx.notice.text),
    q.detail.trim() === "" ? null : el("div", { class: "detail text" }, q.detail.trimEnd()),
    q.panel ? panel(q) : null,
    thread(q, ctx.now),
    q.status === "open" ? answerControls(q, ctx) : null,
    q.status === "open" ? askBack(q, ctx) : null,
    answer === undefined
      ? null
      : el(
          "p",
          { class: "resolution" },
          el("strong", {}, "Answer: "),
          el("span", { class: "text" }, answer),
          q.answered_at === null ? null : el("span", { class: "muted" }, " · ", time(q.answered_at, ctx.now))
        )
  )
}
