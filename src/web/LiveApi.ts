/**
 * `GET /api/runs/:id/live?seat=S`: one seat's live events as server-sent
 * events (issue 32.1), from its log on disk (`agents/LiveLog.ts`): first
 * what the log holds after the client's `Last-Event-ID` (a reconnect picks
 * up where it dropped; a first connect gets the log from its start), then
 * each event within a poll of its append.
 *
 * The seat is looked up in the run's record and its log named from the
 * record's key, never from the query; the route is behind the paired-device
 * guard like every `/api/` read. The stream keeps the page's keep-alive and
 * ends with `/api/events` when the server shuts down.
 */
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as FileSystem from "@effect/platform/FileSystem"
import { Effect, Stream } from "effect"
import * as LiveLog from "../agents/LiveLog.js"
import { RunStore } from "../runs/Runs.js"
import { Live } from "./Live.js"
import * as Responses from "./Responses.js"

/** `Last-Event-ID` (or `?after=`, for a client that cannot set headers) as a seq; anything else starts from the head. */
export const afterOf = (header: string | undefined, query: string | null): number => {
  const raw = header ?? query ?? ""
  return /^\d{1,15}$/.test(raw) ? Number(raw) : 0
}

/** One SSE frame per event: its seq as the id, so the browser's reconnect says where it was. */
export const frameOf = (e: LiveLog.LiveEntry): string => `id: ${e.seq}\nevent: live\ndata: ${JSON.stringify(e)}\n\n`

const live = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const id = (yield* HttpRouter.params)["id"] ?? ""
  const params = new URL(request.url, "http://magi").searchParams
  const runs = yield* RunStore
  const run = yield* runs.get(id)
  const asked = params.get("seat")
  const seat = asked === null ? run.seats[0] : run.seats.find((s) => s.key === asked)
  if (seat === undefined) {
    return Responses.error(
      404,
      asked === null ? `run \`${run.id}\` has no seats yet` : `run \`${run.id}\` has no seat \`${asked}\`; its seats: ${run.seats.map((s) => s.key).join(", ")}`
    )
  }
  const file = LiveLog.liveFile(runs.artifactsDir(run.id), seat.key)
  const after = afterOf(request.headers["last-event-id"], params.get("after"))
  const encoder = new TextEncoder()
  const fs = yield* FileSystem.FileSystem
  const events = LiveLog.follow(file, { after }).pipe(
    Stream.map((e) => encoder.encode(frameOf(e))),
    Stream.provideService(FileSystem.FileSystem, fs)
  )
  // The page's own stream, as keep-alives only: it ends when the server shuts down, and this one with it.
  const alive = (yield* Live).messages.pipe(Stream.map(() => encoder.encode(": keep-alive\n\n")))
  const body = Stream.concat(
    Stream.succeed(encoder.encode(`retry: 2000\nevent: seat\ndata: ${JSON.stringify({ seat: seat.key, seats: run.seats.map((s) => s.key) })}\n\n`)),
    Stream.merge(events, alive, { haltStrategy: "either" })
  )
  return HttpServerResponse.stream(body, {
    contentType: "text/event-stream",
    headers: { "cache-control": "no-store", "x-accel-buffering": "no" }
  })
}).pipe(
  Effect.catchTag("RecordNotFound", (e) => Effect.succeed(Responses.error(404, e.message))),
  // display: a read-only stream answers any other failure as a 500 in its own words
  Effect.catchAll((e) => Effect.succeed(Responses.error(500, e.message)))
)

export const router = HttpRouter.empty.pipe(HttpRouter.get("/api/runs/:id/live", live))
