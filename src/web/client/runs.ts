/**
 * The Runs views: `#/runs`, the newest runs at a glance, and `#/runs/<id>`,
 * one run with what the owner needs to judge it: status, branch, seats, the
 * agent's summary, the end of what it printed, its questions (linked to
 * their cards) and its artifacts.
 *
 * Live like the questions: a change event whose runs revision moved refetches
 * what is on screen; a run's page also follows the questions, since its
 * questions are part of it. Nothing is fetched while the view is hidden; it
 * catches up when shown.
 */
import { usageWords } from "../../agents/Usage.js"
import * as Api from "./api.js"
import type { HostView, RunDetail, RunListEntry } from "./api.js"
import { time } from "./card.js"
import { competitionSection, stepLine } from "./competition.js"
import { verificationSection } from "./verification.js"
import { landingSection } from "./landing.js"
import { saySection } from "./say.js"
import { diffBox } from "./diff.js"
import { turnsSection } from "./transcript.js"
import { closeLive, liveSection } from "./live.js"
import { el, withCode } from "./dom.js"
import { coalesced, decoded, message, type Revisions, type View } from "./view.js"

const short = (id: string) => id.slice(id.lastIndexOf("-") + 1)

/** The instruction's first non-blank line: what a run is, in one line. */
const titleOf = (text: string) => text.split("\n").find((l) => l.trim() !== "")?.trim() ?? "(no instruction)"

/** Words for a run's status, and the colour class it takes. */
const statusOf = (status: string): [string, string] => {
  switch (status) {
    case "running":
    case "preparing":
      return [status, "waiting"]
    case "waiting":
      return ["waiting on you", "open"]
    case "done":
      return ["done", "answered"]
    case "stopped":
      return ["stopped by you", "abandoned"]
    case "failed":
      return ["failed", "failed"]
    default:
      return [status, "abandoned"]
  }
}

const kb = (bytes: number) => (bytes < 1024 ? `${bytes} B` : `${(bytes / 1024).toFixed(bytes < 10 * 1024 ? 1 : 0)} KiB`)

const runItem = (r: RunListEntry, now: number) => {
  const [label, kind] = statusOf(r.status)
  return el(
    "a",
    { class: `card run-item ${kind}`, attrs: { href: `#/runs/${encodeURIComponent(r.id)}`, "data-id": r.id } },
    el(
      "span",
      { class: "card-head" },
      el("span", { class: `status ${kind}` }, label),
      " ",
      time(r.created_at, now),
      el("span", { class: "short" }, short(r.id))
    ),
    el("span", { class: "summary" }, titleOf(r.instruction)),
    el("span", { class: "who" }, [...new Set([r.branch, ...r.seats.map((s) => s.agent)])].filter((s) => s !== "").join(" · ")),
    r.competition === undefined ? null : el("span", { class: "step", attrs: { "data-step": r.competition.step } }, stepLine(r.competition)),
    r.host_offline === null ? null : el("span", { class: "notice error host-offline" }, r.host_offline),
    r.queued === null ? null : el("span", { class: "notice waiting queued" }, r.queued),
    r.questions_needs_owner > 0
      ? el(
        "span",
        { class: "notice waiting" },
        r.questions_needs_owner === 1 ? "1 question waits for you" : `${r.questions_needs_owner} questions wait for you`
      )
      : null
  )
}

const field = (label: string, value: Node | string | null) =>
  value === null || value === "" ? null : el("div", { class: "field" }, el("dt", {}, label), el("dd", {}, value))

/**
 * Where the whole story of a failure is: the newest non-empty stderr (the
 * reason quotes one line of it), else the newest non-empty stdout.
 */
const fullLog = (r: RunDetail) => {
  const newest = (suffix: string) => [...r.artifacts].reverse().find((a) => a.name.endsWith(suffix) && a.size > 0)
  return newest(".err") ?? newest(".out")
}

/** " Full log" after a failure's one line, one tap from the whole output. */
const logLink = (r: RunDetail): Array<Node | string> => {
  const log = fullLog(r)
  return log === undefined
    ? []
    : [
      " ",
      el("a", { class: "full-log", attrs: { href: Api.artifactUrl(r.id, log.name), target: "_blank", rel: "noopener noreferrer" } }, `Full log (${log.name})`)
    ]
}

/**
 * Stop, while a turn of the run may be in flight: `magi run stop` from the
 * page. The server waits for the process running the turn (on any host) to
 * end it, and says which it was; a refusal comes back with its reason.
 */
const stopBox = (r: RunDetail, stopped: (said: string) => void) => {
  if (r.status !== "running" && r.status !== "preparing") return null
  const said = el("p", { class: "stop-said muted", attrs: { role: "status", hidden: true } })
  const button = el("button", { class: "stop-run danger", attrs: { type: "button" } }, "Stop")
  button.addEventListener("click", () => {
    button.disabled = true
    said.hidden = false
    said.className = "stop-said muted"
    said.textContent = "Stopping the turn…"
    Api.stopRun(r.id).then(
      (done) => stopped(done.said),
      (e: unknown) => {
        button.disabled = false
        said.className = "stop-said notice error"
        said.textContent = `Not stopped: ${message(e)}`
      }
    )
  })
  return el(
    "div",
    { class: "run-stop" },
    button,
    el("span", { class: "muted" }, " ends the turn's agent; the run stays resumable (magi run --resume)."),
    said
  )
}

/**
 * The run's commits and diffstat, as `magi show` prints them. Git's text
 * (commit subjects an agent wrote, file names) goes in as text nodes only.
 */
const changesBox = (r: RunDetail) => {
  const c = r.changes
  if (r.removed_at !== undefined) return el("p", { class: "muted changes" }, "Removed: its worktree and branch are gone.")
  if (c === null) return el("p", { class: "muted changes" }, `Git cannot read ${r.branch} in ${r.repo}.`)
  if (c.commits_total === 0) return el("p", { class: "muted changes" }, `None on ${r.branch} yet.`)
  const more = c.commits_total - c.commits.length
  return el(
    "div",
    { class: "changes" },
    el("p", { class: "muted" }, `${c.commits_total === 1 ? "1 commit" : `${c.commits_total} commits`} on ${r.branch}:`),
    el("pre", { class: "output commits" }, [...c.commits, ...(more > 0 ? [`… and ${more} more`] : [])].join("\n")),
    el("pre", { class: "output diffstat" }, c.diffstat.join("\n"))
  )
}

/** What every section of the run page is drawn with. */
export interface RunSectionContext {
  readonly now: number
  /** Fetch and redraw the run (after a write of the page's own: a stop, a pick). */
  readonly reload: () => void
  /** Stop's callback, and what the last Stop said, kept across the redraw its own change causes. */
  readonly stopped: (said: string) => void
  readonly said: string | undefined
}

/**
 * One part of the run page: nodes, or null for nothing. The page is this
 * list in order (`RUN_SECTIONS`); a new part (review findings, landing) is
 * its own module exporting a section, added with one line there.
 */
export type RunSection = (r: RunDetail, ctx: RunSectionContext) => Node | ReadonlyArray<Node | null> | null

const headSection: RunSection = (r, { now, said, stopped }) => [
  el("h3", { class: "summary" }, titleOf(r.instruction)),
  r.host_offline === null
    ? null
    : el("p", { class: "notice error host-offline" }, `${r.host_offline}: its seats resume when it is back; answers given meanwhile wait for it`),
  r.queued === null ? null : el("p", { class: "notice waiting queued" }, `Its next turn is ${r.queued}; it starts when one ends.`),
  r.reason === "" ? null : el("p", { class: r.status === "stopped" ? "notice reason" : "notice error reason" }, r.reason, ...logLink(r)),
  stopBox(r, stopped),
  said === undefined ? null : el("p", { class: "stop-said muted", attrs: { role: "status" } }, said),
  el(
    "dl",
    { class: "fields" },
    field("Branch", el("code", {}, r.branch)),
    field("From", el("code", {}, `${r.base} @ ${r.base_commit.slice(0, 10)}`)),
    field("Host", r.host ?? null),
    field("Repo", el("code", {}, r.repo)),
    field("Worktree", el("code", {}, r.worktree)),
    field("Updated", time(r.updated_at, now)),
    r.task === null
      ? null
      : field("Task", el("a", { attrs: { href: `#/queue/${encodeURIComponent(r.task.id)}` } }, `${r.task.title} (${r.task.status})`))
  )
]

const seatsSection: RunSection = (r) => [
  el("h4", {}, "Seats"),
  el(
    "ul",
    { class: "seats" },
    ...r.seats.map((s) =>
      el(
        "li",
        { attrs: { "data-seat": s.key } },
        el("strong", {}, s.key),
        ` · ${s.agent} · ${s.turns === 1 ? "1 turn" : `${s.turns} turns`}`,
        s.write ? "" : " · read-only",
        s.usage === undefined ? null : el("span", { class: "usage muted" }, ` · ${usageWords(s.usage)}`),
        // Each turn's own cost, the newest first, folded: most owners want the sum.
        s.usage === undefined || s.usage.turns.length < 2 ? null : el(
          "details",
          { class: "turn-usage" },
          el("summary", {}, "Per turn"),
          el("ul", {}, ...[...s.usage.turns].reverse().map((t) => el("li", {}, `turn ${t.turn}: ${usageWords(t)}`)))
        )
      )
    )
  ),
  el("details", { class: "instruction" }, el("summary", {}, "Instruction"), el("div", { class: "detail text" }, r.instruction)),
  r.summary === "" ? null : el("h4", {}, "Summary"),
  r.summary === "" ? null : el("div", { class: "detail text run-summary" }, r.summary)
]

const questionsSection: RunSection = (r) => [
  el("h4", {}, "Questions"),
  r.questions.length === 0
    ? el("p", { class: "muted" }, "This run asked nothing.")
    : el(
      "ul",
      { class: "run-questions" },
      ...r.questions.map((q) => {
        const [qLabel, qKind] = q.status === "open"
          ? (q.waiting_on_agent ? ["waiting on the agent", "waiting"] : ["needs you", "open"])
          : [q.status, q.status]
        return el(
          "li",
          {},
          el("span", { class: `status ${qKind}` }, qLabel),
          " ",
          el("a", { attrs: { href: `#/questions/${encodeURIComponent(q.id)}` } }, q.summary)
        )
      })
    )
]

/** The commits and diffstat, then the whole diff (folded until opened) while the branch is there. */
const changesSection: RunSection = (r) => [
  el("h4", {}, "Commits"),
  changesBox(r),
  r.changes === null || r.changes.commits_total === 0 || r.removed_at !== undefined
    ? null
    : diffBox(r.id, null, `${r.changes.commits[0] ?? ""}:${r.changes.commits_total}`)
]

const outputSection: RunSection = (r) => {
  const out = r.last_output
  return [
    el("h4", {}, "Last output"),
    out === null
      ? el("p", { class: "muted" }, "The agent has printed nothing yet.")
      : el(
        "div",
        { class: "last-output" },
        el("p", { class: "muted" }, out.truncated ? `The end of ${out.name}:` : `${out.name}:`),
        el("pre", { class: "output" }, out.text)
      )
  ]
}

const artifactsSection: RunSection = (r) => [
  el("h4", {}, "Artifacts"),
  r.artifacts.length === 0
    ? el("p", { class: "muted" }, "No artifacts yet.")
    : el(
      "ul",
      { class: "artifacts" },
      ...r.artifacts.map((a) =>
        el(
          "li",
          {},
          el("a", { attrs: { href: Api.artifactUrl(r.id, a.name), target: "_blank", rel: "noopener noreferrer" } }, a.name),
          el("span", { class: "muted" }, ` ${kb(a.size)}`)
        )
      )
    )
]

/** The run page, top to bottom. */
export const RUN_SECTIONS: ReadonlyArray<RunSection> = [
  headSection,
  competitionSection,
  verificationSection,
  landingSection,
  seatsSection,
  liveSection,
  saySection,
  questionsSection,
  changesSection,
  outputSection,
  turnsSection,
  artifactsSection
]

const runPage = (r: RunDetail, ctx: RunSectionContext) => {
  const [label, kind] = statusOf(r.status)
  return el(
    "article",
    { class: `card run-detail ${kind}`, attrs: { "data-id": r.id } },
    el(
      "header",
      { class: "card-head" },
      el("span", { class: `status ${kind}` }, label),
      " ",
      time(r.created_at, ctx.now),
      el("span", { class: "short" }, short(r.id))
    ),
    ...RUN_SECTIONS.flatMap((section) => {
      const part = section(r, ctx)
      return part === null ? [] : Array.isArray(part) ? part : [part as Node]
    })
  )
}

/** A page of runs: the first, and each one "Show older runs" adds. */
const FIRST_RUNS = 50

/** Whether `hash` (`#/…`) is an address of this view. */
export const isRunsAddress = (hash: string): boolean => hash === "#/runs" || hash.startsWith("#/runs/")

export const runsView = (): View => {
  const banner = el("p", { class: "notice error", attrs: { hidden: true, role: "alert" } })
  const list = el("div", { class: "list runs-list" })
  const empty = el(
    "p",
    { class: "empty muted", attrs: { hidden: true } },
    ...withCode("No runs yet. `magi run TEXT` starts one; the queue starts them for you.")
  )
  const more = el("button", { class: "more-runs", attrs: { type: "button", hidden: true } }, "Show older runs")
  // One line of the hosts sharing the store, so a host that went down is seen before its runs are.
  const hostsLine = el("p", { class: "hosts-line muted", attrs: { hidden: true } })
  const listPart = el("section", { class: "runs-index", attrs: { "aria-label": "Runs" } }, el("h2", {}, "Runs"), hostsLine, empty, list, more)
  const back = el("a", { class: "back", attrs: { href: "#/runs" } }, "← All runs")
  const detailBox = el("div", { class: "run-box" })
  const detailPart = el("section", { class: "run-page", attrs: { "aria-label": "Run", hidden: true } }, back, detailBox)
  const node = el("div", { class: "view runs-view", attrs: { hidden: true } }, banner, listPart, detailPart)

  let visible = false
  /** The run on screen (`#/runs/<id>`), or undefined for the list. */
  let current: string | undefined
  let runs: ReadonlyArray<RunListEntry> = []
  /** Older pages asked for, in order: settled runs, kept as loaded while the first page follows changes. */
  let older: ReadonlyArray<RunListEntry> = []
  /** Whether the last page read was full, so there may be more. */
  let more_ = false
  let last: Revisions = {}
  let stale = true
  /** What Stop said, by run, for this page's life. */
  const stopSaid = new Map<string, string>()

  const fail = (what: string) => (e: unknown) => {
    banner.hidden = false
    banner.textContent = `Could not load ${what}: ${message(e)}`
  }

  more.addEventListener("click", () => {
    const shown = [...runs, ...older]
    const last = shown.at(-1)
    if (last === undefined) return
    more.disabled = true
    Api.listRuns(FIRST_RUNS, last.id).then(
      (rs) => {
        more.disabled = false
        older = [...older, ...rs]
        more_ = rs.length >= FIRST_RUNS
        drawList()
      },
      (e: unknown) => {
        more.disabled = false
        fail("older runs")(e)
      }
    )
  })

  const drawList = () => {
    const now = Date.now()
    const firstIds = new Set(runs.map((r) => r.id))
    const shown = [...runs, ...older.filter((r) => !firstIds.has(r.id))]
    list.replaceChildren(...shown.map((r) => runItem(r, now)))
    empty.hidden = shown.length > 0
    more.hidden = !more_
  }

  const drawHosts = (hosts: ReadonlyArray<HostView>) => {
    hostsLine.hidden = hosts.length === 0
    hostsLine.replaceChildren(
      "Hosts: ",
      ...hosts.flatMap((h, i) => [
        i === 0 ? "" : " · ",
        el(
          "span",
          { class: h.online ? "host online" : "host offline", attrs: { "data-host": h.name } },
          !h.online
            ? `${h.name} (offline since ${new Date(h.last_seen).toLocaleString()})`
            : h.loop
            ? `${h.name} (online, ${h.turns}/${h.max_turns} turns)`
            : `${h.name} (online, its page only: no loop)`
        )
      ])
    )
  }

  const load = coalesced(async () => {
    stale = false
    const id = current
    if (id === undefined) {
      await Promise.all([
        Api.listRuns(FIRST_RUNS).then((rs) => {
          runs = rs
          if (older.length === 0) more_ = rs.length >= FIRST_RUNS
          banner.hidden = true
          drawList()
        }, fail("the runs")),
        // The hosts line is a courtesy: an older server without it leaves the line hidden.
        Api.listHosts().then(drawHosts, () => drawHosts([]))
      ])
    } else {
      await Api.getRun(id).then(
        (r) => {
          if (current !== id) return
          banner.hidden = true
          detailBox.replaceChildren(runPage(r, {
            now: Date.now(),
            reload: () => void load(),
            stopped: (line) => {
              stopSaid.set(id, line)
              void load()
            },
            said: stopSaid.get(id)
          }))
        },
        (e: unknown) => {
          if (current !== id) return
          detailBox.replaceChildren()
          fail("this run")(e)
        }
      )
    }
  })

  return {
    node,
    matches: isRunsAddress,
    show: (hash) => {
      const id = /^#\/runs\/(.+)$/.exec(hash)?.[1]
      // A malformed id shows the list rather than nothing.
      const next = id === undefined ? undefined : decoded(id)
      const moved = next !== current || !visible
      current = next
      visible = true
      node.hidden = false
      listPart.hidden = current !== undefined
      detailPart.hidden = current === undefined
      if (moved) {
        closeLive()
        banner.hidden = true
        if (current !== undefined) detailBox.replaceChildren(el("p", { class: "muted" }, "Loading the run…"))
      }
      if (moved || stale) void load()
    },
    hide: () => {
      closeLive()
      visible = false
      node.hidden = true
    },
    changed: (revisions) => {
      // An unknown revision (polling, an older server) means "look again".
      const moved = revisions.runs === undefined ||
        revisions.runs !== last.runs ||
        // A host queued a run's turn, started it, or went away.
        revisions.hosts !== last.hosts ||
        (current !== undefined && (revisions.questions === undefined || revisions.questions !== last.questions))
      last = revisions
      if (!moved) return
      if (visible) void load()
      else stale = true
    }
  }
}
