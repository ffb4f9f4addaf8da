/**
 * A judge's answer: one fenced `json` block
 * `{"ranking": ["B","A","C"], "reasons": {"A": "…"}, "confidence": 0.8}`.
 * Pure: the block is found and checked here, and anything else (prose, an
 * unknown, repeated or missing label, a huge or empty answer) is refused with
 * a reason short enough to send back as the nudge.
 */

/** Past this, an answer is not read at all: no judge needs 1 MB to rank a few patches. */
export const ANSWER_MAX_CHARS = 1024 * 1024

/** A reason longer than this is cut: it is shown in a card and a terminal. */
export const REASON_MAX_CHARS = 2000

export interface Ranking {
  readonly ranking: ReadonlyArray<string>
  readonly reasons: Readonly<Record<string, string>>
  readonly confidence: number | null
}

export type Parsed = { readonly _tag: "ok"; readonly value: Ranking } | { readonly _tag: "refused"; readonly reason: string }

const refused = (reason: string): Parsed => ({ _tag: "refused", reason })

/** The last fenced json block of `text` (an answer may quote the format before giving its own). */
export const lastJsonBlock = (text: string): string | null => {
  const blocks = [...text.matchAll(/```json[^\n]*\n([\s\S]*?)```/g)]
  return blocks.length === 0 ? null : blocks[blocks.length - 1]![1]!
}

/**
 * The object in `text`'s last fenced json block, or why there is none: the
 * checks every judge answer (ranking, vote, pick) shares before its own.
 */
export const jsonObjectOf = (
  text: string
): { readonly _tag: "ok"; readonly o: Record<string, unknown> } | { readonly _tag: "refused"; readonly reason: string } => {
  const no = (reason: string) => ({ _tag: "refused" as const, reason })
  if (text.trim() === "") return no("the answer was empty")
  if (text.length > ANSWER_MAX_CHARS) return no(`the answer was ${text.length} characters, more than the ${ANSWER_MAX_CHARS} read`)
  const block = lastJsonBlock(text)
  if (block === null) return no("the answer had no fenced ```json block")
  let raw: unknown
  try {
    raw = JSON.parse(block)
  } catch (e) {
    return no(`the json block is not valid JSON (${(e as Error).message})`)
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return no("the json block is not an object")
  return { _tag: "ok", o: raw as Record<string, unknown> }
}

export const parseRanking = (text: string, labels: ReadonlyArray<string>): Parsed => {
  const object = jsonObjectOf(text)
  if (object._tag === "refused") return refused(object.reason)
  const o = object.o
  if (!Array.isArray(o.ranking) || !o.ranking.every((l) => typeof l === "string")) return refused("`ranking` is not a list of labels")
  const ranking = o.ranking.map((l: string) => l.trim())
  const unknown = ranking.filter((l) => !labels.includes(l))
  if (unknown.length > 0)
    return refused(
      `\`ranking\` names ${unknown.join(", ")}, which ${unknown.length === 1 ? "is" : "are"} not a candidate (the labels are ${labels.join(", ")})`
    )
  const repeated = ranking.filter((l, i) => ranking.indexOf(l) !== i)
  if (repeated.length > 0) return refused(`\`ranking\` names ${[...new Set(repeated)].join(", ")} more than once`)
  const missing = labels.filter((l) => !ranking.includes(l))
  if (missing.length > 0) return refused(`\`ranking\` leaves out ${missing.join(", ")}: rank every candidate`)
  const reasons: Record<string, string> = {}
  if (typeof o.reasons === "object" && o.reasons !== null && !Array.isArray(o.reasons)) {
    for (const [k, v] of Object.entries(o.reasons as Record<string, unknown>))
      if (labels.includes(k) && typeof v === "string") reasons[k] = v.length > REASON_MAX_CHARS ? `${v.slice(0, REASON_MAX_CHARS - 1)}…` : v
  }
  const c = typeof o.confidence === "number" && Number.isFinite(o.confidence) ? Math.min(1, Math.max(0, o.confidence)) : null
  return { _tag: "ok", value: { ranking, reasons, confidence: c } }
}

/** What a judge is told when its answer is sent back, in the same session. */
export const nudge = (reason: string, labels: ReadonlyArray<string>): string =>
  `Your answer could not be read: ${reason}. Answer again with only one fenced \`\`\`json block ranking every candidate exactly once, best first:

\`\`\`json
{"ranking": [${labels.map((l) => JSON.stringify(l)).join(", ")}], "reasons": {"${labels[0] ?? "A"}": "why"}, "confidence": 0.7}
\`\`\`
`
