/**
 * The approvals part of the HTTP API: the rules "Always allow" saved, as
 * `magi approvals list` numbers them (oldest first), and removing one, as
 * `magi approvals rm` does. Both read and write the same `SavedRules`
 * records, so the page and the terminal never disagree.
 *
 * The config's `[approvals]` rules are not here: they are changed in the
 * config file, not from a phone.
 */
import * as HttpRouter from "@effect/platform/HttpRouter"
import { Effect } from "effect"
import { SavedRules, type SavedRule } from "../approvals/SavedRules.js"
import * as Responses from "./Responses.js"

export type { SavedRule }

/**
 * A saved rule's id as `ruleId` makes it (`20261201-120000123-ab12cd`); the
 * id is an untrusted path part, so nothing else reaches the store.
 */
const RULE_ID = /^\d{8}-\d{9}-[0-9a-f]{6}$/

const failure = (e: { readonly message: string }) => Responses.error(500, e.message)

const list = Effect.gen(function* () {
  return Responses.json({ rules: yield* (yield* SavedRules).list })
  // display: the request's failure becomes its HTTP response
}).pipe(Effect.catchAll(failure))

const remove = Effect.gen(function* () {
  const id = (yield* HttpRouter.params)["id"] ?? ""
  if (!RULE_ID.test(id)) return Responses.error(400, "not a saved approval rule's id")
  const store = yield* SavedRules
  const target = (yield* store.list).find((r) => r.id === id)
  // Removed already (from the terminal, another tab): say so, as `magi approvals rm` would.
  if (target === undefined) return Responses.error(404, `no saved approval rule ${id}: it was removed already`)
  yield* store.remove(id)
  return Responses.json({ removed: target })
  // display: the request's failure becomes its HTTP response
}).pipe(Effect.catchAll(failure))

export const router = HttpRouter.empty.pipe(
  HttpRouter.get("/api/approvals/rules", list),
  // A removal the owner tapped is carried out even if the phone drops the connection.
  HttpRouter.del("/api/approvals/rules/:id", remove, { uninterruptible: true })
)
