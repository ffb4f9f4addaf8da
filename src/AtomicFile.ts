/**
 * The one way magi writes a file another process may be reading: to a temp
 * file beside it, then a rename over it. A reader sees the old content or the
 * new, never half of either, and a writer killed mid-write leaves the old file
 * readable. The temp name carries the pid and a random part, so two writers
 * never share a scratch file; it ends in `.tmp`, so no listing of `*.json`
 * ever mistakes it for a record.
 */
import { FileSystem } from "@effect/platform"
import { Effect } from "effect"
import * as NodePath from "node:path"

/** Replace `path` with `text` atomically, creating its directory if needed. */
export const writeAtomically = Effect.fn("writeAtomically")(function* (path: string, text: string) {
  const fs = yield* FileSystem.FileSystem
  const tmp = `${path}.${process.pid}.${Math.random().toString(36).slice(2, 10)}.tmp`
  yield* fs.makeDirectory(NodePath.dirname(path), { recursive: true })
  yield* fs.writeFileString(tmp, text)
  yield* fs.rename(tmp, path).pipe(Effect.tapError(() => fs.remove(tmp).pipe(Effect.ignore)))
})
