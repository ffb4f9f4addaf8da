/**
 * The shapes every response of the API takes, so a refusal reads the same
 * whichever layer refused: JSON `{"error": "…"}` carrying the message the store
 * or the transition gave, because the owner reads it on the phone.
 */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"

/**
 * API answers describe the store at this instant; a phone that caches one
 * shows a question as open after it was answered.
 */
const NO_STORE = { "cache-control": "no-store" }

export const json = (body: unknown, status = 200) =>
  HttpServerResponse.text(JSON.stringify(body), {
    status,
    contentType: "application/json; charset=utf-8",
    headers: NO_STORE
  })

/**
 * A JSON body already serialised (the cached question list), gzipped when
 * the client accepts it. `Vary` keeps any cache in between from handing the
 * gzipped bytes to a client that did not ask for them.
 */
export const jsonBytes = (
  body: Uint8Array,
  gzipped: Uint8Array,
  acceptEncoding: string | undefined,
  /** The body's entity tag, and the request's `If-None-Match`. */
  conditional?: { readonly etag: string; readonly ifNoneMatch: string | undefined }
) => {
  const headers = conditional === undefined ? NO_STORE : { ...NO_STORE, etag: conditional.etag }
  // The client has these very bytes (it says so by their tag): nothing to send.
  if (conditional !== undefined && matchesTag(conditional.ifNoneMatch, conditional.etag))
    return HttpServerResponse.empty({ status: 304, headers: { ...headers, vary: "accept-encoding" } })
  return acceptsGzip(acceptEncoding)
    ? HttpServerResponse.uint8Array(gzipped, {
      contentType: "application/json; charset=utf-8",
      headers: { ...headers, "content-encoding": "gzip", vary: "accept-encoding" }
    })
    : HttpServerResponse.uint8Array(body, {
      contentType: "application/json; charset=utf-8",
      headers: { ...headers, vary: "accept-encoding" }
    })
}

/** `If-None-Match` names `etag` (or is `*`); a weak tag (`W/"…"`) matches its strong twin, as RFC 9110 compares for GET. */
export const matchesTag = (header: string | undefined, etag: string): boolean =>
  (header ?? "")
    .split(",")
    .map((t) => t.trim().replace(/^W\//, ""))
    .some((t) => t === "*" || t === etag)

/** `gzip` listed in `Accept-Encoding` and not refused with `q=0`. */
export const acceptsGzip = (header: string | undefined): boolean =>
  (header ?? "").split(",").some((part) => {
    const [coding, ...params] = part.trim().toLowerCase().split(";")
    if (coding !== "gzip" && coding !== "*") return false
    return !params.some((p) => /^\s*q=0(\.0*)?\s*$/.test(p))
  })

export const error = (status: number, message: string) => json({ error: message }, status)
