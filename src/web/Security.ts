/**
 * The refusals that keep other web pages away from the owner's questions:
 * the owner's own browser is inside any network boundary, and any page it
 * loads can make it send requests here. A write must be JSON and, when the
 * browser stamps `Origin`/`Sec-Fetch-Site`, from this origin (cross-site
 * writes); a `Host` this server was not bound as is refused with 421 before
 * any route runs (DNS rebinding); and beyond loopback every route but the
 * pairing page and the capability links asks for a paired device's cookie
 * (`checkPaired`). Why each, in docs/web.md.
 */
import * as HttpMiddleware from "@effect/platform/HttpMiddleware"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect, Option } from "effect"
import * as Device from "../devices/Device.js"
import type { DevicesShape } from "../devices/Devices.js"
import * as Responses from "./Responses.js"
import { ANSWER_BY_TOKEN_PATH } from "../questions/Ntfy.js"

export interface Refusal {
  readonly status: 401 | 403 | 421
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
    message: `a request for host \`${
      host ?? ""
    }\` is refused: magi web answers only to the address it listens on, localhost and its Tailscale name (DNS rebinding protection)`
  })
}

/** `application/json`, with or without parameters such as `charset`. */
const isJson = (contentType: string | undefined) => contentType !== undefined && contentType.split(";")[0]!.trim().toLowerCase() === "application/json"

/**
 * An image upload's raw bytes (`application/octet-stream`): like JSON, not a
 * type a form or a plain cross-site request can send without the browser
 * asking first, which magi never grants.
 */
const isUpload = (contentType: string | undefined) =>
  contentType !== undefined && contentType.split(";")[0]!.trim().toLowerCase() === "application/octet-stream"

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
  if (!isJson(headers["content-type"]) && !isUpload(headers["content-type"]))
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
export const exemptFromWriteCheck = (url: string): boolean => pathOf(url) === ANSWER_BY_TOKEN_PATH

/** The request's path, without its query. */
const pathOf = (url: string) => {
  const q = url.search(/[?#]/)
  return q < 0 ? url : url.slice(0, q)
}

/**
 * What an unpaired device may still reach: the pairing page itself (with the
 * page's stylesheet and icons, which hold nothing of the owner's) and its
 * API.
 */
export const PAIRING_PATHS: ReadonlySet<string> = new Set([
  "/pair",
  "/pair.js",
  "/api/pair",
  "/app.css",
  "/icon.svg",
  "/icon-192.png",
  "/icon-512.png",
  "/apple-touch-icon.png",
  "/manifest.webmanifest"
])

/**
 * The capability links' routes, open without pairing: a notification's
 * button answers one question with one choice by the token it carries, and
 * that token is all the authority the route grants (a device that can press
 * it was sent it). Every other route keeps asking for a paired device.
 */
export const CAPABILITY_LINK_PREFIXES: ReadonlyArray<string> = ["/api/answer-by-token", "/t/"]

/** May a request for `path` pass without a paired device's cookie? */
export const openWithoutPairing = (path: string): boolean =>
  PAIRING_PATHS.has(path) || CAPABILITY_LINK_PREFIXES.some((prefix) => path === prefix || path.startsWith(prefix.endsWith("/") ? prefix : `${prefix}/`))

/**
 * Refuse a request from a device that is not paired: none when `paired`,
 * or when the path is open without pairing. A page load is sent to the
 * pairing page rather than shown an error (`redirect`).
 */
export const checkPaired = (
  path: string,
  paired: boolean
): Option.Option<Refusal> =>
  paired || openWithoutPairing(path)
    ? Option.none()
    : Option.some({
      status: 401,
      message: "this device is not paired with magi: open /pair and enter the code `magi web pair` prints"
    })

/** A browser loading a page (not a script fetching data), which is better sent to `/pair` than shown JSON. */
const wantsPage = (method: string, accept: string | undefined) => method.toUpperCase() === "GET" && (accept ?? "").includes("text/html")

/**
 * The checks in front of every route, refusals as JSON errors: the host,
 * cross-site writes, and, when `devices` is given (the page is reachable
 * beyond this machine), a paired device.
 */
export const guard = (allowedHosts: ReadonlyArray<string>, devices?: DevicesShape) => {
  const allowed = new Set(allowedHosts.map((h) => h.toLowerCase()))
  return HttpMiddleware.make((app) =>
    Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const refusal = Option.orElse(checkHost(request.headers["host"], allowed), () =>
        exemptFromWriteCheck(request.url) ? Option.none() : checkWrite(request.method, request.headers))
      if (Option.isSome(refusal))
        return Responses.error(refusal.value.status, refusal.value.message)
      if (devices !== undefined) {
        const path = pathOf(request.url)
        if (!openWithoutPairing(path)) {
          const device = yield* devices.authenticate(Device.cookieFrom(request.headers["cookie"]))
          const unpaired = checkPaired(path, Option.isSome(device))
          if (Option.isSome(unpaired))
            return wantsPage(request.method, request.headers["accept"])
              ? HttpServerResponse.empty({ status: 303, headers: { location: "/pair", "cache-control": "no-store" } })
              : Responses.error(unpaired.value.status, unpaired.value.message)
        }
      }
      return yield* app
    })
  )
}
