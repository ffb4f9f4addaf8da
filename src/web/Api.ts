/**
 * The HTTP API the phone page speaks: the Rust magi's routes, statuses and
 * headers, over the same store and transitions as the CLI.
 *
 * Writes go through `Answers` (the same functions `magi answer` calls, under
 * the same per-question lock), so the web holds no rules of its own: a
 * refusal is the transition's own message, mapped to a status by its kind.
 */
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import { Data, Effect, Option, ParseResult, Schema, Stream } from "effect"
import * as Q from "../questions/Question.js"
import { QuestionNotFound, QuestionStore, type InvalidAssetName, type StoreError } from "../questions/QuestionStore.js"
import { answerQuestion, sayToQuestion, withdrawQuestion } from "../questions/Answers.js"
import * as Responses from "./Responses.js"
import { HISTORY_LIMIT_MAX, HISTORY_PAGE, Snapshots } from "./Snapshot.js"
import * as History from "../questions/History.js"
import { Live, type Message } from "./Live.js"
import { NoticeFeed } from "./NoticeFeed.js"
import { NotifySetting } from "./NotifySetting.js"
import { Hosts } from "../platform/Hosts.js"
import * as RecordStore from "../store/RecordStore.js"
import type { NewerSchema } from "../store/VersionedJson.js"

/** Largest request body accepted: an answer is a sentence, not an upload. */
export const MAX_BODY_BYTES = 1024 * 1024

/**
 * The policy for agent-authored panels: nothing loads but the panel's own
 * files (its images and, beyond the reference, its stylesheets: an agent's
 * `<link rel="stylesheet" href="panel.css">` is how a chart page is usually
 * written) and inline styles; no script, no form, no base. A stylesheet can
 * fetch only what `img-src`/`font-src` allow, so it reaches nothing outside
 * this server either. Together with the page's frame, which runs no script
 * (client/panelFrame.ts), a panel is a picture of evidence and can do nothing.
 */
export const PANEL_CSP =
  "default-src 'none'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; font-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'self'"

export const PANEL_HEADERS = {
  "content-security-policy": PANEL_CSP,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer"
}

/**
 * The closed list of asset types a panel may use. Anything else, html and
 * script included, goes out as bytes to download, never as something the
 * browser would render or run.
 */
const ASSET_TYPES: Record<string, string> = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  svg: "image/svg+xml",
  css: "text/css; charset=utf-8",
  txt: "text/plain; charset=utf-8"
}

export const assetType = (name: string): string => ASSET_TYPES[name.slice(name.lastIndexOf(".") + 1).toLowerCase()] ?? "application/octet-stream"

// ---------------------------------------------------------------------------
// Errors of the HTTP layer itself

/** A body that is not the shape the route takes. */
export class BadBody extends Data.TaggedError("BadBody")<{ readonly message: string }> {}

/** A body over `MAX_BODY_BYTES`. */
export class BodyTooLarge extends Data.TaggedError("BodyTooLarge")<{ readonly message: string }> {}

export type ApiError = BadBody | BodyTooLarge | QuestionNotFound | Q.QuestionRejected | Q.UnreadableQuestion | NewerSchema | StoreError | InvalidAssetName

/** The store's own errors (`StoreErrors.ts`) as the web answers them, in their words: no such record is a 404, the rest a 500. */
export const storeFailure = (e: RecordStore.Failure) => Responses.error(e._tag === "RecordNotFound" ? 404 : 500, e.message)

/** `effect` with the store's own errors answered as `storeFailure` says; the caller's other errors stay. */
export const answeringStore = <A, E, R>(
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A | HttpServerResponse.HttpServerResponse, Exclude<E, RecordStore.Failure>, R> =>
  Effect.catchIf(effect, (e): e is E & RecordStore.Failure => RecordStore.isFailure(e), (e) => Effect.succeed(storeFailure(e))) as never

/** Each failure as the status a client can act on, with the message as given. */
export const failure = (e: ApiError) => {
  switch (e._tag) {
    case "BadBody":
    case "InvalidAssetName":
      return Responses.error(400, e.message)
    case "BodyTooLarge":
      // Whatever is still arriving is not read; the connection is not reused.
      return HttpServerResponse.setHeader(Responses.error(413, e.message), "connection", "close")
    case "QuestionNotFound":
      return Responses.error(404, e.message)
    case "QuestionRejected":
      // Settled means someone else decided first: the page says "answered
      // elsewhere" and reloads, rather than showing it as the owner's mistake.
      return Responses.error(e.settled ? 409 : 400, e.message)
    case "UnreadableQuestion":
    case "NewerSchema":
    case "StoreError":
      return Responses.error(500, e.message)
  }
}

// ---------------------------------------------------------------------------
// Bodies

const tooLarge = () => new BodyTooLarge({ message: `a request body may be at most ${MAX_BODY_BYTES} bytes; an answer is a sentence, not an upload` })

/**
 * The request body as text, at most `MAX_BODY_BYTES`. Read from Node's
 * request directly rather than through the platform's body reader, which
 * destroys the socket on overflow: the client would see a reset instead of
 * the 413 that says what was wrong. Past the cap the rest is drained unread,
 * and the 413 closes the connection.
 */
const readBody = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.async<string, BodyTooLarge | BadBody>((resume) => {
    const incoming = NodeHttpServerRequest.toIncomingMessage(request)
    const chunks: Array<Buffer> = []
    let size = 0
    const stop = () => {
      incoming.off("data", onData)
      incoming.off("end", onEnd)
      incoming.off("error", onError)
    }
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size <= MAX_BODY_BYTES) return void chunks.push(chunk)
      stop()
      resume(Effect.fail(tooLarge()))
    }
    const onEnd = () => {
      stop()
      resume(Effect.succeed(Buffer.concat(chunks).toString("utf8")))
    }
    const onError = (e: Error) => {
      stop()
      resume(Effect.fail(new BadBody({ message: `could not read the body: ${e.message}` })))
    }
    incoming.on("data", onData)
    incoming.once("end", onEnd)
    incoming.once("error", onError)
    return Effect.sync(stop)
  })

/**
 * The body decoded as `schema`, exactly: an unknown field is refused rather
 * than ignored, so `{"choice": "a", "text": "b"}` cannot be half-understood.
 */
export const bodyAs = <A, I>(schema: Schema.Schema<A, I>, expected: string, options: { readonly emptyAs?: unknown } = {}) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    // Refused on the declared length before a byte is read.
    if (Number(request.headers["content-length"] ?? "0") > MAX_BODY_BYTES) return yield* tooLarge()
    const text = yield* readBody(request)
    // A route whose fields are all optional may take no body at all.
    const raw = "emptyAs" in options && text.trim() === "" ? options.emptyAs : yield* Effect.try({
      try: () => JSON.parse(text) as unknown,
      catch: (e) => new BadBody({ message: `the body must be JSON, ${expected}: ${(e as Error).message}` })
    })
    return yield* Schema.decodeUnknown(schema, { onExcessProperty: "error" })(raw).pipe(
      Effect.mapError(
        (e) => new BadBody({ message: `the body must be exactly ${expected}: ${ParseResult.TreeFormatter.formatErrorSync(e)}` })
      )
    )
  })

const SayBody = Schema.Struct({ body: Schema.String })
const WithdrawBody = Schema.Struct({ reason: Schema.optional(Schema.String) })

// ---------------------------------------------------------------------------
// Routes

const idParam = Effect.map(HttpRouter.params, (p) => p["id"] ?? "")

/**
 * The id a write names, which must be a question's whole id: a prefix that
 * happens to be unique today may name another question tomorrow, and a tap
 * must decide exactly the question the owner read.
 */
const exactId = Effect.gen(function* () {
  const id = yield* idParam
  const store = yield* QuestionStore
  const resolved = yield* store.resolveId(id)
  if (resolved !== id)
    return yield* new QuestionNotFound({ message: `no question has the id \`${id}\`; a write takes a question's whole id` })
  return id
})

const listQuestions = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const snapshot = yield* (yield* Snapshots).current
  return Responses.jsonBytes(
    snapshot.body,
    snapshot.gzipped,
    request.headers["accept-encoding"],
    { etag: snapshot.etag, ifNoneMatch: request.headers["if-none-match"] }
  )
  // display: the request's failure becomes its HTTP response
}).pipe(Effect.catchAll(failure))

/**
 * `GET /api/questions/history?before=<cursor>&limit=<n>&q=<words>`: settled
 * questions settled before the cursor, the most recently settled first,
 * with the cursor for the page after. Reads only the page's files (and the months' indexes for `q`).
 */
const historyRoute = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const params = new URL(request.url, "http://magi").searchParams
  const rawLimit = params.get("limit")
  const limit = rawLimit === null ? HISTORY_PAGE : Number(rawLimit)
  if (!Number.isInteger(limit) || limit < 1 || limit > HISTORY_LIMIT_MAX)
    return Responses.error(400, `limit must be a whole number from 1 to ${HISTORY_LIMIT_MAX}, not \`${rawLimit}\``)
  const before = params.get("before") ?? undefined
  const page = yield* (yield* Snapshots).historyPage({ before: before === "" ? undefined : before, limit, words: History.words(params.get("q") ?? "") })
  return Responses.jsonBytes(page.body, page.gzipped, request.headers["accept-encoding"])
  // display: the request's failure becomes its HTTP response
}).pipe(Effect.catchAll(failure))

/** `GET /api/questions/:id`: one question by its whole id, open or settled, hot or on a month's shelf (a deep link). */
const oneQuestion = Effect.gen(function* () {
  const id = yield* exactId
  const q = yield* (yield* QuestionStore).get(id)
  return Responses.json(yield* (yield* Snapshots).viewOf(q))
  // display: the request's failure becomes its HTTP response
}).pipe(Effect.catchAll(failure))

const health = Effect.gen(function* () {
  // Counts need no holders: no lease is looked at for a health check. The
  // other stores' revisions and the loop are what `Live` last read (at most
  // a poll ago): reading them here cost a stat per run and a read of
  // `daemon.json` per request.
  const snapshot = yield* (yield* Snapshots).counts
  const { revisions, loop } = yield* (yield* Live).latest
  const notify = yield* NotifySetting
  return Responses.json({
    ok: true,
    revisions: { ...revisions, questions: snapshot.revision },
    // The pid of the loop delivering answers to agents whose ask is gone, or null.
    loop,
    questions_open: snapshot.open,
    questions_needs_owner: snapshot.needsOwner,
    // Whether anyone is notified, and by what (`ntfy`, `command`): the page's
    // empty state says so, and names the file to set one in.
    notifications: yield* notify.configured,
    notify_via: yield* notify.via,
    notify_config: notify.file,
    // Every host sharing the store: online or when last seen, its version, repositories and turns.
    // display: hosts shown on the page; none when they cannot be read
    hosts: yield* Effect.flatMap(Hosts, (h) => h.list).pipe(Effect.orElseSucceed(() => []))
  })
  // display: the request's failure becomes its HTTP response
}).pipe(Effect.catchAll(failure))

const answer = Effect.gen(function* () {
  const id = yield* exactId
  const given = yield* bodyAs(Q.Answer, '{"choice": "…"} or {"text": "…"}')
  const answered = yield* answerQuestion(id, given)
  return Responses.json(yield* (yield* Snapshots).viewOf(answered))
  // display: the request's failure becomes its HTTP response
}).pipe(Effect.catchAll(failure))

const say = Effect.gen(function* () {
  const id = yield* exactId
  const { body } = yield* bodyAs(SayBody, '{"body": "…"}')
  const said = yield* sayToQuestion(id, body)
  return Responses.json(yield* (yield* Snapshots).viewOf(said))
  // display: the request's failure becomes its HTTP response
}).pipe(Effect.catchAll(failure))

/** The owner withdrawing the question (the card's Withdraw): the asker reads it abandoned, in the owner's words. */
const withdraw = Effect.gen(function* () {
  const id = yield* exactId
  const { reason } = yield* bodyAs(WithdrawBody, '{"reason"?: "…"}', { emptyAs: {} })
  const withdrawn = yield* withdrawQuestion(id, reason ?? "")
  return Responses.json(yield* (yield* Snapshots).viewOf(withdrawn))
  // display: the request's failure becomes its HTTP response
}).pipe(Effect.catchAll(failure))

/**
 * What the waiter could not deliver, and why: newest first, as written under
 * `<home>/notices/` (by this process's waiter or another's).
 */
const notices = Effect.flatMap(NoticeFeed, (feed) => Effect.map(feed.list, Responses.json))

/**
 * Panel routes take the full id (the one the list gives), never a prefix:
 * the id becomes a path on disk, and the store only builds paths from names
 * that cannot traverse.
 */
const panel = Effect.gen(function* () {
  const id = yield* idParam
  const html = yield* (yield* QuestionStore).panelHtml(id)
  if (Option.isNone(html)) return Responses.error(404, `question \`${id}\` has no panel`)
  return HttpServerResponse.text(html.value, { contentType: "text/html; charset=utf-8", headers: PANEL_HEADERS })
})

const asset = Effect.gen(function* () {
  const params = yield* HttpRouter.params
  const id = params["id"] ?? ""
  const name = params["name"] ?? ""
  // The store refuses a bad name before it touches the disk: 400, not 404.
  const bytes = yield* (yield* QuestionStore).panelAsset(id, name)
  if (Option.isNone(bytes)) return Responses.error(404, `question \`${id}\` has no panel file \`${name}\``)
  const type = assetType(name)
  return HttpServerResponse.uint8Array(bytes.value, {
    contentType: type,
    headers: type === "image/svg+xml" ? { ...PANEL_HEADERS, "content-disposition": "attachment" } : PANEL_HEADERS
  })
  // display: the request's failure becomes its HTTP response
}).pipe(Effect.catchAll(failure))

/**
 * Server-sent events: `change` with the revisions on connect and on every
 * change, a comment line as keep-alive, and a reconnect hint. Ends when the
 * server shuts down.
 */
const events = Effect.gen(function* () {
  const live = yield* Live
  const encoder = new TextEncoder()
  const frame = (m: Message) =>
    encoder.encode(m._tag === "Change" ? `event: change\ndata: ${JSON.stringify({ revisions: m.revisions, loop: m.loop })}\n\n` : ": keep-alive\n\n")
  const body = Stream.concat(Stream.succeed(encoder.encode("retry: 2000\n\n")), Stream.map(live.messages, frame))
  return HttpServerResponse.stream(body, {
    contentType: "text/event-stream",
    headers: { "cache-control": "no-store", "x-accel-buffering": "no" }
  })
})

/** The API routes; the page's own routes are added by `Page`. */
export const router = HttpRouter.empty.pipe(
  HttpRouter.get("/api/questions", listQuestions),
  HttpRouter.get("/api/questions/history", historyRoute),
  HttpRouter.get("/api/questions/:id", oneQuestion),
  // A decision the owner tapped is recorded even if the phone drops the
  // connection while it is being written.
  HttpRouter.post("/api/questions/:id/answer", answer, { uninterruptible: true }),
  HttpRouter.post("/api/questions/:id/say", say, { uninterruptible: true }),
  HttpRouter.post("/api/questions/:id/withdraw", withdraw, { uninterruptible: true }),
  HttpRouter.get("/api/questions/:id/panel", panel),
  HttpRouter.head("/api/questions/:id/panel", panel),
  HttpRouter.get("/api/questions/:id/asset/:name", asset),
  HttpRouter.head("/api/questions/:id/asset/:name", asset),
  // Where the page shows a panel: a folder, `…/panel/` (the router serves it
  // by the route above, trailing slash or not), whose files are its assets,
  // so the names an agent writes in its HTML (`<img src="chart.png">`)
  // resolve with no `asset/` prefix to know about. `…/asset/<name>` is the
  // reference's address and still answers; `…/panel/asset/<name>` serves
  // panels written for it (`src="asset/chart.png"`) now that the page frames
  // the folder.
  HttpRouter.get("/api/questions/:id/panel/:name", asset),
  HttpRouter.head("/api/questions/:id/panel/:name", asset),
  HttpRouter.get("/api/questions/:id/panel/asset/:name", asset),
  HttpRouter.head("/api/questions/:id/panel/asset/:name", asset),
  HttpRouter.get("/api/notices", notices),
  HttpRouter.get("/api/events", events),
  HttpRouter.get("/api/health", health)
)
