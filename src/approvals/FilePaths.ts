/**
 * A file tool's path as the filesystem resolves it, for the approval rules:
 * `Edit(/work/site/src/*)` must not allow a path that leads out of the folder
 * through a symlink inside it. The nearest part of the path that exists is
 * resolved (`realPath`) and the rest, which does not exist yet, is appended:
 * an Edit creating `src/link/new.ts` is judged by where `src/link` points.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import { Effect } from "effect"
import * as NodePath from "node:path"
import { pathForms, type ToolCall } from "./Rules.js"

/**
 * Where no path can be resolved (a permission error, say). It is no path any
 * rule names, so an allow rule, which must match every form, does not match:
 * the call goes to the owner; deny rules still see the path as written.
 */
export const UNRESOLVED = "\u0000unresolved"

/** `path` with symlinks resolved as far as it exists. */
const resolve = (fs: FileSystem.FileSystem, path: string): Effect.Effect<string> => {
  const tail: Array<string> = []
  const attempt = (at: string): Effect.Effect<string> =>
    fs.realPath(at).pipe(
      Effect.map((real) => (tail.length === 0 ? real : NodePath.join(real, ...[...tail].reverse()))),
      // fallback: a path that cannot be resolved is judged as written (the approval rule decides on it)
      Effect.catchAll((e) => {
        const parent = NodePath.dirname(at)
        // Only a part that is not there is skipped; any other failure leaves the path unresolved.
        if (e._tag !== "SystemError" || e.reason !== "NotFound" || parent === at) return Effect.succeed(UNRESOLVED)
        tail.push(NodePath.basename(at))
        return attempt(parent)
      })
    )
  return attempt(path)
}

/** `call` with its file path's resolved form (`ToolCall.resolvedPath`), a relative path taken from `cwd`; other calls as they are. */
export const withResolvedPath = (call: ToolCall, cwd: string) =>
  Effect.gen(function* () {
    const forms = pathForms(call)
    if (forms === undefined) return call
    const fs = yield* FileSystem.FileSystem
    const resolvedPath = yield* resolve(fs, NodePath.resolve(cwd, forms[0]!))
    return { ...call, resolvedPath } satisfies ToolCall
  })
