/**
 * An in-memory `FileSystem`: the parts of it magi's stores use, with the same
 * failure reasons Node gives (NotFound, AlreadyExists for a create-new write),
 * so the store code that runs against real files runs unchanged against this.
 * It exists for tests that want a store with no disk at all, and it keeps the
 * memory-backed store honest: there is one store implementation, not two.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as PlatformError from "@effect/platform/Error"
import { Effect, Layer, Option, PubSub, Stream } from "effect"
import * as NodePath from "node:path"

type Entry =
  | { readonly type: "File"; data: Uint8Array; mtime: Date }
  | { readonly type: "Directory"; mtime: Date }

const fail = (method: string, path: string, reason: PlatformError.SystemErrorReason) =>
  new PlatformError.SystemError({ module: "FileSystem", method, reason, pathOrDescriptor: path })

const info = (entry: Entry): FileSystem.File.Info => ({
  type: entry.type,
  mtime: Option.some(entry.mtime),
  atime: Option.some(entry.mtime),
  birthtime: Option.none(),
  dev: 0,
  ino: Option.none(),
  mode: entry.type === "File" ? 0o644 : 0o755,
  nlink: Option.none(),
  uid: Option.none(),
  gid: Option.none(),
  rdev: Option.none(),
  size: FileSystem.Size(entry.type === "File" ? entry.data.byteLength : 0),
  blksize: Option.none(),
  blocks: Option.none()
})

/** A fresh, empty in-memory filesystem with `/` present. */
export const make = Effect.gen(function* () {
  const entries = new Map<string, Entry>([["/", { type: "Directory", mtime: new Date() }]])
  const events = yield* PubSub.unbounded<FileSystem.WatchEvent>()
  const norm = (p: string) => NodePath.posix.resolve("/", p)
  const parentOf = (p: string) => NodePath.posix.dirname(p)

  /** Every change touches its directory's mtime, as on a real disk. */
  const touched = (path: string, event: FileSystem.WatchEvent) => {
    const dir = entries.get(parentOf(path))
    if (dir) dir.mtime = new Date()
    events.unsafeOffer(event)
  }
  const requireDir = (method: string, path: string) => {
    const dir = entries.get(parentOf(path))
    return dir?.type === "Directory" ? Effect.void : Effect.fail(fail(method, path, "NotFound"))
  }
  const childrenOf = (dir: string) => [...entries.keys()].filter((k) => k !== dir && parentOf(k) === dir)

  const writeFile: FileSystem.FileSystem["writeFile"] = (raw, data, options) =>
    Effect.suspend(() => {
      const path = norm(raw)
      const existing = entries.get(path)
      if (existing && options?.flag?.includes("x")) return Effect.fail(fail("writeFile", path, "AlreadyExists"))
      if (existing?.type === "Directory") return Effect.fail(fail("writeFile", path, "BadResource"))
      return requireDir("writeFile", path).pipe(
        Effect.tap(() => {
          // `a` appends, as on a real disk; anything else replaces.
          const before = existing?.type === "File" && options?.flag?.startsWith("a") ? existing.data : new Uint8Array(0)
          const next = new Uint8Array(before.length + data.length)
          next.set(before)
          next.set(data, before.length)
          entries.set(path, { type: "File", data: next, mtime: new Date() })
          touched(path, existing ? FileSystem.WatchEventUpdate({ path }) : FileSystem.WatchEventCreate({ path }))
        })
      )
    })

  const readFile: FileSystem.FileSystem["readFile"] = (raw) =>
    Effect.suspend(() => {
      const entry = entries.get(norm(raw))
      if (entry?.type !== "File") return Effect.fail(fail("readFile", raw, "NotFound"))
      return Effect.succeed(new Uint8Array(entry.data))
    })

  const remove: FileSystem.FileSystem["remove"] = (raw, options) =>
    Effect.suspend(() => {
      const path = norm(raw)
      const entry = entries.get(path)
      if (!entry) return options?.force ? Effect.void : Effect.fail(fail("remove", path, "NotFound"))
      if (entry.type === "Directory" && childrenOf(path).length > 0 && !options?.recursive)
        return Effect.fail(fail("remove", path, "Busy"))
      for (const key of [...entries.keys()]) if (key === path || key.startsWith(path + "/")) entries.delete(key)
      touched(path, FileSystem.WatchEventRemove({ path }))
      return Effect.void
    })

  const makeDirectory: FileSystem.FileSystem["makeDirectory"] = (raw, options) =>
    Effect.suspend(() => {
      const path = norm(raw)
      const existing = entries.get(path)
      if (existing) {
        return existing.type === "Directory" && options?.recursive
          ? Effect.void
          : Effect.fail(fail("makeDirectory", path, "AlreadyExists"))
      }
      const parent = parentOf(path)
      const ensureParent = entries.has(parent)
        ? Effect.void
        : options?.recursive
        ? makeDirectory(parent, { recursive: true })
        : Effect.fail(fail("makeDirectory", path, "NotFound"))
      return ensureParent.pipe(
        Effect.tap(() => {
          entries.set(path, { type: "Directory", mtime: new Date() })
          touched(path, FileSystem.WatchEventCreate({ path }))
        })
      )
    })

  /** A second name for a file: here a copy, since nothing writes a file in place. */
  const link: FileSystem.FileSystem["link"] = (rawFrom, rawTo) =>
    Effect.suspend(() => {
      const from = norm(rawFrom)
      const to = norm(rawTo)
      const entry = entries.get(from)
      if (entry?.type !== "File") return Effect.fail(fail("link", from, "NotFound"))
      if (entries.has(to)) return Effect.fail(fail("link", to, "AlreadyExists"))
      return writeFile(to, entry.data, { flag: "wx" })
    })

  const rename: FileSystem.FileSystem["rename"] = (rawFrom, rawTo) =>
    Effect.suspend(() => {
      const from = norm(rawFrom)
      const to = norm(rawTo)
      const entry = entries.get(from)
      if (!entry) return Effect.fail(fail("rename", from, "NotFound"))
      const target = entries.get(to)
      if (target?.type === "Directory" && childrenOf(to).length > 0) return Effect.fail(fail("rename", to, "Busy"))
      return requireDir("rename", to).pipe(
        Effect.tap(() => {
          for (const key of [...entries.keys()]) {
            if (key === to || key.startsWith(to + "/")) entries.delete(key)
          }
          for (const [key, value] of [...entries.entries()]) {
            if (key === from || key.startsWith(from + "/")) {
              entries.delete(key)
              entries.set(to + key.slice(from.length), value)
            }
          }
          touched(from, FileSystem.WatchEventRemove({ path: from }))
          touched(to, FileSystem.WatchEventCreate({ path: to }))
        })
      )
    })

  /**
   * An open file, enough of one for what the stores do with it: write a new
   * file and flush it (a no-op here: memory has no disk to reach), flush a
   * directory, read back. Writes land in the entry at once.
   */
  const open: FileSystem.FileSystem["open"] = (raw, options) =>
    Effect.suspend(() => {
      const path = norm(raw)
      const flag = options?.flag ?? "r"
      const existing = entries.get(path)
      const creates = flag.startsWith("w") || flag.startsWith("a")
      if (!creates && !existing) return Effect.fail(fail("open", path, "NotFound"))
      if (creates && existing && flag.includes("x")) return Effect.fail(fail("open", path, "AlreadyExists"))
      if (creates && existing?.type === "Directory") return Effect.fail(fail("open", path, "BadResource"))
      const ready: Effect.Effect<void, PlatformError.PlatformError> = creates
        ? (requireDir("open", path) as Effect.Effect<void, PlatformError.PlatformError>).pipe(
          Effect.map(() => {
            if (existing && flag.startsWith("a")) return
            entries.set(path, { type: "File", data: new Uint8Array(0), mtime: new Date() })
            touched(path, existing ? FileSystem.WatchEventUpdate({ path }) : FileSystem.WatchEventCreate({ path }))
          })
        )
        : Effect.void
      return Effect.map(ready, () => {
        let position = 0
        const current = () => entries.get(path)
        const file: FileSystem.File = {
          [FileSystem.FileTypeId]: FileSystem.FileTypeId,
          fd: FileSystem.FileDescriptor(0),
          stat: Effect.suspend(() => {
            const entry = current()
            return entry ? Effect.succeed(info(entry)) : Effect.fail(fail("stat", path, "NotFound"))
          }),
          seek: (offset, from) =>
            Effect.sync(() => {
              position = from === "start" ? Number(offset) : position + Number(offset)
            }),
          sync: Effect.void,
          read: (buffer) =>
            Effect.sync(() => {
              const entry = current()
              const data = entry?.type === "File" ? entry.data : new Uint8Array(0)
              const chunk = data.subarray(position, position + buffer.byteLength)
              buffer.set(chunk)
              position += chunk.byteLength
              return FileSystem.Size(chunk.byteLength)
            }),
          readAlloc: (size) =>
            Effect.sync(() => {
              const entry = current()
              const data = entry?.type === "File" ? entry.data : new Uint8Array(0)
              const chunk = data.slice(position, position + Number(size))
              position += chunk.byteLength
              return chunk.byteLength === 0 ? Option.none() : Option.some(chunk)
            }),
          truncate: (length) =>
            Effect.sync(() => {
              const entry = current()
              if (entry?.type === "File") entry.data = entry.data.slice(0, Number(length ?? 0))
            }),
          write: (buffer) => Effect.map(file.writeAll(buffer), () => FileSystem.Size(buffer.byteLength)),
          writeAll: (buffer) =>
            Effect.suspend(() => {
              const entry = current()
              if (entry?.type !== "File") return Effect.fail<PlatformError.PlatformError>(fail("write", path, "NotFound"))
              const next = new Uint8Array(Math.max(entry.data.byteLength, position + buffer.byteLength))
              next.set(entry.data)
              next.set(buffer, position)
              entry.data = next
              entry.mtime = new Date()
              position += buffer.byteLength
              return Effect.void as Effect.Effect<void, PlatformError.PlatformError>
            })
        }
        return file
      })
    })

  const fs = FileSystem.makeNoop({
    exists: (raw) => Effect.sync(() => entries.has(norm(raw))),
    stat: (raw) =>
      Effect.suspend(() => {
        const entry = entries.get(norm(raw))
        return entry ? Effect.succeed(info(entry)) : Effect.fail(fail("stat", raw, "NotFound"))
      }),
    readDirectory: (raw) =>
      Effect.suspend(() => {
        const path = norm(raw)
        if (entries.get(path)?.type !== "Directory") return Effect.fail(fail("readDirectory", path, "NotFound"))
        return Effect.succeed(childrenOf(path).map((k) => NodePath.posix.basename(k)))
      }),
    readFile,
    readFileString: (raw) => Effect.map(readFile(raw), (bytes) => new TextDecoder().decode(bytes)),
    writeFile,
    writeFileString: (raw, text, options) => writeFile(raw, new TextEncoder().encode(text), options),
    copyFile: (from, to) => Effect.flatMap(readFile(from), (bytes) => writeFile(to, bytes)),
    remove,
    link,
    open,
    rename,
    makeDirectory,
    watch: (raw) => {
      const dir = norm(raw)
      return Stream.fromPubSub(events).pipe(
        Stream.filter((event) => parentOf(event.path) === dir || event.path === dir),
        // Node reports the file name relative to the watched directory.
        Stream.map((event) => ({ ...event, path: NodePath.posix.basename(event.path) }))
      )
    }
  })
  return fs
})

/** A `FileSystem` layer backed by memory, empty at start. */
export const layer = Layer.effect(FileSystem.FileSystem, make)
