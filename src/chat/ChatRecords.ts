/**
 * The chat record kind: `<root>/<id>.json` on the home-folder backend (a row
 * on PostgreSQL), decoded like every other
 * magi record (a newer schema refused by name, unknown fields refused, an
 * older one read with defaults).
 */
import * as FileSystem from "@effect/platform/FileSystem"
import { Clock, Effect, Either, Schema, Stream } from "effect"
import * as RecordStore from "../store/files/RecordStore.js"
import * as StoreBackend from "../store/StoreBackend.js"
import { type NewerSchema, parseVersioned } from "../store/VersionedJson.js"
import * as Q from "../questions/Question.js"
import { CHAT_SCHEMA, Chat } from "./Chat.js"

const decodeStrict = Schema.decodeUnknownEither(Chat, { onExcessProperty: "error", errors: "first" })

/** Read a stored chat, refusing one written by a newer magi by name. */
export const decode = (body: string, source: string): Either.Either<Chat, { readonly message: string } | NewerSchema> =>
  parseVersioned(body, source, CHAT_SCHEMA, () => `chat ${source}`).pipe(
    Either.flatMap((raw) => Either.mapLeft(decodeStrict(raw), (e) => ({ message: `${source} is not a chat magi can read: ${e.message}` })))
  )

export const encode = (chat: Chat): string => JSON.stringify(chat, null, 2) + "\n"

/** Largest chat file read: a long interview is tens of KiB; a MiB is no chat magi wrote. */
export const CHAT_MAX_BYTES = 4 * 1024 * 1024

/** The chats' folder in the home, and their key in the database. */
export const CHATS_FOLDER = "chats"

/** The chat kind in the home folder (`<home>/chats`), as `StoreBackend.records` and `magi store migrate` take a kind. */
export const chatRecords: StoreBackend.KindShape<Chat> = {
  folder: CHATS_FOLDER,
  kind: { noun: "chat", decode, encode, idOf: (c: Chat) => c.id, maxBytes: CHAT_MAX_BYTES }
}

/**
 * Chats on the shared record store, plus the two things the chat needs on
 * top: `updated_at` stamped on every change, and the change stream the web
 * follows (`<id>.json` names).
 */
const assemble = (
  store: RecordStore.RecordStore<Chat>,
  changes: Stream.Stream<string>
) => {
  /** Read, change and write back under the chat's lock; `updated_at` is set here. */
  const update = <E>(wanted: string, change: (chat: Chat) => Either.Either<Chat, E>) =>
    store.update(
      wanted,
      (current) => Effect.flatMap(change(current), (next) => Effect.map(Clock.currentTimeMillis, (ms) => ({ ...next, updated_at: Q.timestamp(new Date(ms)) })))
    )

  return {
    /** Where the chats are, for messages: their folder, or the database with its password masked. */
    where: store.root,
    get: store.get,
    list: Effect.map(store.scan, (s) => s.records),
    /** Write a new chat; false when its id is taken (draw another). */
    create: store.create,
    update,
    // display: the revision only wakes the page; a failed read shows no change
    revision: store.revision.pipe(Effect.orElseSucceed(() => 0)),
    changes
  }
}

export type ChatRecords = ReturnType<typeof assemble>

export const ChatRecords = {
  /** Chats in the folder `root` (`<root>/<id>.json`, `<id>.lock` beside it), watched there. */
  make: Effect.fn("ChatRecords.make")(function* (root: string) {
    const fs = yield* FileSystem.FileSystem
    const { folder: _folder, ...options } = chatRecords
    const store = yield* RecordStore.make({ ...options, root })
    return assemble(store, StoreBackend.watchFolder(fs, root))
  }),

  /** Chats on the configured backend: `<home>/chats`, or the database (changes heard through `LISTEN`). */
  onBackend: Effect.gen(function* () {
    const backend = yield* StoreBackend.StoreBackend
    const fs = yield* FileSystem.FileSystem
    const store = yield* StoreBackend.recordsOf(chatRecords)
    const changes = StoreBackend.changes(CHATS_FOLDER).pipe(
      Stream.provideService(StoreBackend.StoreBackend, backend),
      Stream.provideService(FileSystem.FileSystem, fs)
    )
    return assemble(store, changes)
  })
}
