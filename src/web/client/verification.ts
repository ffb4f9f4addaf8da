/**
 * The verification on the run's page (issue 30): where it stopped and why,
 * the sync, each round's reviewers and findings by severity with the
 * fixer's reply to each, and the e2e and gate commands, a failing one's
 * output collapsed until tapped. Findings, replies and command output are
 * agents' and programs' words: they go in as text nodes only, never markup.
 */
import type { RunDetail } from "./api.js"
import { el } from "./dom.js"

type Verification = NonNullable<RunDetail["verification"]>
type Round = Verification["rounds"][number]
type Finding = Round["reviews"][number]["findings"][number]
type Check = NonNullable<Round["e2e"]>[number]

const STEP_WORDS: Readonly<Record<Verification["step"], string>> = {
  sync: "syncing to its base",
  review: "in review",
  gate: "running the gate",
  fix: "with its fixer (magi fix)",
  ready: "ready",
  blocked: "blocked",
  already_in_base: "already in its base"
}

/** Worst first, as a reader triages. */
const RANK: Readonly<Record<Finding["severity"], number>> = { blocker: 0, major: 1, minor: 2, nit: 3 }

const replyWords = (f: Finding): string =>
  f.reply === undefined
    ? "open"
    : f.reply.kind === "fixed"
    ? `fixed${f.reply.commit ? ` in ${f.reply.commit}` : ""}${f.reply.argument ? `: ${f.reply.argument}` : ""}`
    : `rejected: ${f.reply.argument}`

const findingItem = (f: Finding) =>
  el(
    "li",
    { class: `finding ${f.severity}`, attrs: { "data-id": f.id, "data-severity": f.severity } },
    el("span", { class: "severity" }, f.severity),
    " ",
    el("code", {}, f.id),
    " ",
    el("code", { class: "where" }, `${f.file}${f.line === null ? "" : `:${f.line}`}`),
    " ",
    el("strong", {}, f.title),
    f.body === "" ? null : el("p", { class: "body" }, f.body),
    el("p", { class: `reply ${f.reply?.kind ?? "open"}` }, `Fixer: ${replyWords(f)}`)
  )

/** One command's result; a failing one's output folded away, one tap to read. */
const checkItem = (what: string, k: Check) => {
  const result = k.timed_out ? "timed out" : k.exit === null ? "could not run" : k.exit === 0 ? "passed" : `exit ${k.exit}`
  const line = `${what} ${k.command}: ${result} in ${(k.duration_ms / 1000).toFixed(1)} s`
  return el(
    "li",
    { class: `check ${k.exit === 0 ? "ok" : "failed"}` },
    k.tail.trim() === "" ? line : el("details", {}, el("summary", {}, line), el("pre", { class: "tail" }, k.tail))
  )
}

const roundPart = (r: Round) => {
  const findings = r.reviews.flatMap((x) => x.findings).sort((a, b) => RANK[a.severity] - RANK[b.severity])
  return el(
    "div",
    { class: "round", attrs: { "data-round": String(r.n) } },
    el(
      "h5",
      {},
      `Round ${r.n} at ${r.head.slice(0, 10)}${r.revoted ? " (re-voted)" : ""}${r.fixed_to === undefined ? "" : `, fixed to ${r.fixed_to.slice(0, 10)}`}`
    ),
    el(
      "ul",
      { class: "reviewers" },
      ...r.reviews.map((x) =>
        el("li", {}, `${x.seat} (${x.agent}): ${x.status === "answered" ? (x.revote ?? x.verdict ?? "") : `${x.status}${x.failure ? ` — ${x.failure}` : ""}`}`)
      )
    ),
    findings.length === 0 ? el("p", { class: "muted" }, "No findings.") : el("ul", { class: "findings" }, ...findings.map(findingItem)),
    r.e2e === null || r.e2e.length === 0 ? null : el("ul", { class: "checks" }, ...r.e2e.map((k) => checkItem("e2e", k)))
  )
}

export const verificationSection = (r: RunDetail): Node | null => {
  const v = r.verification
  if (v === undefined) return null
  const s = v.sync
  return el(
    "section",
    { class: "verification", attrs: { "aria-label": "Review" } },
    el("h4", {}, "Review"),
    el("p", { class: "step", attrs: { "data-step": v.step } }, `Verification: ${STEP_WORDS[v.step]}`),
    v.stopped === "" ? null : el("p", { class: "stopped" }, `Why it stopped here: ${v.stopped}`),
    s.onto === null
      ? null
      : el(
        "p",
        { class: "sync" },
        `Synced onto ${s.onto.slice(0, 10)} after ${s.attempts} rebase(s)${s.rebase_fix_rounds > 0 ? `, ${s.rebase_fix_rounds} conflict fix round(s)` : ""}${
          s.conflicts.length > 0 ? `; conflicted in ${s.conflicts.join(", ")}` : ""
        }`
      ),
    ...v.rounds.map(roundPart),
    v.gates.length === 0
      ? el("p", { class: "gate muted" }, "The gate has not run.")
      : el(
        "div",
        { class: "gates" },
        ...v.gates.map((g) =>
          el(
            "div",
            { class: "gate" },
            el("h5", {}, `Gate ${g.n} at ${g.head.slice(0, 10)}`),
            el("ul", { class: "checks" }, ...g.results.map((k) => checkItem("gate", k)))
          )
        )
      )
  )
}
