/** The CLI's terminal I/O, kept in one place so stdout stays the agent's. */
import { Effect } from "effect"

/** Write to stdout: the only text an agent reads as the result. */
export const writeOut = (text: string) =>
  Effect.async<void>((resume) => {
    process.stdout.write(text, () => resume(Effect.void))
  })

/** Write to stderr: progress and refusals, for the person watching. */
export const writeErr = (text: string) =>
  Effect.async<void>((resume) => {
    process.stderr.write(text, () => resume(Effect.void))
  })

/**
 * Until stdout is closed by its reader (`magi runs | head -1`): the owner
 * has read as much as they wanted, so the command ends there, quietly and
 * with 0, as `ls | head` does. Raced against the whole command (`bin.ts`),
 * so every writer is covered, and the command is interrupted, not killed:
 * its finalizers (an agent's process group, a lease) still run. Another
 * stdout error is said on stderr and exits 1. A closed stderr is ignored:
 * nobody is left to tell.
 */
export const untilStdoutCloses = Effect.async<void>((resume) => {
  let ended = false
  process.stdout.on("error", (e: NodeJS.ErrnoException) => {
    if (ended) return
    ended = true
    if (e.code !== "EPIPE") {
      process.stderr.write(`magi: could not write to stdout: ${e.message}\n`)
      process.exitCode = 1
    }
    resume(Effect.void)
  })
  process.stderr.on("error", () => {})
})

/**
 * Stdin, for `--detail -`, up to `maxBytes`: more than that is never read
 * (nor held), so an endless pipe costs one buffer, not the machine's memory.
 * The text, or `undefined` when there was more than `maxBytes`.
 */
export const readStdinUpTo = (maxBytes: number) =>
  Effect.async<string | undefined>((resume) => {
    const chunks: Buffer[] = []
    let size = 0
    let done = false
    const finish = (text: string | undefined) => {
      if (done) return
      done = true
      process.stdin.removeAllListeners("data")
      resume(Effect.succeed(text))
    }
    process.stdin.on("data", (c: Buffer) => {
      size += c.byteLength
      if (size > maxBytes) {
        // Stop reading at once; whatever is still coming is left unread.
        process.stdin.pause()
        process.stdin.destroy()
        return finish(undefined)
      }
      chunks.push(c)
    })
    process.stdin.on("end", () => finish(Buffer.concat(chunks).toString("utf8")))
    process.stdin.on("error", () => finish(Buffer.concat(chunks).toString("utf8")))
  })

/** 90061 → "1d1h1m1s", 59 → "59s": short enough for a status line. */
export const formatSeconds = (secs: number): string => {
  let s = Math.max(0, Math.round(secs))
  const parts: string[] = []
  for (const [unit, size] of [["d", 86400], ["h", 3600], ["m", 60]] as const) {
    if (s >= size) {
      parts.push(`${Math.floor(s / size)}${unit}`)
      s %= size
    }
  }
  if (s > 0 || parts.length === 0) parts.push(`${s}s`)
  return parts.join("")
}

const two = (n: number) => String(n).padStart(2, "0")

/** A moment as the owner's clock shows it (the machine's time zone): `2026-11-30 14:02`. */
export const localTime = (at: Date): string =>
  Number.isNaN(at.getTime())
    ? "at an unknown time"
    : `${at.getFullYear()}-${two(at.getMonth() + 1)}-${two(at.getDate())} ${two(at.getHours())}:${two(at.getMinutes())}`

/**
 * The first of `texts` (longest first) that fits in `columns`, else the last
 * cut to fit: a status line redrawn in place must never wrap, or each redraw
 * leaves a line behind. One column is kept free, since some terminals wrap
 * on writing the last one.
 */
export const fitWidth = (texts: ReadonlyArray<string>, columns: number | undefined): string => {
  if (columns === undefined || columns <= 0) return texts[0] ?? ""
  const room = Math.max(1, columns - 1)
  const fits = texts.find((t) => t.length <= room)
  if (fits !== undefined) return fits
  const last = texts.at(-1) ?? ""
  return room === 1 ? last.slice(0, 1) : `${last.slice(0, room - 1)}…`
}
