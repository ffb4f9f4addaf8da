/**
 * The one file primitive for "only one process may do this": a file created
 * new at a path says who holds it, and a holder that is judged stale is
 * broken by exactly one breaker. The per-record writer lock (`RecordLock`)
 * and every long-lived claim of the file backend (`Claims.files`: a task's
 * run, a question's delivery) are this primitive with their own staleness
 * rule.
 *
 * Taking is a create-new, so at most one process holds a claim that is
 * there. Breaking is where two processes could both end up holding it (both
 * see it stale, one removes it and creates its own, the other removes *that*
 * and creates its own), so breaking is a step only one breaker can win:
 *
 * 1. A breaker names the stale file by its identity (what it holds, its
 *    inode, mtime and size), read so that a file swapped mid-look is not
 *    mistaken for the one judged.
 * 2. It creates `<path>.break-<hash of that identity>`, create-new. Only one
 *    breaker ever creates the marker for one identity; the others go back to
 *    waiting.
 * 3. The winner looks again and removes the file only if it is still the one
 *    judged. Nobody else can have removed it meanwhile (its owner is gone;
 *    every other breaker lost step 2) and nobody can create one while it is
 *    there, so what is removed is exactly the stale one; then it drops its
 *    marker. After that every taker races on the create-new again.
 *
 * A breaker killed between 2 and 3 leaves its marker, which ages like any
 * claim and is broken the same way, one level up (a few levels at most: each
 * needs a kill inside a window of microseconds).
 *
 * A holder that renews its claim rewrites it (a new inode, so a new
 * identity): a breaker that judged the old one finds another at step 3 and
 * removes nothing.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import { Clock, Effect, Option } from "effect"
import * as NodeCrypto from "node:crypto"

/** Levels of break markers followed before waiting instead (each level needs a kill mid-break). */
const MAX_BREAK_DEPTH = 3

/** A claim file bigger than this is none of magi's; it is named by its stat alone. */
const CONTENT_MAX = 4096

/** What sits at a claim's path, as one look saw it. */
export type Look =
  | { readonly _tag: "gone" }
  /** Changing under the look, or not statable: judge again next time. */
  | { readonly _tag: "unsure" }
  | {
    readonly _tag: "there"
    readonly identity: string
    readonly mtime: number
    readonly directory: boolean
    /** Its text (empty for a directory or an oversized file). */
    readonly content: string
  }

export type There = Extract<Look, { readonly _tag: "there" }>

const mtimeOf = (info: FileSystem.File.Info) => Option.getOrElse(Option.map(info.mtime, (d) => d.getTime()), () => 0)

const statKey = (info: FileSystem.File.Info) => `${info.type}|${Option.getOrElse(info.ino, () => 0)}|${mtimeOf(info)}|${info.size}`

/** What sits at `path` now, named so that a different claim there gets a different name. */
export const look = (fs: FileSystem.FileSystem, path: string): Effect.Effect<Look> =>
  Effect.gen(function* () {
    const first = yield* Effect.either(fs.stat(path))
    if (first._tag === "Left")
      return first.left._tag === "SystemError" && first.left.reason === "NotFound" ? { _tag: "gone" as const } : { _tag: "unsure" as const }
    const content = first.right.type === "File" && Number(first.right.size) <= CONTENT_MAX
      // fallback: a claim body that cannot be read is empty, which no one's token matches
      ? yield* fs.readFileString(path).pipe(Effect.orElseSucceed(() => ""))
      : ""
    const second = yield* Effect.either(fs.stat(path))
    if (second._tag === "Left") return { _tag: "gone" as const }
    if (statKey(first.right) !== statKey(second.right)) return { _tag: "unsure" as const }
    const identity = NodeCrypto.createHash("sha256").update(`${statKey(first.right)}\n${content}`).digest("hex").slice(0, 16)
    return { _tag: "there" as const, identity, mtime: mtimeOf(first.right), directory: first.right.type === "Directory", content }
  }).pipe(Effect.catchAllDefect(() => Effect.succeed({ _tag: "unsure" as const })))

/**
 * How old a claim is, judged two ways and the older taken: by its own
 * `dated` time (its mtime, or a time written inside it), and by how long
 * this process has watched the very same file sit unchanged. The second
 * keeps a claim dated in the future (a clock stepped back) from holding on
 * until that future arrives, and ages a file that says nothing readable.
 */
export interface Watch {
  readonly ageOf: (path: string, seen: There, dated: number) => Effect.Effect<number>
}

export const makeWatch = (): Watch => {
  const watched = new Map<string, { readonly identity: string; readonly since: number }>()
  return {
    ageOf: (path, seen, dated) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        const before = watched.get(path)
        const since = before !== undefined && before.identity === seen.identity ? before.since : now
        watched.set(path, { identity: seen.identity, since })
        return Math.max(now - dated, now - since)
      })
  }
}

/** Create `path` new with `content`: true when this call made it, false when something is there. */
export const createNew = (fs: FileSystem.FileSystem, path: string, content: string) =>
  // A plain create-new write: one step, where a linked temp file is three. A
  // breaker looking in the instant between create and fill sees an empty
  // file with a fresh mtime, which is never stale, and its two looks differ
  // in size, so it judges again later.
  Effect.scoped(Effect.flatMap(fs.open(path, { flag: "wx" }), (file) =>
    // Created, but not filled (a full disk): this call made the file, so it
    // removes it, or an empty claim would sit there for every taker to wait
    // out and break.
    file.writeAll(new TextEncoder().encode(content)).pipe(
      // fallback: best-effort removal of a claim whose write failed; that failure is reported
      Effect.tapError(() => fs.remove(path).pipe(Effect.ignore))
    ))).pipe(
      Effect.as(true),
      Effect.catchIf(
        (e) => e._tag === "SystemError" && e.reason === "AlreadyExists",
        () => Effect.succeed(false)
      )
    )

/**
 * Take `path` with `content` if it is free, or held by a claim `isStale`
 * judges stale now (broken by the one-breaker protocol, then raced for
 * again). True when this call holds it. `isStale` sees the claim as looked
 * at; breaking markers are judged by the same watch with `markerStaleMs`.
 */
export const take = (
  fs: FileSystem.FileSystem,
  path: string,
  content: string,
  isStale: (seen: There) => Effect.Effect<boolean>,
  watch: Watch,
  markerStaleMs: number
) =>
  Effect.gen(function* () {
    if (yield* createNew(fs, path, content)) return true
    const seen = yield* look(fs, path)
    if (seen._tag === "gone") return yield* createNew(fs, path, content)
    if (seen._tag !== "there" || !(yield* isStale(seen))) return false
    yield* breakStale(fs, path, seen.identity, watch, markerStaleMs, 0)
    return yield* createNew(fs, path, content)
  })

/** Remove the file at `path` if it still is `identity`, as the one breaker allowed to. */
const breakStale = (
  fs: FileSystem.FileSystem,
  path: string,
  identity: string,
  watch: Watch,
  markerStaleMs: number,
  depth: number
): Effect.Effect<void> =>
  Effect.gen(function* () {
    const marker = `${path}.break-${identity}`
    const mine = `${process.pid} ${NodeCrypto.randomBytes(9).toString("base64url")}\n`
    // fallback: a breaker marker not made is "someone else breaks it"
    const won = yield* createNew(fs, marker, mine).pipe(Effect.orElseSucceed(() => false))
    if (!won) {
      // Another breaker is at it, or was killed at it: its marker ages too.
      if (depth >= MAX_BREAK_DEPTH) return
      const stuck = yield* look(fs, marker)
      if (stuck._tag === "there" && (yield* watch.ageOf(marker, stuck, stuck.mtime)) > markerStaleMs)
        yield* breakStale(fs, marker, stuck.identity, watch, markerStaleMs, depth + 1)
      return
    }
    const still = yield* look(fs, path)
    yield* Effect.gen(function* () {
      // fallback: best-effort removal of a stale claim this breaker holds
      if (still._tag === "there" && still.identity === identity) yield* fs.remove(path, { recursive: still.directory }).pipe(Effect.ignore)
    }).pipe(Effect.ensuring(removeIfHolds(fs, marker, mine)))
  })

/** Remove `path` only while it still holds `content`: a holder stalled past its claim must not remove the next holder's. */
export const removeIfHolds = (fs: FileSystem.FileSystem, path: string, content: string) =>
  fs.readFileString(path).pipe(
    Effect.flatMap((held) => (held === content ? fs.remove(path) : Effect.void)),
    // fallback: best-effort removal of the breaker marker
    Effect.ignore
  )
