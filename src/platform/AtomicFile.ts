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

const scratchFor = (path: string) => `${path}.${process.pid}.${Math.random().toString(36).slice(2, 10)}.tmp`

const alreadyExists = (e: { readonly _tag: string; readonly reason?: string }) => e._tag === "SystemError" && e.reason === "AlreadyExists"

/** Replace `path` with `text` atomically, creating its directory if needed. */
export const writeAtomically = Effect.fn("writeAtomically")(function* (path: string, text: string) {
  const fs = yield* FileSystem.FileSystem
  const tmp = scratchFor(path)
  yield* fs.makeDirectory(NodePath.dirname(path), { recursive: true })
  yield* fs.writeFileString(tmp, text)
  yield* fs.rename(tmp, path).pipe(Effect.tapError(() => fs.remove(tmp).pipe(Effect.ignore)))
})

/**
 * Create `path` holding `text` unless it exists already (false then): a lock
 * that says who holds it. A plain create-new write is two steps, create and
 * fill, and a reader in between sees an empty file it cannot tell from a
 * broken one; so the text goes to a temp file that is hard-linked into place,
 * and a link, like a create-new, never replaces a file that is there. On a
 * filesystem without hard links it falls back to the create-new write.
 */
export const createAtomically = Effect.fn("createAtomically")(function* (path: string, text: string) {
  const fs = yield* FileSystem.FileSystem
  const tmp = scratchFor(path)
  yield* fs.makeDirectory(NodePath.dirname(path), { recursive: true })
  yield* fs.writeFileString(tmp, text)
  const linked = yield* fs.link(tmp, path).pipe(
    Effect.as(true),
    Effect.catchIf(alreadyExists, () => Effect.succeed(false)),
    Effect.catchAll(() =>
      fs.writeFileString(path, text, { flag: "wx" }).pipe(
        Effect.as(true),
        Effect.catchIf(alreadyExists, () => Effect.succeed(false))
      )
    ),
    Effect.ensuring(fs.remove(tmp).pipe(Effect.ignore))
  )
  return linked
})
