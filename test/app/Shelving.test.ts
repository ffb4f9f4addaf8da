/**
 * Finished runs and done tasks leave the hot folder as settled questions do
 * (`app/Shelving.ts`), on the home folder and on PostgreSQL: the listings
 * that `magi web`'s poll, `magi runs` and the queue loop read no longer read
 * them, a lookup by id still finds them, history is paged through, and a
 * done task released to the queue again comes back hot.
 */
import { describe, expect, it } from "@effect/vitest"
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { Effect, Either, Layer, Redacted, TestClock } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { MagiHome } from "../../src/platform/MagiHome.js"
import { StoreBackend } from "../../src/store/StoreBackend.js"
import * as ConfiguredStore from "../../src/platform/ConfiguredStore.js"
import { QuestionStore } from "../../src/questions/QuestionStore.js"
import * as T from "../../src/queue/Task.js"
import { TaskStore } from "../../src/queue/TaskStore.js"
import { RunStore } from "../../src/runs/Runs.js"
import { shelveNow } from "../../src/app/Shelving.js"
import { freshDatabase } from "../pgSupport.js"
import { sampleRun } from "../runSupport.js"
import { tempDir } from "../support.js"

const NOW = new Date("2026-11-20T12:00:00Z").getTime()
const HOUR = 60 * 60 * 1000

/** Run ids in the month of `day` (1–28), `i` apart. */
const runId = (month: string, i: number) =>
  `2026${month}${String(1 + (i % 28)).padStart(2, "0")}-10${String(Math.floor(i / 60) % 60).padStart(2, "0")}${String(i % 60).padStart(2, "0")}-${
    (0xa000 + i).toString(16)
  }`

const backends = [
  { name: "the home folder", backend: (home: string) => Effect.succeed(ConfiguredStore.files.pipe(Layer.provide(MagiHome.at(home)))) },
  {
    name: "PostgreSQL",
    backend: (_home: string) => Effect.map(freshDatabase, (db) => StoreBackend.postgres(Redacted.make(db.url)))
  }
] as const

for (const b of backends) {
  const stores = Effect.gen(function* () {
    const base = yield* tempDir
    const home = NodePath.join(base, "home")
    yield* TestClock.setTime(NOW)
    const backend = yield* b.backend(home)
    const layer = Layer.mergeAll(RunStore.layer, TaskStore.layer).pipe(
      Layer.provideMerge(QuestionStore.layer),
      Layer.provideMerge(Layer.mergeAll(backend, MagiHome.at(home))),
      Layer.provideMerge(NodeFileSystem.layer)
    )
    const context = yield* Layer.build(layer)
    return { home, context }
  })

  describe(`shelving finished runs and done tasks (${b.name})`, () => {
    it.scoped("a run finished over an hour ago leaves the hot listing, its folder stays, and it is still found by id and in the history's pages", () =>
      Effect.gen(function* () {
        const { home, context } = yield* stores
        const runs = yield* Effect.provide(RunStore, context)
        const old = Array.from({ length: 5 }, (_, i) => sampleRun(runId("09", i), { status: "done", updated_at: "2026-09-30T00:00:00Z" }))
        const live = sampleRun(runId("11", 40), { status: "running", updated_at: new Date(NOW).toISOString() })
        const justDone = sampleRun(runId("11", 41), { status: "failed", updated_at: new Date(NOW - HOUR / 2).toISOString() })
        for (const r of [...old, live, justDone]) yield* runs.put(r)
        NodeFs.mkdirSync(NodePath.join(home, "runs", old[0]!.id, "artifacts"), { recursive: true })
        NodeFs.writeFileSync(NodePath.join(home, "runs", old[0]!.id, "artifacts", "stdout.txt"), "kept\n")

        const moved = yield* shelveNow.pipe(Effect.provide(context))
        expect(moved.runs).toBe(5)
        // Unfinished, or finished within the hour: still hot.
        expect((yield* runs.list).map((r) => r.id)).toEqual([justDone.id, live.id])
        // Only the record moved: the run's artifacts are where they were.
        expect(NodeFs.readFileSync(NodePath.join(home, "runs", old[0]!.id, "artifacts", "stdout.txt"), "utf8")).toBe("kept\n")
        expect((yield* runs.get(old[2]!.id)).status).toBe("done")
        // A page of history, newest first, hot and shelved alike, and the next from where it ended.
        const first = yield* runs.page({ limit: 4 })
        expect(first.runs.map((r) => r.id)).toEqual([justDone.id, live.id, old[4]!.id, old[3]!.id])
        const second = yield* runs.page({ before: first.next!, limit: 4 })
        expect(second.runs.map((r) => r.id)).toEqual([old[2]!.id, old[1]!.id, old[0]!.id])
        expect(second.next).toBeNull()
        // A shelved run is still written where it is (its removal noted), and stays out of the hot listing.
        yield* runs.update(old[1]!.id, (r) => ({ ...r, reason: "noted" }))
        expect((yield* runs.get(old[1]!.id)).reason).toBe("noted")
        expect((yield* runs.list).map((r) => r.id)).toEqual([justDone.id, live.id])
      }))

    it.scoped("a done task leaves the queue's listing an hour on, is paged through as history, and comes back hot when released", () =>
      Effect.gen(function* () {
        const { context } = yield* stores
        const tasks = yield* Effect.provide(TaskStore, context)
        yield* TestClock.setTime(NOW - 3 * HOUR)
        const done = yield* tasks.add({ instruction: "finished long ago", repo: "/r" })
        yield* tasks.update(done.id, T.succeed)
        const blocked = yield* tasks.add({ instruction: "after it", repo: "/r" })
        yield* TestClock.setTime(NOW)
        const open = yield* tasks.add({ instruction: "still to do", repo: "/r" })
        const recent = yield* tasks.add({ instruction: "just finished", repo: "/r" })
        yield* tasks.update(recent.id, T.succeed)

        const moved = yield* shelveNow.pipe(Effect.provide(context))
        expect(moved.tasks).toBe(1)
        expect((yield* tasks.list).map((t) => t.id).sort()).toEqual([blocked.id, open.id, recent.id].sort())
        expect((yield* tasks.get(done.id)).status).toBe("done")
        const history = yield* tasks.history({ limit: 10 })
        expect(history.tasks.map((t) => t.id)).toEqual([done.id])
        expect(history.next).toBeNull()
        // Released from history: queued again, and where the loop looks.
        const back = yield* tasks.update(done.id, T.release)
        expect(back.status).toBe("queued")
        expect((yield* tasks.list).map((t) => t.id)).toContain(done.id)
        expect((yield* tasks.history({ limit: 10 })).tasks).toEqual([])
        expect(Either.isRight(yield* Effect.either(tasks.get(done.id)))).toBe(true)
      }))

    it.scoped("the task a shelved run came from is found by the run, even once the task is shelved too", () =>
      Effect.gen(function* () {
        const { context } = yield* stores
        const tasks = yield* Effect.provide(TaskStore, context)
        yield* TestClock.setTime(NOW - 3 * HOUR)
        const t = yield* tasks.add({ instruction: "worked", repo: "/r" })
        const run = runId("11", 3)
        yield* tasks.update(t.id, (x) => T.start(x, run))
        yield* tasks.update(t.id, T.succeed)
        yield* TestClock.setTime(NOW)
        yield* shelveNow.pipe(Effect.provide(context))
        expect((yield* tasks.list).length).toBe(0)
        expect((yield* tasks.ofRun(run)).pipe((o) => o._tag === "Some" && o.value.id)).toBe(t.id)
      }))
  })
}

describe("the hot listing of runs on the home folder", () => {
  it.scoped("reads no shelved record: a shelved file made unreadable is neither read nor reported by the listing", () =>
    Effect.gen(function* () {
      const base = yield* tempDir
      const home = NodePath.join(base, "home")
      yield* TestClock.setTime(NOW)
      const context = yield* Layer.build(
        RunStore.layer.pipe(
          Layer.provideMerge(QuestionStore.layer),
          Layer.provideMerge(ConfiguredStore.files),
          Layer.provideMerge(MagiHome.at(home)),
          Layer.provideMerge(NodeFileSystem.layer)
        )
      )
      const runs = yield* Effect.provide(RunStore, context)
      const old = sampleRun(runId("09", 1), { status: "done", updated_at: "2026-09-30T00:00:00Z" })
      yield* runs.put(old)
      yield* shelveNow.pipe(Effect.provide(context))
      const shelved = NodePath.join(home, "runs", "history", "2026-09", `${old.id}.json`)
      expect(NodeFs.existsSync(shelved)).toBe(true)
      expect(NodeFs.existsSync(NodePath.join(home, "runs", old.id, "run.json"))).toBe(false)
      // The poll's stamp and the listing look at no shelved record: rewriting one moves neither.
      const before = yield* runs.stamp
      NodeFs.writeFileSync(shelved, "not json")
      NodeFs.utimesSync(shelved, new Date(Date.now() + 5_000), new Date(Date.now() + 5_000))
      expect((yield* runs.stamp).revision).toBe(before.revision)
      expect(yield* runs.list).toEqual([])
    }))

  /**
   * The runs store of a fresh process (as each `magi runs` is) over `home`,
   * every folder listing it makes written down in `listed`.
   */
  const freshProcess = (home: string, listed: Array<string> = []) =>
    Effect.gen(function* () {
      const listing = Layer.effect(
        FileSystem.FileSystem,
        Effect.map(FileSystem.FileSystem, (fs) => ({
          ...fs,
          readDirectory: (path: string, options?: FileSystem.ReadDirectoryOptions) => {
            // Written down when the listing runs, not when it is built (a store builds some once, up front).
            return Effect.zipRight(Effect.sync(() => listed.push(path)), fs.readDirectory(path, options))
          }
        }))
      ).pipe(Layer.provide(NodeFileSystem.layer))
      const context = yield* Layer.build(
        RunStore.layer.pipe(
          Layer.provideMerge(QuestionStore.layer),
          Layer.provideMerge(ConfiguredStore.files),
          Layer.provideMerge(MagiHome.at(home)),
          Layer.provideMerge(listing)
        )
      )
      return { runs: yield* Effect.provide(RunStore, context), context, listed }
    })

  /** September's and October's runs shelved, one November run still going; every folder's mtime an hour old, as on a home left alone a while. */
  const shelvedHome = Effect.gen(function* () {
    const home = NodePath.join(yield* tempDir, "home")
    yield* TestClock.setTime(NOW)
    const { runs, context } = yield* freshProcess(home)
    const september = Array.from({ length: 3 }, (_, i) => sampleRun(runId("09", i), { status: "done", updated_at: "2026-09-30T00:00:00Z" }))
    const october = Array.from({ length: 3 }, (_, i) => sampleRun(runId("10", i), { status: "done", updated_at: "2026-10-30T00:00:00Z" }))
    const going = sampleRun(runId("11", 1), { status: "running", updated_at: new Date(NOW).toISOString() })
    for (const r of [...september, ...october, going]) yield* runs.put(r)
    yield* shelveNow.pipe(Effect.provide(context))
    const hourAgo = new Date(Date.now() - HOUR)
    for (const dir of ["runs", "runs/history/2026-09", "runs/history/2026-10"]) NodeFs.utimesSync(NodePath.join(home, dir), hourAgo, hourAgo)
    return { home, september, october, going }
  })

  it.scoped("a fresh process fills a page of runs from the newest shelf: neither the runs folder nor an older month's shelf is listed, and the next page reads it in order", () =>
    Effect.gen(function* () {
      const { home, september, october, going } = yield* shelvedHome
      // The first process after the move works the hot runs out, once.
      expect((yield* (yield* freshProcess(home)).runs.page({ limit: 2 })).runs.map((r) => r.id)).toEqual([going.id, october[2]!.id])

      const { runs, listed } = yield* freshProcess(home)
      const newest = yield* runs.page({ limit: 2 })
      expect(newest.runs.map((r) => r.id)).toEqual([going.id, october[2]!.id])
      expect(listed).toContain(NodePath.join(home, "runs", "history", "2026-10"))
      expect(listed).not.toContain(NodePath.join(home, "runs"))
      expect(listed).not.toContain(NodePath.join(home, "runs", "history", "2026-09"))
      // A page that runs past October reads September, in order.
      const next = yield* runs.page({ before: newest.next!, limit: 3 })
      expect(next.runs.map((r) => r.id)).toEqual([october[1]!.id, october[0]!.id, september[2]!.id])
      expect(listed).toContain(NodePath.join(home, "runs", "history", "2026-09"))
    }))

  it.scoped("an older month's shelf that cannot be read does not break the newest page, and a page that reaches it passes over it", () =>
    Effect.gen(function* () {
      const { home, october, going } = yield* shelvedHome
      const september = NodePath.join(home, "runs", "history", "2026-09")
      NodeFs.rmSync(september, { recursive: true })
      NodeFs.writeFileSync(september, "not a shelf\n")
      for (const fresh of [1, 2]) {
        const { runs } = yield* freshProcess(home)
        const newest = yield* runs.page({ limit: 3 })
        expect(newest.runs.map((r) => r.id), `process ${fresh}`).toEqual([going.id, october[2]!.id, october[1]!.id])
        // A page that reaches it passes over its runs, as over an unreadable record, rather than fail.
        const next = yield* runs.page({ before: newest.next!, limit: 3 })
        expect(next.runs.map((r) => r.id)).toEqual([october[0]!.id])
        expect(next.next).toBeNull()
      }
    }))

  it.scoped("a run made or shelved after the hot runs were worked out is seen by the next process", () =>
    Effect.gen(function* () {
      const { home, october, going } = yield* shelvedHome
      yield* (yield* freshProcess(home)).runs.page({ limit: 2 })
      const made = sampleRun(runId("11", 2), { status: "running", updated_at: new Date(NOW).toISOString() })
      yield* (yield* freshProcess(home)).runs.put(made)
      expect((yield* (yield* freshProcess(home)).runs.list).map((r) => r.id)).toEqual([made.id, going.id])
      // Another process finishes and shelves the one that was going.
      const other = yield* freshProcess(home)
      yield* other.runs.update(going.id, (r) => ({ ...r, status: "done" }))
      yield* TestClock.setTime(NOW + 2 * HOUR)
      expect(yield* other.runs.archiveFinished(10)).toBe(1)
      const after = yield* freshProcess(home)
      expect((yield* after.runs.list).map((r) => r.id)).toEqual([made.id])
      expect((yield* after.runs.page({ limit: 3 })).runs.map((r) => r.id)).toEqual([made.id, going.id, october[2]!.id])
    }))
})
