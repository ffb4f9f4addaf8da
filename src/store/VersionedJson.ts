/**
 * magi's records (questions, runs) carry a `schema` number. A reader refuses a
 * record only when it is *newer* than the reader knows — by name, before its
 * shape is judged, because a newer record may hold fields this build has never
 * heard of — and reads every older one with defaults for what it lacks.
 */
import { Data, Either } from "effect"

/**
 * A record written by a newer magi than this one: its own tag, so the CLI
 * and the page can say "upgrade magi" rather than "broken file", and tests
 * catch it by tag. `record` names it as messages do ("question 2026…-ab12").
 */
export class NewerSchema extends Data.TaggedError("NewerSchema")<{
  readonly record: string
  readonly schema: number
  readonly known: number
}> {
  override get message() {
    return `${this.record} was written by a newer magi (schema ${this.schema}, this build only speaks up to ${this.known})`
  }
}

/** A body that is not a record at all (not JSON). */
export class MalformedRecord extends Data.TaggedError("MalformedRecord")<{ readonly message: string }> {}

export type VersionRefusal = NewerSchema | MalformedRecord

/** True for the newer-schema refusal, whatever a kind wrapped it in on the way. */
export const isNewerSchema = (e: unknown): e is NewerSchema => typeof e === "object" && e !== null && (e as { _tag?: unknown })._tag === "NewerSchema"

/**
 * Parse `body` and check its `schema` against `current`. The raw value on
 * success; otherwise why not, as an error worded for the person reading it.
 * `what` names the record in that wording ("question 2026…-ab12", "run …").
 */
export const parseVersioned = (
  body: string,
  source: string,
  current: number,
  what: (raw: { readonly id?: unknown }) => string
): Either.Either<unknown, VersionRefusal> => {
  let raw: unknown
  try {
    raw = JSON.parse(body)
  } catch (e) {
    return Either.left(new MalformedRecord({ message: `${source} is not valid JSON: ${(e as Error).message}` }))
  }
  const schema = typeof raw === "object" && raw !== null ? (raw as { schema?: unknown }).schema : undefined
  if (typeof schema === "number" && schema > current)
    return Either.left(new NewerSchema({ record: what(raw as { id?: unknown }), schema, known: current }))
  return Either.right(raw)
}
