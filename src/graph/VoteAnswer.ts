/**
 * A judge's private vote, and the tentative pick that ends a deliberation
 * turn: one fenced `json` block naming one viable label, `{"vote": "B"}` or
 * `{"pick": "B"}`. Pure, like `JudgeAnswer`: anything else is refused with a
 * reason short enough to send back as the nudge.
 */
import { jsonObjectOf } from "./JudgeAnswer.js"

export type Named = { readonly _tag: "ok"; readonly label: string } | { readonly _tag: "refused"; readonly reason: string }

const refused = (reason: string): Named => ({ _tag: "refused", reason })

/** The one label `text`'s last json block names under `key`, if it is one of `labels`. */
export const parseLabel = (text: string, key: "vote" | "pick", labels: ReadonlyArray<string>): Named => {
  const object = jsonObjectOf(text)
  if (object._tag === "refused") return refused(object.reason)
  const value = object.o[key]
  if (typeof value !== "string") return refused(`\`${key}\` is not one label`)
  const label = value.trim()
  if (!labels.includes(label))
    return refused(`\`${key}\` names ${JSON.stringify(label)}, which is not a viable candidate (the labels are ${labels.join(", ")})`)
  return { _tag: "ok", label }
}

export const parseVote = (text: string, labels: ReadonlyArray<string>): Named => parseLabel(text, "vote", labels)

/** A deliberation turn's tentative pick; an unreadable one is recorded as none (the vote is what counts). */
export const parsePick = (text: string, labels: ReadonlyArray<string>): string | null => {
  const got = parseLabel(text, "pick", labels)
  return got._tag === "ok" ? got.label : null
}

/** What a judge is told when its vote is sent back, in the same session. */
export const voteNudge = (reason: string, labels: ReadonlyArray<string>): string =>
  `Your vote could not be read: ${reason}. Answer again with only one fenced \`\`\`json block naming one of ${labels.join(", ")}:

\`\`\`json
{"vote": ${JSON.stringify(labels[0] ?? "A")}}
\`\`\`
`
