/**
 * The Node platform services magi runs on, with one change: whole-file reads
 * are synchronous.
 *
 * Question files are a few kilobytes, and a listing reads every one of them.
 * Node's asynchronous `readFile` makes four thread-pool round trips per file
 * (open, stat, read, close) through a pool of four threads, which for 10,000
 * questions costs over a second; the synchronous read of the same file takes
 * about fifteen microseconds of the event loop. The largest file magi reads
 * whole is a panel asset, capped at 8 MiB, a few milliseconds. Everything else
 * (writes, renames, watching, child processes) stays as the platform has it.
 */
import { FileSystem, Error as PlatformError } from "@effect/platform"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { Effect, Layer } from "effect"
import * as NodeFs from "node:fs"

const reasonOf = (code: string | undefined): PlatformError.SystemErrorReason => {
  switch (code) {
    case "ENOENT":
    case "ENOTDIR":
      return "NotFound"
    case "EACCES":
    case "EPERM":
      return "PermissionDenied"
    case "EEXIST":
      return "AlreadyExists"
    case "EISDIR":
      return "BadResource"
    case "EBUSY":
      return "Busy"
    default:
      return "Unknown"
  }
}

const readSync = <A>(method: string, path: string, read: () => A) =>
  Effect.try({
    try: read,
    catch: (e) =>
      new PlatformError.SystemError({
        module: "FileSystem",
        method,
        reason: reasonOf((e as NodeJS.ErrnoException).code),
        pathOrDescriptor: path,
        syscall: (e as NodeJS.ErrnoException).syscall,
        description: (e as Error).message
      })
  })

/** Node's `FileSystem` with synchronous whole-file reads. */
export const fileSystemLayer = Layer.effect(
  FileSystem.FileSystem,
  Effect.map(FileSystem.FileSystem, (fs) => ({
    ...fs,
    readFile: (path: string) => readSync("readFile", path, () => new Uint8Array(NodeFs.readFileSync(path))),
    readFileString: (path: string, encoding?: string) =>
      readSync("readFileString", path, () => NodeFs.readFileSync(path, { encoding: (encoding ?? "utf8") as BufferEncoding }))
  }))
).pipe(Layer.provide(NodeFileSystem.layer))

/** `NodeContext.layer` with that filesystem in place of the stock one. */
export const layer = Layer.merge(NodeContext.layer, fileSystemLayer)
