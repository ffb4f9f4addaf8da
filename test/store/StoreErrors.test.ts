/**
 * Callers tell the store's own errors from theirs by `isFailure`, and wait
 * on a store only while it may answer again (`storeAway`): a table of each.
 */
import { describe, expect, it } from "vitest"
import { Data } from "effect"
import { isFailure } from "../../src/store/RecordStore.js"
import { LockBusy, RecordNotFound, RecordUnreadable, StoreFailed, UnsafeId } from "../../src/store/StoreErrors.js"
import { storeAway } from "../../src/store/StoreWait.js"
import { NewerSchema } from "../../src/store/VersionedJson.js"

class CallersOwn extends Data.TaggedError("SeatBusy")<{ readonly message: string }> {}

const cases = [
  { e: new RecordNotFound({ kind: "run", plural: "runs", wanted: "zz", matches: [], total: 0 }), family: true, away: false },
  { e: new RecordUnreadable({ kind: "run", where: "/h/runs/x", reason: "x is not JSON" }), family: true, away: false },
  { e: new NewerSchema({ record: "run x", schema: 9, known: 1 }), family: true, away: false },
  { e: new StoreFailed({ kind: "run", op: "read", where: "/h/runs", reason: "EIO", backend: "files", lost: false }), family: true, away: true },
  { e: new LockBusy({ kind: "run", id: "x", label: "x", lock: "x.lock", waitedMs: 1000 }), family: true, away: true },
  { e: new UnsafeId({ kind: "run", id: "../x" }), family: true, away: false },
  { e: new CallersOwn({ message: "busy" }), family: false, away: false }
]

describe("the store's errors, told apart", () => {
  it.each(cases)("$e._tag: the store's own $family, waited on $away", ({ away, e, family }) => {
    expect(isFailure(e)).toBe(family)
    expect(storeAway(e)).toBe(away)
  })
})
