/**
 * The notices page's side of the notices (`<home>/notices/`, or their rows
 * in PostgreSQL): what the waiter could not deliver and why, read-only. The
 * waiter (in this process, in `magi serve`, or on another machine sharing
 * the database) writes them; the web lists them and tells open pages when
 * one lands.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import { Context, Effect, Layer, Stream } from "effect"
import { changesOnBackend, listOf, type Notice, onBackend } from "../daemon/Notices.js"
import * as StoreBackend from "../store/StoreBackend.js"
import * as ConfiguredStore from "../platform/ConfiguredStore.js"

export class NoticeFeed extends Context.Tag("magi/web/NoticeFeed")<
  NoticeFeed,
  {
    /** Where the notices are, for messages. */
    readonly where: string
    /** Every readable notice, newest first. */
    readonly list: Effect.Effect<ReadonlyArray<Notice>>
    /** Moves with every notice written (the folder's mtime, or the database's count of writes); 0 before the first notice. */
    readonly revision: Effect.Effect<number>
    /**
     * Names of notices changing (`<id>.json`), while watching works. Ends
     * quietly where it does not: `Live` also polls `revision`.
     */
    readonly changes: Stream.Stream<string>
  }
>() {
  static layer = Layer.effect(
    NoticeFeed,
    Effect.gen(function* () {
      const fs = yield* FileSystem.FileSystem
      const backend = yield* StoreBackend.StoreBackend
      const records = yield* onBackend
      // On the file backend the folder is made up front, so it can be
      // watched before the waiter writes its first notice.
      const changes = changesOnBackend.pipe(
        Stream.provideService(StoreBackend.StoreBackend, backend),
        Stream.provideService(FileSystem.FileSystem, fs)
      )
      return { where: records.root, list: listOf(records), revision: records.revision, changes }
    })
  ).pipe(Layer.provide(ConfiguredStore.layer))
}
