/**
 * A competition as `magi show` prints it, and as `--json` gives it: pure.
 * Which agent wrote each candidate is held back until the tally is recorded,
 * so a look at a run in progress cannot unblind the owner (who may pick).
 */
import * as C from "../runs/Competition.js"
import type { Run } from "../runs/Runs.js"
import { why } from "./Tally.js"

export const HIDDEN = "(hidden until the tally)"

/** The record with the authors hidden while the panel has not been tallied. */
export const blind = (run: Run): Run => {
  const c = run.competition
  if (c === undefined || C.revealed(c)) return run
  const impl = new Set(c.candidates.map((x) => x.seat))
  return {
    ...run,
    seats: run.seats.map((s) => (impl.has(s.key) ? { ...s, agent: HIDDEN } : s)),
    // The names a patch leaked would say who wrote it: hidden too, only that there were some is shown.
    competition: { ...c, candidates: c.candidates.map((x) => ({ ...x, agent: HIDDEN, leaks: x.leaks.length > 0 ? [HIDDEN] : [] })) }
  }
}

const indent = (text: string, by = "      "): ReadonlyArray<string> => text.split("\n").map((l) => `${by}${l}`)

export const describe = (c: C.Competition, line: (s: string) => string = (s) => s): ReadonlyArray<string> => {
  const shown = C.revealed(c)
  const out: string[] = ["", `competition (seed ${c.seed}): ${c.step}`]
  for (const x of c.candidates) {
    const who = shown ? ` by ${x.agent}` : ""
    const mark = c.winner === x.label ? "  ← elected" : ""
    out.push(`  candidate ${x.label}${who}: ${x.status}${x.dropped ? ` (${line(x.dropped)})` : ""} on ${x.branch}, ${x.commits.length} commit(s)${mark}`)
    if (x.fallback_from.length > 0)
      out.push(`      its seat was taken over after a usage limit${shown ? ` (from ${line(x.fallback_from.join(", then "))})` : ""}`)
    if (x.leaks.length > 0)
      out.push(
        `      its patch names an agent or vendor: ${shown ? line(x.leaks.join(", ")) : HIDDEN}${x.redacted ? "; the judges saw them as [redacted]" : ""}`
      )
    for (const l of x.numstat.split("\n").filter((l) => l !== "").slice(0, 20)) out.push(`      ${line(l)}`)
    for (const k of x.checks)
      out.push(
        `      check \`${line(k.command)}\`: ${k.timed_out ? "timed out" : k.exit === null ? "could not run" : `exit ${k.exit}`} in ${
          (k.duration_ms / 1000).toFixed(1)
        } s`
      )
  }
  for (const j of c.judges) {
    const head = `  ${j.seat}${shown ? ` (${j.agent})` : ""}: ${j.status === "answered" ? j.ranking.join(" > ") : j.status}${
      j.confidence !== null ? `, confidence ${j.confidence}` : ""
    }${j.retries > 0 ? `, ${j.retries} retry` : ""}${j.failure ? ` (${line(j.failure)})` : ""}`
    out.push(head)
    for (const [label, reason] of Object.entries(j.reasons)) out.push(...indent(`${label}: ${line(reason)}`))
  }
  for (const d of c.deliberation) {
    out.push(`  ${d.seat}, round ${d.round}: ${d.pick !== null ? `leaning ${d.pick}` : "no pick"}`)
    for (const l of d.text.split("\n").filter((l) => l.trim() !== "")) out.push(`      ${line(l)}`)
  }
  for (const v of c.votes)
    out.push(`  vote ${v.seat}: ${v.label ?? `failed (${line(v.failure)}), counted as its first ranking's top`}${v.retries > 0 ? `, ${v.retries} retry` : ""}`)
  if (c.tally !== null) {
    const t = c.tally
    out.push(`  tally: ${why(t)}`)
    out.push(
      `      first choices ${Object.entries(t.first_choices).map(([l, n]) => `${l} ${n}`).join(", ")}; Borda ${
        Object.entries(t.borda).map(([l, n]) => `${l} ${n}`).join(", ")
      }`
    )
    out.push(
      `      ${t.answered} of ${c.judges.length} judges answered (quorum ${t.quorum}); unanimous at first: ${t.unanimous_first ? "yes" : "no"}, at the end: ${
        t.unanimous_final ? "yes" : "no"
      }; votes changed: ${t.votes_changed}`
    )
  } else if (c.winner !== null && c.judges.length === 0) out.push(`  elected ${c.winner}: the only viable candidate, so no panel sat`)
  if (c.pick !== undefined)
    out.push(
      `  the owner picked ${c.pick.label} (${c.pick.at})${c.tally !== null && c.tally.winner !== c.pick.label ? `; the panel elected ${c.tally.winner}` : ""}`
    )
  if (c.folded_at !== undefined) out.push(`  folded ${c.folded_at}: the losers' and judges' worktrees and branches are removed`)
  return out
}
