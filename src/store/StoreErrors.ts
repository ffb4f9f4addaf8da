/**
 * The store's one error family, whatever the kind and the backend: each
 * carries what a caller branches on or prints (the kind's noun, the id or
 * text wanted, where it was looked for) and derives its message from those
 * fields, so the CLI and the web say the same thing from the same data.
 * `NewerSchema` (`VersionedJson.ts`) is the fifth: a record from a newer magi.
 */
import { Schema } from "effect"

/** Ids an ambiguous lookup names before "and N more". */
export const AMBIGUOUS_NAMED = 10

/** Longest text quoted from outside (an id typed, a decoder's words): a hostile value can be as big as a file. */
const QUOTE_MAX_CHARS = 400

const quoted = (text: string) => (text.length > QUOTE_MAX_CHARS ? `${text.slice(0, QUOTE_MAX_CHARS)}…` : text)

/**
 * No record answers to `wanted`: none matches (`total` 0), or several do
 * (`matches`, the first of them sorted, out of `total`), or the exact id is
 * not at `where`.
 */
export class RecordNotFound extends Schema.TaggedError<RecordNotFound>()("RecordNotFound", {
  kind: Schema.String,
  plural: Schema.String,
  wanted: Schema.String,
  matches: Schema.Array(Schema.String),
  total: Schema.Number,
  where: Schema.optional(Schema.String)
}) {
  override get message(): string {
    if (this.total > 1) {
      const more = this.total > AMBIGUOUS_NAMED ? ` and ${this.total - AMBIGUOUS_NAMED} more` : ""
      const named = this.matches.slice(0, AMBIGUOUS_NAMED).join(", ") + more
      return `\`${quoted(this.wanted)}\` matches ${this.total} ${this.plural}: ${named}; type more of the id`
    }
    if (this.where !== undefined) return `no ${this.kind} \`${quoted(this.wanted)}\` at ${this.where}`
    return `no ${this.kind} matches \`${quoted(this.wanted)}\``
  }
}

/** A record is stored at `where` but this build cannot read it; `reason` is the whole sentence, naming `where`. */
export class RecordUnreadable extends Schema.TaggedError<RecordUnreadable>()("RecordUnreadable", {
  kind: Schema.String,
  where: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return this.reason
  }
}

/**
 * The backend said no while magi tried to `op` (`read`, `list`, `hold run
 * 2026…`) at `where` (a path, or the database's masked URL); `reason` is
 * what it said, `cause` the error itself for whoever reports it. `lost`: the
 * database stopped answering, which the user can fix by checking the server.
 */
export class StoreFailed extends Schema.TaggedError<StoreFailed>()("StoreFailed", {
  kind: Schema.String,
  op: Schema.String,
  where: Schema.String,
  reason: Schema.String,
  backend: Schema.Literal("files", "postgres"),
  lost: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  cause: Schema.optional(Schema.Defect)
}) {
  override get message(): string {
    if (this.lost) return `the store at ${this.where} stopped answering as magi tried to ${this.op}: ${this.reason}. Check the server and try again.`
    if (this.backend === "postgres") return `${this.op} in PostgreSQL at ${this.where}: ${this.reason}`
    return `${this.op} ${this.where}: ${this.reason}`
  }
}

/** Another writer kept one record's lock for longer than a writer waits (`label`: the id as messages show it). */
export class LockBusy extends Schema.TaggedError<LockBusy>()("LockBusy", {
  kind: Schema.String,
  id: Schema.String,
  label: Schema.String,
  lock: Schema.String,
  waitedMs: Schema.Number
}) {
  override get message(): string {
    return `${this.kind} ${this.label} is being updated by another process (${this.lock} kept changing hands for ${this.waitedMs / 1000}s); try again`
  }
}

/** An id magi will not join onto a path (a separator, a leading dot, `..`): it can be found by listing, never written. */
export class UnsafeId extends Schema.TaggedError<UnsafeId>()("UnsafeId", {
  kind: Schema.String,
  id: Schema.String
}) {
  override get message(): string {
    return `\`${quoted(this.id)}\` is not an id magi will build a path from`
  }
}

/** What a write can fail with. */
export type WriteError = StoreFailed | LockBusy | UnsafeId
