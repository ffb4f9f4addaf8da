/**
 * `magi show`'s part for the verification: the sync, each round's findings
 * by severity with the fixer's reply to each, the e2e and gate results (the
 * tail of a failing one's output), and why it stopped where it did. Pure:
 * `line` makes an agent's words safe for the terminal.
 */
import type { Check } from "../runs/Competition.js"
import { SEVERITIES, type Verification } from "../runs/Verification.js"

/** A failing command's output shown here: its last lines (the record keeps 4 KB). */
const TAIL_LINES = 8

const checkLines = (what: string, k: Check, line: (s: string) => string): ReadonlyArray<string> => [
  `    ${what} \`${line(k.command)}\`: ${k.timed_out ? "timed out" : k.exit === null ? "could not run" : `exit ${k.exit}`} in ${
    (k.duration_ms / 1000).toFixed(1)
  } s`,
  ...(k.exit === 0 ? [] : k.tail.trimEnd().split("\n").slice(-TAIL_LINES).map((l) => `        ${line(l)}`))
]

export const describe = (v: Verification, line: (s: string) => string = (s) => s): ReadonlyArray<string> => {
  const out: string[] = ["", `verification: ${v.step}${v.stopped ? ` (${line(v.stopped)})` : ""}`]
  const s = v.sync
  if (s.onto !== null)
    out.push(
      `  sync: onto ${s.onto.slice(0, 12)} after ${s.attempts} rebase(s)${s.rebase_fix_rounds > 0 ? `, ${s.rebase_fix_rounds} conflict fix round(s)` : ""}${
        s.conflicts.length > 0 ? `; conflicted in ${s.conflicts.map(line).join(", ")}` : ""
      }`
    )
  for (const r of v.rounds) {
    out.push(
      `  round ${r.n} at ${r.head.slice(0, 12)}${r.revoted ? " (re-voted)" : ""}${r.fixed_to === undefined ? "" : `, fixed to ${r.fixed_to.slice(0, 12)}`}`
    )
    for (const x of r.reviews)
      out.push(`    ${x.seat} (${x.agent}): ${x.status === "answered" ? (x.revote ?? x.verdict) : `${x.status}${x.failure ? ` (${line(x.failure)})` : ""}`}`)
    const findings = r.reviews.flatMap((x) => x.findings).sort((a, b) => SEVERITIES.indexOf(b.severity) - SEVERITIES.indexOf(a.severity))
    for (const f of findings) {
      const reply = f.reply === undefined
        ? "open"
        : f.reply.kind === "fixed"
        ? `fixed${f.reply.commit ? ` in ${f.reply.commit}` : ""}`
        : `rejected: ${line(f.reply.argument)}`
      out.push(`      ${f.id} [${f.severity}] ${line(f.file)}${f.line === null ? "" : `:${f.line}`} ${line(f.title)} — ${reply}`)
    }
    for (const k of r.e2e ?? []) out.push(...checkLines("e2e", k, line))
  }
  for (const g of v.gates) {
    out.push(`  gate ${g.n} at ${g.head.slice(0, 12)}, ${g.at}`)
    for (const k of g.results) out.push(...checkLines("gate", k, line))
  }
  return out
}
