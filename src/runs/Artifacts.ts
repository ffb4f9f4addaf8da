/**
 * A run's artifacts: the files each turn leaves in `<run>/artifacts/` (the
 * prompt the agent was given, what it printed on stdout and on stderr), named
 * `<seat>-<turn>.prompt.md`, `.out`, `.err`. The owner reads them to see what
 * an agent actually did.
 *
 * A name comes from outside (a URL the phone asks for), so it is checked
 * against a strict rule before any path is built from it, and only a regular
 * file, not a link, is read: a FIFO or device dropped into the folder must not hang the
 * reader, a huge file must not be read whole into a listing.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import { Data, Effect, Option } from "effect"
import * as NodePath from "node:path"
import { timestamp } from "../questions/Question.js"

/** One letter or digit, then letters, digits, `.`, `_`, `-`; no `..` anywhere. */
const ARTIFACT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/

export const validArtifactName = (name: string): boolean => ARTIFACT_NAME.test(name) && !name.includes("..")

/** The rule, quoted back to whoever chose a bad name. */
export const ARTIFACT_NAME_RULE = "^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$ with no `..`"

/**
 * Largest artifact served whole. An agent's stdout can be a long stream of
 * JSON events; ten mebibytes is far past any real turn and still a read a
 * server can afford.
 */
export const ARTIFACT_MAX_BYTES = 10 * 1024 * 1024

/**
 * How much of the latest output a run's page shows: the end is what says how
 * the turn went, and a phone screen holds a few pages of it at most.
 */
export const TAIL_BYTES = 16 * 1024

/** A name that fails the rule: refused before the disk is touched. */
export class InvalidArtifactName extends Data.TaggedError("InvalidArtifactName")<{ readonly message: string }> {}

/** The disk said no, or the file is not one magi will serve. */
export class ArtifactUnreadable extends Data.TaggedError("ArtifactUnreadable")<{ readonly message: string }> {}

export interface ArtifactEntry {
  readonly name: string
  readonly size: number
  readonly modified_at: string
}

/** The end of one artifact, as a run's page shows it. */
export interface Tail {
  readonly name: string
  readonly text: string
  /** The file is longer than `text`: the start was left out. */
  readonly truncated: boolean
}

const mtimeOf = (info: FileSystem.File.Info) => Option.getOrElse(Option.map(info.mtime, (d) => d.getTime()), () => 0)

/**
 * Is `path` a symbolic link? `stat` follows links, so it is asked apart: an
 * agent can write into its run's folder, and a link planted there must not
 * make the web serve whatever file it points at.
 */
const isLink = (path: string) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) => fs.readLink(path)).pipe(
    Effect.as(true),
    // display: whether an artifact is there, for the page
    Effect.orElseSucceed(() => false)
  )

/**
 * The regular files in `dir` whose names pass the rule, oldest first (the
 * order the turns wrote them). A missing folder is a run with no turn yet.
 */
export const list = (dir: string) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    if (yield* isLink(dir)) return []
    // display: the artifacts listed; none when the folder cannot be read
    const names = yield* fs.readDirectory(dir).pipe(Effect.orElseSucceed((): Array<string> => []))
    const entries = yield* Effect.forEach(
      names.filter(validArtifactName),
      (name) =>
        Effect.gen(function* () {
          const path = NodePath.join(dir, name)
          const info = yield* fs.stat(path)
          if (info.type !== "File" || (yield* isLink(path))) return Option.none()
          return Option.some({ name, size: Number(info.size), mtime: mtimeOf(info) })
          // display: an artifact's tail; none when it cannot be read
        }).pipe(Effect.orElseSucceed(() => Option.none())),
      { concurrency: 16 }
    )
    return entries
      .flatMap((e) => (Option.isSome(e) ? [e.value] : []))
      .sort((a, b) => a.mtime - b.mtime || a.name.localeCompare(b.name))
      .map((e): ArtifactEntry => ({ name: e.name, size: e.size, modified_at: timestamp(new Date(e.mtime)) }))
  })

/** Check `name`, then stat it: none when absent, refused when not a regular file or too large. */
const checked = (dir: string, name: string) =>
  Effect.gen(function* () {
    if (!validArtifactName(name))
      return yield* new InvalidArtifactName({ message: `\`${name}\` is not an artifact name: names match ${ARTIFACT_NAME_RULE}` })
    const fs = yield* FileSystem.FileSystem
    const path = NodePath.join(dir, name)
    const info = yield* fs.stat(path).pipe(Effect.option)
    if (Option.isNone(info)) return Option.none()
    if (info.value.type !== "File" || (yield* isLink(path)) || (yield* isLink(dir)))
      return yield* new ArtifactUnreadable({ message: `artifact \`${name}\` is not a regular file; magi serves only files its agents wrote` })
    return Option.some({ path, size: Number(info.value.size) })
  })

/** One artifact's text, whole; none when it does not exist. */
export const read = (dir: string, name: string) =>
  Effect.gen(function* () {
    const found = yield* checked(dir, name)
    if (Option.isNone(found)) return Option.none<string>()
    if (found.value.size > ARTIFACT_MAX_BYTES)
      return yield* new ArtifactUnreadable({
        message: `artifact \`${name}\` is ${found.value.size} bytes, over the ${ARTIFACT_MAX_BYTES} served whole; read it on the machine at ${found.value.path}`
      })
    const fs = yield* FileSystem.FileSystem
    const bytes = yield* fs.readFile(found.value.path).pipe(
      Effect.mapError((e) => new ArtifactUnreadable({ message: `read ${found.value.path}: ${e.message}` }))
    )
    return Option.some(Buffer.from(bytes).toString("utf8"))
  })

/** The last `TAIL_BYTES` of one artifact, read without loading the rest. */
export const tail = (dir: string, name: string, bytes = TAIL_BYTES) =>
  Effect.gen(function* () {
    const found = yield* checked(dir, name)
    if (Option.isNone(found)) return Option.none<Tail>()
    const fs = yield* FileSystem.FileSystem
    const start = Math.max(0, found.value.size - bytes)
    const chunk = yield* Effect.scoped(
      Effect.gen(function* () {
        const file = yield* fs.open(found.value.path, { flag: "r" })
        yield* file.seek(start, "start")
        const buffer = new Uint8Array(found.value.size - start)
        let filled = 0
        while (filled < buffer.length) {
          const n = Number(yield* file.read(buffer.subarray(filled)))
          if (n === 0) break
          filled += n
        }
        return buffer.subarray(0, filled)
      })
    ).pipe(Effect.mapError((e) => new ArtifactUnreadable({ message: `read ${found.value.path}: ${e.message}` })))
    let text = Buffer.from(chunk).toString("utf8")
    // A cut may land inside a character: drop the broken start.
    if (start > 0) text = text.replace(/^\uFFFD+/, "")
    return Option.some<Tail>({ name, text, truncated: start > 0 })
  })

/**
 * What the agent printed last: the newest non-empty stdout (`.out`) among
 * `entries`, else the newest non-empty stderr (`.err`), since a turn that
 * failed to start says why only there.
 */
export const latestOutput = (entries: ReadonlyArray<ArtifactEntry>): Option.Option<string> => {
  const newest = (suffix: string) => [...entries].reverse().find((e) => e.name.endsWith(suffix) && e.size > 0)
  return Option.fromNullable((newest(".out") ?? newest(".err"))?.name)
}
