/**
 * The Plan views: `#/chats`, start a planning interview from the phone and
 * see the conversations; `#/chats/<id>`, one interview — the conversation as
 * bubbles (the agent's as markdown, built safely), "the agent is thinking…"
 * while a turn runs, a failed turn's note with a retry, the current draft
 * with its review, and "File as task" once it passes, then a link to the
 * task on the Queue page.
 *
 * Live like the other views: a change event whose chats revision moved
 * refetches what is on screen. The reply box and the idea box are built once
 * and never redrawn, so a half-typed message survives every update.
 */
import * as Api from "./api.js"
import { ApiError } from "./api.js"
import type { ChatView } from "../ChatsApi.js"
import { time } from "./card.js"
import { el, withCode } from "./dom.js"
import { withoutDraft } from "../../chat/TaskBlock.js"
import { loadMarkdown, markdownBlock } from "./richText.js"
import { coalesced, message, type Revisions, type View } from "./view.js"

/** Prefix of an agent-side turn magi wrote itself (`MAGI_NOTE`). */
const MAGI_NOTE = "magi: "

const short = (id: string) => id.slice(id.lastIndexOf("-") + 1)
/** The title the queue gives a filed draft: its first line without its markdown markers. */
const draftTitle = (draft: string) => draft.split("\n").find((l) => l.trim() !== "")?.replace(/^[\s#\-*>]+/, "").trim() ?? ""
const titleOf = (c: ChatView) => c.turns[0]?.body.split("\n").find((l) => l.trim() !== "")?.trim() ?? "(no idea)"

/** A refusal with the review's problems when the server gave them. */
class Refused extends ApiError {
  constructor(
    status: number,
    message: string,
    readonly problems: ReadonlyArray<{ readonly message: string; readonly soft: boolean }>
  ) {
    super(status, message)
  }
}

const call = async <A>(url: string, body?: unknown): Promise<A> => {
  const response = await fetch(
    url,
    body === undefined
      ? { cache: "no-store" }
      : { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }
  )
  const text = await response.text()
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    parsed = undefined
  }
  if (!response.ok) {
    const b = (parsed ?? {}) as { error?: unknown; problems?: unknown }
    throw new Refused(
      response.status,
      typeof b.error === "string" ? b.error : `${response.status} ${response.statusText}`,
      Array.isArray(b.problems) ? (b.problems as Refused["problems"]) : []
    )
  }
  return parsed as A
}

const chatUrl = (id: string, rest = "") => `/api/chats/${encodeURIComponent(id)}${rest}`

/** Whether `hash` (`#/…`) is an address of this view. */
export const isChatsAddress = (hash: string): boolean => /^#\/chats?(\/|$)/.test(hash)

export const chatsView = (): View => {
  let visible = false
  let current: string | undefined
  let chats: ReadonlyArray<ChatView> = []
  let chat: ChatView | undefined
  let loadError: string | undefined
  let lastRevision: number | undefined

  // -- the list: start a plan, and the conversations so far ---------------------
  const idea = el("textarea", {
    class: "idea",
    attrs: { rows: "4", placeholder: "What do you want done? A line is enough: the agent will ask.", "aria-label": "Your idea" }
  })
  const repo = el("input", {
    class: "repo",
    attrs: { type: "text", placeholder: "Repository folder", "aria-label": "Repository", autocapitalize: "off" }
  })
  /** The default repository, or how to name one while there is none. */
  const repoDefault = el("p", { class: "muted repo-hint" })
  let reposLoaded = false
  const loadRepos = () =>
    Api.listRepos().then(
      ({ current, hint }) => {
        reposLoaded = true
        if (current !== null) repoDefault.replaceChildren("Default: ", el("code", {}, current))
        else repoDefault.replaceChildren(...withCode(hint === undefined ? "" : hint.charAt(0).toUpperCase() + hint.slice(1)))
      },
      () => undefined
    )
  const start = el("button", { class: "primary", attrs: { type: "submit" } }, "Start planning")
  const startNotice = el("p", { class: "notice error", attrs: { hidden: true, role: "alert" } })
  const form = el(
    "form",
    {
      class: "new-chat",
      on: {
        submit: (e) => {
          e.preventDefault()
          startNotice.hidden = true
          start.disabled = true
          const body: { idea: string; repo?: string } = { idea: idea.value }
          if (repo.value.trim() !== "") body.repo = repo.value.trim()
          call<ChatView>("/api/chats", body).then(
            (created) => {
              idea.value = ""
              start.disabled = false
              location.hash = `#/chats/${encodeURIComponent(created.id)}`
            },
            (err: unknown) => {
              start.disabled = false
              startNotice.replaceChildren(...withCode(message(err)))
              startNotice.hidden = false
            }
          )
        }
      }
    },
    idea,
    repo,
    repoDefault,
    el("div", { class: "buttons" }, start),
    startNotice
  )
  const list = el("div", { class: "list chat-list" })
  const listEmpty = el("p", { class: "empty muted" }, "No plans yet.")
  const listBanner = el("p", { class: "notice error", attrs: { hidden: true, role: "alert" } })
  const listPart = el(
    "div",
    { class: "chat-index" },
    el("h2", {}, "Plan a task"),
    el("p", { class: "muted intro" }, "An agent that has read the repository interviews you, then writes a task file that passes review."),
    form,
    el("h2", {}, "Conversations"),
    listBanner,
    listEmpty,
    list
  )

  // -- one conversation -----------------------------------------------------------
  const head = el("header", { class: "chat-head" })
  const conversation = el("div", { class: "conversation", attrs: { "aria-live": "polite" } })
  const thinking = el("p", { class: "thinking muted", attrs: { hidden: true, role: "status" } }, "the agent is thinking…")
  const retry = el("button", { attrs: { type: "button" } }, "Retry")
  const stalled = el(
    "p",
    { class: "stalled", attrs: { hidden: true } },
    "Your last message has not been answered. ",
    retry
  )
  const draftPart = el("section", { class: "draft", attrs: { hidden: true, "aria-label": "Draft task" } })
  const priority = el("input", { attrs: { type: "number", step: "1", value: "0", "aria-label": "Priority", class: "priority" } })
  const fileButton = el("button", { class: "primary file", attrs: { type: "button" } }, "File as task")
  const fileControls = el("div", { class: "file-controls", attrs: { hidden: true } }, el("label", {}, "Priority ", priority), fileButton)
  const filed = el("p", { class: "filed", attrs: { hidden: true } })
  const reply = el("textarea", { class: "reply", attrs: { rows: "3", placeholder: "Answer the agent…", "aria-label": "Your message" } })
  const send = el("button", { class: "primary", attrs: { type: "submit" } }, "Send")
  const abandon = el("button", { class: "quiet", attrs: { type: "button" } }, "Abandon")
  const chatNotice = el("p", { class: "notice error", attrs: { hidden: true, role: "alert" } })
  const replyForm = el(
    "form",
    {
      class: "say",
      on: {
        submit: (e) => {
          e.preventDefault()
          if (chat === undefined) return
          act(call<ChatView>(chatUrl(chat.id, "/say"), { body: reply.value }), () => {
            reply.value = ""
          })
        }
      }
    },
    reply,
    el("div", { class: "buttons" }, send, abandon)
  )
  const chatPart = el(
    "div",
    { class: "chat-detail", attrs: { hidden: true } },
    el("a", { class: "back", attrs: { href: "#/chats" } }, "← All plans"),
    head,
    conversation,
    thinking,
    stalled,
    chatNotice,
    draftPart,
    fileControls,
    filed,
    replyForm
  )

  const node = el("section", { class: "view chats-view", attrs: { "aria-label": "Plan", hidden: true } }, listPart, chatPart)

  /** Send, then show the chat as the server returned it (or why not). */
  const act = (sent: Promise<ChatView>, done: () => void = () => {}) => {
    chatNotice.hidden = true
    sent.then(
      (updated) => {
        done()
        chat = updated
        draw()
      },
      (err: unknown) => {
        chatNotice.textContent = message(err)
        chatNotice.hidden = false
        void load()
      }
    )
  }
  retry.addEventListener("click", () => {
    if (chat !== undefined) act(call<ChatView>(chatUrl(chat.id, "/retry"), {}))
  })
  abandon.addEventListener("click", () => {
    if (chat !== undefined && confirm("Abandon this plan? Nothing is filed.")) act(call<ChatView>(chatUrl(chat.id, "/abandon"), {}))
  })
  fileButton.addEventListener("click", () => {
    if (chat === undefined) return
    chatNotice.hidden = true
    fileButton.disabled = true
    call<{ chat: ChatView; task: { id: string; title: string } }>(chatUrl(chat.id, "/file"), { priority: Number(priority.value || "0") }).then(
      (r) => {
        fileButton.disabled = false
        chat = r.chat
        draw()
      },
      (err: unknown) => {
        fileButton.disabled = false
        // The review's problems are on the page already, under the draft.
        chatNotice.textContent = message(err)
        chatNotice.hidden = false
        void load()
      }
    )
  })

  const bubble = (t: ChatView["turns"][number], now: number) => {
    const note = t.who === "agent" && t.body.startsWith(MAGI_NOTE)
    const kind = note ? "note" : t.who
    // The task file is shown once, as the draft below the conversation.
    const said = chat === undefined ? t.body : withoutDraft(t.body, chat.draft, "_(The task file: shown below, under Draft task.)_")
    const body = t.who === "agent" && !note ? markdownBlock("md", said) : el("div", { class: "text" }, t.body)
    return el("article", { class: `bubble ${kind}` }, body, el("footer", { class: "muted" }, note ? "magi · " : "", time(t.at, now)))
  }

  const drawList = () => {
    const now = Date.now()
    list.replaceChildren(
      ...chats.map((c) =>
        el(
          "a",
          { class: `card chat-item ${c.status}`, attrs: { href: `#/chats/${encodeURIComponent(c.id)}`, "data-id": c.id } },
          el(
            "header",
            { class: "card-head" },
            el("span", { class: `status ${c.status === "open" ? "open" : c.status === "filed" ? "answered" : "abandoned"}` }, c.status),
            " ",
            time(c.updated_at, now),
            el("span", { class: "short" }, short(c.id))
          ),
          el("h3", { class: "summary" }, titleOf(c)),
          el("p", { class: "who muted" }, `${c.agent} · ${c.repo}`)
        )
      )
    )
    listEmpty.hidden = chats.length > 0 || loadError !== undefined
    listBanner.hidden = loadError === undefined
    listBanner.textContent = loadError === undefined ? "" : `Could not load the plans: ${loadError}`
  }

  const drawChat = () => {
    if (chat === undefined) {
      head.replaceChildren(el("p", { class: "notice error" }, loadError ?? "loading…"))
      conversation.replaceChildren()
      return
    }
    const c = chat
    const now = Date.now()
    head.replaceChildren(
      el("h2", {}, titleOf(c)),
      el("p", { class: "muted" }, `${c.status} · ${c.agent} · ${c.repo}`)
    )
    conversation.replaceChildren(...c.turns.map((t) => bubble(t, now)))
    thinking.hidden = !c.thinking
    stalled.hidden = !c.stalled
    const open = c.status === "open"
    replyForm.hidden = !open
    if (c.draft === null) {
      draftPart.hidden = true
    } else {
      draftPart.hidden = false
      const problems = c.problems.map((p) => el("li", { class: p.soft ? "soft" : "hard" }, p.soft ? `warning: ${p.message}` : p.message))
      draftPart.replaceChildren(
        el("h3", {}, "Draft task"),
        problems.length > 0 ? el("ul", { class: "problems" }, ...problems) : el("p", { class: "review-ok" }, "Passes review."),
        el("pre", { class: "draft-text" }, c.draft)
      )
    }
    fileControls.hidden = !(open && c.fileable)
    const task = c.task
    filed.hidden = task === null
    if (task !== null)
      filed.replaceChildren(
        "Filed as ",
        el("a", { class: "task-link", attrs: { href: `#/queue/${encodeURIComponent(task)}` } }, `task ${short(task)}: ${draftTitle(c.draft ?? "")}`),
        " on the Queue page."
      )
  }

  const draw = () => {
    listPart.hidden = current !== undefined
    chatPart.hidden = current === undefined
    if (current === undefined) drawList()
    else drawChat()
  }

  const load = coalesced(async () => {
    const showing = current
    try {
      if (showing === undefined) chats = await call<ReadonlyArray<ChatView>>("/api/chats")
      else {
        const got = await call<ChatView>(chatUrl(showing))
        if (current === showing) chat = got
      }
      loadError = undefined
    } catch (e) {
      loadError = message(e)
    }
    if (visible) draw()
  })

  return {
    node,
    matches: isChatsAddress,
    show: (hash) => {
      visible = true
      node.hidden = false
      const id = /^#\/chats?\/(.+)$/.exec(hash)?.[1]
      const next = id === undefined ? undefined : decodeURIComponent(id)
      if (next !== current) {
        chat = undefined
        chatNotice.hidden = true
      }
      current = next
      draw()
      if (!reposLoaded) void loadRepos()
      void load()
      void loadMarkdown()
    },
    hide: () => {
      visible = false
      node.hidden = true
    },
    changed: (revisions: Revisions) => {
      const r = revisions["chats"]
      const moved = r === undefined || r !== lastRevision
      lastRevision = r
      if (moved && visible) void load()
    }
  }
}
