/**
 * A write on a full disk, said so. `@effect/platform` has no reason for
 * ENOSPC: it read "Unknown: FileSystem.writeAll (18)", which tells the owner
 * nothing. `withDiskFullWords` wraps a `FileSystem` so that every failure
 * ENOSPC causes is a `DiskFull`: still a `SystemError` (every check on
 * `_tag` and `reason` holds as before), whose message says the disk is full
 * and what to do.
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import * as PlatformError from "@effect/platform/Error"
import { Effect } from "effect"

export class DiskFull extends PlatformError.SystemError {
  override get message(): string {
    const where = this.pathOrDescriptor === undefined || typeof this.pathOrDescriptor === "number" ? "" : ` (${this.pathOrDescriptor})`
    return `the disk is full: could not ${this.method.replace(/^FileSystem\./, "")}${where}; free some space and try again`
  }
}

const codeOf = (cause: unknown) => (typeof cause === "object" && cause !== null && "code" in cause ? (cause as { code: unknown }).code : undefined)

/** Whether `e` is a file system failure for want of space. */
export const isDiskFull = (e: unknown): e is PlatformError.SystemError =>
  e instanceof PlatformError.SystemError &&
  (e instanceof DiskFull || codeOf(e.cause) === "ENOSPC" || /\bENOSPC\b|no space left on device/i.test(e.description ?? ""))

/** `e`, as a `DiskFull` when it is one. */
export const sayDiskFull = <E>(e: E): E | DiskFull =>
  isDiskFull(e) && !(e instanceof DiskFull)
    ? new DiskFull(fieldsOf(e))
    : e

const said = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.mapError(effect, sayDiskFull)

/**
 * An open file whose writes say a full disk so. A proxy, not a spread: the
 * platform's file is a class whose `seek`, `read` and position live on its
 * prototype and in its own state, which a copy would lose or split.
 */
const fileSaying = (file: FileSystem.File, path: string): FileSystem.File => {
  const overrides: Partial<Record<PropertyKey, unknown>> = {
    write: (buffer: Uint8Array) => Effect.mapError(file.write(buffer), (e) => sayDiskFull(withPath(e, path))),
    writeAll: (buffer: Uint8Array) => Effect.mapError(file.writeAll(buffer), (e) => sayDiskFull(withPath(e, path))),
    sync: Effect.mapError(file.sync, (e) => sayDiskFull(withPath(e, path))),
    truncate: (length?: FileSystem.SizeInput) => said(file.truncate(length))
  }
  return new Proxy(file, {
    get: (target, key) => {
      if (key in overrides) return overrides[key]
      const value: unknown = Reflect.get(target, key, target)
      return typeof value === "function" ? value.bind(target) : value
    }
  })
}

/** A descriptor's failure named by the file's path, which the owner can find. */
const withPath = <E>(e: E, path: string): E =>
  isDiskFull(e) && typeof e.pathOrDescriptor !== "string" ? (new DiskFull({ ...fieldsOf(e), pathOrDescriptor: path }) as E) : e

const fieldsOf = (e: PlatformError.SystemError) => ({
  reason: e.reason,
  module: e.module,
  method: e.method,
  description: e.description,
  syscall: e.syscall,
  pathOrDescriptor: e.pathOrDescriptor,
  cause: e.cause
})

/** `fs`, every write's ENOSPC said as `DiskFull`. */
export const withDiskFullWords = (fs: FileSystem.FileSystem): FileSystem.FileSystem => ({
  ...fs,
  writeFile: (path, data, options) => said(fs.writeFile(path, data, options)),
  writeFileString: (path, data, options) => said(fs.writeFileString(path, data, options)),
  copy: (from, to, options) => said(fs.copy(from, to, options)),
  copyFile: (from, to) => said(fs.copyFile(from, to)),
  makeDirectory: (path, options) => said(fs.makeDirectory(path, options)),
  makeTempDirectory: (options) => said(fs.makeTempDirectory(options)),
  makeTempDirectoryScoped: (options) => said(fs.makeTempDirectoryScoped(options)),
  makeTempFile: (options) => said(fs.makeTempFile(options)),
  makeTempFileScoped: (options) => said(fs.makeTempFileScoped(options)),
  link: (from, to) => said(fs.link(from, to)),
  symlink: (from, to) => said(fs.symlink(from, to)),
  rename: (from, to) => said(fs.rename(from, to)),
  truncate: (path, length) => said(fs.truncate(path, length)),
  open: (path, options) => Effect.map(said(fs.open(path, options)), (file) => fileSaying(file, path))
})
