/**
 * `magi fix ID -f R2-1-3`: which recorded findings the owner chose, read
 * against the run's record. Pure: the driver sends what this returns to the
 * fixer, and an id the record does not have is refused with the ones it has,
 * before any turn starts.
 */
import { Either, Schema } from "effect"
import { type Finding, findingsOf, type Verification } from "../runs/Verification.js"

export class UnknownFindings extends Schema.TaggedError<UnknownFindings>()("UnknownFindings", {
  run: Schema.String,
  unknown: Schema.Array(Schema.String),
  known: Schema.Array(Schema.String)
}) {
  override get message() {
    return `run ${this.run} has no finding ${this.unknown.join(", ")}; its findings are ${this.known.join(", ") || "none (nothing was found)"}`
  }
}

/** Every finding of every round, newest round last, each id once (a re-vote's findings included). */
export const allFindings = (v: Verification): ReadonlyArray<Finding> => v.rounds.flatMap(findingsOf)

/** The chosen findings, in the order asked, each once; or which ids are unknown, with the known ones. */
export const choose = (run: string, v: Verification, ids: ReadonlyArray<string>): Either.Either<ReadonlyArray<Finding>, UnknownFindings> => {
  const all = allFindings(v)
  const byId = new Map(all.map((f) => [f.id.toUpperCase(), f]))
  const wanted = [...new Set(ids.map((i) => i.trim().toUpperCase()))]
  const unknown = wanted.filter((i) => !byId.has(i))
  if (unknown.length > 0 || wanted.length === 0)
    return Either.left(new UnknownFindings({ run, unknown: unknown.length > 0 ? unknown : ["(none given)"], known: all.map((f) => f.id) }))
  return Either.right(wanted.map((i) => byId.get(i)!))
}
