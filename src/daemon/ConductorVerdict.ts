/**
 * Reading the conductor's reply. The conductor is an agent: it writes its
 * reasoning in prose and ends with one fenced JSON block. Models put braces
 * in prose, quote JSON inside strings, forget to close fences and sometimes
 * write two blocks, so the reply is not parsed as a document: every balanced
 * top-level `{…}` span is a candidate, tried from the last one back, and the
 * first that has the verdict's shape wins. `decisions` is required, so a
 * stray `{}` in the prose never passes for an empty verdict.
 */
import { Either, Schema } from "effect"

/** What the conductor may choose for a stalled, failed or held task. */
export const Recovery = Schema.Literal("requeue", "hold", "review", "done")
export type Recovery = typeof Recovery.Type

/**
 * The conductor's decision on one task. There is deliberately no field for
 * priority, for removing a task or for naming a branch: those stay the
 * owner's, and a review reopens only the branch magi itself finds in the
 * task's own run record.
 */
export const Decision = Schema.Struct({
  id: Schema.String,
  blocked_by: Schema.optional(Schema.Array(Schema.String)),
  reason: Schema.optional(Schema.String),
  recovery: Schema.optional(Recovery),
  question: Schema.optional(Schema.String),
  choices: Schema.optional(Schema.Array(Schema.String))
})
export type Decision = typeof Decision.Type

export const Verdict = Schema.Struct({ decisions: Schema.Array(Decision) })
export type Verdict = typeof Verdict.Type

/**
 * Every balanced top-level `{…}` span of `text`, in order. Braces inside JSON
 * strings (with their escapes) do not count; an unbalanced tail is not a
 * span.
 */
export const objectSpans = (text: string): ReadonlyArray<string> => {
  const spans: string[] = []
  let depth = 0
  let start = -1
  let inString = false
  let escaped = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (inString) {
      if (escaped) escaped = false
      else if (c === "\\") escaped = true
      else if (c === '"') inString = false
      continue
    }
    if (c === '"' && depth > 0) inString = true
    else if (c === "{") {
      if (depth === 0) start = i
      depth++
    } else if (c === "}" && depth > 0) {
      depth--
      if (depth === 0) spans.push(text.slice(start, i + 1))
    }
  }
  return spans
}

const decodeVerdict = Schema.decodeUnknownEither(Verdict)

/** The verdict in a conductor reply, or why there is none (two different failures, two messages). */
export const parseVerdict = (reply: string): Either.Either<Verdict, string> => {
  const spans = objectSpans(reply)
  let sawJson = false
  for (const span of [...spans].reverse()) {
    let value: unknown
    try {
      value = JSON.parse(span)
    } catch {
      continue
    }
    sawJson = true
    const verdict = decodeVerdict(value)
    if (Either.isRight(verdict)) return Either.right(verdict.right)
  }
  return Either.left(
    sawJson
      ? 'the conductor\'s reply has no JSON object of the right shape ({"decisions": [...]})'
      : "the conductor's reply contained no JSON object"
  )
}
