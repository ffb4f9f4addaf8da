/**
 * A competition on the run's page: the candidates side by side (stacked on
 * a phone), each with its status, commits, checks, its own account and its
 * diff; the judges' rankings and reasons, the deliberation, the votes, the
 * tally and why the winner won; and, once a winner is elected, the owner's
 * pick of another viable candidate (`magi pick`).
 *
 * The server sends the record with the authors hidden until the tally
 * (`graph/CompetitionView.blind`), so the page cannot unblind the owner.
 * Everything an agent wrote goes in as text.
 */
import { why } from "../../graph/Tally.js"
import * as Api from "./api.js"
import type { RunDetail } from "./api.js"
import { diffBox } from "./diff.js"
import { el } from "./dom.js"
import { message } from "./view.js"

type Competition = NonNullable<RunDetail["competition"]>
type Candidate = Competition["candidates"][number]

/** Each step in words, as the card and the page say where a competition is. */
export const STEP_WORDS: Readonly<Record<Competition["step"], string>> = {
  prep: "preparing the candidates' worktrees",
  implement: "the candidates implement",
  checks: "running the checks",
  judge: "the judges rank the candidates",
  deliberate: "the judges deliberate",
  vote: "the judges vote",
  tally: "counting the votes",
  fold: "folding the losers",
  elected: "a winner is elected",
  verified_noop: "no change was needed",
  failed: "the competition failed"
}

/** The one line a run's card shows of its competition. */
export const stepLine = (c: Competition): string => {
  const viable = c.candidates.filter((x) => x.status === "viable").length
  const head = `competition: ${STEP_WORDS[c.step]}`
  return c.winner !== null
    ? `${head} · ${c.winner}${c.pick !== undefined ? " (your pick)" : ""} won`
    : `${head} · ${c.candidates.length} candidates${viable > 0 ? `, ${viable} viable` : ""}`
}

const checkLine = (k: Candidate["checks"][number]) =>
  `${k.command}: ${k.timed_out ? "timed out" : k.exit === null ? "could not run" : k.exit === 0 ? "passed" : `exit ${k.exit}`} in ${
    (k.duration_ms / 1000).toFixed(1)
  } s`

const pickButton = (r: RunDetail, c: Competition, x: Candidate, picked: () => void) => {
  if (c.step !== "elected" || x.status !== "viable" || c.winner === x.label || c.folded_at !== undefined) return null
  const said = el("p", { class: "pick-said muted", attrs: { role: "status", hidden: true } })
  const button = el("button", { class: "pick", attrs: { type: "button", "data-label": x.label } }, `Pick ${x.label} instead`)
  button.addEventListener("click", () => {
    button.disabled = true
    said.hidden = false
    said.className = "pick-said muted"
    said.textContent = `Picking ${x.label}…`
    Api.pickCandidate(r.id, x.label).then(picked, (e: unknown) => {
      button.disabled = false
      said.className = "pick-said notice error"
      said.textContent = `Not picked: ${message(e)}`
    })
  })
  return el("div", { class: "pick-box" }, button, said)
}

const candidateCard = (r: RunDetail, c: Competition, x: Candidate, picked: () => void) => {
  const won = c.winner === x.label
  const gone = c.folded_at !== undefined && !won
  return el(
    "section",
    { class: `candidate ${x.status}${won ? " winner" : ""}`, attrs: { "data-label": x.label, "aria-label": `Candidate ${x.label}` } },
    el(
      "h5",
      {},
      `Candidate ${x.label}`,
      el("span", { class: "muted" }, ` · ${x.agent} · ${x.status}`),
      won ? el("span", { class: "status answered" }, c.pick?.label === x.label ? "your pick" : "elected") : null
    ),
    x.dropped === "" ? null : el("p", { class: "notice error" }, x.dropped),
    el("p", { class: "muted" }, el("code", {}, x.branch), ` · ${x.commits.length === 1 ? "1 commit" : `${x.commits.length} commits`}`),
    x.checks.length === 0 ? null : el("ul", { class: "checks" }, ...x.checks.map((k) => el("li", { class: k.exit === 0 ? "ok" : "bad" }, checkLine(k)))),
    x.summary === "" ? null : el("details", { class: "candidate-summary" }, el("summary", {}, "Its account"), el("div", { class: "detail text" }, x.summary)),
    gone || x.commits.length === 0 ? null : diffBox(r.id, x.label, `${x.commits[0] ?? ""}:${x.commits.length}`, `Diff of ${x.label}`),
    pickButton(r, c, x, picked)
  )
}

const judgesPart = (c: Competition) =>
  c.judges.length === 0
    ? null
    : el(
      "div",
      { class: "judges" },
      el("h5", {}, "The judges"),
      ...c.judges.map((j) =>
        el(
          "div",
          { class: "judge", attrs: { "data-seat": j.seat } },
          el(
            "p",
            {},
            el("strong", {}, j.seat),
            j.agent.startsWith("(") ? "" : ` (${j.agent})`,
            `: ${j.status === "answered" ? j.ranking.join(" > ") : j.status}`,
            j.confidence === null ? "" : `, confidence ${j.confidence}`,
            j.retries > 0 ? `, ${j.retries} retry` : ""
          ),
          j.failure === "" ? null : el("p", { class: "notice error" }, j.failure),
          Object.keys(j.reasons).length === 0
            ? null
            : el("dl", { class: "reasons" }, ...Object.entries(j.reasons).flatMap(([label, reason]) => [el("dt", {}, label), el("dd", {}, reason)]))
        )
      )
    )

const deliberationPart = (c: Competition) =>
  c.deliberation.length === 0
    ? null
    : el(
      "details",
      { class: "deliberation" },
      el("summary", {}, `The deliberation (${c.deliberation.length} turns)`),
      ...c.deliberation.map((d) =>
        el(
          "div",
          { class: "turn" },
          el("p", { class: "muted" }, `${d.seat}, round ${d.round}: ${d.pick === null ? "no pick" : `leaning ${d.pick}`}`),
          el("div", { class: "detail text" }, d.text)
        )
      )
    )

const tallyPart = (c: Competition) => {
  const t = c.tally
  const votes = c.votes.map((v) => `${v.seat}: ${v.label ?? `failed (${v.failure}), its first ranking's top counted`}`)
  return el(
    "div",
    { class: "tally" },
    votes.length === 0 ? null : el("p", { class: "muted votes" }, `Votes: ${votes.join(" · ")}`),
    t === null
      ? (c.winner !== null && c.judges.length === 0 ? el("p", {}, `${c.winner} won: the only viable candidate, so no panel sat.`) : null)
      : el(
        "p",
        {},
        el("strong", {}, "Tally: "),
        why(t),
        `. First choices ${Object.entries(t.first_choices).map(([l, n]) => `${l} ${n}`).join(", ")}; Borda ${
          Object.entries(t.borda).map(([l, n]) => `${l} ${n}`).join(", ")
        }; ${t.answered} of ${c.judges.length} judges answered (quorum ${t.quorum}).`
      ),
    c.pick === undefined ? null : el("p", {}, `You picked ${c.pick.label}${t !== null && t.winner !== c.pick.label ? `; the panel elected ${t.winner}` : ""}.`),
    c.folded_at === undefined ? null : el("p", { class: "muted" }, "Folded: the losers' worktrees and branches are removed.")
  )
}

/** The run page's competition section, or nothing for a single-seat run. */
export const competitionSection = (r: RunDetail, ctx: { readonly reload: () => void }): Node | null => {
  const c = r.competition
  if (c === undefined) return null
  return el(
    "section",
    { class: "competition", attrs: { "aria-label": "Competition" } },
    el("h4", {}, "Competition"),
    el("p", { class: "step", attrs: { "data-step": c.step } }, stepLine(c)),
    el("div", { class: "candidates" }, ...c.candidates.map((x) => candidateCard(r, c, x, ctx.reload))),
    judgesPart(c),
    deliberationPart(c),
    tallyPart(c)
  )
}
