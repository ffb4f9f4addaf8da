/**
 * Issue 28, point 12: a lock taken on a full disk. The file system is the
 * in-memory one with its writes failing as Node's do when the disk is full:
 * a create-new opens (the empty file is there) and the write of its content
 * fails with ENOSPC. The lock that could not be written is not left behind,
 * the next writer takes the lock at once, and the failure says the disk is full.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import * as PlatformError from "@effect/platform/Error"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Either, Fiber, Layer, Option, TestClock } from "effect"
import { isDiskFull, withDiskFullWords } from "../../src/platform/DiskFull.js"
import * as MemoryFileSystem from "../../src/store/MemoryFileSystem.js"
import * as RecordLock from "../../src/store/files/RecordLock.js"

/** The error Node's file system gives for a write on a full disk, as @effect/platform wraps it. */
const enospc = (method: string, fd: number) =>
  new PlatformError.SystemError({
    reason: "Unknown",
    module: "FileSystem",
    method,
    pathOrDescriptor: fd,
    cause: Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" })
  })

/** The memory file system, with every write of data failing while `full.now` is set. */
const fullDisk = (full: { now: boolean }) =>
  Layer.effect(
    FileSystem.FileSystem,
    Effect.map(MemoryFileSystem.make, (fs): FileSystem.FileSystem => {
      const refusing = <A, E, R>(method: string, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | PlatformError.PlatformError, R> =>
        Effect.suspend((): Effect.Effect<A, E | PlatformError.PlatformError, R> => (full.now ? Effect.fail(enospc(method, 18)) : effect))
      return withDiskFullWords({
        ...fs,
        writeFile: (path, data, options) =>
          full.now
            // Node's writeFile opens (creating the file) before it writes.
            ? Effect.zipRight(Effect.scoped(fs.open(path, { flag: options?.flag ?? "w" })), Effect.fail(enospc("writeFile", 18)))
            : fs.writeFile(path, data, options),
        writeFileString: (path, data, options) =>
          full.now
            ? Effect.zipRight(Effect.scoped(fs.open(path, { flag: options?.flag ?? "w" })), Effect.fail(enospc("writeFile", 18)))
            : fs.writeFileString(path, data, options),
        open: (path, options) =>
          Effect.map(fs.open(path, options), (file) => ({
            ...file,
            write: (buffer) => refusing("write", file.write(buffer)),
            writeAll: (buffer) => refusing("writeAll", file.writeAll(buffer))
          }))
      })
    })
  )

const LOCK = "/home/questions/20260101-000000-ab12.lock"

describe("a lock on a full disk", () => {
  it.effect("is not left behind, says the disk is full, and the next writer takes the lock at once once there is room", () =>
    Effect.gen(function* () {
      const fs = yield* FileSystem.FileSystem
      yield* fs.makeDirectory("/home/questions", { recursive: true })
      full.now = true
      const refused = yield* Effect.either(RecordLock.hold(LOCK, "question ab12", Effect.succeed("written")))
      expect(Either.isLeft(refused)).toBe(true)
      const message = Either.isLeft(refused) ? refused.left.message : ""
      expect(message).toContain("the disk is full")
      expect(message).toContain(LOCK)
      expect(message).not.toContain("Unknown")
      // No empty lock, no break marker: nothing for the next writer to wait out.
      expect(yield* fs.readDirectory("/home/questions")).toEqual([])
      // A second writer while the disk is still full: refused at once the same way, nothing left.
      const again = yield* Effect.either(RecordLock.hold(LOCK, "question ab12", Effect.succeed("written")))
      expect(Either.isLeft(again) && again.left.message).toContain("the disk is full")
      expect(yield* fs.readDirectory("/home/questions")).toEqual([])
      // Room again: the next writer holds the lock within a second of the clock, not after the 20 s give-up.
      full.now = false
      const next = yield* Effect.fork(RecordLock.hold(LOCK, "question ab12", Effect.succeed("written")))
      yield* TestClock.adjust(Duration.seconds(1))
      expect(yield* Fiber.poll(next)).toEqual(Option.some(expect.objectContaining({ _tag: "Success", value: "written" })))
      expect(yield* fs.readDirectory("/home/questions")).toEqual([])
    }).pipe(Effect.provide(fullDisk(full))))

  it("tells ENOSPC from every other failure", () => {
    expect(isDiskFull(enospc("writeAll", 18))).toBe(true)
    expect(
      isDiskFull(
        new PlatformError.SystemError({ reason: "Unknown", module: "FileSystem", method: "writeFile", description: "ENOSPC: no space left on device" })
      )
    ).toBe(true)
    expect(isDiskFull(new PlatformError.SystemError({ reason: "PermissionDenied", module: "FileSystem", method: "writeFile" }))).toBe(false)
    expect(isDiskFull(new Error("ENOSPC"))).toBe(false)
  })
})

const full = { now: false }

describe("a file opened through the disk-full words", () => {
  it.effect("still seeks and reads as the platform's own file does (a run's artifact tail reads through it)", () =>
    Effect.gen(function* () {
      const dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "magi-diskfull-"))
      const path = NodePath.join(dir, "out")
      NodeFs.writeFileSync(path, "0123456789")
      const fs = withDiskFullWords(yield* FileSystem.FileSystem)
      const tail = yield* Effect.scoped(
        Effect.gen(function* () {
          const file = yield* fs.open(path, { flag: "r" })
          yield* file.seek(6, "start")
          const buffer = new Uint8Array(4)
          const n = yield* file.read(buffer)
          return Buffer.from(buffer.subarray(0, Number(n))).toString("utf8")
        })
      )
      expect(tail).toBe("6789")
      NodeFs.rmSync(dir, { recursive: true, force: true })
    }).pipe(Effect.provide(NodeFileSystem.layer)))
})
