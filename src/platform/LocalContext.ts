/**
 * The Node platform services magi runs on, with one change: whole-file reads
 * are synchronous.
 *
 * Question files are a few kilobytes, and a listing reads every one of them.
 * Node's asynchronous `readFile` makes four thread-pool round trips per file
 * (open, stat, read, close) through a pool of four threads, which for 10,000
 * questions costs over a second; the synchronous read of the same file takes
 * about fifteen microseconds of the event loop. The largest file magi reads
 * whole is a panel asset, capped at 8 MiB, a few milliseconds. `stat` is
 * synchronous for the same reason: a store checks each file before it reads
 * it. Everything else (writes, renames, watching, child processes) stays as
 * the platform has it.
 *
 * A whole-file read here never blocks and never grows without bound, whatever
 * sits at the path: it opens without blocking (`O_NONBLOCK`, so a FIFO dropped
 * in a folder cannot hang the event loop), refuses anything but a regular file
 * on the descriptor it opened (so a swap between a caller's `stat` and this
 * open changes nothing), and refuses a file over `WHOLE_READ_MAX_BYTES`.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as PlatformError from "@effect/platform/Error"
import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import * as NodeTerminal from "@effect/platform-node/NodeTerminal"
import { Effect, Either, Layer, Option } from "effect"
import { withDiskFullWords } from "./DiskFull.js"
import * as RecordStore from "../store/files/RecordStore.js"
import * as NodeFs from "node:fs"

/**
 * Largest file magi reads whole. The biggest legitimate one is a panel asset,
 * whose total is capped at 8 MiB; records are capped far lower by their
 * stores. This is the backstop that makes "read a whole file" a bounded
 * operation even for a caller that forgot its own cap.
 */
export const WHOLE_READ_MAX_BYTES = 64 * 1024 * 1024

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
    case "EBADRES":
      return "BadResource"
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

class NotRegular extends Error {
  readonly code = "EBADRES"
  readonly syscall = "read"
}

const kindOf = (s: NodeFs.Stats) =>
  s.isDirectory()
    ? "a directory"
    : s.isFIFO()
    ? "a FIFO"
    : s.isCharacterDevice()
    ? "a character device"
    : s.isBlockDevice()
    ? "a block device"
    : s.isSocket()
    ? "a socket"
    : "not a regular file"

/** The whole of one regular file, read without blocking and within the cap. */
const readRegular = (path: string): Buffer => {
  const fd = NodeFs.openSync(path, NodeFs.constants.O_RDONLY | NodeFs.constants.O_NONBLOCK)
  try {
    const info = NodeFs.fstatSync(fd)
    if (!info.isFile()) throw new NotRegular(`${path} is ${kindOf(info)}, not a regular file; magi reads only regular files`)
    if (info.size > WHOLE_READ_MAX_BYTES)
      throw new NotRegular(`${path} is ${info.size} bytes, over magi's cap of ${WHOLE_READ_MAX_BYTES} bytes for reading a file whole`)
    // Exactly the size the descriptor reported: a file growing while it is
    // read is cut there, never followed.
    const buffer = Buffer.allocUnsafe(info.size)
    let filled = 0
    while (filled < info.size) {
      const n = NodeFs.readSync(fd, buffer, filled, info.size - filled, filled)
      if (n === 0) break
      filled += n
    }
    return filled === info.size ? buffer : buffer.subarray(0, filled)
  } finally {
    NodeFs.closeSync(fd)
  }
}

const infoOf = (s: NodeFs.Stats): FileSystem.File.Info => ({
  type: s.isFile()
    ? "File"
    : s.isDirectory()
    ? "Directory"
    : s.isSymbolicLink()
    ? "SymbolicLink"
    : s.isBlockDevice()
    ? "BlockDevice"
    : s.isCharacterDevice()
    ? "CharacterDevice"
    : s.isFIFO()
    ? "FIFO"
    : s.isSocket()
    ? "Socket"
    : "Unknown",
  mtime: Option.fromNullable(s.mtime),
  atime: Option.fromNullable(s.atime),
  birthtime: Option.fromNullable(s.birthtime),
  dev: s.dev,
  rdev: Option.fromNullable(s.rdev),
  ino: Option.fromNullable(s.ino),
  mode: s.mode,
  nlink: Option.fromNullable(s.nlink),
  uid: Option.fromNullable(s.uid),
  gid: Option.fromNullable(s.gid),
  size: FileSystem.Size(s.size),
  blksize: Option.map(Option.fromNullable(s.blksize), FileSystem.Size),
  blocks: Option.fromNullable(s.blocks)
})

/** Node's `FileSystem` with synchronous, bounded, never-blocking whole-file reads, and a full disk said so (DiskFull.ts). */
export const fileSystemLayer = Layer.effect(
  FileSystem.FileSystem,
  Effect.map(FileSystem.FileSystem, (fs) => ({
    ...withDiskFullWords(fs),
    readFile: (path: string) => readSync("readFile", path, () => new Uint8Array(readRegular(path))),
    readFileString: (path: string, encoding?: string) =>
      readSync("readFileString", path, () => readRegular(path).toString((encoding ?? "utf8") as BufferEncoding)),
    stat: (path: string) => readSync("stat", path, () => infoOf(NodeFs.statSync(path)))
  }))
).pipe(Layer.provide(NodeFileSystem.layer))

/** A folder's names through `opendir`, a batch at a time (see `RecordStore.BoundedReader`). */
const openNames = (path: string): Either.Either<RecordStore.NamesCursor | undefined, RecordStore.BoundedReadRefusal> => {
  let dir: NodeFs.Dir
  try {
    // Node reads entries from the kernel 32 at a time by default; a few more per call costs little.
    dir = NodeFs.opendirSync(path, { bufferSize: NAMES_BUFFERED })
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code
    return code === "ENOENT" ? Either.right(undefined) : Either.left({ _tag: "Failed", message: (e as Error).message })
  }
  let open = true
  return Either.right({
    next: (max) => {
      const names: Array<string> = []
      while (open && names.length < max) {
        const entry = dir.readSync()
        if (entry === null) break
        names.push(entry.name)
      }
      return names
    },
    close: () => {
      if (!open) return
      open = false
      dir.closeSync()
    }
  })
}

/** Entries Node keeps read ahead from the kernel per open folder: a few kilobytes of names. */
const NAMES_BUFFERED = 128

/** The record store's one-step bounded read (see `RecordStore.BoundedReader`), on Node. */
export const boundedReaderLayer = Layer.succeed(RecordStore.BoundedReader, {
  readString: (path, maxBytes) => {
    let fd: number
    try {
      fd = NodeFs.openSync(path, NodeFs.constants.O_RDONLY | NodeFs.constants.O_NONBLOCK)
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code
      return Either.left(code === "ENOENT" || code === "ENOTDIR" ? { _tag: "NotFound" } : { _tag: "Failed", message: (e as Error).message })
    }
    try {
      const info = NodeFs.fstatSync(fd)
      if (!info.isFile()) return Either.left({ _tag: "NotRegular", kind: kindOf(info) })
      if (info.size > maxBytes) return Either.left({ _tag: "TooBig", size: info.size })
      const buffer = Buffer.allocUnsafe(info.size)
      let filled = 0
      while (filled < info.size) {
        const n = NodeFs.readSync(fd, buffer, filled, info.size - filled, filled)
        if (n === 0) break
        filled += n
      }
      return Either.right(buffer.toString("utf8", 0, filled))
    } catch (e) {
      return Either.left({ _tag: "Failed", message: (e as Error).message })
    } finally {
      NodeFs.closeSync(fd)
    }
  },
  openNames: (path) => openNames(path)
})

/**
 * `NodeContext.layer` less its worker manager (magi starts no workers, and
 * building it and evaluating its modules was a few ms of every start), with
 * that filesystem in place of the stock one, and the bounded reader.
 */
export const layer = Layer.mergeAll(NodePath.layer, NodeCommandExecutor.layer, NodeTerminal.layer).pipe(
  Layer.provideMerge(NodeFileSystem.layer),
  Layer.merge(Layer.merge(fileSystemLayer, boundedReaderLayer))
)
