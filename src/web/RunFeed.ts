/**
 * The runs as the web serves them: a revision that moves whenever any run's
 * record is written (`RunStore.stamp`), and the list read once per revision
 * rather than once per request. Open pages follow it through `Live`'s
 * once-a-second poll.
 *
 * As with the question list, a listing is trusted on sight only once the
 * newest record it saw is older than `Memo.MTIME_SLACK_MS` (a write landing in the same
 * timestamp tick as the read would otherwise leave the hash unchanged and the
 * list stale).
 */
import { Clock, Context, Effect, Layer, Option, Ref } from "effect"
import { type Run, RunStore } from "../runs/Runs.js"
import type * as RecordStore from "../store/RecordStore.js"
import * as Memo from "../store/files/Memo.js"

/** How long a scan serves list requests: `Live`'s poll, which takes a fresh one that often. */
const SCAN_REUSE_MS = 1000

interface Scan {
  /** 0 when there is no run at all. */
  readonly revision: number
  /** The newest record's mtime, for the racy check. */
  readonly newest: number
}

export class RunFeed extends Context.Tag("magi/web/RunFeed")<
  RunFeed,
  {
    /** Moves whenever a run is created or its record rewritten; 0 with no runs. */
    readonly revision: Effect.Effect<number>
    /**
     * Up to `limit` readable runs older than `before` (from the newest when
     * none), newest first, hot and shelved alike. The first page is kept
     * while the revision holds.
     */
    readonly recent: (limit: number, before?: string) => Effect.Effect<ReadonlyArray<Run>, RecordStore.Failed>
    /** Every readable hot run (unfinished, or finished within the hour), newest first. */
    readonly all: Effect.Effect<ReadonlyArray<Run>, RecordStore.Failed>
  }
>() {
  static layer = Layer.effect(
    RunFeed,
    Effect.gen(function* () {
      const store = yield* RunStore

      const scan: Effect.Effect<Scan> = store.stamp

      /** The last scan and when it was taken. */
      const scanned = yield* Ref.make(Option.none<{ readonly at: number; readonly scan: Scan }>())
      /** A fresh scan, remembered for the list requests that follow. */
      const scanNow = Effect.gen(function* () {
        const at = yield* Clock.currentTimeMillis
        const result = yield* scan
        yield* Ref.set(scanned, Option.some({ at, scan: result }))
        return { at, scan: result }
      })
      /**
       * A scan no older than `SCAN_REUSE_MS`. Pages refetch on change events,
       * and `Live` publishes one only after its poll's own fresh scan, which
       * is remembered here: a refetch always sees the change that caused it.
       * Twenty pages refetching then share one scan instead of each stat-ing
       * every run.
       */
      const recentScan = Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const last = Option.filter(yield* Ref.get(scanned), (s) => now - s.at < SCAN_REUSE_MS)
        return Option.isSome(last) ? last.value : yield* scanNow
      })

      const cached = yield* Ref.make(Option.none<{ readonly revision: number; readonly runs: ReadonlyArray<Run> }>())
      // Right after a change every open page refetches at once; they share one read.
      const reading = yield* Effect.makeSemaphore(1)

      const all = Effect.gen(function* () {
        const seen = (yield* recentScan).scan
        const hit = Option.filter(yield* Ref.get(cached), (c) => c.revision === seen.revision)
        if (Option.isSome(hit)) return hit.value.runs
        return yield* reading.withPermits(1)(
          Effect.gen(function* () {
            const { at, scan: now } = yield* recentScan
            const again = Option.filter(yield* Ref.get(cached), (c) => c.revision === now.revision)
            if (Option.isSome(again)) return again.value.runs
            const runs = yield* store.list
            yield* Ref.set(cached, Memo.trusted(now.newest, at) ? Option.some({ revision: now.revision, runs }) : Option.none())
            return runs
          })
        )
      })

      /** The last first page, by the revision and size it was read at. */
      const firstPage = yield* Ref.make(Option.none<{ readonly revision: number; readonly limit: number; readonly runs: ReadonlyArray<Run> }>())

      const recent = (limit: number, before?: string) =>
        Effect.gen(function* () {
          const hot = yield* all
          // The hot runs are the newest; when they fill the page, no shelf is read.
          if (before === undefined && hot.length >= limit) return hot.slice(0, limit)
          if (before !== undefined) return (yield* store.page({ before, limit })).runs
          const { at, scan: seen } = yield* recentScan
          const hit = Option.filter(yield* Ref.get(firstPage), (p) => p.revision === seen.revision && p.limit === limit)
          if (Option.isSome(hit)) return hit.value.runs
          const runs = (yield* store.page({ limit })).runs
          yield* Ref.set(firstPage, Memo.trusted(seen.newest, at) ? Option.some({ revision: seen.revision, limit, runs }) : Option.none())
          return runs
        })

      return {
        revision: Effect.map(scanNow, (s) => s.scan.revision),
        recent,
        all
      }
    })
  )
}
