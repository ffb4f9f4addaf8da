import { FileSystem } from "@effect/platform"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Either, Layer, Option, TestClock } from "effect"
import { spawnSync } from "node:child_process"
import * as NodePath from "node:path"
import { MagiConfig } from "../../src/platform/MagiConfig.js"
import { MagiHome } from "../../src/platform/MagiHome.js"
import * as MemoryFileSystem from "../../src/store/MemoryFileSystem.js"
import * as ConfiguredStore from "../../src/platform/ConfiguredStore.js"
import * as T from "../../src/queue/Task.js"
import { TASK_CLAIM, TaskStore, pidAlive } from "../../src/queue/TaskStore.js"
import { tempDir } from "../support.js"

/** A pid that was real a moment ago and is now certainly gone. */
const deadPid = (): number => spawnSync(process.execPath, ["-e", ""]).pid!

const backends = [
  { name: "files in a temp directory", fs: NodeFileSystem.layer, base: tempDir },
  { name: "memory", fs: MemoryFileSystem.layer, base: Effect.succeed("/magi") }
] as const

const NOW = new Date("2026-09-02T10:00:00Z").getTime()

/** A task filed and claimed by this process: the store, the filesystem, the task and its claim's file. */
const claimedTask = (root: string) =>
  Effect.gen(function* () {
    const store = yield* TaskStore
    const fs = yield* FileSystem.FileSystem
    const t = yield* store.add({ instruction: "one", repo: "/r" })
    expect(yield* store.claim(t.id)).toBe(true)
    return { store, fs, t, claimFile: NodePath.join(root, `${t.id}.lock`) }
  })

for (const backend of backends) {
  const withStore = <A, E>(body: (root: string) => Effect.Effect<A, E, TaskStore | FileSystem.FileSystem>) =>
    Effect.gen(function* () {
      const base = yield* backend.base
      const root = NodePath.join(base, "queue")
      yield* TestClock.setTime(NOW)
      return yield* body(root).pipe(Effect.provide(TaskStore.at(root).pipe(Layer.provideMerge(backend.fs))))
    })

  describe(`the task store (${backend.name})`, () => {
    it.scoped("files a task under a fresh question-shaped id and reads it back by id, prefix and short id", () =>
      withStore((root) =>
        Effect.gen(function* () {
          const store = yield* TaskStore
          const t = yield* store.add({ instruction: "# Add a cache\nwith tests", repo: "/r", priority: 2 })
          expect(t.id).toMatch(/^\d{8}-\d{6}-[0-9a-f]{4}$/)
          expect(t).toMatchObject({ title: "Add a cache", status: "queued", priority: 2, created_at: "2026-09-02T10:00:00Z" })
          expect(yield* store.get(t.id)).toEqual(t)
          expect(yield* store.get(T.shortId(t.id))).toEqual(t)
          expect(yield* store.get(t.id.slice(0, 12))).toEqual(t)
          const fs = yield* FileSystem.FileSystem
          expect(JSON.parse(yield* fs.readFileString(NodePath.join(root, `${t.id}.json`)))).toEqual(t)
          // Nothing but the record is left behind: no temp, no lock.
          expect(yield* fs.readDirectory(root)).toEqual([`${t.id}.json`])
        })
      ))

    it.scoped("refuses an ambiguous id naming every match, and an unknown one", () =>
      withStore((root) =>
        Effect.gen(function* () {
          const store = yield* TaskStore
          const a = T.make({ id: "20260902-100000-ab12", instruction: "a", repo: "/r", now: new Date(NOW) })
          const b = T.make({ id: "20260902-100001-cd34", instruction: "b", repo: "/r", now: new Date(NOW) })
          yield* store.put(a)
          yield* store.put(b)
          const ambiguous = yield* Effect.flip(store.get("20260902-1000"))
          expect(ambiguous.message).toBe(
            "`20260902-1000` matches 2 tasks: 20260902-100000-ab12, 20260902-100001-cd34; type more of the id"
          )
          expect((yield* Effect.flip(store.get("ffff"))).message).toBe("no task matches `ffff`")
          expect((yield* Effect.flip(store.get("../../etc/passwd")))._tag).toBe("TaskNotFound")
          expect((yield* store.get("cd34")).id).toBe(b.id)
          expect(root).toContain("queue")
        })
      ))

    it.scoped("lists in list order, skipping a file it cannot read and saying which and why", () =>
      withStore((root) =>
        Effect.gen(function* () {
          const store = yield* TaskStore
          const fs = yield* FileSystem.FileSystem
          const low = yield* store.add({ instruction: "low", repo: "/r" })
          yield* TestClock.adjust("1 second")
          const high = yield* store.add({ instruction: "high", repo: "/r", priority: 5 })
          yield* TestClock.adjust("1 second")
          const newer = yield* store.add({ instruction: "newer low", repo: "/r" })
          yield* fs.writeFileString(NodePath.join(root, "20260902-090000-dead.json"), "{ not json")
          yield* fs.writeFileString(
            NodePath.join(root, "20260902-090000-beef.json"),
            JSON.stringify({ ...T.make({ id: "20260902-090000-beef", instruction: "x", repo: "/r", now: new Date(NOW) }), schema: 9 })
          )
          const listing = yield* store.scan
          expect(listing.tasks.map((t) => t.id)).toEqual([high.id, newer.id, low.id])
          expect(listing.unreadable.map((u) => u.id).sort()).toEqual(["20260902-090000-beef", "20260902-090000-dead"])
          expect(listing.unreadable.find((u) => u.id.endsWith("beef"))!.message).toContain("newer magi (schema 9")
          // Read directly, the unreadable file explains itself.
          expect((yield* Effect.flip(store.get("dead"))).message).toContain("is not valid JSON")
        })
      ))

    it.scoped("a listing sees a write made right after the last listing", () =>
      withStore(() =>
        Effect.gen(function* () {
          const store = yield* TaskStore
          const t = yield* store.add({ instruction: "one", repo: "/r" })
          expect((yield* store.list).map((x) => x.status)).toEqual(["queued"])
          yield* store.update(t.id, T.succeed)
          expect((yield* store.list).map((x) => x.status)).toEqual(["done"])
          yield* Effect.promise(() => new Promise((r) => setTimeout(r, 120)))
          expect((yield* store.list).map((x) => x.status)).toEqual(["done"])
          // A write after the listing was cached is seen at once.
          yield* store.update(t.id, T.release)
          expect((yield* store.list).map((x) => x.status)).toEqual(["queued"])
        })
      ))

    it.scoped("update stamps updated_at, writes nothing for an unchanged task, and returns a refusal untouched", () =>
      withStore(() =>
        Effect.gen(function* () {
          const store = yield* TaskStore
          const t = yield* store.add({ instruction: "one", repo: "/r" })
          yield* TestClock.adjust("1 minute")
          const held = yield* store.update(T.shortId(t.id), (x) => T.hold(x, "wait"))
          expect(held).toMatchObject({ status: "held", hold_reason: "wait", updated_at: "2026-09-02T10:01:00Z" })
          yield* TestClock.adjust("1 minute")
          expect((yield* store.update(t.id, (x) => Either.right(x))).updated_at).toBe("2026-09-02T10:01:00Z")
          const refused = yield* Effect.flip(store.update(t.id, (x) => T.start(x, "run")))
          expect(refused._tag).toBe("TaskRefused")
          expect(yield* store.get(t.id)).toEqual(held)
        })
      ))

    it.scoped("concurrent updates of one task lose nothing", () =>
      withStore(() =>
        Effect.gen(function* () {
          const store = yield* TaskStore
          const t = yield* store.add({ instruction: "one", repo: "/r" })
          yield* Effect.forEach(
            Array.from({ length: 20 }, (_, i) => i),
            (i) => store.update(t.id, (x) => Either.right(T.recordAnswer(x, `q${i}`, `a${i}`))),
            { concurrency: "unbounded" }
          )
          expect((yield* store.get(t.id)).answers).toHaveLength(20)
        })
      ))

    it.scoped("remove refuses a running task and one a live loop claims, and deletes the rest", () =>
      withStore((root) =>
        Effect.gen(function* () {
          const store = yield* TaskStore
          const fs = yield* FileSystem.FileSystem
          const t = yield* store.add({ instruction: "one", repo: "/r" })
          yield* store.update(t.id, (x) => T.start(x, "run-1"))
          expect((yield* Effect.flip(store.remove(t.id))).message).toContain("is running")
          yield* store.update(t.id, (x) => T.hold(x, "stop"))
          expect(yield* store.claim(t.id)).toBe(true)
          expect((yield* Effect.flip(store.remove(t.id))).message).toContain(`claimed by a live magi loop (pid ${process.pid})`)
          yield* store.unclaim(t.id)
          expect((yield* store.remove(T.shortId(t.id))).id).toBe(t.id)
          expect(yield* fs.readDirectory(root)).toEqual([])
          expect((yield* Effect.flip(store.get(t.id)))._tag).toBe("TaskNotFound")
        })
      ))

    it.scoped("a claim names its process; a second claim is refused; a dead pid's claim, or one from a loop of the build before, is judged by its process", () =>
      withStore((root) =>
        Effect.gen(function* () {
          const { store, fs, t, claimFile } = yield* claimedTask(root)
          expect(JSON.parse(yield* fs.readFileString(claimFile))).toMatchObject({ pid: process.pid })
          expect(yield* store.claim(t.id)).toBe(false)
          expect(yield* store.claimant(t.id)).toEqual(Option.some(process.pid))

          const dead = deadPid()
          expect(pidAlive(dead)).toBe(false)
          // As a loop of the build before left it: a bare pid.
          yield* fs.writeFileString(claimFile, `${dead}\n`)
          expect(yield* store.claimant(t.id)).toEqual(Option.none())
          // A dead claim does not stand in the way of the next loop.
          expect(yield* store.claim(t.id)).toBe(true)
          expect(yield* store.claimant(t.id)).toEqual(Option.some(process.pid))
          // A live loop of the build before keeps its claim for as long as it lives.
          yield* store.unclaim(t.id)
          yield* fs.writeFileString(claimFile, `1\n`)
          expect(yield* store.claimant(t.id)).toEqual(Option.some(1))
          expect(yield* store.claim(t.id)).toBe(false)
          // Unclaiming another process's claim leaves it alone.
          yield* store.unclaim(t.id)
          expect(yield* fs.exists(claimFile)).toBe(true)
        })
      ))

    it.scoped("keeps its claim fresh while it holds it, and gives it up on unclaim", () =>
      withStore((root) =>
        Effect.gen(function* () {
          const { store, fs, t, claimFile } = yield* claimedTask(root)
          const first = JSON.parse(yield* fs.readFileString(claimFile)).renewed_at
          // Hours of a running task in virtual time: renewed all along, never free.
          for (let i = 0; i < 30; i++) yield* TestClock.adjust(TASK_CLAIM.renewEvery)
          expect(JSON.parse(yield* fs.readFileString(claimFile)).renewed_at).toBeGreaterThan(first)
          expect(yield* store.claimant(t.id)).toEqual(Option.some(process.pid))
          yield* store.unclaim(t.id)
          expect(yield* fs.exists(claimFile)).toBe(false)
        })
      ))

    it.scoped("the revision is 0 when empty and moves when a task is added, changed or removed", () =>
      withStore(() =>
        Effect.gen(function* () {
          const store = yield* TaskStore
          const pause = Effect.promise(() => new Promise((r) => setTimeout(r, 20)))
          expect(yield* store.revision).toBe(0)
          const t = yield* store.add({ instruction: "one", repo: "/r" })
          const r1 = yield* store.revision
          expect(r1).not.toBe(0)
          yield* pause
          const other = yield* store.add({ instruction: "two", repo: "/r" })
          const r2 = yield* store.revision
          expect(r2).not.toBe(r1)
          yield* pause
          yield* store.update(t.id, T.succeed)
          const r3 = yield* store.revision
          expect(r3).not.toBe(r2)
          yield* pause
          yield* store.remove(other.id)
          expect(yield* store.revision).not.toBe(r3)
          yield* store.remove(t.id)
          expect(yield* store.revision).toBe(0)
        })
      ))
  })
}

describe("a task's claim under [host] claim_ttl", () => {
  /** The owner's queue as a loop opens it: on the configured backend (the home folder here), with `claimTtlSecs` from the config. */
  const queueOf = (home: string, claimTtlSecs: number) =>
    TaskStore.layer.pipe(
      Layer.provide(Layer.mergeAll(ConfiguredStore.files, MagiConfig.fixed({ claimTtlSecs }))),
      Layer.provide(MagiHome.at(home)),
      Layer.provideMerge(NodeFileSystem.layer)
    )

  it.scoped("lets another loop take a task over once the configured seconds pass unrenewed, where the default two minutes would still hold it", () =>
    Effect.gen(function* () {
      const home = yield* tempDir
      yield* TestClock.setTime(NOW)
      // A loop claims a task, then stops renewing it (its host went away): the claim stays behind.
      const t = yield* Effect.scoped(
        Effect.gen(function* () {
          const store = yield* TaskStore
          const filed = yield* store.add({ instruction: "one", repo: "/r" })
          expect(yield* store.claim(filed.id)).toBe(true)
          return filed
        }).pipe(Effect.provide(queueOf(home, 30)))
      )
      const short = yield* Layer.build(queueOf(home, 30)).pipe(Effect.map(Context.get(TaskStore)))
      const usual = yield* Layer.build(queueOf(home, 120)).pipe(Effect.map(Context.get(TaskStore)))
      yield* TestClock.adjust("29 seconds")
      expect(yield* short.claim(t.id)).toBe(false)
      yield* TestClock.adjust("2 seconds")
      // Past 30 s: stale for a loop configured with 30, still held for one with the default.
      expect(yield* usual.claim(t.id)).toBe(false)
      expect(yield* short.claim(t.id)).toBe(true)
      // The new holder renews it every 5 s (a sixth of 30): a minute on, it is still its own.
      yield* TestClock.adjust("60 seconds")
      expect(yield* usual.claimant(t.id)).toEqual(Option.some(process.pid))
      expect(yield* usual.claim(t.id)).toBe(false)
    }))
})
