/**
 * The lease index the web reads holders from: one read per lease per change
 * of the leases folder, never one per question per request.
 */
import { FileSystem } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, Ref, TestClock } from "effect"
import { spawn } from "node:child_process"
import * as NodeOs from "node:os"
import * as Lease from "../../src/questions/Leases.js"
import { Leases } from "../../src/questions/Leases.js"
import * as Memo from "../../src/store/files/Memo.js"
import * as LeaseIndex from "../../src/questions/LeaseIndex.js"
import * as MemoryFileSystem from "../../src/store/MemoryFileSystem.js"

const ROOT = "/magi/questions"

/** The memory filesystem, counting reads of lease files. */
const counting = (reads: Ref.Ref<number>) =>
  Layer.effect(
    FileSystem.FileSystem,
    Effect.map(MemoryFileSystem.make, (fs) => ({
      ...fs,
      readFileString: (path: string, encoding?: string) =>
        Effect.zipRight(path.endsWith(".lease") ? Ref.update(reads, (n) => n + 1) : Effect.void, fs.readFileString(path, encoding))
    }))
  )

const ids = Array.from({ length: 100 }, (_, i) => `20260902-231501-${i.toString(16).padStart(4, "0")}`)

const settle = Effect.gen(function* () {
  for (let i = 0; i < 10; i++) yield* Effect.yieldNow()
})

describe("the lease index", () => {
  it.scoped("reads each lease once however many requests ask for every question's holder", () =>
    Effect.gen(function* () {
      const reads = yield* Ref.make(0)
      const fs = counting(reads)
      yield* Effect.gen(function* () {
        for (const id of ids.slice(0, 50)) yield* Lease.beat(ROOT, id, "asker")
        const leases = yield* Leases
        yield* settle
        // Past the memo's slack: a folder changed a moment ago is read again (see Memo.trusted).
        yield* Effect.promise(() => new Promise((r) => setTimeout(r, Memo.MTIME_SLACK_MS + 20)))
        yield* leases.all
        const warm = yield* Ref.get(reads)
        // Three requests, each looking up all hundred questions' holders.
        for (let request = 0; request < 3; request++) {
          const all = yield* leases.all
          for (const id of ids) all.get(id)
        }
        // Before: 300 reads (one per question per request), whether held or not; now none past the warm-up.
        expect(yield* Ref.get(reads)).toBe(warm)
        expect(warm).toBeLessThanOrEqual(100)
        expect(Option.map(yield* leases.read(ids[0]!), (l) => l.kind)).toEqual(Option.some("asker"))
        expect(yield* leases.read(ids[99]!)).toEqual(Option.none())
      }).pipe(Effect.provide(LeaseIndex.layer(ROOT).pipe(Layer.provideMerge(fs))))
    }))

  it.scoped("sees a lease another process let go, or beat, as soon as the folder changes", () =>
    Effect.gen(function* () {
      const fs = yield* FileSystem.FileSystem
      const leases = yield* Leases
      yield* Lease.beat(ROOT, ids[0]!, "asker")
      yield* settle
      expect(Option.isSome(yield* leases.read(ids[0]!))).toBe(true)
      // Another process: straight to the files, not through this index.
      yield* fs.remove(Lease.leasePath(ROOT, ids[0]!))
      yield* Lease.beat(ROOT, ids[1]!, "daemon")
      yield* settle
      expect(yield* leases.read(ids[0]!)).toEqual(Option.none())
      expect(Option.map(yield* leases.read(ids[1]!), (l) => l.kind)).toEqual(Option.some("daemon"))
    }).pipe(Effect.provide(LeaseIndex.layer(ROOT).pipe(Layer.provideMerge(MemoryFileSystem.layer)))))

  it.scoped("judges a lease stale at the moment of asking, with no file changing", () =>
    Effect.gen(function* () {
      const leases = yield* Leases
      yield* Lease.beat(ROOT, ids[0]!, "asker")
      yield* settle
      const at = (ms: number) => Effect.map(leases.read(ids[0]!), (l) => Lease.holder(l, new Date(ms)))
      expect(yield* at(yield* TestClock.currentTimeMillis)).toBe("asker")
      yield* TestClock.adjust("91 seconds")
      expect(yield* at(yield* TestClock.currentTimeMillis)).toBe("nobody")
    }).pipe(Effect.provide(LeaseIndex.layer(ROOT).pipe(Layer.provideMerge(MemoryFileSystem.layer)))))

  it.scoped("drops a lease whose process died on this machine at the moment of asking, with no file changing", () =>
    Effect.gen(function* () {
      const leases = yield* Leases
      const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" })
      yield* Effect.addFinalizer(() => Effect.sync(() => child.kill("SIGKILL")))
      const fs = yield* FileSystem.FileSystem
      yield* fs.makeDirectory(`${ROOT}/leases`, { recursive: true })
      const ns = Lease.pidNamespace()
      const body = {
        kind: "asker",
        pid: child.pid,
        host: NodeOs.hostname(),
        ...(ns === undefined ? {} : { pidns: ns }),
        beat_at: new Date(yield* TestClock.currentTimeMillis).toISOString()
      }
      yield* fs.writeFileString(Lease.leasePath(ROOT, ids[0]!), JSON.stringify(body))
      yield* settle
      const now = new Date(yield* TestClock.currentTimeMillis)
      expect(Lease.holder(yield* leases.read(ids[0]!), now)).toBe("asker")
      const gone = new Promise((done) => child.once("exit", done))
      child.kill("SIGKILL")
      yield* Effect.promise(() => gone)
      expect(Lease.holder(yield* leases.read(ids[0]!), now)).toBe("nobody")
      expect((yield* leases.all).size).toBe(0)
    }).pipe(Effect.provide(LeaseIndex.layer(ROOT).pipe(Layer.provideMerge(MemoryFileSystem.layer)))))
})
