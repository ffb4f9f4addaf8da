/**
 * The two refusals that keep other web pages away from the owner's questions.
 *
 * The Rust magi trusted the network: the tailnet was the boundary. But the
 * owner's own browser sits inside that boundary, and any page it loads can
 * make it send requests here. Two holes follow, and each check closes one:
 *
 * - **Cross-site writes.** A page on evil.example can auto-submit a form to
 *   `http://127.0.0.1:7878/api/questions/…/answer` and answer a question with
 *   the owner's browser. A form cannot send `Content-Type: application/json`
 *   without a CORS preflight (which this server never grants), and browsers
 *   stamp every request with `Origin` and `Sec-Fetch-Site`, so a write must be
 *   JSON, and when those headers are present they must name this origin.
 *   Requests without them (curl, `magi` itself, old browsers for
 *   `Sec-Fetch-Site`) are not browsers being tricked, and pass.
 * - **DNS rebinding.** evil.example can re-point its own name at 127.0.0.1
 *   after the page loaded; the browser then treats this server as
 *   same-origin with evil.example and can read every question. The `Host`
 *   header still says evil.example, so a request for a host this server was
 *   not bound as is refused (421 Misdirected Request) before any route runs.
 */
import * as HttpMiddleware from "@effect/platform/HttpMiddleware"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Effect, Option } from "effect"
import * as Responses from "./Responses.js"
import { ANSWER_BY_TOKEN_PATH } from "../questions/Ntfy.js"

export interface Refusal {
  readonly status: 403 | 421
  readonly message: string
}

/** Methods that change something: the ones a forged request would want. */
const WRITES = new Set(["POST", "PUT", "PATCH", "DELETE"])

/**
 * The host name a `Host` header names, lower-cased, without the port and
 * without the brackets of an IPv6 literal; undefined when it is malformed.
 */
export const hostNameOf = (host: string): string | undefined => {
  const h = host.trim().toLowerCase()
  if (h === "") return undefined
  if (h.startsWith("[")) {
    const end = h.indexOf("]")
    if (end < 0) return undefined
    const rest = h.slice(end + 1)
    if (rest !== "" && !/^:\d+$/.test(rest)) return undefined
    return h.slice(1, end)
  }
  const colon = h.indexOf(":")
  if (colon < 0) return h
  if (!/^\d+$/.test(h.slice(colon + 1))) return undefined
  return h.slice(0, colon)
}

/** Refuse a request addressed to a name this server was not bound as. */
export const checkHost = (host: string | undefined, allowed: ReadonlySet<string>): Option.Option<Refusal> => {
  const name = host === undefined ? undefined : hostNameOf(host)
  if (name !== undefined && allowed.has(name)) return Option.none()
  return Option.some({
    status: 421,
    // The allowed names are not listed: a rebinding page can read this body,
    // and the machine's tailnet name is none of its business.
    message: `a request for host \`${host ?? ""}\` is refused: magi web answers only to the address it listens on, localhost and its Tailscale name (DNS rebinding protection)`
  })
}

/** `application/json`, with or without parameters such as `charset`. */
const isJson = (contentType: string | undefined) =>
  contentType !== undefined && contentType.split(";")[0]!.trim().toLowerCase() === "application/json"

/**
 * Refuse a write a browser was made to send from another site. `host` is the
 * request's own `Host`, already checked, so the origin built from it is this
 * server's origin as the browser sees it; `https:` is accepted too, for the
 * owner who puts magi behind `tailscale serve`.
 */
export const checkWrite = (
  method: string,
  headers: Readonly<Record<string, string | undefined>>
): Option.Option<Refusal> => {
  if (!WRITES.has(method.toUpperCase())) return Option.none()
  if (!isJson(headers["content-type"]))
    return Option.some({
      status: 403,
      message: "a write to magi needs `Content-Type: application/json`; forms and plain text are refused so that no other page can submit one"
    })
  const origin = headers["origin"]
  const host = headers["host"] ?? ""
  if (origin !== undefined && origin !== `http://${host}` && origin !== `https://${host}`)
    return Option.some({
      status: 403,
      message: `a write from ${origin} is refused: only magi's own page (http://${host}) may answer questions`
    })
  if (headers["sec-fetch-site"]?.toLowerCase() === "cross-site")
    return Option.some({
      status: 403,
      message: "a cross-site write is refused: only magi's own page may answer questions"
    })
  return Option.none()
}

/**
 * The one route a forged write cannot misuse: `/api/answer-by-token` does
 * only what the capability token it carries allows (one answer to one
 * question), so it takes a confirm page's plain form and a notification
 * button's POST from no page at all. Its `Host` is still checked.
 */
export const exemptFromWriteCheck = (url: string): boolean => {
  const query = url.indexOf("?")
  return (query < 0 ? url : url.slice(0, query)) === ANSWER_BY_TOKEN_PATH
}

/** Both checks in front of every route, refusals as JSON errors. */
export const guard = (allowedHosts: ReadonlyArray<string>) => {
  const allowed = new Set(allowedHosts.map((h) => h.toLowerCase()))
  return HttpMiddleware.make((app) =>
    Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const refusal = Option.orElse(checkHost(request.headers["host"], allowed), () =>
        exemptFromWriteCheck(request.url) ? Option.none() : checkWrite(request.method, request.headers)
      )
      if (Option.isSome(refusal)) return Responses.error(refusal.value.status, refusal.value.message)
      return yield* app
    })
  )
}
