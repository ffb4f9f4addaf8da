/**
 * A reviewer's answer: one fenced `json` block
 * `{"verdict": "approve_with_findings", "findings": [{"severity": "minor",
 * "file": "src/a.ts", "line": 3, "title": "…", "body": "…"}]}`, read with the
 * judges' `jsonObjectOf` (empty, 1 MB cap, fence, JSON, object). Pure: the
 * files that exist are handed in, so a finding on a file that is not in the
 * tree is refused with the others (prose, an unknown severity or verdict).
 * magi numbers the findings `R<round>-<seat>-<n>`; an agent's own ids are ignored.
 */
import { jsonObjectOf } from "../graph/JudgeAnswer.js"
import { type Finding, SEVERITIES, type Severity, type Verdict } from "../runs/Verification.js"

export const VERDICTS: ReadonlyArray<Verdict> = ["approve", "approve_with_findings", "reject"]
/** A finding's title and body are shown in a terminal and a card: longer is cut. */
export const TEXT_MAX_CHARS = 4000

export type Parsed =
  | { readonly _tag: "ok"; readonly verdict: Verdict; readonly findings: ReadonlyArray<Finding> }
  | { readonly _tag: "refused"; readonly reason: string }

const cut = (s: string) => (s.length > TEXT_MAX_CHARS ? `${s.slice(0, TEXT_MAX_CHARS - 1)}…` : s)

/** `R<round>-<seat index>-<n>`: seat `review-2`'s third finding of round 1 is `R1-2-3`. */
export const findingId = (round: number, seat: string, n: number): string => `R${round}-${seat.replace(/^review-/, "")}-${n}`

export const parseReview = (
  text: string,
  at: { readonly round: number; readonly seat: string; readonly first?: number },
  fileExists: (file: string) => boolean
): Parsed => {
  const object = jsonObjectOf(text)
  if (object._tag === "refused") return object
  const o = object.o
  if (typeof o.verdict !== "string" || !VERDICTS.includes(o.verdict as Verdict))
    return { _tag: "refused", reason: `\`verdict\` must be one of ${VERDICTS.join(", ")}` }
  const raw = o.findings ?? []
  if (!Array.isArray(raw)) return { _tag: "refused", reason: "`findings` is not a list" }
  const findings: Array<Finding> = []
  for (const [i, f] of raw.entries()) {
    const which = `finding ${i + 1}`
    if (typeof f !== "object" || f === null) return { _tag: "refused", reason: `${which} is not an object` }
    const x = f as Record<string, unknown>
    if (typeof x.severity !== "string" || !SEVERITIES.includes(x.severity as Severity))
      return { _tag: "refused", reason: `${which} has severity ${JSON.stringify(x.severity)}; it must be one of ${SEVERITIES.join(", ")}` }
    if (typeof x.title !== "string" || x.title.trim() === "") return { _tag: "refused", reason: `${which} has no \`title\`` }
    const file = typeof x.file === "string" ? x.file.trim().replace(/^\.\//, "") : ""
    if (file !== "" && !fileExists(file)) return { _tag: "refused", reason: `${which} is on ${file}, which is not a file of the branch` }
    const line = typeof x.line === "number" && Number.isInteger(x.line) && x.line > 0 ? x.line : null
    findings.push({
      id: findingId(at.round, at.seat, (at.first ?? 1) + findings.length),
      seat: at.seat,
      severity: x.severity as Severity,
      file,
      line,
      title: cut(x.title.trim()),
      body: cut(typeof x.body === "string" ? x.body : "")
    })
  }
  return { _tag: "ok", verdict: o.verdict as Verdict, findings }
}

/** What a reviewer is told when its answer is sent back, in the same session. */
export const nudge = (reason: string): string =>
  `Your review could not be read: ${reason}. Answer again with only one fenced \`\`\`json block:

\`\`\`json
{"verdict": "approve_with_findings", "findings": [{"severity": "minor", "file": "path/in/the/branch", "line": 1, "title": "…", "body": "…"}]}
\`\`\`
`
