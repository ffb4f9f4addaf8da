/**
 * The landing on the run's page (issue 31): the mode, where it is, the
 * pull request with its checks, each land round and why it stopped, and
 * the merge approval's state. The PR's URL, check names, round notes and
 * the reason it stopped come from the forge and from agents: text nodes
 * only, and the URL is a link only when it is `https:` (never
 * `javascript:` or a `data:` page the forge's answer smuggled in).
 */
import * as Api from "./api.js"
import type { RunDetail } from "./api.js"
import { el } from "./dom.js"
import { message } from "./view.js"

type Landing = NonNullable<RunDetail["landing"]>

const MODE_WORDS: Readonly<Record<Landing["mode"], string>> = {
  none: "none: the merge is yours (git merge)",
  local: "a local merge into the base branch",
  pr: "a pull request"
}

const stepWords = (r: RunDetail, l: Landing): string => {
  switch (l.step) {
    case "approval":
      return "waiting for your approval of the merge"
    case "merge":
      return "approved: merging"
    case "push":
      return "pushing the branch"
    case "open":
      return "opening the pull request"
    case "loop":
      return l.loop?.asked_head !== undefined && l.loop.asked_head !== l.loop.approved_head
        ? "green: waiting for your approval of the merge"
        : "watching the pull request"
    case "done":
      return r.status === "merged" ? "merged" : r.status === "closed" ? "closed on the forge" : "stopped"
  }
}

/** The URL as a link when it is https, else as text: the forge's answer decides neither the scheme nor the markup. */
export const safeHref = (url: string): string | null => {
  try {
    return new URL(url).protocol === "https:" ? url : null
  } catch {
    return null
  }
}

const urlNode = (url: string, cls: string) => {
  const href = safeHref(url)
  return href === null
    ? el("code", { class: cls }, url)
    : el("a", { class: cls, attrs: { href, target: "_blank", rel: "noopener noreferrer" } }, url)
}

const prPart = (pr: NonNullable<Landing["pr"]>) =>
  el("p", { class: "pr", attrs: { "data-number": String(pr.number) } }, `Pull request #${pr.number}: `, urlNode(pr.url, "pr-url"))

const checksPart = (l: Landing) => {
  const checks = l.loop?.checks ?? []
  if (l.mode !== "pr" || l.loop === undefined) return null
  if (checks.length === 0) return el("p", { class: "checks muted" }, "No checks reported yet.")
  return el(
    "ul",
    { class: "checks" },
    ...checks.map((c) =>
      el(
        "li",
        { class: `check ${c.outcome}`, attrs: { "data-outcome": c.outcome } },
        `${c.name}: ${c.outcome}${c.conclusion !== "" && c.conclusion !== c.outcome ? ` (${c.conclusion})` : ""}`
      )
    )
  )
}

const roundsPart = (l: Landing) =>
  l.rounds.length === 0 ? null : el(
    "ol",
    { class: "land-rounds" },
    ...l.rounds.map((x) =>
      el(
        "li",
        { class: "land-round" },
        el("span", { class: "muted" }, `${x.at.slice(0, 16).replace("T", " ")} `),
        `saw ${x.observed}; ${x.action}`,
        x.fix_commit === undefined ? null : el("code", {}, ` ${x.fix_commit.slice(0, 10)}`)
      )
    )
  )

const approvalPart = (r: RunDetail, l: Landing) => {
  if (l.question === undefined) return null
  const q = r.questions.find((x) => x.id === l.question)
  const state = l.answer !== undefined
    ? `answered "${l.answer}"${l.answer.trim().toLowerCase() === "merge" ? "" : ": held"}`
    : q === undefined
    ? "asked"
    : q.status === "open"
    ? "waiting for your answer (only merge merges)"
    : q.status
  return el(
    "p",
    { class: "approval", attrs: { "data-state": q?.status ?? "asked" } },
    "The merge approval: ",
    el("a", { attrs: { href: `#/questions/${encodeURIComponent(l.question)}` } }, state)
  )
}

/** What the last Land said, by run: shown again by the redraw its own change causes. */
const lastSaid = new Map<string, { readonly text: string; readonly error: boolean }>()

/** The landing waits on the owner's answer (the approval filed, its head not approved yet): the question is the next step, not Land. */
const waitsOnOwner = (l: Landing | undefined) =>
  l !== undefined && l.step !== "done" && l.question !== undefined &&
  (l.mode !== "pr" || (l.loop?.asked_head !== undefined && l.loop.asked_head !== l.loop.approved_head))

/**
 * Land, for a `ready` run: `magi land ID` from the page. The server starts
 * the landing in the background and answers at once; each step then shows
 * in this section as the run's record changes. A refusal comes back with
 * its reason.
 */
const landBox = (r: RunDetail, reload: () => void) => {
  if (r.status !== "ready" || r.landing?.step === "done" || waitsOnOwner(r.landing)) return null
  const said0 = lastSaid.get(r.id)
  const said = el("p", {
    class: said0?.error === true ? "land-said notice error" : "land-said muted",
    attrs: { role: "status", hidden: said0 === undefined }
  }, said0?.text ?? "")
  const button = el("button", { class: "land-run", attrs: { type: "button" } }, "Land")
  button.addEventListener("click", () => {
    button.disabled = true
    said.hidden = false
    said.className = "land-said muted"
    said.textContent = "Starting the landing…"
    Api.landRun(r.id).then(
      (done) => {
        lastSaid.set(r.id, { text: done.said, error: false })
        said.textContent = done.said
        reload()
      },
      (e: unknown) => {
        button.disabled = false
        const text = `Not landed: ${message(e)}`
        lastSaid.set(r.id, { text, error: true })
        said.className = "land-said notice error"
        said.textContent = text
      }
    )
  })
  return el(
    "div",
    { class: "run-land" },
    button,
    el("span", { class: "muted" }, " runs its landing ([graph] merge): the merge approval first, unless it is off."),
    said
  )
}

export const landingSection = (r: RunDetail, ctx: { readonly reload: () => void }): Node | null => {
  const l = r.landing
  const box = landBox(r, ctx.reload)
  if (l === undefined) return box === null ? null : el("section", { class: "landing", attrs: { "aria-label": "Landing" } }, el("h4", {}, "Landing"), box)
  return el(
    "section",
    { class: "landing", attrs: { "aria-label": "Landing" } },
    el("h4", {}, "Landing"),
    box,
    el("p", { class: "mode", attrs: { "data-mode": l.mode } }, `Mode: ${MODE_WORDS[l.mode]}`),
    el("p", { class: "step", attrs: { "data-step": l.step } }, `Where it is: ${stepWords(r, l)}`),
    l.stopped === "" ? null : el("p", { class: "stopped" }, `Why it stopped: ${l.stopped}`),
    el("p", { class: "subject" }, "Merge subject: ", el("code", {}, l.subject)),
    approvalPart(r, l),
    l.pr === undefined ? null : prPart(l.pr),
    checksPart(l),
    l.loop === undefined || l.loop.rounds_used === 0 ? null : el("p", { class: "muted" }, `Fix rounds used: ${l.loop.rounds_used}`),
    roundsPart(l),
    l.local === undefined ? null : el("p", { class: "local" }, `Merged into ${r.base} at `, el("code", {}, l.local.sha.slice(0, 12)), ` (${l.local.style})`)
  )
}
