/**
 * The one way magi writes a file another process may be reading: to a temp
 * file beside it, then a rename over it. A reader sees the old content or the
 * new, never half of either, and a writer killed mid-write leaves the old file
 * readable. The temp name carries the pid and a random part, so two writers
 * never share a scratch file; it ends in `.tmp`, so no listing of `*.json`
 * ever mistakes it for a record (and `RecordStore` sweeps ones a kill left).
 *
 * Durable when asked (`durable: true`, what `RecordStore` asks for every
 * record): the temp file's bytes are flushed (`fsync`) before the rename, and
 * the directory after it, so a write that returned has reached the disk and a
 * power loss right after it cannot take it back. Without the first flush a
 * crash can leave the new name pointing at an empty file; without the second,
 * the rename itself may not have reached the disk. Heartbeats (leases, the
 * loop's record, seat locks) are rewritten every few seconds and worth
 * nothing after a power cut, so they skip the flushes, which cost a waiting
 * agent tens of milliseconds per beat.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import type { PlatformError } from "@effect/platform/Error"
import { Effect, Exit } from "effect"
import * as NodePath from "node:path"

/** Suffix of every scratch file: what the leftovers sweep looks for. */
export const SCRATCH_SUFFIX = ".tmp"

const scratchFor = (path: string) => `${path}.${process.pid}.${Math.random().toString(36).slice(2, 10)}${SCRATCH_SUFFIX}`

const alreadyExists = (e: { readonly _tag: string; readonly reason?: string }) => e._tag === "SystemError" && e.reason === "AlreadyExists"

export interface WriteOptions {
  /**
   * Flush to the disk before returning (default false). On for every record
   * (an answer acknowledged must survive a power cut); off for heartbeats and
   * locks, whose loss in a power cut costs nothing.
   */
  readonly durable?: boolean
  /**
   * The file's permission bits when it is created (default: the process's
   * umask applied to 0o666). A secret asks for 0o600, set as the scratch file
   * is made, so there is no instant at which another user can read it.
   */
  readonly mode?: number
}

/** Write a brand-new file (create-new) with `text`, flushed when `durable`. */
const writeScratch = (fs: FileSystem.FileSystem, path: string, text: string, durable: boolean, mode?: number) =>
  durable
    ? Effect.scoped(
      Effect.gen(function* () {
        const file = yield* fs.open(path, { flag: "wx", ...(mode === undefined ? {} : { mode }) })
        yield* file.writeAll(new TextEncoder().encode(text))
        yield* file.sync
      })
    )
    : fs.writeFileString(path, text, { flag: "wx", ...(mode === undefined ? {} : { mode }) })

/**
 * `text` in a fresh scratch file beside `path` (its folder made first), ready
 * to be renamed or linked into place; removed again if the write fails.
 */
const scratchBeside = (fs: FileSystem.FileSystem, path: string, text: string, durable: boolean, mode?: number) =>
  Effect.gen(function* () {
    const tmp = scratchFor(path)
    yield* fs.makeDirectory(NodePath.dirname(path), { recursive: true })
    // fallback: best-effort removal of the scratch file; the write's own failure is reported
    yield* writeScratch(fs, tmp, text, durable, mode).pipe(Effect.tapError(() => fs.remove(tmp).pipe(Effect.ignore)))
    return tmp
  })

/**
 * Flush a directory's entries (a rename or link into it) to the disk. Best
 * effort: some filesystems cannot open a directory for this, and there the
 * write has still landed, only without the power-loss promise.
 */
export const syncDirectory = (dir: string) =>
  // fallback: not every platform can fsync a folder; the rename already happened
  Effect.flatMap(FileSystem.FileSystem, (fs) => Effect.scoped(Effect.flatMap(fs.open(dir, { flag: "r" }), (d) => d.sync)).pipe(Effect.ignore))

/** Replace `path` with `text` atomically, creating its directory if needed. */
export const writeAtomically = Effect.fn("writeAtomically")(function* (
  path: string,
  text: string,
  options?: WriteOptions
) {
  const fs = yield* FileSystem.FileSystem
  const durable = options?.durable ?? false
  const tmp = yield* scratchBeside(fs, path, text, durable, options?.mode)
  // fallback: best-effort removal of the scratch file; the rename's own failure is reported
  yield* fs.rename(tmp, path).pipe(Effect.tapError(() => fs.remove(tmp).pipe(Effect.ignore)))
  if (durable) yield* syncDirectory(NodePath.dirname(path))
})

/**
 * Replace `path` atomically with text written a piece at a time by `fill`
 * (a month's index of 100,000 entries need never be one string): into a
 * scratch file beside it, renamed into place when `fill` returns true,
 * removed when it returns false, fails or is interrupted. Not durable: the
 * one caller writes an index that is rebuilt from the records if lost.
 */
export const writeAtomicallyInPieces = <E, R>(
  path: string,
  fill: (write: (text: string) => Effect.Effect<void, PlatformError>) => Effect.Effect<boolean, E, R>
): Effect.Effect<boolean, E | PlatformError, R | FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const tmp = scratchFor(path)
    const encoder = new TextEncoder()
    const keep = yield* Effect.scoped(
      Effect.flatMap(fs.open(tmp, { flag: "wx" }), (file) => fill((text) => file.writeAll(encoder.encode(text))))
      // fallback: best-effort removal of the scratch file
    ).pipe(Effect.onExit((exit) => (Exit.isSuccess(exit) && exit.value ? Effect.void : fs.remove(tmp).pipe(Effect.ignore))))
    // fallback: best-effort removal of the scratch file; the rename's own failure is reported
    if (keep) yield* fs.rename(tmp, path).pipe(Effect.tapError(() => fs.remove(tmp).pipe(Effect.ignore)))
    return keep
  })

/**
 * Create `path` holding `text` unless it exists already (false then): a new
 * record, a lock that says who holds it. A plain create-new write is two
 * steps, create and fill, and a reader in between sees an empty file it
 * cannot tell from a broken one; so the text goes to a temp file that is
 * hard-linked into place, and a link, like a create-new, never replaces a file
 * that is there. On a filesystem without hard links it falls back to the
 * create-new write. Not durable unless asked: most callers are claims.
 */
export const createAtomically = Effect.fn("createAtomically")(function* (
  path: string,
  text: string,
  options?: WriteOptions
) {
  const fs = yield* FileSystem.FileSystem
  const durable = options?.durable ?? false
  const tmp = yield* scratchBeside(fs, path, text, durable, options?.mode)
  const linked = yield* fs.link(tmp, path).pipe(
    Effect.as(true),
    Effect.catchIf(alreadyExists, () => Effect.succeed(false)),
    // fallback: a folder that cannot be fsynced falls back to the plain write path
    Effect.catchAll(() =>
      fs.writeFileString(path, text, { flag: "wx", ...(options?.mode === undefined ? {} : { mode: options.mode }) }).pipe(
        Effect.as(true),
        Effect.catchIf(alreadyExists, () => Effect.succeed(false))
      )
    ),
    // fallback: best-effort removal of the scratch file
    Effect.ensuring(fs.remove(tmp).pipe(Effect.ignore))
  )
  if (linked && durable) yield* syncDirectory(NodePath.dirname(path))
  return linked
})
