/**
 * Deliberation and the private vote: what a judge is shown, built by pure
 * code. The transcript is anonymized: judges appear as "Judge N" (the
 * reader's own lines marked "you"), never by agent or seat key, and any
 * agent name found in what a judge wrote is blanked, so the panel argues
 * over the patches, not over who wrote them or who judged them.
 */
import type * as C from "../runs/Competition.js"

/** A turn's text is cut past this: it is re-sent to every later speaker. */
export const TURN_MAX_CHARS = 4000

/** Do the judges who gave a ranking disagree on the first choice? */
export const split = (judges: ReadonlyArray<C.Judge>): boolean => new Set(answered(judges).map((j) => j.ranking[0])).size > 1

/** The judges that take part after the rankings: those that gave one. */
export const answered = (judges: ReadonlyArray<C.Judge>): ReadonlyArray<C.Judge> => judges.filter((j) => j.status === "answered")

/** The turns still to speak, in order (round 1: judge-1, judge-2, …; round 2: …), given the turns recorded. */
export const turnsLeft = (
  judges: ReadonlyArray<C.Judge>,
  rounds: number,
  said: ReadonlyArray<C.Deliberation>
): ReadonlyArray<{ readonly seat: string; readonly round: number }> => {
  const out: Array<{ seat: string; round: number }> = []
  for (let round = 1; round <= rounds; round++)
    for (const j of answered(judges)) if (!said.some((d) => d.seat === j.seat && d.round === round)) out.push({ seat: j.seat, round })
  return out
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** `text` with every name in `names` (whole words, any case) blanked. */
export const redact = (text: string, names: ReadonlyArray<string>): string =>
  names.filter((n) => n.trim() !== "").reduce((t, n) => t.replace(new RegExp(`\\b${escape(n)}\\b`, "gi"), "[a judge]"), text)

export const cut = (text: string, max: number = TURN_MAX_CHARS): string => (text.length <= max ? text : `${text.slice(0, max - 1)}…`)

/**
 * What `self` reads before it speaks or votes: every opening ranking with its
 * reasons, then every turn so far, each under "Judge N".
 */
export const transcript = (
  judges: ReadonlyArray<C.Judge>,
  said: ReadonlyArray<C.Deliberation>,
  self: string,
  names: ReadonlyArray<string>
): string => {
  const number = new Map(judges.map((j, i) => [j.seat, i + 1]))
  const who = (seat: string) => `Judge ${number.get(seat) ?? "?"}${seat === self ? " (you)" : ""}`
  const clean = (s: string) => redact(s, names)
  const openings = answered(judges).map((j) =>
    [
      `## ${who(j.seat)}: ${j.ranking.join(" > ")}${j.confidence !== null ? `, confidence ${j.confidence}` : ""}`,
      ...j.ranking.filter((l) => j.reasons[l] !== undefined).map((l) => `- ${l}: ${clean(j.reasons[l]!)}`)
    ].join("\n")
  )
  const turns = said.map((d) => `## ${who(d.seat)}, round ${d.round}${d.pick !== null ? `, leaning ${d.pick}` : ""}\n\n${clean(d.text)}`)
  return ["# The opening rankings", "", openings.join("\n\n"), ...(turns.length > 0 ? ["", "# The deliberation so far", "", turns.join("\n\n")] : [])].join(
    "\n"
  )
}

/** A deliberation turn's prompt. */
export const deliberatePrompt = (transcript: string, labels: ReadonlyArray<string>, round: number, rounds: number): string =>
  `# Deliberation, round ${round} of ${rounds}

The panel's first choices differ. Below is what every judge said, by number
only; your own lines are marked "you". Weigh the others' reasons against
yours, say briefly what you now think and why, and end with one fenced json
block naming your tentative pick. The candidates are ${labels.join(", ")}.

${transcript}

\`\`\`json
{"pick": ${JSON.stringify(labels[0] ?? "A")}}
\`\`\`
`

/** The private vote's prompt: asked alone, and told no one sees it. */
export const votePrompt = (transcript: string, labels: ReadonlyArray<string>): string =>
  `# Your private vote

The panel has spoken; now vote alone. No other judge will see your vote,
and nothing you said before binds you: name the one candidate the owner
should take. The candidates are ${labels.join(", ")}.

${transcript}

End your reply with exactly one fenced json block:

\`\`\`json
{"vote": ${JSON.stringify(labels[0] ?? "A")}}
\`\`\`
`

/** A turn's text as recorded: the answer without its json block, cut. */
export const turnText = (answer: string): string => cut(answer.replace(/```json[^\n]*\n[\s\S]*?```/g, "").trim())
