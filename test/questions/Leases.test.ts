import { FileSystem } from "@effect/platform"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer, Option, TestClock } from "effect"
import { spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import * as Lease from "../../src/questions/Leases.js"

const at = (secs: number) => new Date(secs * 1000)
const leaseAt = (secs: number): Lease.Lease => ({ kind: "asker", pid: 1, beat_at: at(secs).toISOString().replace(/\.\d+Z$/, "Z") })

const tempDir = () => NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "magi-lease-"))

describe("Lease freshness", () => {
  it("a lease beaten at t=95 is still fresh at t=100", () => {
    expect(Lease.isFresh(leaseAt(95), at(100))).toBe(true)
  })

  it("a lease is fresh exactly at the ttl and stale one second after", () => {
    expect(Lease.isFresh(leaseAt(0), at(90))).toBe(true)
    expect(Lease.isFresh(leaseAt(0), at(91))).toBe(false)
  })

  it("the holder is whoever beat a fresh lease, else nobody", () => {
    expect(Lease.holder(Option.some({ ...leaseAt(0), kind: "daemon" }), at(90))).toBe("daemon")
    expect(Lease.holder(Option.some(leaseAt(0)), at(91))).toBe("nobody")
    expect(Lease.holder(Option.none(), at(0))).toBe("nobody")
  })

  it("no lease is never held", () => {
    expect(Option.isNone(Lease.heldAt(Option.none(), at(0)))).toBe(true)
    expect(Lease.heldAt(Option.some(leaseAt(0)), at(10))).toEqual(Option.some("asker"))
  })
})

describe("Lease files", () => {
  it.effect("a beat is read back with its kind, this pid and the clock's time", () =>
    Effect.gen(function* () {
      const root = tempDir()
      yield* TestClock.setTime(Date.parse("2026-01-02T03:04:05Z"))
      yield* Lease.beat(root, "q1", "daemon")
      const read = yield* Lease.read(root, "q1")
      expect(read).toEqual(
        Option.some({ kind: "daemon", pid: process.pid, host: NodeOs.hostname(), pidns: Lease.pidNamespace(), beat_at: "2026-01-02T03:04:05Z" })
      )
      // Never a *.json file, and not in the questions folder itself: the
      // store's listing must not see it, nor count a beat as a change.
      expect(NodeFs.readdirSync(root)).toEqual(["leases"])
      expect(NodeFs.readdirSync(NodePath.join(root, "leases"))).toEqual(["q1.lease"])
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("a later beat replaces the earlier one and ages on the clock", () =>
    Effect.gen(function* () {
      const root = tempDir()
      yield* Lease.beat(root, "q1", "asker")
      yield* TestClock.adjust(Duration.seconds(60))
      yield* Lease.beat(root, "q1", "asker")
      yield* TestClock.adjust(Duration.seconds(89))
      const lease = Option.getOrThrow(yield* Lease.read(root, "q1"))
      expect(Lease.isFresh(lease, new Date(yield* TestClock.currentTimeMillis))).toBe(true)
      yield* TestClock.adjust(Duration.seconds(2))
      expect(Lease.isFresh(lease, new Date(yield* TestClock.currentTimeMillis))).toBe(false)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("clear removes the lease, and clearing twice or reading a missing one is fine", () =>
    Effect.gen(function* () {
      const root = tempDir()
      yield* Lease.beat(root, "q1", "asker")
      yield* Lease.clear(root, "q1")
      yield* Lease.clear(root, "q1")
      expect(Option.isNone(yield* Lease.read(root, "q1"))).toBe(true)
      expect(Option.isNone(yield* Lease.read(NodePath.join(root, "missing"), "q1"))).toBe(true)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("a fresh lease whose process is dead on this machine is gone at once; one of another machine, or an older magi's, waits out its beat", () =>
    Effect.gen(function* () {
      const root = tempDir()
      const dead = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" })
      const pid = Number(dead.stdout)
      const write = (id: string, body: object) => {
        NodeFs.mkdirSync(NodePath.join(root, Lease.LEASES_DIR), { recursive: true })
        NodeFs.writeFileSync(Lease.leasePath(root, id), JSON.stringify({ kind: "asker", beat_at: new Date().toISOString(), ...body }))
      }
      const here = { host: NodeOs.hostname(), ...(Lease.pidNamespace() === undefined ? {} : { pidns: Lease.pidNamespace() }) }
      write("dead", { pid, ...here })
      write("alive", { pid: process.pid, ...here })
      write("elsewhere", { pid, host: `not-${NodeOs.hostname()}` })
      write("sandboxed", { pid, host: NodeOs.hostname(), pidns: "pid:[1]" })
      write("older", { pid })
      expect(Option.isNone(yield* Lease.read(root, "dead"))).toBe(true)
      for (const id of ["alive", "elsewhere", "sandboxed", "older"]) expect(Option.isSome(yield* Lease.read(root, id)), id).toBe(true)
      expect([...(yield* Lease.readAll(root)).keys()].sort()).toEqual(["alive", "elsewhere", "older", "sandboxed"])
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("a torn lease file reads as no lease rather than failing", () =>
    Effect.gen(function* () {
      const root = tempDir()
      NodeFs.mkdirSync(NodePath.join(root, Lease.LEASES_DIR))
      NodeFs.writeFileSync(Lease.leasePath(root, "q1"), '{"kind":"asker","pid":')
      expect(Option.isNone(yield* Lease.read(root, "q1"))).toBe(true)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("a beat into a directory that cannot be created fails quietly", () =>
    Effect.gen(function* () {
      const root = tempDir()
      const blocker = NodePath.join(root, "file")
      NodeFs.writeFileSync(blocker, "")
      yield* Lease.beat(NodePath.join(blocker, "questions"), "q1", "asker")
      expect(NodeFs.readdirSync(root)).toEqual(["file"])
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("the Leases service binds a root and the filesystem", () => {
    const root = tempDir()
    return Effect.gen(function* () {
      const leases = yield* Lease.Leases
      yield* leases.beat("q2", "asker")
      const fs = yield* FileSystem.FileSystem
      expect(yield* fs.exists(NodePath.join(root, "leases", "q2.lease"))).toBe(true)
      expect(Option.map(yield* leases.read("q2"), (l) => l.kind)).toEqual(Option.some("asker"))
      yield* leases.clear("q2")
      expect(Option.isNone(yield* leases.read("q2"))).toBe(true)
    }).pipe(Effect.provide(Lease.Leases.at(root).pipe(Layer.provideMerge(NodeContext.layer))))
  })
})
