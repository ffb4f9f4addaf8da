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
  readonly questions: ReadonlyArray<Question>
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
    questions,
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
      const cached = yield* Ref.make(Option.none<Snapshot>())
      // One reader refreshes while the others wait for its result: twenty
      // requests arriving after a change cost one read of the store, not twenty.
      const refreshing = yield* Effect.makeSemaphore(1)

      const fresh = Effect.gen(function* () {
        const started = yield* Clock.currentTimeMillis
        const revision = yield* store.revision
        const hit = Option.filter(yield* Ref.get(cached), (s) => s.revision === revision)
        if (Option.isSome(hit)) return hit.value
        const snapshot = build(revision, yield* store.list)
        const settled = revision > 0 && revision < started - RACY_MS
        yield* Ref.set(cached, settled ? Option.some(snapshot) : Option.none())
        return snapshot
      })

      const current = Effect.gen(function* () {
        const revision = yield* store.revision
        const hit = Option.filter(yield* Ref.get(cached), (s) => s.revision === revision)
        if (Option.isSome(hit)) return hit.value
        return yield* refreshing.withPermits(1)(fresh)
      })
      return { current }
    })
  )
}
