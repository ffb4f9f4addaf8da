/**
 * One GitHub REST call, made safe to repeat: 5xx, timeouts, transport
 * failures and malformed JSON are retried with exponential backoff, and a
 * rate limit (403/429 with `Retry-After`, or `X-RateLimit-Remaining: 0`
 * with `X-RateLimit-Reset`) waits as long as GitHub asks, saying so. All of
 * it a `Schedule` on Effect's `Clock`. The token only travels in the
 * Authorization header; every text that leaves here is redacted.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { Clock, Data, Duration, Effect, Redacted, Schedule } from "effect"
import { ForgeAuthError, ForgeNotFound, ForgeUnavailable } from "./Forge.js"
import type { ForgeError } from "./Forge.js"
import type { ForgeToken } from "./ForgeToken.js"
import { redact } from "./ForgeToken.js"

export interface HttpOptions {
  readonly api: string
  /** The first backoff; doubled each retry. */
  readonly retryBase: Duration.Duration
  readonly retries: number
  /** One request's limit. */
  readonly timeout: Duration.Duration
  /** The longest rate-limit wait sat through; a longer one fails the call for now. */
  readonly maxRateWait: Duration.Duration
}

export const defaultOptions = (api: string): HttpOptions => ({
  api,
  retryBase: Duration.seconds(1),
  retries: 5,
  timeout: Duration.seconds(30),
  maxRateWait: Duration.minutes(15)
})

/** What a call came back with, once it is not worth retrying. */
export interface Answer {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly json: unknown
  readonly text: string
}

export interface Call {
  readonly operation: string
  readonly method: "GET" | "POST" | "PUT"
  readonly path: string
  readonly body?: unknown
  /** The answer is text (a job log), not JSON. */
  readonly text?: boolean
  /** Statuses handed back to the caller rather than turned into an error (a merge's 405/409/422). */
  readonly pass?: ReadonlyArray<number>
  /** Scopes the operation needs, named when the token is refused. */
  readonly needs?: ReadonlyArray<string>
}

class Retryable extends Data.TaggedError("Retryable")<{ readonly reason: string; readonly waitMs: number | null }> {}

/** How long GitHub asks to wait, when this answer is a rate limit; null when it is not one. */
export const rateWaitMs = (status: number, headers: Readonly<Record<string, string>>, nowMs: number): number | null => {
  if (status !== 403 && status !== 429) return null
  const after = headers["retry-after"]
  if (after !== undefined && Number.isFinite(Number(after))) return Math.max(0, Number(after)) * 1000
  if (headers["x-ratelimit-remaining"] === "0") {
    const reset = Number(headers["x-ratelimit-reset"])
    return Number.isFinite(reset) ? Math.max(0, reset * 1000 - nowMs) : 60_000
  }
  return status === 429 ? 60_000 : null
}

export const scopesOf = (headers: Readonly<Record<string, string>>, name: string): ReadonlyArray<string> | null => {
  const value = headers[name]
  return value === undefined ? null : value.split(",").map((s) => s.trim()).filter((s) => s !== "")
}

/** GitHub's own words for an error answer, when it sent any. */
export const messageOf = (json: unknown): string =>
  typeof json === "object" && json !== null && typeof (json as { message?: unknown }).message === "string" ? (json as { message: string }).message : ""

/**
 * The next page's path from a `Link` header (`<…?page=2>; rel="next"`),
 * relative to the API's base so it goes through the same call; null on
 * the last page. GitHub sends absolute URLs on its own host.
 */
export const nextPage = (link: string | undefined, api: string): string | null => {
  if (link === undefined) return null
  for (const part of link.split(",")) {
    const m = /<([^>]+)>\s*;\s*rel="?next"?/.exec(part.trim())
    if (m === null) continue
    const base = api.replace(/\/+$/, "")
    const url = m[1]!
    if (url.startsWith(`${base}/`)) return url.slice(base.length)
    try {
      const u = new URL(url)
      const prefix = new URL(base).pathname.replace(/\/+$/, "")
      return u.pathname.startsWith(prefix) ? `${u.pathname.slice(prefix.length)}${u.search}` : null
    } catch {
      return null
    }
  }
  return null
}

const cut = (text: string, n: number) => (text.length > n ? `${text.slice(0, n)}…` : text)

export type Send = (call: Call) => Effect.Effect<Answer, ForgeError>

/** The call function over `client`, with the token from `token` (resolved once, on first use). */
export const make = (options: HttpOptions, client: HttpClient.HttpClient, token: Effect.Effect<ForgeToken, ForgeError>): Send => {
  const base = options.api.replace(/\/+$/, "")

  const once = (call: Call, tok: ForgeToken): Effect.Effect<Answer, Retryable | ForgeError> =>
    Effect.gen(function* () {
      let request = HttpClientRequest.make(call.method)(`${base}${call.path}`).pipe(
        HttpClientRequest.bearerToken(Redacted.value(tok.token)),
        HttpClientRequest.setHeaders({
          accept: call.text === true ? "*/*" : "application/vnd.github+json",
          "x-github-api-version": "2022-11-28",
          "user-agent": "magi"
        })
      )
      if (call.body !== undefined) request = HttpClientRequest.bodyUnsafeJson(request, call.body)
      const read = Effect.gen(function* () {
        const response = yield* client.execute(request)
        const text = yield* response.text
        return { status: response.status, headers: response.headers as Readonly<Record<string, string>>, text }
      })
      const got = yield* read.pipe(
        Effect.timeoutFail({
          duration: options.timeout,
          onTimeout: () => new Retryable({ reason: `no answer within ${Duration.format(options.timeout)}`, waitMs: null })
        }),
        Effect.catchTags({
          RequestError: (e) => new Retryable({ reason: redact(tok.token, e.message), waitMs: null }),
          ResponseError: (e) => new Retryable({ reason: redact(tok.token, e.message), waitMs: null })
        })
      )
      const { status, headers, text } = got
      const now = yield* Clock.currentTimeMillis
      const wait = rateWaitMs(status, headers, now)
      if (wait !== null && !(call.pass ?? []).includes(status)) {
        return yield* new Retryable({ reason: `rate limited (${status}), GitHub asks to wait ${Math.ceil(wait / 1000)} s`, waitMs: wait })
      }
      if (status >= 500) return yield* new Retryable({ reason: `HTTP ${status}`, waitMs: null })
      const json: unknown = call.text === true || text.trim() === "" ? null : yield* Effect.try({
        try: () => JSON.parse(text) as unknown,
        // A cut or garbled answer (a proxy's HTML page) is a fault of the moment, not an answer.
        catch: () => new Retryable({ reason: `malformed JSON (HTTP ${status}): ${cut(redact(tok.token, text), 80)}`, waitMs: null })
      })
      if ((call.pass ?? []).includes(status) || (status >= 200 && status < 300)) return { status, headers, json, text }
      if (status === 401 || status === 403) {
        return yield* new ForgeAuthError({
          operation: call.operation,
          status,
          source: tok.source,
          scopes: scopesOf(headers, "x-oauth-scopes"),
          needed: scopesOf(headers, "x-accepted-oauth-scopes") ?? call.needs ?? []
        })
      }
      if (status === 404) return yield* new ForgeNotFound({ operation: call.operation, what: call.path })
      return yield* new ForgeUnavailable({ operation: call.operation, reason: `HTTP ${status}: ${cut(redact(tok.token, messageOf(json) || text), 200)}` })
    })

  // Exponential backoff, stretched to what a rate limit asks for; each retry is logged so a wait is never silent.
  const policy = Schedule.identity<Retryable | ForgeError>().pipe(
    Schedule.intersect(Schedule.exponential(options.retryBase)),
    Schedule.intersect(Schedule.recurs(options.retries)),
    Schedule.modifyDelay(([[e]], delay) => e._tag === "Retryable" && e.waitMs !== null ? Duration.max(delay, Duration.millis(e.waitMs)) : delay)
  )

  return (call) =>
    Effect.gen(function* () {
      const tok = yield* token
      return yield* once(call, tok).pipe(
        Effect.tapError((e) => e._tag === "Retryable" ? Effect.logWarning(`forge: ${call.operation}: ${e.reason}; retrying with backoff`) : Effect.void),
        Effect.retry({
          schedule: policy,
          while: (e) => e._tag === "Retryable" && (e.waitMs === null || e.waitMs <= Duration.toMillis(options.maxRateWait))
        }),
        Effect.catchTag("Retryable", (e) => new ForgeUnavailable({ operation: call.operation, reason: e.reason }))
      )
    })
}
