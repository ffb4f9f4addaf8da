/**
 * The chat record kind on disk: `<root>/<id>.json`, decoded like every other
 * magi record (a newer schema refused by name, unknown fields refused, an
 * older one read with defaults).
 */
import { FileSystem } from "@effect/platform"
import { Clock, Data, Effect, Either, Option, Schedule, Duration, Schema, Stream } from "effect"
import * as NodePath from "node:path"
import { createAtomically, writeAtomically } from "../platform/AtomicFile.js"
import { parseVersioned } from "../platform/VersionedJson.js"
import * as Q from "../questions/Question.js"
import { CHAT_SCHEMA, Chat } from "./Chat.js"

export class ChatNotFound extends Data.TaggedError("ChatNotFound")<{ readonly message: string }> {}
export class ChatStoreError extends Data.TaggedError("ChatStoreError")<{ readonly message: string }> {}

const decodeStrict = Schema.decodeUnknownEither(Chat, { onExcessProperty: "error", errors: "first" })

/** Read a stored chat, refusing one written by a newer magi by name. */
export const decode = (body: string, source: string): Either.Either<Chat, ChatStoreError> =>
  parseVersioned(body, source, CHAT_SCHEMA, () => `chat ${source}`).pipe(
    Either.mapLeft((message) => new ChatStoreError({ message })),
    Either.flatMap((raw) =>
      Either.mapLeft(decodeStrict(raw), (e) => new ChatStoreError({ message: `${source} is not a chat magi can read: ${e.message}` }))
    )
  )

export const encode = (chat: Chat): string => JSON.stringify(chat, null, 2) + "\n"

/** A lock left by a killed writer is broken after this long: a write takes milliseconds. */
const LOCK_STALE_MS = 10_000
const LOCK_RETRY = Duration.millis(15)
const LOCK_GIVE_UP = Duration.seconds(10)

/** Ids are magi ids (`20261130-100000-ab12`): nothing else is ever a path part. */
const VALID_ID = /^[0-9]{8}-[0-9]{6}-[0-9a-f]{4}$/

export const ChatRecords = {
  make: Effect.fn("ChatRecords.make")(function* (root: string) {
    const fs = yield* FileSystem.FileSystem
    const file = (id: string) => NodePath.join(root, `${id}.json`)
    const io = (what: string) => (e: { readonly message: string }) => new ChatStoreError({ message: `${what}: ${e.message}` })
    const provide = <A, E>(eff: Effect.Effect<A, E, FileSystem.FileSystem>) => Effect.provideService(eff, FileSystem.FileSystem, fs)

    const ids = fs.readDirectory(root).pipe(
      Effect.map((names) => names.filter((n) => n.endsWith(".json")).map((n) => n.slice(0, -5)).filter((id) => VALID_ID.test(id))),
      Effect.catchIf(
        (e) => e._tag === "SystemError" && e.reason === "NotFound",
        () => Effect.succeed<string[]>([])
      ),
      Effect.mapError(io(`list ${root}`))
    )

    const readId = (id: string) =>
      fs.readFileString(file(id)).pipe(
        Effect.mapError((e) =>
          e._tag === "SystemError" && e.reason === "NotFound"
            ? new ChatNotFound({ message: `no chat ${id}` })
            : new ChatStoreError({ message: `read ${file(id)}: ${e.message}` })
        ),
        Effect.flatMap((body) => decode(body, file(id)))
      )

    const resolve = (wanted: string) =>
      Effect.gen(function* () {
        const all = yield* ids
        if (all.includes(wanted)) return wanted
        const hits = wanted === "" ? [] : all.filter((id) => id.endsWith(wanted))
        if (hits.length === 1) return hits[0]!
        return yield* new ChatNotFound({
          message: hits.length === 0 ? `no chat matches \`${wanted}\`` : `\`${wanted}\` matches ${hits.length} chats: ${hits.sort().join(", ")}`
        })
      })

    const get = (wanted: string) => Effect.flatMap(resolve(wanted), readId)

    const list = Effect.gen(function* () {
      const read = yield* Effect.forEach(yield* ids, (id) => Effect.option(readId(id)), { concurrency: 16 })
      return read.flatMap((r) => (Option.isSome(r) ? [r.value] : []))
    })

    const put = (chat: Chat) => provide(writeAtomically(file(chat.id), encode(chat))).pipe(Effect.mapError(io(`write ${file(chat.id)}`)))

    const localWriters = yield* Effect.makeSemaphore(1)
    const withLock = <A, E>(id: string, body: Effect.Effect<A, E>) => {
      const lock = NodePath.join(root, `${id}.lock`)
      const held = new ChatStoreError({ message: `chat ${id} is being updated by another process (${lock} is held)` })
      const tryAcquire = Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        if (yield* provide(createAtomically(lock, `${process.pid} ${now}\n`)).pipe(Effect.mapError(io(`lock chat ${id}`)))) return
        const since = yield* fs.stat(lock).pipe(
          Effect.map((s) => Option.getOrElse(Option.map(s.mtime, (d) => d.getTime()), () => now)),
          Effect.orElseSucceed(() => now)
        )
        if (now - since > LOCK_STALE_MS) yield* fs.remove(lock).pipe(Effect.ignore)
        return yield* held
      })
      const acquire = tryAcquire.pipe(
        Effect.retry({ schedule: Schedule.spaced(LOCK_RETRY).pipe(Schedule.upTo(LOCK_GIVE_UP)), while: (e) => e === held })
      )
      return localWriters.withPermits(1)(Effect.acquireUseRelease(acquire, () => body, () => fs.remove(lock).pipe(Effect.ignore)))
    }

    /** Read, change and write back under the chat's lock; `updated_at` is set here. */
    const update = <E>(wanted: string, change: (chat: Chat) => Either.Either<Chat, E>) =>
      Effect.gen(function* () {
        const id = yield* resolve(wanted)
        return yield* withLock(
          id,
          Effect.gen(function* () {
            const next = yield* change(yield* readId(id))
            const stamped = { ...next, updated_at: Q.timestamp(new Date(yield* Clock.currentTimeMillis)) }
            yield* put(stamped)
            return stamped
          })
        )
      })

    /**
     * A number that moves with every write: a hash of each file's name,
     * mtime and size (two writes in one mtime tick still differ in size, a
     * turn always adds text), 0 when there are none.
     */
    const revision = Effect.gen(function* () {
      const names = yield* ids.pipe(Effect.orElseSucceed(() => []))
      let hash = 0
      for (const id of names.sort()) {
        const s = yield* fs.stat(file(id)).pipe(Effect.option)
        if (Option.isNone(s)) continue
        const mtime = Option.getOrElse(Option.map(s.value.mtime, (d) => d.getTime()), () => 0)
        for (const ch of `${id}:${mtime}:${s.value.size};`) hash = (Math.imul(hash, 31) + ch.charCodeAt(0)) >>> 0
      }
      return names.length === 0 ? 0 : hash || 1
    })

    const changes = Stream.unwrap(
      Effect.as(
        Effect.ignore(fs.makeDirectory(root, { recursive: true })),
        fs.watch(root).pipe(Stream.map((event) => NodePath.basename(event.path)))
      )
    ).pipe(Stream.catchAll(() => Stream.empty))

    return { root, get, list, create: put, update, revision, changes }
  })
}
