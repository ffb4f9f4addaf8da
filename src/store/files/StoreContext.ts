/**
 * Paths and naming for one store of the file backend: where a record, its
 * lock and its shelved copy live, which names of a folder are records, and
 * the folder listings everything else builds on. Built once per store and
 * passed to every other module, so they share it explicitly, not through
 * module-level state.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as PlatformError from "@effect/platform/Error"
import * as NodePath from "node:path"
import { Effect, Either, Option } from "effect"
import { SCRATCH_SUFFIX } from "./AtomicFile.js"
import { chunksOf, describeThrown, type Failed, isSafeId, type RecordStoreOptions } from "../RecordStore.js"
import { BoundedReader, refusalWords } from "./BoundedReader.js"
import { StoreFailed } from "../StoreErrors.js"

/** A shelf's index file beside it in the archive folder: `<shelf>.index.json`. */
export const INDEX_SUFFIX = ".index.json"

export const isPlatformError = (e: unknown): e is PlatformError.PlatformError => typeof e === "object" && e !== null && PlatformError.TypeId in e

export const isNotFound = (e: PlatformError.PlatformError) => e._tag === "SystemError" && e.reason === "NotFound"

export const mtimeMs = (info: FileSystem.File.Info) => Option.getOrElse(Option.map(info.mtime, (d) => d.getTime()), () => -1)

/**
 * Names read from a shelf per batch when indexing or sweeping it: a few
 * hundred kilobytes of index text written at a time, whatever the shelf holds.
 */
export const NAMES_BATCH = 500

/** Everything the modules share about one store: its options, its filesystem and reader, and where each thing of it lives. */
export const make = <A>(
  fs: FileSystem.FileSystem,
  reader: Option.Option<BoundedReader["Type"]>,
  options: RecordStoreOptions<A>
) => {
  const { root, kind } = options
  const layout = options.layout ?? { _tag: "flat" as const }
  const plural = kind.plural ?? `${kind.noun}s`
  const label = kind.label ?? ((id: string) => id)
  const flat = layout._tag === "flat"

  const pathOf = (id: string) => (flat ? NodePath.join(root, `${id}.json`) : NodePath.join(root, id, layout.file))
  const lockOf = (id: string) =>
    flat ? NodePath.join(root, options.lockName?.(id) ?? `${id}.lock`) : NodePath.join(root, id, `${NodePath.parse(layout.file).name}.lock`)
  /** The store's errors for this kind on the file backend. */
  const errors = {
    failed: (op: string, where: string, reason: string, cause?: unknown) =>
      new StoreFailed({ kind: kind.noun, op, where, reason, backend: "files", ...(cause === undefined ? {} : { cause }) })
  }
  const failed = (op: string, where: string) => (e: { readonly message: string }) => errors.failed(op, where, e.message, e)
  const ensureRoot = fs.makeDirectory(root, { recursive: true }).pipe(Effect.mapError(failed("create", `${root}`)))
  const withFs = <B, E, R>(effect: Effect.Effect<B, E, R>) => Effect.provideService(effect, FileSystem.FileSystem, fs)

  const names = fs.readDirectory(root).pipe(
    Effect.catchIf(isNotFound, () => Effect.succeed<string[]>([])),
    Effect.mapError(failed("list", `${root}`))
  )
  const idsIn = (all: ReadonlyArray<string>) =>
    flat
      ? all.filter((n) => n.endsWith(".json")).map((n) => n.slice(0, -5))
      : all.filter((n) => !n.startsWith(".") && n !== options.archive?.dir)

  /**
   * `dir`'s names a batch at a time, each handed to `each` before the next
   * is read (`BoundedReader.openNames`); without the bounded reader (in
   * memory, in tests), one listing handed over in batches.
   */
  const forEachNames = <E, R>(
    dir: string,
    size: number,
    each: (names: ReadonlyArray<string>) => Effect.Effect<void, E, R>
  ): Effect.Effect<void, E | Failed, R> => {
    if (Option.isNone(reader)) {
      return Effect.flatMap(
        fs.readDirectory(dir).pipe(
          Effect.catchIf(isNotFound, () => Effect.succeed<string[]>([])),
          Effect.mapError(failed("list", `${dir}`))
        ),
        (all) => Effect.forEach(chunksOf(all, size), each, { discard: true })
      )
    }
    const fast = reader.value
    const listFailed = (message: string) => errors.failed("list", dir, message)
    return Effect.acquireUseRelease(
      Effect.suspend(() => {
        const opened = fast.openNames(dir)
        return Either.isRight(opened) ? Effect.succeed(opened.right) : Effect.fail(listFailed(refusalWords(opened.left)))
      }),
      (cursor) =>
        Effect.gen(function* () {
          if (cursor === undefined) return
          for (;;) {
            const names = yield* Effect.try({ try: () => cursor.next(size), catch: (e) => listFailed(describeThrown(e)) })
            if (names.length === 0) return
            yield* each(names)
          }
        }),
      (cursor) => Effect.sync(() => cursor?.close())
    )
  }

  const archiveOpts = options.archive
  const archiveRoot = archiveOpts === undefined ? undefined : NodePath.join(root, archiveOpts.dir)
  const shelfDirOf = (shelf: string) => NodePath.join(archiveRoot!, shelf)
  const archivedPathOf = (id: string): string | undefined => {
    if (archiveOpts === undefined || !isSafeId(id)) return undefined
    const shelf = archiveOpts.shelfOf(id)
    // The shelf becomes a path part too.
    if (shelf === undefined || !isSafeId(shelf) || shelf.includes(".")) return undefined
    return NodePath.join(shelfDirOf(shelf), `${id}.json`)
  }

  const isLeftover = (name: string) => name.endsWith(SCRATCH_SUFFIX) || name.includes(".lock.break-") || (options.leftover?.(name) ?? false)

  return {
    fs,
    reader,
    options,
    root,
    kind,
    errors,
    plural,
    label,
    flat,
    pathOf,
    lockOf,
    failed,
    ensureRoot,
    withFs,
    names,
    idsIn,
    forEachNames,
    archiveOpts,
    archiveRoot,
    shelfDirOf,
    archivedPathOf,
    isLeftover
  }
}

/** The one value each module of the file backend is built from: no module keeps state of its own about paths. */
export type StoreContext<A> = ReturnType<typeof make<A>>
