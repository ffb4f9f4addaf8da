/**
 * `/api/answer-by-token`: the one route a notification's button reaches.
 *
 * It needs no cookie and takes no JSON-only rule from `Security.ts`: the
 * token in the request is the whole permission, and it allows exactly one
 * answer to one question (`questions/AnswerLinks.ts`). Every other route
 * keeps its guards. The token is read from a JSON body (`{"token": "…"}`,
 * what the ntfy app's button sends) or from the query (`?token=…`, a link);
 * it is never written to a log, a response, or the page.
 *
 * GET shows what the link would answer and a button to confirm, answering
 * nothing: a chat app or a mail client that previews links follows them
 * with GET, and a preview must not decide for the owner. POST answers
 * through `Answers.answerWithLink`, the same lock and the same "answered
 * once" rule as the page and `magi answer`, so a press racing the page has
 * exactly one winner, and a second press says what the answer already is.
 */
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as FileSystem from "@effect/platform/FileSystem"
import { Clock, Effect, Either, Schema } from "effect"
import * as ConfiguredStore from "../platform/ConfiguredStore.js"
import * as AnswerLinks from "../questions/AnswerLinks.js"
import { answerWithLink } from "../questions/Answers.js"
import { ANSWER_BY_TOKEN_PATH } from "../questions/Ntfy.js"
import * as Q from "../questions/Question.js"
import { QuestionStore } from "../questions/QuestionStore.js"
import { MagiHome } from "../platform/MagiHome.js"
import { bodyAs } from "./Api.js"
import * as Responses from "./Responses.js"

export { ANSWER_BY_TOKEN_PATH }

/**
 * Nothing loads, nothing runs; the one form posts back here. No referrer,
 * so the token in a GET's address never leaves in a `Referer`.
 */
const PAGE_HEADERS = {
  "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
  "x-robots-tag": "noindex",
  "cache-control": "no-store"
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!)

/** A small page of its own: the phone may open it with no magi page loaded. */
const page = (status: number, heading: string, lines: ReadonlyArray<string>, form?: string) =>
  HttpServerResponse.text(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
      `<title>magi</title><style>body{font:17px/1.45 system-ui,sans-serif;max-width:32em;margin:2em auto;padding:0 1em}` +
      `button{font:inherit;padding:.6em 1.2em}.q{white-space:pre-wrap}</style></head><body>` +
      `<h1>${escapeHtml(heading)}</h1>${lines.map((l) => `<p class="q">${escapeHtml(l)}</p>`).join("")}` +
      `${form === undefined ? "" : `<form method="post"><button type="submit">${escapeHtml(form)}</button></form>`}</body></html>`,
    { status, contentType: "text/html; charset=utf-8", headers: PAGE_HEADERS }
  )

/** One outcome, as JSON for a button (it sent JSON) or as a page for a browser. */
interface Outcome {
  readonly status: number
  readonly message: string
  readonly answer?: string
}

const respond = (asJson: boolean, outcome: Outcome) =>
  asJson
    ? Responses.json(
      outcome.status < 300 ? { answered: outcome.answer, message: outcome.message } : { error: outcome.message },
      outcome.status
    )
    : page(outcome.status, outcome.status < 300 ? "Answered" : "Not answered", [outcome.message])

const refusedLink = (e: AnswerLinks.LinkRefused): Outcome => ({ status: e.reason === "expired" ? 410 : 403, message: e.message })

/** The words for a question that is no longer open, the same for every press after the first. */
const settledWords = (q: Q.Question) =>
  q.status === "answered"
    ? `already answered: ${Q.resolution(q) ?? ""}`
    : `question ${Q.shortId(q.id)} was abandoned; nothing was answered`

/** The home's key and what `token` allows now, or the outcome that refuses it. */
const claimOf = (token: string) =>
  Effect.gen(function* () {
    const home = yield* MagiHome
    const secret = yield* AnswerLinks.secretShared(home.dir, yield* ConfiguredStore.configuredUrl).pipe(
      Effect.provideService(FileSystem.FileSystem, yield* FileSystem.FileSystem),
      Effect.either
    )
    if (Either.isLeft(secret)) return Either.left<Outcome>({ status: 500, message: secret.left.message })
    return Either.mapLeft(AnswerLinks.verify(secret.right, token, yield* Clock.currentTimeMillis), refusedLink)
  })

const tokenInQuery = Effect.map(HttpServerRequest.HttpServerRequest, (request) => new URL(request.url, "http://magi").searchParams.get("token") ?? "")

const isJson = (contentType: string | undefined) => (contentType ?? "").split(";")[0]!.trim().toLowerCase() === "application/json"

const TokenBody = Schema.Struct({ token: Schema.String })

/** `GET`: what the link would answer, and a button to confirm; never an answer. */
const confirmPage = Effect.gen(function* () {
  const claim = yield* claimOf(yield* tokenInQuery)
  if (Either.isLeft(claim)) return respond(false, claim.left)
  const found = yield* Effect.either((yield* QuestionStore).get(claim.right.question))
  if (Either.isLeft(found)) return page(404, "Not answered", ["this link's question is no longer on record"])
  const q = found.right
  if (!Q.isOpen(q)) return page(409, "Not answered", [settledWords(q)])
  if (AnswerLinks.choicesDigest(q.choices) !== claim.right.digest || claim.right.index >= q.choices.length)
    return page(409, "Not answered", ["the question's choices changed since this link was sent; open the page to answer"])
  const choice = q.choices[claim.right.index]!
  return page(200, "Answer this question?", [q.summary, `Your answer: ${choice}`], `Answer: ${choice}`)
})

/** `POST`: answer as the token allows, once. */
const answerByToken = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const asJson = isJson(request.headers["content-type"])
  const token = asJson ? (yield* bodyAs(TokenBody, '{"token": "…"}')).token : yield* tokenInQuery
  const claim = yield* claimOf(token)
  if (Either.isLeft(claim)) return respond(asJson, claim.left)
  const store = yield* QuestionStore
  const answered = yield* Effect.either(answerWithLink(claim.right))
  if (Either.isRight(answered))
    return respond(asJson, { status: 200, message: `answered: ${Q.resolution(answered.right) ?? ""}`, answer: Q.resolution(answered.right) ?? "" })
  const e = answered.left
  if (e._tag === "QuestionNotFound") return respond(asJson, { status: 404, message: "this link's question is no longer on record" })
  if (e._tag === "QuestionRejected" && e.settled) {
    const now = yield* Effect.either(store.get(claim.right.question))
    return respond(asJson, { status: 409, message: Either.isRight(now) ? settledWords(now.right) : e.message })
  }
  if (e._tag === "QuestionRejected") return respond(asJson, { status: 409, message: e.message })
  return respond(asJson, { status: 500, message: e.message })
}).pipe(
  Effect.catchTags({
    BadBody: (e) => Effect.succeed(Responses.error(400, e.message)),
    BodyTooLarge: (e) => Effect.succeed(HttpServerResponse.setHeader(Responses.error(413, e.message), "connection", "close"))
  })
)

export const router = HttpRouter.empty.pipe(
  HttpRouter.get(ANSWER_BY_TOKEN_PATH, confirmPage),
  // A press is recorded even if the phone drops the connection mid-write.
  HttpRouter.post(ANSWER_BY_TOKEN_PATH, answerByToken, { uninterruptible: true })
)
