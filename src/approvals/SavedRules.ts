/**
 * The rules "Always allow" saved: one record per rule on the configured
 * backend (`<home>/approval-rules/<id>.json`, or rows of the kind
 * `approval-rules` in PostgreSQL), so every machine and process sharing a
 * store sees the same rules, and the owner sees and removes them with
 * `magi approvals list` / `magi approvals rm N`.
 *
 * One record per rule, created new under an id that sorts by time: two
 * agents saving rules at once each create their own record, and neither can
 * overwrite the other (no read-modify-write of a shared list). Removing is
 * removing one record.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import { Clock, Data, Effect, Either, Random, Schema } from "effect"
import type * as RecordStore from "../store/RecordStore.js"
import * as StoreBackend from "../store/StoreBackend.js"
import * as ConfiguredStore from "../platform/ConfiguredStore.js"
import { parseVersioned } from "../store/VersionedJson.js"

export const SAVED_RULE_SCHEMA = 1

export const SavedRule = Schema.Struct({
  schema: Schema.Number,
  id: Schema.String,
  /** The rule as shown on the "Always allow" choice, e.g. `Bash(git push:*)`. */
  rule: Schema.String,
  /** The repository it applies in (the asking agent's). */
  repo: Schema.String,
  added_at: Schema.String,
  /** The approval question whose "Always allow" saved it. */
  question: Schema.String
})
export type SavedRule = typeof SavedRule.Type

/** Every id drawn for a new saved rule was already taken. */
export class SavedRulesError extends Data.TaggedError("SavedRulesError")<{ readonly message: string }> {}

/** The kind's folder in the home, and its key in the database. */
export const SAVED_RULES_FOLDER = "approval-rules"

const decodeShape = Schema.decodeUnknownEither(SavedRule, { onExcessProperty: "error" })

const failed = (message: string) => new SavedRulesError({ message })

/** The saved rules as `StoreBackend.records` and `magi store migrate` take a kind. */
export const savedRuleRecords: StoreBackend.KindShape<SavedRule> = {
  folder: SAVED_RULES_FOLDER,
  kind: {
    noun: "saved approval rule",
    decode: (body, source) =>
      Either.flatMap(
        parseVersioned(body, source, SAVED_RULE_SCHEMA, (raw) => `saved approval rule ${typeof raw.id === "string" ? raw.id : source}`),
        (raw) => Either.mapLeft(decodeShape(raw), (e) => ({ message: `${source} is not a saved approval rule magi can read: ${e.message}` }))
      ),
    encode: (r) => JSON.stringify(r, null, 2) + "\n",
    idOf: (r) => r.id,
    // A rule and a path: a few hundred bytes; 64 KiB is no rule magi saved.
    maxBytes: 64 * 1024
  }
}

const pad = (n: number, width = 2) => String(n).padStart(width, "0")

/** An id that sorts as the rules were saved: UTC time to the millisecond, then a random part. */
export const ruleId = (ms: number, entropy: number): string => {
  const d = new Date(ms)
  return (
    `${d.getUTCFullYear()}${pad(d.getUTCMonth() + 1)}${pad(d.getUTCDate())}` +
    `-${pad(d.getUTCHours())}${pad(d.getUTCMinutes())}${pad(d.getUTCSeconds())}${pad(d.getUTCMilliseconds(), 3)}` +
    `-${(entropy & 0xffffff).toString(16).padStart(6, "0")}`
  )
}

/** Ids drawn before giving up: a collision needs the same millisecond and the same 24 random bits. */
const ID_DRAWS = 16

export interface SavedRulesShape {
  /** Where the rules are, for messages: the folder, or the database with its password masked. */
  readonly where: string
  /** Every readable saved rule, oldest first: the order `magi approvals list` numbers them in. */
  readonly list: Effect.Effect<ReadonlyArray<SavedRule>, RecordStore.Failed>
  /** Save one rule for `repo`; an identical rule for the same repo is not saved twice. */
  readonly add: (rule: string, repo: string, question: string) => Effect.Effect<SavedRule, SavedRulesError | RecordStore.Failed>
  /** Remove one saved rule by id. */
  readonly remove: (id: string) => Effect.Effect<void, RecordStore.Failed>
}

/** The saved rules on the configured backend. */
export class SavedRules extends Effect.Service<SavedRules>()("magi/SavedRules", {
  effect: Effect.suspend(() => make),
  dependencies: [ConfiguredStore.layer]
}) {
  static layer = SavedRules.Default
}

export const make: Effect.Effect<SavedRulesShape, never, StoreBackend.StoreBackend | FileSystem.FileSystem> = Effect.gen(function* () {
  const records = yield* StoreBackend.recordsOf(savedRuleRecords)
  const list = records.scan.pipe(Effect.map((scan) => [...scan.records].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))))
  const add = (rule: string, repo: string, question: string) =>
    Effect.gen(function* () {
      const same = (yield* list).find((r) => r.rule === rule && r.repo === repo)
      if (same !== undefined) return same
      for (let draw = 0; draw < ID_DRAWS; draw++) {
        const ms = yield* Clock.currentTimeMillis
        const saved: SavedRule = {
          schema: SAVED_RULE_SCHEMA,
          id: ruleId(ms, yield* Random.nextIntBetween(0, 0x1000000)),
          rule,
          repo,
          added_at: new Date(ms).toISOString(),
          question
        }
        if (yield* records.create(saved)) return saved
      }
      return yield* failed(`could not save the rule ${rule} in ${records.root}: every id drawn was taken`)
    })
  return { where: records.root, list, add, remove: records.remove }
})
