/**
 * A seat's live events on disk: `<artifacts>/<seat>.live.jsonl`, one JSON
 * line per event (`seq`, `at`, `turn`, the event), appended while the turn
 * runs and left there when it ends, so a finished turn stays readable and a
 * page that opens late still sees the turn from its start.
 *
 * Bounded however much the CLI prints: past `MAX_EVENTS` lines or
 * `MAX_BYTES` the file is rewritten (beside it, then renamed) to its newest
 * half, so it never holds more than about 2 MiB and a writer never more than
 * that in memory. `seq` keeps counting across rewrites and turns: a reader
 * that asks for what came after its last `seq` (an SSE client's
 * Last-Event-ID) gets exactly the rest.
 *
 * `follow` polls on a `Schedule` (Effect's `Clock`, so tests run it in
 * virtual time), reading only the bytes added since its last read, and
 * starts over from the file's head when the file was rewritten.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import { Chunk, Clock, Duration, Effect, Option, Schedule, Stream } from "effect"
import * as NodePath from "node:path"
import { type LiveEvent, parser } from "./LiveEvents.js"

/** One line of the log. */
export type LiveEntry = LiveEvent & { readonly seq: number; readonly at: number; readonly turn: number }

export const MAX_EVENTS = 2000
export const MAX_BYTES = 2 * 1024 * 1024
/** How often `follow` looks for more: well under the page's 1 s. */
export const FOLLOW_EVERY = Duration.millis(200)

/** A seat's log in a turn's artifacts folder; the seat's name is magi's (`impl-A`), still kept to safe characters. */
export const liveFile = (artifactsDir: string, seat: string): string =>
  NodePath.join(artifactsDir, `${seat.replace(/[^A-Za-z0-9_-]/g, "_") || "seat"}.live.jsonl`)

const encoder = new TextEncoder()

/** The log's lines as entries; a line that is not one (cut by a crash) is skipped. */
export const entriesOf = (text: string): ReadonlyArray<LiveEntry> =>
  text.split("\n").flatMap((line) => {
    if (line.trim() === "") return []
    try {
      const e = JSON.parse(line) as LiveEntry
      return typeof e === "object" && e !== null && typeof e.seq === "number" && typeof e.kind === "string" ? [e] : []
    } catch {
      return []
    }
  })

export interface LiveWriter {
  /** What the CLI printed next, as it arrived. */
  readonly feed: (chunk: Uint8Array) => Effect.Effect<void>
  /** The turn ended: what is left of the last line, then the `end` event. Once; later calls do nothing. */
  readonly end: (text: string, failed: boolean) => Effect.Effect<void>
}

/**
 * A writer for turn `turn` of the seat whose log is `file`, continuing
 * after what the file holds. A file that is there but cannot be read is not
 * taken for an empty one (a rewrite would lose it): the turn then keeps no
 * live log, and says so once in the process's log.
 */
export const open = (file: string, turn: number) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const before = yield* fs.readFileString(file).pipe(
      Effect.map(Option.some),
      Effect.catchIf((e) => e._tag === "SystemError" && e.reason === "NotFound", () => Effect.succeed(Option.some(""))),
      // fallback: an unreadable log is not kept for this turn (never overwritten as empty)
      Effect.catchAll((e) => Effect.as(Effect.logWarning(`live log ${file}: not kept for this turn: ${e.message}`), Option.none<string>()))
    )
    const lock = yield* Effect.makeSemaphore(1)
    if (Option.isNone(before)) return { feed: () => Effect.void, end: () => Effect.void } satisfies LiveWriter
    // fallback: a folder that cannot be made fails the append below, which is logged
    yield* fs.makeDirectory(NodePath.dirname(file), { recursive: true }).pipe(Effect.ignore)
    const kept = before.value.split("\n").filter((l) => l.trim() !== "" && entriesOf(l).length === 1)
    let seq = kept.length === 0 ? 0 : (entriesOf(kept.at(-1)!)[0]?.seq ?? 0)
    let bytes = kept.reduce((n, l) => n + l.length + 1, 0)
    const lines: string[] = kept
    const parse = parser()
    let ended = false

    /** Past a bound: the newest half written beside the log and renamed over it, so a reader never sees half a file. */
    const rewrite = Effect.gen(function* () {
      let keep = lines.length
      let size = bytes
      while (keep > MAX_EVENTS / 2 || size > MAX_BYTES / 2) size -= lines[lines.length - keep--]!.length + 1
      lines.splice(0, lines.length - keep)
      bytes = size
      const scratch = `${file}.${process.pid}.tmp`
      yield* fs.writeFileString(scratch, lines.map((l) => `${l}\n`).join(""))
      yield* fs.rename(scratch, file)
    })

    const write = (events: ReadonlyArray<LiveEvent>) =>
      Effect.gen(function* () {
        if (events.length === 0) return
        const at = yield* Clock.currentTimeMillis
        const fresh = events.map((e) => JSON.stringify({ seq: ++seq, at, turn, ...e }))
        lines.push(...fresh)
        bytes += fresh.reduce((n, l) => n + l.length + 1, 0)
        if (lines.length > MAX_EVENTS || bytes > MAX_BYTES) yield* rewrite
        else yield* fs.writeFile(file, encoder.encode(fresh.map((l) => `${l}\n`).join("")), { flag: "a" })
      }).pipe(
        // The live log is a window on the turn, never a reason for it to fail.
        // fallback: the live log is a window on the turn, never a reason for it to fail
        Effect.catchAll((e) => Effect.logWarning(`live log ${file}: ${e.message}`)),
        lock.withPermits(1)
      )

    return {
      feed: (chunk) => (ended ? Effect.void : Effect.suspend(() => write(parse.feed(chunk)))),
      end: (text, failed) =>
        Effect.suspend(() => {
          if (ended) return Effect.void
          ended = true
          return write([...parse.flush(), { kind: "end", text, failed }])
        })
    } satisfies LiveWriter
  })

/**
 * The entries of `file` after `after` (a `seq`), then every one appended
 * from then on, polled every `every`. Never ends by itself: a seat's next
 * turn appends to the same log (`Stream.takeUntil` an `end` for one turn).
 * A file not there yet is waited for.
 */
export const follow = (file: string, options: { readonly after?: number; readonly every?: Duration.Duration } = {}) =>
  Stream.unwrap(
    Effect.gen(function* () {
      const fs = yield* FileSystem.FileSystem
      let offset = 0
      let rest = ""
      let last = options.after ?? 0
      let inode: number | undefined = undefined
      const poll = Effect.gen(function* () {
        const info = yield* fs.stat(file).pipe(Effect.option)
        if (Option.isNone(info)) return Chunk.empty<LiveEntry>()
        const size = Number(info.value.size)
        const ino = Option.getOrUndefined(info.value.ino)
        // Rewritten to its newest half (a new file renamed in): read it again from its head, keeping only what is new.
        if (size < offset || ino !== inode) {
          inode = ino
          offset = 0
          rest = ""
        }
        if (size === offset) return Chunk.empty<LiveEntry>()
        const added = yield* Effect.scoped(
          Effect.gen(function* () {
            const f = yield* fs.open(file, { flag: "r" })
            yield* f.seek(offset, "start")
            return yield* f.readAlloc(size - offset)
          })
          // display: a read that failed shows nothing new; the next poll tries again
        ).pipe(Effect.orElseSucceed(() => Option.none<Uint8Array>()))
        if (Option.isNone(added)) return Chunk.empty<LiveEntry>()
        offset += added.value.length
        const text = rest + new TextDecoder().decode(added.value)
        const cut = text.lastIndexOf("\n")
        rest = text.slice(cut + 1)
        const fresh = entriesOf(text.slice(0, cut + 1)).filter((e) => e.seq > last)
        if (fresh.length > 0) last = fresh.at(-1)!.seq
        return Chunk.fromIterable(fresh)
      })
      return Stream.repeatEffectWithSchedule(poll, Schedule.spaced(options.every ?? FOLLOW_EVERY)).pipe(Stream.flattenChunks)
    })
  )

/** What the log holds now, after `after`: a finished turn read once. */
export const read = (file: string, after = 0) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) =>
    fs.readFileString(file).pipe(
      Effect.catchIf((e) => e._tag === "SystemError" && e.reason === "NotFound", () => Effect.succeed("")),
      Effect.map((text) => entriesOf(text).filter((e) => e.seq > after))
    ))
