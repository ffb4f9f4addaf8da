/**
 * The Queue view, `#/queue`: file work from the phone, and see and steer
 * what is queued: each task's status, priority, attempts, last error and what
 * it waits on, with hold / release / priority / edit / done / remove (remove
 * asks once more first, in place: a mistaken tap must not lose a task; Done
 * is held for Undo for `UNDO_MS`, as an answer is, before it is sent).
 *
 * Each card shows the conductor's latest decision about its task, and a folded
 * Conductor section lists its latest decisions, newest first.
 *
 * Live: a change event whose queue revision moved refetches the list and the
 * conductor's decisions (so do
 * the questions, which a running or blocked task may wait on). A card is
 * redrawn only when its task or its notice changed, so a half-typed edit
 * survives other tasks moving around it.
 */
import { errorLine, reasonLine } from "../../agents/ErrorLine.js"
import { retryWords } from "../../queue/RetryWords.js"
import * as Api from "./api.js"
import type { Blocker, DecisionRecord, TaskView } from "./api.js"
import { time } from "./card.js"
import { UNDO_MS } from "./decisions.js"
import { el, withCode } from "./dom.js"
import { coalesced, decoded, message, type Revisions, type View } from "./view.js"

const short = (id: string) => id.slice(id.lastIndexOf("-") + 1)

interface Notice {
  readonly text: string
  readonly kind: "ok" | "error" | "elsewhere"
}

/** A Done tapped: held for Undo until `deadline`, then being sent. */
type Finishing =
  | { readonly state: "holding"; readonly deadline: number; readonly timer: ReturnType<typeof setTimeout> }
  | { readonly state: "sending" }

/** A question of the task's run that waits on the owner's answer (not on the agent, not on delivery). */
const needsOwner = (q: TaskView["run_questions"][number]) => q.status === "open" && !q.waiting_on_agent

/** Words for a status, and the colour class it takes. */
const statusOf = (t: TaskView, now: number): [string, string] => {
  switch (t.status) {
    case "queued":
      return ["queued", "waiting"]
    case "running":
      return t.run_questions.some(needsOwner) ? ["running · waits on you", "open"] : ["running", "waiting"]
    case "failed":
      return [
        t.retry_at === null
          ? "failed"
          : `failed · ${retryWords(Date.parse(t.retry_at), now, (ms) => new Date(ms).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" }))}`,
        "failed"
      ]
    case "held":
      return ["held", "open"]
    case "blocked":
      return ["blocked", "abandoned"]
    case "done":
      return ["done", "answered"]
  }
}

const sourceLabel = (t: TaskView) =>
  t.source.kind === "human" ? "you" : t.source.kind === "agent" ? `${t.source.node}@${short(t.source.run)}` : `${t.source.repo}#${t.source.number}`

/** How many decisions the Conductor section lists: enough for the last few cycles, short enough for a phone. */
const DECISIONS_SHOWN = 30

/** One decision in words: applied or refused, then what was done or why not. */
const decisionLine = (d: DecisionRecord) => `conductor: ${d.outcome} — ${d.why}`

const basename = (path: string) => path.replace(/\/+$/, "").split("/").pop() ?? path

const blockerItem = (b: Blocker) =>
  el(
    "li",
    {},
    b.kind === "question"
      ? el("a", { attrs: { href: `#/questions/${encodeURIComponent(b.id)}` } }, `question: ${b.title}`)
      : b.kind === "task"
      ? `task ${short(b.id)}: ${b.title}`
      : `${b.id}, which no longer exists`,
    b.kind === "missing" ? null : el("span", { class: "muted" }, ` (${b.status})`)
  )

/** Whether `hash` (`#/…`) is an address of this view. */
export const isQueueAddress = (hash: string): boolean => hash === "#/queue" || hash.startsWith("#/queue/")

export const queueView = (): View => {
  // -- filing -------------------------------------------------------------------
  const instruction = el("textarea", {
    attrs: { rows: "4", "aria-label": "What should the agent do?", placeholder: "What should the agent do? The first line is its title.", required: true }
  })
  const title = el("input", { attrs: { type: "text", "aria-label": "Title (optional)", placeholder: "Title (optional)" } })
  const priority = el("input", { attrs: { type: "number", inputmode: "numeric", step: "1", value: "0", "aria-label": "Priority" } })
  const repo = el("select", { attrs: { "aria-label": "Repository" } })
  /** How to name a repository, while none is the default. */
  const repoHint = el("p", { class: "muted repo-hint", attrs: { hidden: true } })
  const fileNotice = el("p", { class: "notice", attrs: { hidden: true, role: "status" } })
  const fileButton = el("button", { class: "primary", attrs: { type: "submit" } }, "File task")
  const fileForm = el(
    "form",
    { class: "file-task reply", attrs: { "aria-label": "File a task" } },
    instruction,
    el(
      "div",
      { class: "file-options" },
      el("label", {}, "Priority ", priority),
      el("label", { class: "repo-choice" }, "Repo ", repo)
    ),
    repoHint,
    title,
    fileButton,
    fileNotice
  )

  // -- the lists ----------------------------------------------------------------
  const banner = el("p", { class: "notice error", attrs: { hidden: true, role: "alert" } })
  const openList = el("div", { class: "list" })
  const historyList = el("div", { class: "list" })
  // Hidden while nothing is done: a heading over nothing reads as a list that failed to load.
  const doneSection = el("section", { class: "history task-history", attrs: { "aria-label": "Done", hidden: true } }, el("h2", {}, "Done"), historyList)
  /** Done tasks from the month shelves, a page at a time, on request: the queue itself lists only the recent ones. */
  const olderList = el("div", { class: "list older-tasks" })
  // Hidden until one older task is known to exist: an empty queue offers nothing to show.
  const olderButton = el("button", { class: "more-tasks", attrs: { type: "button", hidden: true } }, "Show older done tasks")
  let olderProbed = false
  const probeOlder = () => {
    if (olderProbed) return
    olderProbed = true
    Api.queueHistory(undefined, 1).then(
      (page) => {
        if (olderList.childElementCount === 0) olderButton.hidden = page.tasks.length === 0
      },
      () => {
        olderProbed = false
      }
    )
  }
  const olderSection = el("section", { class: "history task-history-older", attrs: { "aria-label": "Older done tasks" } }, olderList, olderButton)
  let olderNext: string | undefined
  olderButton.addEventListener("click", () => {
    olderButton.disabled = true
    Api.queueHistory(olderNext).then(
      (page) => {
        olderButton.disabled = false
        const now = Date.now()
        olderList.append(...page.tasks.map((t) => taskCard(t, now)))
        olderNext = page.next ?? undefined
        olderButton.hidden = page.next === null
        if (page.tasks.length === 0 && olderList.childElementCount === 0) olderList.replaceChildren(el("p", { class: "empty muted" }, "Nothing older."))
      },
      (e: unknown) => {
        olderButton.disabled = false
        banner.hidden = false
        banner.textContent = `Could not load older tasks: ${message(e)}`
      }
    )
  })
  const openEmpty = el("p", { class: "empty muted" }, ...withCode("Nothing queued. File something above, or with `magi task add` at a terminal."))
  const noLoop = el(
    "p",
    { class: "notice waiting no-loop", attrs: { hidden: true, role: "status" } },
    ...withCode("No magi loop is running, so nothing here will start: run `magi serve` (or `magi web` without `--no-loop`).")
  )
  const decisionList = el("ul", { class: "decisions" })
  // Folded: the conductor's log is for when the owner wonders why a task moved.
  const conductor = el(
    "details",
    { class: "conductor", attrs: { hidden: true } },
    el("summary", {}, "Conductor"),
    el("p", { class: "muted" }, "What the conductor decided about each task, newest first."),
    decisionList
  )
  const node = el(
    "div",
    { class: "view queue-view", attrs: { hidden: true } },
    el("section", { class: "file", attrs: { "aria-label": "File a task" } }, el("h2", {}, "File a task"), fileForm),
    banner,
    el("section", { class: "open-tasks", attrs: { "aria-label": "Open tasks" } }, el("h2", {}, "Queue"), noLoop, openEmpty, openList),
    el("section", { class: "conductor-log", attrs: { "aria-label": "Conductor" } }, conductor),
    doneSection,
    olderSection
  )

  let visible = false
  let stale = true
  let last: Revisions = {}
  let tasks: ReadonlyArray<TaskView> = []
  let reposLoaded = false
  /** Whether a magi loop owns the home, from the change events. */
  let loopRunning: boolean | undefined
  const notices = new Map<string, Notice>()
  /** Cards asking "remove for good?". */
  const confirming = new Set<string>()
  /** Edit boxes the owner opened, and what they typed. */
  const editing = new Map<string, { instruction: string; title: string }>()
  /** Hold reasons typed and not sent, kept across redraws. */
  const reasons = new Map<string, string>()
  /** Cards whose less frequent controls the owner unfolded. */
  const expanded = new Set<string>()
  const drawn = new Map<string, { key: string; node: HTMLElement }>()
  /**
   * Done tapped: held for Undo until `deadline`, as an answer is (see
   * decisions.ts), then being sent. Nothing is sent while it is held.
   */
  const finishing = new Map<string, Finishing>()

  const act = (t: TaskView, send: () => Promise<TaskView>, done: (after: TaskView) => string, removes = false) => {
    notices.delete(t.id)
    void send().then(
      (after) => {
        confirming.delete(t.id)
        editing.delete(t.id)
        reasons.delete(t.id)
        if (removes) {
          tasks = tasks.filter((x) => x.id !== t.id)
          fileNotice.hidden = false
          fileNotice.className = "notice ok"
          fileNotice.textContent = done(after)
        } else {
          notices.set(t.id, { text: done(after), kind: "ok" })
          tasks = tasks.map((x) => (x.id === after.id ? after : x))
        }
        draw()
        void load()
      },
      (e: unknown) => {
        const conflict = e instanceof Api.ApiError && (e.status === 409 || e.status === 404)
        notices.set(t.id, { text: conflict ? `Changed elsewhere: ${message(e)}` : message(e), kind: conflict ? "elsewhere" : "error" })
        draw()
        if (conflict) void load()
      }
    )
  }

  /** Send a held Done now (`keepalive` when the page is going away: the owner saw it held, it must not die with the tab). */
  const sendDone = (id: string, keepalive: boolean) => {
    const held = finishing.get(id)
    const t = tasks.find((x) => x.id === id)
    if (held?.state !== "holding") return
    clearTimeout(held.timer)
    if (t === undefined) {
      finishing.delete(id)
      return
    }
    finishing.set(id, { state: "sending" })
    draw()
    act(
      t,
      () => Api.moveTask(id, "done", {}, keepalive).finally(() => finishing.delete(id)),
      () => "Marked done"
    )
  }

  /** Done tapped: hold it for Undo; sent when the window ends. */
  const finish = (t: TaskView) => {
    if (finishing.has(t.id)) return
    notices.delete(t.id)
    const deadline = Date.now() + UNDO_MS
    finishing.set(t.id, { state: "holding", deadline, timer: setTimeout(() => sendDone(t.id, false), UNDO_MS) })
    draw()
  }

  /** Undo: nothing was sent; the card is back as it was. */
  const undoDone = (id: string) => {
    const held = finishing.get(id)
    if (held?.state !== "holding") return
    clearTimeout(held.timer)
    finishing.delete(id)
    draw()
  }

  // A page being closed or put away sends the Done it holds, as it sends a held answer.
  const flush = () => {
    for (const [id, f] of finishing) if (f.state === "holding") sendDone(id, true)
  }
  window.addEventListener("pagehide", flush)
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "hidden") flush()
  })

  /** A Done held for Undo, or being sent: in place of the card's controls. */
  const marking = (t: TaskView, f: Finishing, now: number) =>
    el(
      "div",
      { class: "task-controls" },
      f.state === "holding"
        ? el(
          "div",
          { class: "deciding", attrs: { role: "status" } },
          el(
            "p",
            {},
            "Marking done… sent in ",
            el("span", { attrs: { "data-deadline": String(f.deadline) } }, `${Math.max(1, Math.ceil((f.deadline - now) / 1000))} s`)
          ),
          el("button", { class: "undo primary", attrs: { type: "button" }, on: { click: () => undoDone(t.id) } }, "Undo")
        )
        : el("div", { class: "deciding", attrs: { role: "status" } }, el("p", {}, "Marking done…"))
    )

  const controls = (t: TaskView, now: number) => {
    if (t.status === "done") return null
    const f = finishing.get(t.id)
    if (f !== undefined) return marking(t, f, now)
    const running = t.status === "running"
    const buttons: Array<HTMLElement> = []
    /** Changes made less often, folded away so a card stays short on a phone. */
    const extra: Array<HTMLElement> = []
    if (t.status !== "held") {
      const reason = el("input", {
        attrs: { type: "text", "aria-label": "Why hold it (optional)", placeholder: "Why (optional)", "data-draft": `${t.id}:reason` }
      })
      reason.value = reasons.get(t.id) ?? ""
      reason.addEventListener("input", () => reasons.set(t.id, reason.value))
      buttons.push(
        el(
          "form",
          {
            class: "inline",
            on: {
              submit: (event) => {
                event.preventDefault()
                act(
                  t,
                  () => Api.moveTask(t.id, "hold", reason.value.trim() === "" ? {} : { reason: reason.value }),
                  () => "Held: the loop will not start it until you release it"
                )
              }
            }
          },
          reason,
          el("button", { attrs: { type: "submit" } }, "Hold")
        )
      )
    }
    if (t.status !== "queued" && !running)
      buttons.push(
        el(
          "button",
          { attrs: { type: "button" }, on: { click: () => act(t, () => Api.moveTask(t.id, "release"), () => "Released: queued again, attempts reset") } },
          "Release"
        )
      )
    const level = el("input", {
      attrs: {
        type: "number",
        inputmode: "numeric",
        step: "1",
        value: String(t.priority),
        "aria-label": "New priority",
        disabled: running,
        "data-draft": `${t.id}:priority`
      }
    })
    extra.push(
      el(
        "form",
        {
          class: "inline",
          on: {
            submit: (event) => {
              event.preventDefault()
              const n = Number(level.value)
              act(t, () => Api.moveTask(t.id, "priority", { priority: n }), (after) => `Priority ${after.priority}`)
            }
          }
        },
        level,
        el("button", { attrs: { type: "submit", disabled: running } }, "Set priority")
      )
    )
    buttons.push(
      el("button", { attrs: { type: "button" }, on: { click: () => finish(t) } }, "Done")
    )
    const removeBox = confirming.has(t.id)
      ? el(
        "div",
        { class: "confirm", attrs: { role: "group", "aria-label": "Remove for good?" } },
        el("span", {}, "Remove this task for good?"),
        el(
          "button",
          { class: "danger", attrs: { type: "button" }, on: { click: () => act(t, () => Api.removeTask(t.id), (r) => `Removed ${r.title}`, true) } },
          "Yes, remove"
        ),
        el(
          "button",
          {
            attrs: { type: "button" },
            on: {
              click: () => {
                confirming.delete(t.id)
                draw()
              }
            }
          },
          "Keep it"
        )
      )
      : el(
        "button",
        {
          attrs: { type: "button", disabled: running },
          on: {
            click: () => {
              confirming.add(t.id)
              draw()
            }
          }
        },
        "Remove…"
      )
    extra.push(removeBox)

    // Open across redraws while the owner edits; what they typed is kept in `editing`.
    const edit = el("details", { class: "edit" }, el("summary", {}, running ? "Edit (not while it runs)" : "Edit"), editForm(t))
    edit.open = editing.has(t.id)
    edit.addEventListener("toggle", () => {
      if (edit.open && !editing.has(t.id)) editing.set(t.id, { instruction: t.instruction, title: t.title })
      if (!edit.open) editing.delete(t.id)
    })
    const more = el(
      "details",
      { class: "more" },
      el("summary", {}, "Priority, edit, remove"),
      el("div", { class: "buttons" }, ...extra),
      edit
    )
    more.open = expanded.has(t.id) || editing.has(t.id) || confirming.has(t.id)
    more.addEventListener("toggle", () => {
      if (more.open) expanded.add(t.id)
      else expanded.delete(t.id)
    })
    return el("div", { class: "task-controls" }, el("div", { class: "buttons" }, ...buttons), more)
  }

  const editForm = (t: TaskView) => {
    const draft = editing.get(t.id) ?? { instruction: t.instruction, title: t.title }
    const text = el("textarea", { attrs: { rows: "5", "aria-label": "Instruction", disabled: t.status === "running", "data-draft": `${t.id}:text` } })
    text.value = draft.instruction
    const name = el("input", { attrs: { type: "text", "aria-label": "Title", disabled: t.status === "running", "data-draft": `${t.id}:title` } })
    name.value = draft.title
    const keep = () => editing.set(t.id, { instruction: text.value, title: name.value })
    text.addEventListener("input", keep)
    name.addEventListener("input", keep)
    return el(
      "form",
      {
        class: "reply",
        on: {
          submit: (event) => {
            event.preventDefault()
            act(t, () => Api.moveTask(t.id, "edit", { instruction: text.value, title: name.value }), () => "Saved")
          }
        }
      },
      name,
      text,
      el("button", { class: "primary", attrs: { type: "submit", disabled: t.status === "running" } }, "Save")
    )
  }

  const taskCard = (t: TaskView, now: number) => {
    const [label, kind] = statusOf(t, now)
    const notice = notices.get(t.id)
    const lastRun = t.runs.at(-1)
    const waitsOnYou = t.run_questions.filter(needsOwner)
    return el(
      "article",
      { class: `card task ${kind}`, attrs: { "data-id": t.id, id: `t-${t.id}` } },
      el(
        "header",
        { class: "card-head" },
        el("span", { class: `status ${kind}` }, label),
        el("span", { class: "priority", attrs: { title: "priority" } }, `p${t.priority}`),
        t.attempts === 0 ? null : el("span", { class: "attempts" }, t.attempts === 1 ? "1 attempt" : `${t.attempts} attempts`),
        time(t.created_at, now),
        el("span", { class: "short" }, short(t.id))
      ),
      el("h3", { class: "summary" }, t.title),
      el("p", { class: "who" }, `${sourceLabel(t)} · ${t.repo_name ?? basename(t.repo)}`),
      notice === undefined ? null : el("p", { class: `notice ${notice.kind}`, attrs: { role: "status" } }, notice.text),
      t.status === "held"
        ? el(
          "p",
          { class: "notice waiting hold" },
          t.hold_source === "machine" ? "magi gave up on it" : "You held it",
          t.hold_reason === null ? "." : `: ${t.hold_source === "machine" ? reasonLine(t.hold_reason, t.last_error) : t.hold_reason}`
        )
        : null,
      // One line of it (the run page has the whole reason and the log), and
      // not again under a hold that already quotes it.
      t.last_error === null || (t.status === "held" && (t.hold_reason ?? "").includes(t.last_error))
        ? null
        : el("p", { class: "notice error last-error" }, `Last error: ${errorLine(t.last_error)}`),
      t.conductor === null ? null : el("p", { class: "muted conductor-line" }, decisionLine(t.conductor)),
      t.blockers.length === 0
        ? null
        : el("div", { class: "blockers" }, el("span", { class: "muted" }, "Waits on:"), el("ul", {}, ...t.blockers.map(blockerItem))),
      waitsOnYou.length === 0
        ? null
        : el(
          "div",
          { class: "blockers waits-on-you" },
          el("span", { class: "muted" }, "Its run waits on you:"),
          el(
            "ul",
            {},
            ...waitsOnYou.map((q) => el("li", {}, el("a", { attrs: { href: `#/questions/${encodeURIComponent(q.id)}` } }, q.summary)))
          )
        ),
      lastRun === undefined
        ? null
        : el(
          "p",
          { class: "runs-line" },
          el("a", { attrs: { href: `#/runs/${encodeURIComponent(lastRun)}` } }, `Run ${short(lastRun)}`),
          t.runs.length > 1 ? el("span", { class: "muted" }, ` (latest of ${t.runs.length})`) : null
        ),
      el("details", { class: "instruction" }, el("summary", {}, "Instruction"), el("div", { class: "detail text" }, t.instruction)),
      controls(t, now)
    )
  }

  const place = (list: HTMLElement, nodes: ReadonlyArray<HTMLElement>) => {
    nodes.forEach((n, i) => {
      if (list.children[i] !== n) list.insertBefore(n, list.children[i] ?? null)
    })
    while (list.children.length > nodes.length) list.lastElementChild!.remove()
  }

  const draw = () => {
    const now = Date.now()
    // A card redrawn under the owner's thumb keeps what they were typing in, focused.
    const focused = document.activeElement instanceof HTMLElement ? document.activeElement.dataset["draft"] : undefined
    // A Done held for a task that was finished or removed elsewhere meanwhile: nothing to send.
    for (const [id, f] of finishing)
      if (f.state === "holding" && !tasks.some((t) => t.id === id && t.status !== "done")) {
        clearTimeout(f.timer)
        finishing.delete(id)
      }
    const seen = new Set<string>()
    const nodeFor = (t: TaskView) => {
      seen.add(t.id)
      const f = finishing.get(t.id)
      const held = f === undefined ? null : f.state === "holding" ? f.deadline : f.state
      const key = JSON.stringify([t, notices.get(t.id), confirming.has(t.id), editing.has(t.id), expanded.has(t.id), held])
      const old = drawn.get(t.id)
      if (old !== undefined && old.key === key) return old.node
      const fresh = taskCard(t, now)
      drawn.set(t.id, { key, node: fresh })
      return fresh
    }
    place(openList, tasks.filter((t) => t.status !== "done").map(nodeFor))
    place(historyList, tasks.filter((t) => t.status === "done").map(nodeFor))
    for (const id of drawn.keys()) if (!seen.has(id)) drawn.delete(id)
    openEmpty.hidden = tasks.some((t) => t.status !== "done")
    doneSection.hidden = !tasks.some((t) => t.status === "done")
    noLoop.hidden = loopRunning !== false || !tasks.some((t) => t.runnable)
    if (focused !== undefined) {
      const box = node.querySelector<HTMLInputElement | HTMLTextAreaElement>(`[data-draft="${CSS.escape(focused)}"]`)
      if (box !== null && document.activeElement !== box) box.focus()
    }
  }

  let decisions: ReadonlyArray<DecisionRecord> = []
  const drawDecisions = () => {
    const titles = new Map(tasks.map((t) => [t.id, t.title]))
    conductor.hidden = decisions.length === 0
    decisionList.replaceChildren(
      ...decisions.slice(0, DECISIONS_SHOWN).map((d) =>
        el(
          "li",
          { attrs: { "data-task": d.task } },
          el("span", { class: "muted" }, `${d.at} · turn ${d.turn} · `),
          titles.has(d.task) ? el("a", { attrs: { href: `#/queue/${encodeURIComponent(d.task)}` } }, titles.get(d.task)!) : `task ${d.task}`,
          el("div", {}, decisionLine(d))
        )
      )
    )
  }
  // A failed fetch keeps what was shown: the log only grows, and the queue's own banner reports a server gone.
  const loadDecisions = () =>
    Api.listDecisions().then(
      (ds) => {
        decisions = ds
        drawDecisions()
      },
      () => undefined
    )

  const load = coalesced(() =>
    Promise.all([loadDecisions(), Api.listQueue()]).then(
      ([, ts]) => {
        stale = false
        tasks = ts
        banner.hidden = true
        draw()
        drawDecisions()
      },
      (e: unknown) => {
        banner.hidden = false
        banner.textContent = `Could not load the queue: ${message(e)}`
      }
    )
  )

  const loadRepos = () =>
    Api.listRepos().then(
      ({ current, hint, names = [], repos }) => {
        reposLoaded = true
        const chosen = repo.value
        // By name first (any host with a clone runs it), then by folder.
        const byName = names.map((n) =>
          el(
            "option",
            { attrs: { value: n.name, selected: chosen === n.name } },
            n.here || n.hosts.length === 0 ? n.name : `${n.name} (on ${n.hosts.join(", ")})`
          )
        )
        // No default: nothing is chosen until the owner picks (a select would take its first option).
        const none = current === null ? [el("option", { attrs: { value: "", selected: chosen === "" } }, "Choose a repository")] : []
        repo.replaceChildren(
          ...none,
          ...byName,
          ...repos.map((r) =>
            el("option", { attrs: { value: r, selected: chosen === "" ? r === current : r === chosen } }, r === current ? `${basename(r)} (here)` : basename(r))
          )
        )
        repo.disabled = repos.length === 0 && names.length === 0
        repoHint.hidden = hint === undefined
        repoHint.replaceChildren(...withCode(hint === undefined ? "" : hint.charAt(0).toUpperCase() + hint.slice(1)))
      },
      () => {
        reposLoaded = false
      }
    )

  fileForm.addEventListener("submit", (event) => {
    event.preventDefault()
    const body: { instruction: string; title?: string; priority?: number; repo?: string } = { instruction: instruction.value }
    if (title.value.trim() !== "") body.title = title.value
    if (priority.value.trim() !== "") body.priority = Number(priority.value)
    if (repo.value !== "") body.repo = repo.value
    fileButton.disabled = true
    void Api.fileTask(body)
      .then(
        (filed) => {
          instruction.value = ""
          title.value = ""
          priority.value = "0"
          fileNotice.className = "notice ok"
          fileNotice.textContent = `Filed ${short(filed.id)}: ${filed.title}`
          tasks = [filed, ...tasks.filter((t) => t.id !== filed.id)]
          draw()
          void load()
          void loadRepos()
        },
        (e: unknown) => {
          fileNotice.className = "notice error"
          fileNotice.replaceChildren(...withCode(message(e)))
        }
      )
      .finally(() => {
        fileNotice.hidden = false
        fileButton.disabled = false
      })
  })

  return {
    node,
    matches: isQueueAddress,
    show: (hash) => {
      const wasVisible = visible
      visible = true
      node.hidden = false
      if (!reposLoaded) void loadRepos()
      probeOlder()
      const id = /^#\/queue\/(.+)$/.exec(hash)?.[1]
      const scroll = () => {
        const wanted = id === undefined ? undefined : decoded(id)
        if (wanted !== undefined) document.getElementById(`t-${wanted}`)?.scrollIntoView({ block: "start" })
      }
      if (stale || !wasVisible) void load().then(scroll)
      else scroll()
    },
    hide: () => {
      visible = false
      node.hidden = true
    },
    changed: (revisions, loop) => {
      if (loop !== loopRunning) {
        loopRunning = loop
        draw()
      }
      const moved = revisions.queue === undefined ||
        revisions.queue !== last.queue ||
        revisions.questions === undefined ||
        revisions.questions !== last.questions
      last = revisions
      if (!moved) return
      if (visible) void load()
      else stale = true
    }
  }
}
