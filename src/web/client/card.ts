/**
 * One question as a card: what was asked, by whom and when, the evidence,
 * the conversation, and the controls to decide or ask back.
 */
import * as Api from "./api.js"
import type { QuestionView, WaiterNotice } from "./api.js"
import { el, withCode } from "./dom.js"
import { markdownBlock } from "./richText.js"
import { panelFrame } from "./panelFrame.js"
import { givenText, type Decision, type Given } from "./decisions.js"
import { isConductorQuestion, keptForNextWait, mayBeHeld } from "../../questions/Holding.js"

/**
 * A line shown on a card after the owner acted, until they act again; next
 * to the control it is about (`where`), so a failure is read where the
 * owner's thumb is.
 */
export interface Notice {
  readonly text: string
  readonly kind: "ok" | "error" | "elsewhere"
  readonly where?: "decide" | "ask-back"
}

/** What a card needs from the page around it. */
export interface CardContext {
  /** Text the owner typed and has not sent, kept across re-renders. */
  readonly drafts: Map<string, string>
  readonly notice: Notice | undefined
  /** Send; the page shows the outcome on the card. */
  readonly act: (q: QuestionView, send: () => Promise<Api.QuestionView>, done: string) => void
  /** Decide: held for Undo first (see decisions.ts). */
  readonly decide: (q: QuestionView, given: Given) => void
  readonly undo: (id: string) => void
  /** This card's decision in flight, if any. */
  readonly decision: Decision | undefined
  /** The waiter's latest notice that it could not deliver this question's words, while it still applies. */
  readonly undelivered: WaiterNotice | undefined
  /** Drop a draft kept after the question was decided elsewhere. */
  readonly forgetDraft: (id: string) => void
  readonly now: number
  /**
   * Whether a magi loop owns the home (from the change events): without one,
   * "magi will resume it" would be a promise nothing keeps. Unknown until the
   * first event.
   */
  readonly loopRunning: boolean | undefined
}

/**
 * Who asked, for what: the run's short id and the seat (once: a run's seat
 * is usually its node too), then what the run is for, so cards of the same
 * question from different runs tell apart.
 */
const who = (q: QuestionView) => {
  const run = q.run === "" ? "" : `run ${q.run.slice(q.run.lastIndexOf("-") + 1)}`
  const seats = [...new Set([q.node, q.seat].filter((s) => s !== ""))]
  return [run, ...seats, q.run_title ?? ""].filter((s) => s !== "").join(" · ")
}

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

const pad2 = (n: number) => String(n).padStart(2, "0")

/**
 * The full local date and time in a time's tooltip, `2026-11-30 14:05`,
 * from the Date's own getters: the locale's formatter (`toLocaleString`)
 * loads ICU's data on first use, which held a phone-speed page's first
 * card back by 150–200 ms, for a tooltip a phone never shows.
 */
export const fullTime = (iso: string): string => {
  const d = new Date(iso)
  return `${d.getFullYear()}-${pad2(d.getMonth() + 1)}-${pad2(d.getDate())} ${pad2(d.getHours())}:${pad2(d.getMinutes())}`
}

export const time = (iso: string, now: number) =>
  el(
    "time",
    { attrs: { datetime: iso, title: fullTime(iso), "data-relative": "" } },
    relative(iso, now)
  )

const statusLabel = (q: QuestionView): [string, string] => {
  if (q.status === "answered") return ["answered", "answered"]
  if (q.status === "abandoned") return ["abandoned", "abandoned"]
  return q.waiting_on_agent ? ["waiting on the agent", "waiting"] : ["needs you", "open"]
}

/**
 * Once the waiter has given up carrying the owner's words (a notice names
 * the question), that and only that is said in place of who holds it:
 * "magi will resume it" would be a promise already broken.
 */
const undeliveredLine = (notice: WaiterNotice) =>
  el(
    "p",
    { class: "holder undelivered", attrs: { "data-holder": "undelivered" } },
    el("strong", {}, "Not delivered: "),
    notice.summary,
    " ",
    el("a", { attrs: { href: `#/notices/${encodeURIComponent(notice.id)}` } }, "See the notice")
  )

/**
 * The agent read the owner's ask-back (every word of the thread was shown
 * to it) and still owes the reply: nothing carries those words again.
 */
const owesUnasked = (q: QuestionView): boolean => q.waiting_on_agent && q.delivered_turns >= q.thread.length

/**
 * Who is on the other end, in a few words: whether tapping an answer reaches
 * a live agent now, is being carried by magi, or waits for magi to resume it.
 * Nothing for history, where nobody waits by definition.
 */
export const holderText = (q: QuestionView, loopRunning: boolean | undefined): string | undefined => {
  if (!mayBeHeld(q)) return undefined
  // The conductor moved on from its question: no agent to resume, only a deputy who may be with the owner.
  if (isConductorQuestion(q))
    return q.holder === "deputy"
      ? "A deputy is with you on this: ask it anything here; your answer unblocks the conductor's task."
      : "The conductor moved on; your answer unblocks its task."
  const yours = q.status === "answered" ? "your answer" : "your words"
  // Its host's turns are all taken: the resume waits its turn, and is not lost.
  // (`queued` is absent from an older server's list.)
  if (q.queued !== null && q.queued !== undefined)
    return `${q.queued.charAt(0).toUpperCase()}${q.queued.slice(1)}: magi resumes the agent with ${yours} as soon as one ends.`
  return q.holder === "asker"
    ? "The agent is waiting."
    : q.holder === "daemon"
    ? `magi is delivering ${yours} to the agent.`
    // Asked outside any run: nothing resumes it, and nothing needs to.
    : keptForNextWait(q)
    ? `No agent is waiting; ${yours} ${q.status === "answered" ? "is" : "are"} kept for the agent's next \`magi ask --wait\`.`
    // It owes the owner a reply, yet its turn ended without one on the thread:
    // nothing is on its way, so say so, and what brings the agent back.
    : owesUnasked(q)
    ? "The agent owes you a reply but its turn has ended without one: say more below and magi resumes it with your words, or decide anyway."
    : loopRunning === false
    ? "No agent is waiting, and no magi loop is running to resume it: start `magi serve` (or `magi web` without `--no-loop`)."
    : q.status === "answered"
    ? "No agent is waiting; magi will resume it with your answer."
    : "No agent is waiting; magi will resume it when you answer."
}

const holderLine = (q: QuestionView, loopRunning: boolean | undefined) => {
  const text = holderText(q, loopRunning)
  return text === undefined ? null : el("p", { class: `holder ${q.holder}`, attrs: { "data-holder": q.holder } }, ...withCode(text))
}

const resolution = (q: QuestionView): string | undefined => q.answer === null ? undefined : "choice" in q.answer ? q.answer.choice : q.answer.text

/**
 * The panel in a frame that runs nothing and fits its content up to a cap,
 * then scrolls inside (panelFrame.ts says why it is safe). Framed at its
 * folder (`…/panel/`), so the names in its HTML resolve to its own files. It
 * is checked with a HEAD first, because a frame that fails to load shows
 * nothing and says nothing.
 */
const panel = (q: QuestionView) => {
  const url = Api.panelUrl(q.id)
  const box = el("div", { class: "panel" }, el("p", { class: "muted" }, "Loading the agent's panel…"))
  void Api.panelStatus(q.id).then((status) => {
    if (status === 200 || status === 204) {
      box.replaceChildren(
        panelFrame(url, `Evidence panel for: ${q.summary}`),
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

/**
 * A detail longer than this folds behind "Show more": past about a phone
 * screen of text the choices would be scrolled out of reach. Judged on the
 * source (lines and characters) so the card can be built before layout.
 */
export const FOLD_LINES = 12
export const FOLD_CHARS = 900

/**
 * Whole details fetched when the owner opened a cut one (the list sends only
 * its start: `DetailPreview.ts`), so a redraw keeps what was opened. Keyed
 * by what can change a detail (a withdrawal appends to it), so a stale one
 * is fetched again.
 */
const wholeDetails = new Map<string, string>()
const wholeKey = (q: QuestionView) => `${q.id}|${q.status}|${q.thread.length}|${q.answered_at ?? ""}`

const detail = (q: QuestionView) => {
  const whole = q.detail_cut ? wholeDetails.get(wholeKey(q)) : undefined
  const cut = q.detail_cut && whole === undefined
  const text = (whole ?? q.detail).trimEnd()
  if (text.trim() === "") return null
  let body = markdownBlock("detail md", text)
  if (!cut && text.split("\n").length <= FOLD_LINES && text.length <= FOLD_CHARS) return body
  body.classList.add("folded")
  const toggle = el("button", { class: "show-more", attrs: { type: "button", "aria-expanded": "false" } }, "Show more")
  const unfold = (folded: boolean) => {
    body.classList.toggle("folded", folded)
    toggle.textContent = folded ? "Show more" : "Show less"
    toggle.setAttribute("aria-expanded", String(!folded))
  }
  toggle.addEventListener("click", () => {
    const folded = !body.classList.contains("folded")
    if (folded || !q.detail_cut || wholeDetails.has(wholeKey(q))) return unfold(folded)
    // Opening a cut detail: the whole of it, from the question's own route.
    toggle.disabled = true
    toggle.textContent = "Loading the rest…"
    Api.getQuestion(q.id).then(
      (full) => {
        wholeDetails.set(wholeKey(q), full.detail)
        const next = markdownBlock("detail md", full.detail.trimEnd())
        body.replaceWith(next)
        body = next
        toggle.disabled = false
        unfold(false)
      },
      (e: unknown) => {
        toggle.disabled = false
        toggle.textContent = `Show more (the rest could not be loaded: ${e instanceof Error ? e.message : String(e)}; tap to try again)`
      }
    )
  })
  return el("div", { class: "detail-box" }, body, toggle)
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
          // The agent writes markdown; the owner's own words are shown as typed.
          turn.who === "agent" ? markdownBlock("md", turn.body) : el("div", { class: "text" }, turn.body)
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

const noticeAt = (ctx: CardContext, where: "decide" | "ask-back") =>
  ctx.notice === undefined || ctx.notice.where !== where
    ? null
    : el("p", { class: `notice ${ctx.notice.kind}`, attrs: { role: "status" } }, ctx.notice.text)

/** The choices, or the answer box: what deciding is. */
const decideControls = (q: QuestionView, ctx: CardContext): HTMLElement => {
  if (q.choices.length > 0)
    return el(
      "div",
      { class: "choices", attrs: { role: "group", "aria-label": "Choices" } },
      ...q.choices.map((choice) => el("button", { class: "choice", attrs: { type: "button" }, on: { click: () => ctx.decide(q, { choice }) } }, choice))
    )
  const box = draftBox(ctx, `${q.id}:answer`, "Your answer", false)
  return el(
    "form",
    {
      class: "reply",
      on: {
        submit: (event) => {
          event.preventDefault()
          if (box.value.trim() === "") return void box.focus()
          ctx.decide(q, { text: box.value })
        }
      }
    },
    box,
    el("button", { class: "primary", attrs: { type: "submit" } }, "Send answer")
  )
}

/** A decision held for Undo, being sent, or sent: in place of the controls. */
const deciding = (d: Decision, q: QuestionView, ctx: CardContext) => {
  // A typed answer may be long: shown clamped to a few lines on its own.
  const what = "text" in d.given ? el("span", { class: "typed text" }, givenText(d.given)) : givenText(d.given)
  if (d.state === "holding") {
    const secs = Math.max(1, Math.ceil((d.deadline - ctx.now) / 1000))
    return el(
      "div",
      { class: "deciding", attrs: { role: "status" } },
      el("p", {}, "Sending ", el("strong", {}, what), " in ", el("span", { attrs: { "data-deadline": String(d.deadline) } }, `${secs} s`), "…"),
      el("button", { class: "undo primary", attrs: { type: "button" }, on: { click: () => ctx.undo(q.id) } }, "Undo")
    )
  }
  return el(
    "div",
    { class: "deciding", attrs: { role: "status" } },
    el("p", {}, d.state === "sending" ? "Sending " : "Answered: ", el("strong", {}, what), d.state === "sending" ? "…" : "")
  )
}

const answerControls = (q: QuestionView, ctx: CardContext) => {
  const parts: Array<Node | null> = []
  if (ctx.decision !== undefined) parts.push(deciding(ctx.decision, q, ctx))
  else if (q.waiting_on_agent) {
    parts.push(
      el(
        "p",
        { class: "notice waiting" },
        q.holder === "nobody" && !keptForNextWait(q) && owesUnasked(q)
          ? "You asked back, and the agent's turn ended without a reply."
          : "You asked back: the agent owes you a reply before you decide. Its reply will appear here."
      ),
      // `magi answer` lets the owner decide anyway; so does the page, folded
      // so that waiting for the reply stays the obvious course.
      el("details", { class: "decide-anyway" }, el("summary", {}, "Decide anyway, without waiting"), decideControls(q, ctx))
    )
  } else parts.push(decideControls(q, ctx))
  parts.push(noticeAt(ctx, "decide"))
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
          if (box.value.trim() === "") return void box.focus()
          ctx.act(q, () => Api.say(q.id, box.value), "Sent to the agent; the question stays open")
        }
      }
    },
    el("label", { class: "muted" }, "Not ready to decide?"),
    box,
    el("button", { attrs: { type: "submit" } }, "Ask back"),
    noticeAt(ctx, "ask-back")
  )
}

/**
 * Withdraw, folded below everything else: for a question nobody will
 * answer (asked outside a run, no longer needed). The asker is told it is
 * abandoned, in the owner's words when they give some.
 */
const withdrawControls = (q: QuestionView, ctx: CardContext) => {
  const reason = el("input", {
    attrs: { type: "text", "aria-label": "Why withdraw it (optional; the agent reads it)", placeholder: "Why (optional; the agent reads it)" }
  })
  return el(
    "details",
    { class: "withdraw" },
    el("summary", {}, "Withdraw this question"),
    el(
      "form",
      {
        on: {
          submit: (event) => {
            event.preventDefault()
            ctx.act(q, () => Api.withdraw(q.id, reason.value), "Withdrawn: the agent is told no answer will come")
          }
        }
      },
      reason,
      el("button", { class: "danger", attrs: { type: "submit" } }, "Withdraw")
    )
  )
}

/**
 * What the owner had typed on a question that was then decided elsewhere:
 * kept and shown, never silently dropped, until they discard it.
 */
const lostDrafts = (q: QuestionView, ctx: CardContext) => {
  const texts = [ctx.drafts.get(`${q.id}:answer`), ctx.drafts.get(`${q.id}:say`)].filter(
    (t): t is string => t !== undefined && t.trim() !== ""
  )
  if (texts.length === 0) return null
  return el(
    "section",
    { class: "lost-draft", attrs: { role: "alert" } },
    el("p", {}, el("strong", {}, "Not sent: "), "this question was decided elsewhere while you were typing. Your draft is kept here:"),
    ...texts.map((t) => el("pre", { class: "text" }, t)),
    el("button", { attrs: { type: "button" }, on: { click: () => ctx.forgetDraft(q.id) } }, "Discard the draft")
  )
}

export const card = (q: QuestionView, ctx: CardContext): HTMLElement => {
  const [label, kind] = statusLabel(q)
  const answer = resolution(q)
  const open = q.status === "open"
  const general = ctx.notice !== undefined && ctx.notice.where === undefined
  return el(
    "article",
    { class: `card ${kind}${ctx.decision === undefined ? "" : " deciding-card"}`, attrs: { "data-id": q.id, id: `q-${q.id}` } },
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
    ctx.undelivered === undefined ? holderLine(q, ctx.loopRunning) : undeliveredLine(ctx.undelivered),
    general ? el("p", { class: `notice ${ctx.notice!.kind}`, attrs: { role: "status" } }, ctx.notice!.text) : null,
    open ? null : lostDrafts(q, ctx),
    detail(q),
    q.panel ? panel(q) : null,
    thread(q, ctx.now),
    open || ctx.decision !== undefined ? answerControls(q, ctx) : null,
    open && ctx.decision === undefined ? askBack(q, ctx) : null,
    open && ctx.decision === undefined ? withdrawControls(q, ctx) : null,
    answer === undefined || ctx.decision !== undefined
      ? null
      : el(
        "p",
        { class: "resolution" },
        el("strong", {}, "Answer: "),
        el("span", { class: "text" }, answer),
        q.answered_at === null ? null : el("span", { class: "muted" }, " · ", time(q.answered_at, ctx.now)),
        // A notification's button answered it: said so, as the terminal does.
        q.answered_via === "link" ? el("span", { class: "muted via" }, " · by a notification button") : null
      )
  )
}
