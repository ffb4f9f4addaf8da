/**
 * Reading one record file: only a regular file, only up to the kind's
 * `maxBytes`, decoded so that no failure escapes the record it is about; the
 * hot folder first, then the record's shelf. A listing's every slot ends as a
 * record or a reason.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import { Effect, Either, Option } from "effect"
import {
  decodeStored,
  describeThrown,
  type Failed,
  missingAt,
  type NotFound,
  reasonOf,
  reasons,
  refusedAs,
  type Skipped,
  type Unreadable,
  unreadableAt
} from "../RecordStore.js"
import { BoundedReader } from "./BoundedReader.js"
import { isNotFound, type StoreContext } from "./StoreContext.js"

/** A file type as a person reads it. */
const typeWords = (type: FileSystem.File.Type) =>
  ({
    Directory: "a directory",
    SymbolicLink: "a symbolic link",
    BlockDevice: "a block device",
    CharacterDevice: "a character device",
    FIFO: "a FIFO",
    Socket: "a socket",
    File: "a file",
    Unknown: "not a regular file"
  })[type]

/** Reading records, bounded and guarded. */
export const make = <A>(ctx: StoreContext<A>) => {
  const { fs, reader, kind, errors, pathOf, archivedPathOf } = ctx

  const notRegular = (path: string, kind_: string) => unreadableAt(kind, path, `${path} is ${kind_}, not a ${kind.noun} file; magi reads only regular files`)
  const tooBig = (path: string, size: number | bigint) => unreadableAt(kind, path, reasons.tooBig(kind, path, size))

  /** The text read becomes the record, or the reason it is not one. */
  const fromBody = (id: string, path: string, body: string): Either.Either<A, Unreadable> =>
    Either.mapLeft(decodeStored(kind, id, path, body, "its name says; rename it or fix its id"), refusedAs(kind, path))

  /** Through `FileSystem`: judged (`stat`) before it is opened, since opening a FIFO blocks and reading a device never ends. */
  const readLooking = (id: string, path: string): Effect.Effect<A, NotFound | Unreadable | Failed> =>
    Effect.gen(function* () {
      const info = yield* fs.stat(path).pipe(
        Effect.mapError((e) => isNotFound(e) ? missingAt(kind, id, path) : errors.failed("read", path, e.message, e))
      )
      if (info.type !== "File") return yield* notRegular(path, typeWords(info.type))
      if (Number(info.size) > kind.maxBytes) return yield* tooBig(path, info.size)
      const body = yield* fs.readFileString(path).pipe(
        Effect.mapError((e) =>
          isNotFound(e)
            ? missingAt(kind, id, path)
            : e._tag === "SystemError" && e.reason === "BadResource"
            ? unreadableAt(kind, path, `${path} cannot be read as a ${kind.noun}: ${e.message}`)
            : errors.failed("read", path, e.message, e)
        )
      )
      // A file that grew after the look is still not read as a record.
      if (body.length > kind.maxBytes) return yield* tooBig(path, body.length)
      return yield* fromBody(id, path, body)
    })

  /** With the bounded reader: one record, synchronously, as a value. */
  const readNow = (
    fast: BoundedReader["Type"],
    id: string,
    path: string = pathOf(id)
  ): Either.Either<A, NotFound | Unreadable | Failed> => {
    const got = fast.readString(path, kind.maxBytes)
    if (Either.isRight(got)) return fromBody(id, path, got.right)
    const why = got.left
    switch (why._tag) {
      case "NotFound":
        return Either.left(missingAt(kind, id, path))
      case "NotRegular":
        return Either.left(notRegular(path, why.kind))
      case "TooBig":
        return Either.left(tooBig(path, why.size))
      case "Failed":
        return Either.left(errors.failed("read", path, why.message))
    }
  }

  /** One record at an exact path. */
  const readAt = (id: string, path: string): Effect.Effect<A, NotFound | Unreadable | Failed> =>
    Option.isSome(reader) ? Effect.suspend(() => readNow(reader.value, id, path)) : readLooking(id, path)

  /**
   * Hot first; then, when that fails and its shelf has it, the shelf (a
   * move that landed between the two looks is found there, never lost).
   */
  const locate = (id: string): Effect.Effect<{ readonly record: A; readonly path: string }, NotFound | Unreadable | Failed> => {
    const hot = Effect.map(readAt(id, pathOf(id)), (record) => ({ record, path: pathOf(id) }))
    const archived = archivedPathOf(id)
    if (archived === undefined) return hot
    // Only a hot copy that is not there sends the look to the shelf: one that
    // failed to read may be newer than the shelf's, and an update written on
    // the shelf's would lose it.
    return Effect.catchTag(hot, "RecordNotFound", (e) =>
      Effect.flatMap(
        fs.exists(archived).pipe(Effect.mapError((x) => errors.failed("read", archived, x.message, x))),
        (there) => there ? Effect.map(readAt(id, archived), (record) => ({ record, path: archived })) : Effect.fail(e)
      ))
  }

  const read = (id: string): Effect.Effect<A, NotFound | Unreadable | Failed> => Effect.map(locate(id), (l) => l.record)

  /**
   * Every slot of a listing, each ending as a record or a reason whatever
   * happens reading it. With the bounded reader the whole listing is one
   * synchronous pass (thousands of files, no effect per file).
   */
  const readAll = (ids: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<Either.Either<A, Skipped>>> => {
    if (Option.isSome(reader)) {
      const fast = reader.value
      return Effect.sync(() =>
        ids.map((id): Either.Either<A, Skipped> => {
          try {
            return Either.mapLeft(readNow(fast, id), (e) => ({ id, reason: reasonOf(e) }))
          } catch (thrown) {
            return Either.left({ id, reason: describeThrown(thrown) })
          }
        })
      )
    }
    return Effect.forEach(ids, slot, { concurrency: 64 })
  }

  /** One listing slot: whatever happens reading it, it ends as a record or a reason. */
  const slot = (id: string): Effect.Effect<Either.Either<A, Skipped>> =>
    read(id).pipe(
      Effect.map((a) => Either.right(a)),
      // fallback: a listing slot that cannot be read is skipped and explained by id
      Effect.catchAll((e) => Effect.succeed(Either.left<Skipped>({ id, reason: reasonOf(e) }))),
      Effect.catchAllDefect((defect) => Effect.succeed(Either.left<Skipped>({ id, reason: describeThrown(defect) })))
    )

  return { readNow, readAt, locate, read, readAll }
}

export type RecordReads<A> = ReturnType<typeof make<A>>
