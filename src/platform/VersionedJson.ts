/**
 * magi's records (questions, runs) carry a `schema` number. A reader refuses a
 * record only when it is *newer* than the reader knows — by name, before its
 * shape is judged, because a newer record may hold fields this build has never
 * heard of — and reads every older one with defaults for what it lacks.
 */
import { Either } from "effect"

/**
 * Parse `body` and check its `schema` against `current`. The raw value on
 * success; otherwise why not, worded for the person reading the error.
 * `what` names the record in that wording ("question 2026…-ab12", "run …").
 */
export const parseVersioned = (
  body: string,
  source: string,
  current: number,
  what: (raw: { readonly id?: unknown }) => string
): Either.Either<unknown, string> => {
  let raw: unknown
  try {
    raw = JSON.parse(body)
  } catch (e) {
    return Either.left(`${source} is not valid JSON: ${(e as Error).message}`)
  }
  const schema = typeof raw === "object" && raw !== null ? (raw as { schema?: unknown }).schema : undefined
  if (typeof schema === "number" && schema > current)
    return Either.left(
      `${what(raw as { id?: unknown })} was written by a newer magi (schema ${schema}, this build only speaks up to ${current})`
    )
  return Either.right(raw)
}
