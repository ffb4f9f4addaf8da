/**
 * The notices page's side of `<home>/notices/`: what the waiter could not
 * deliver and why, read-only. The waiter (in this process or in `magi serve`)
 * writes them; the web lists them and tells open pages when one lands.
 */
import { FileSystem } from "@effect/platform"
import { Context, Effect, Layer, Option, Stream } from "effect"
import * as NodePath from "node:path"
import { MagiHome } from "../platform/MagiHome.js"
import { listIn, type Notice, noticesDir } from "../daemon/Notices.js"

export class NoticeFeed extends Context.Tag("magi/web/NoticeFeed")<
  NoticeFeed,
  {
    readonly root: string
    /** Every readable notice, newest first. */
    readonly list: Effect.Effect<ReadonlyArray<Notice>>
    /** The directory's mtime (0 before the first notice): moves with every notice written. */
    readonly revision: Effect.Effect<number>
    /**
     * Names of files changing in the directory, while watching works. Ends
     * quietly where it does not: `Live` also polls `revision`.
     */
    readonly changes: Stream.Stream<string>
  }
>() {
  static layer = Layer.effect(
    NoticeFeed,
    Effect.gen(function* () {
      const fs = yield* FileSystem.FileSystem
      const root = noticesDir(yield* MagiHome)
      const list = Effect.provideService(listIn(root), FileSystem.FileSystem, fs)
      const revision = fs.stat(root).pipe(
        Effect.map((s) => Option.getOrElse(Option.map(s.mtime, (d) => d.getTime()), () => 0)),
        Effect.orElseSucceed(() => 0)
      )
      // The directory is made up front so it can be watched before the
      // waiter writes its first notice.
      const changes = Stream.unwrap(
        Effect.as(
          Effect.ignore(fs.makeDirectory(root, { recursive: true })),
          fs.watch(root).pipe(Stream.map((event) => NodePath.basename(event.path)))
        )
      ).pipe(Stream.catchAll(() => Stream.empty))
      return { root, list, revision, changes }
    })
  )
}
