/**
 * The stdin and stdout `@effect/ai`'s McpServer is given: stdin framed and
 * judged line by line (Framing.ts), so only well-formed requests reach the
 * library and the rest are answered here, and stdout written with
 * backpressure.
 *
 * Backpressure: the library reads every request at once and queues its
 * responses in memory without a bound, so a client that never read stdout
 * grew the server by a gigabyte in 100,000 requests. Here a request is
 * passed on only while fewer than `maxInFlight` are unanswered, and an
 * answer counts as given once stdout has taken it (a write that fills the
 * pipe waits for it to drain). A client that stops reading stops the server
 * reading its stdin, and nothing grows.
 */
import { Effect, Option, Sink, Stream } from "effect"
import { errorLine, idKey, judge, LineFramer, type Verdict } from "./Framing.js"

/** Requests answered at a time: far more than any agent CLI has open, few enough to hold their answers in memory. */
export const MAX_IN_FLIGHT = 256

/** One whole write to `out`, done once it has taken it, or once it has drained when it was full. */
const writeTo = (out: NodeJS.WritableStream) => (text: string | Uint8Array) =>
  Effect.async<void>((resume) => {
    if (out.write(text)) return resume(Effect.void)
    const done = () => {
      out.off("drain", done)
      out.off("close", done)
      out.off("error", done)
      resume(Effect.void)
    }
    out.once("drain", done)
    out.once("close", done)
    out.once("error", done)
  })

/** The id of each response in `text` (one JSON-RPC message a line). */
const responseIds = (text: string) => {
  const ids: Array<string> = []
  for (const line of text.split("\n")) {
    if (line === "") continue
    try {
      const m = JSON.parse(line) as { id?: unknown; result?: unknown; error?: unknown }
      if ((typeof m.id === "string" || typeof m.id === "number") && ("result" in m || "error" in m)) ids.push(idKey(m.id))
    } catch {
      // Not ours to judge: the library wrote it.
    }
  }
  return ids
}

export const make = (options: {
  readonly stdin: Stream.Stream<Uint8Array>
  readonly stdout: NodeJS.WritableStream
  readonly maxInFlight?: number
}) =>
  Effect.gen(function* () {
    const max = options.maxInFlight ?? MAX_IN_FLIGHT
    const permits = yield* Effect.makeSemaphore(max)
    // Each unanswered request's id, with how many are open under it (a client may reuse one).
    const open = new Map<string, number>()
    // A client that has gone away makes writes fail (EPIPE): nothing is left
    // to tell, and its closing stdin ends the server, so the error is not a crash.
    options.stdout.on("error", () => {})
    const write = writeTo(options.stdout)
    const decoder = new TextDecoder()

    const settle = (key: string) =>
      Effect.suspend(() => {
        const n = open.get(key)
        if (n === undefined) return Effect.void
        if (n <= 1) open.delete(key)
        else open.set(key, n - 1)
        return permits.release(1)
      })

    const handle = (v: Verdict): Effect.Effect<Option.Option<Uint8Array>> => {
      switch (v._tag) {
        case "Skip":
          return Effect.succeedNone
        case "Refuse":
          return write(errorLine(v)).pipe(Effect.as(Option.none()))
        case "Forward": {
          const line = Option.some(new TextEncoder().encode(v.line + "\n"))
          if (v.cancels !== undefined) return settle(idKey(v.cancels)).pipe(Effect.as(line))
          if (v.id === undefined) return Effect.succeed(line)
          const key = idKey(v.id)
          return permits.take(1).pipe(
            Effect.zipRight(Effect.sync(() => open.set(key, (open.get(key) ?? 0) + 1))),
            Effect.as(line)
          )
        }
      }
    }

    const stdin = Stream.suspend(() => {
      const framer = new LineFramer()
      return options.stdin.pipe(
        Stream.mapConcat((chunk) => framer.push(chunk)),
        Stream.concat(Stream.suspend(() => Stream.fromIterable(framer.end()))),
        Stream.mapEffect((framed) => handle(judge(framed))),
        Stream.filterMap((line) => line)
      )
    })

    const stdout = Sink.forEach((chunk: Uint8Array | string) =>
      write(chunk).pipe(
        Effect.zipRight(Effect.forEach(responseIds(typeof chunk === "string" ? chunk : decoder.decode(chunk)), settle, { discard: true }))
      )
    )
    return { stdin, stdout }
  })
