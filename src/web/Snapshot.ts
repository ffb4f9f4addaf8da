/**
 * The question list as the web serves it, read once per change of the store
 * rather than once per request.
 *
 * Every open phone tab refetches the list on every change event, and the
 * list is one file read per question: with a thousand questions in history,
 * reading them per request is what would make the page slow, not the network.
 * So the views are kept, keyed by the store's revision (the directory's
 * mtime), and re-read only when it moves.
 *
 * A revision can be trusted only once it is old. File times come from a
 * coarse kernel clock, so a write landing in the same tick as the read that
 * filled the cache would leave the revision unchanged and the cache stale
 * forever. Git's index has the same "racy" problem and the same answer: a
 * snapshot is kept only when its revision is older than `RACY_MS` at the
 * moment reading began, which any later write cannot share.
 */
import { Clock, Context, Effect, Layer, Option, Ref } from "effect"
import * as NodeZlib from "node:zlib"
import * as Q from "../Question.js"
import type { Question } from "../Question.js"
import { QuestionStore, type StoreError } from "../QuestionStore.js"

/** Comfortably above any filesystem's timestamp tick (ext4, tmpfs: jiffies). */
export const RACY_MS = 50

/** A question as the API shows it: the record plus whose turn it is. */
export type QuestionView = Question & { readonly waiting_on_agent: boolean }

export const view = (q: Question): QuestionView => ({ ...q, waiting_on_agent: Q.waitingOnAgent(q) })

export interface Snapshot {
  /** The store's revision when the list was read. */
  readonly revision: number
  /** `GET /api/questions`, serialised and encoded once per revision. */
  readonly body: Uint8Array
  /** The same, gzipped: a thousand questions are a megabyte, a phone on a train link wants 1/20 of it. */
  readonly gzipped: Uint8Array
  readonly open: number
  /** Open and not waiting on the agent: the badge. */
  readonly needsOwner: number
}

const build = (revision: number, questions: ReadonlyArray<Question>): Snapshot => {
  const open = questions.filter(Q.isOpen)
  const body = Buffer.from(JSON.stringify(questions.map(view)), "utf8")
  return {
    revision,
    body,
    // Level 6 (zlib's default): a megabyte in ~15 ms, once per change.
    gzipped: NodeZlib.gzipSync(body),
    open: open.length,
    needsOwner: open.filter((q) => !Q.waitingOnAgent(q)).length
  }
}

export class Snapshots extends Context.Tag("magi/web/Snapshots")<
  Snapshots,
  {
    /** The list as it is now: cached when the store has not moved. */
    readonly current: Effect.Effect<Snapshot, StoreError>
  }
>() {
  static layer = Layer.effect(
    Snapshots,
    Effect.gen(function* () {
      const store = yield* QuestionStore
      /** The last snapshot whose revision is old enough to trust on sight. */
      const settled = yield* Ref.make(Option.none<Snapshot>())
      /** The last snapshot built, and its build's sequence number. */
      const latest = yield* Ref.make(Option.none<{ readonly snapshot: Snapshot; readonly seq: number }>())
      /** How many builds have started. */
      const started = yield* Ref.make(0)
      // One build at a time. A request that finds one running waits for the
      // next and shares it: right after a change every open page refetches at
      // once, inside the racy window, and fifty pages must cost two reads of
      // the store, not fifty.
      const building = yield* Effect.makeSemaphore(1)

      const rebuild = (arrival: number) =>
        building.withPermits(1)(
          Effect.gen(function* () {
            // A build that started after this request arrived saw every write
            // the request could know about.
            const shared = Option.filter(yield* Ref.get(latest), (l) => l.seq > arrival)
            if (Option.isSome(shared)) return shared.value.snapshot
            const seq = yield* Ref.updateAndGet(started, (n) => n + 1)
            const startedAt = yield* Clock.currentTimeMillis
            const revision = yield* store.revision
            const snapshot = build(revision, yield* store.list)
            yield* Ref.set(latest, Option.some({ snapshot, seq }))
            const old = revision > 0 && revision < startedAt - RACY_MS
            yield* Ref.set(settled, old ? Option.some(snapshot) : Option.none())
            return snapshot
          })
        )

      const current = Effect.gen(function* () {
        const revision = yield* store.revision
        const hit = Option.filter(yield* Ref.get(settled), (s) => s.revision === revision)
        if (Option.isSome(hit)) return hit.value
        return yield* rebuild(yield* Ref.get(started))
      })
      return { current }
    })
  )
}
