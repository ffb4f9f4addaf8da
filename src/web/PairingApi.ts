/**
 * Pairing a device, and the list of paired ones: the pairing page (`/pair`,
 * with its own small script, since the app's is for paired devices), its
 * API (`POST /api/pair`), and `GET /api/devices` / `DELETE /api/devices/:id`
 * for the page's Devices section. Whether a device must pair at all is
 * `Bind.reachableBeyondLoopback`; the refusal of an unpaired one is
 * `Security.guard`'s.
 */
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect, Option, Schema } from "effect"
import * as Device from "../devices/Device.js"
import * as Guessing from "../devices/Guessing.js"
import { Devices, type DeviceNotFound, type PairingRefused } from "../devices/Devices.js"
import type * as RecordStore from "../store/RecordStore.js"
import { type BadBody, type BodyTooLarge, bodyAs, failure as bodyFailure, storeFailure } from "./Api.js"
import { PAGE_CSP } from "./Page.js"
import * as Responses from "./Responses.js"

type PairingError = BadBody | BodyTooLarge | PairingRefused | RecordStore.Failure | DeviceNotFound

const STATUS: Record<PairingRefused["reason"], number> = {
  // Too many wrong codes: a client may try again later.
  closed: 429,
  wrong: 403,
  // The code existed, and is used or expired.
  spent: 410,
  name: 400
}

const failure = (e: PairingError) => {
  switch (e._tag) {
    case "BadBody":
    case "BodyTooLarge":
      return bodyFailure(e)
    case "PairingRefused":
      return Responses.error(STATUS[e.reason], e.message)
    case "DeviceNotFound":
      return Responses.error(404, e.message)
    case "RecordNotFound":
    case "RecordUnreadable":
    case "NewerSchema":
    case "StoreFailed":
    case "LockBusy":
    case "UnsafeId":
      return storeFailure(e)
  }
}

/**
 * Was the request made over HTTPS? Either the browser says so (the page's
 * `Origin`) or the proxy in front of magi does (`X-Forwarded-Proto`, as
 * Tailscale's `serve` and common reverse proxies send). Then the cookie is
 * `Secure`; over plain HTTP a browser would drop a `Secure` cookie.
 */
const overHttps = (headers: Readonly<Record<string, string | undefined>>) =>
  (headers["origin"] ?? "").startsWith("https://") || (headers["x-forwarded-proto"] ?? "").split(",")[0]!.trim() === "https"

const PairBody = Schema.Struct({ code: Schema.String, name: Schema.String })

const pair = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const body = yield* bodyAs(PairBody, '{"code": "ABCD-EFGH", "name": "phone"}')
  const address = Guessing.clientAddress(Option.getOrUndefined(request.remoteAddress), request.headers["x-forwarded-for"])
  const paired = yield* (yield* Devices).pair(body.code, body.name, address)
  return Responses.json({ name: paired.device.name, id: paired.device.id }).pipe(
    HttpServerResponse.setHeader("set-cookie", Device.setCookie(paired.cookie, overHttps(request.headers)))
  )
  // display: the request's failure becomes its HTTP response
}).pipe(Effect.catchAll(failure))

const list = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const devices = yield* Devices
  const current = yield* devices.authenticate(Device.cookieFrom(request.headers["cookie"]))
  const all = yield* devices.list
  return Responses.json({
    devices: all.map((d) => ({
      id: d.id,
      name: d.name,
      paired_at: new Date(d.paired_at).toISOString(),
      last_used_at: new Date(d.last_used_at).toISOString(),
      this_device: Option.isSome(current) && current.value.id === d.id
    }))
  })
  // display: the request's failure becomes its HTTP response
}).pipe(Effect.catchAll(failure))

const revoke = Effect.gen(function* () {
  const id = (yield* HttpRouter.params)["id"] ?? ""
  const gone = yield* (yield* Devices).revoke(id)
  return Responses.json({ revoked: gone.name })
  // display: the request's failure becomes its HTTP response
}).pipe(Effect.catchAll(failure))

const HEADERS = {
  "content-security-policy": PAGE_CSP,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store"
}

/**
 * The pairing page. The code may arrive in the address's fragment
 * (`/pair#code=ABCD-EFGH`, what the QR holds): a fragment is never sent to
 * a server, so the code stays out of any proxy's access log.
 */
const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1, viewport-fit=cover">
<meta name="color-scheme" content="light dark">
<title>magi: pair this device</title>
<link rel="icon" href="/icon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/app.css">
<script type="module" src="/pair.js"></script>
</head>
<body>
<main class="pairing">
<h1>Pair this device</h1>
<p class="muted">This magi answers only devices paired with it. On the machine running magi, run <code>magi web pair</code> and enter the code it prints (or scan its QR code).</p>
<form id="pair">
<label>Code <input id="code" name="code" autocomplete="one-time-code" autocapitalize="characters" spellcheck="false" required placeholder="ABCD-EFGH"></label>
<label>Name of this device <input id="name" name="name" maxlength="${Device.NAME_MAX_CHARS}" required placeholder="phone"></label>
<button type="submit">Pair</button>
</form>
<p id="result" role="alert"></p>
</main>
</body>
</html>
`

const SCRIPT = `const form = document.getElementById("pair")
const code = document.getElementById("code")
const nameInput = document.getElementById("name")
const result = document.getElementById("result")
// The QR's link carries the code in the fragment; taken, then dropped from
// the address (and the history) so it is not left lying about.
const takeCode = () => {
  const fromHash = new URLSearchParams(location.hash.slice(1)).get("code")
  if (!fromHash) return
  code.value = fromHash
  history.replaceState(null, "", location.pathname)
  nameInput.focus()
}
takeCode()
addEventListener("hashchange", takeCode)
form.addEventListener("submit", async (event) => {
  event.preventDefault()
  result.textContent = "Pairing…"
  try {
    const response = await fetch("/api/pair", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ code: code.value, name: nameInput.value })
    })
    const body = await response.json()
    if (!response.ok) {
      // magi's sentences put a command in backticks: shown as code, never the backticks.
      const parts = String(body.error || "pairing failed").split(String.fromCharCode(96))
      result.replaceChildren(...parts.map((part, i) => {
        if (i % 2 === 0) return document.createTextNode(part)
        const code = document.createElement("code")
        code.textContent = part
        return code
      }))
      return
    }
    result.textContent = "Paired as " + body.name + "."
    location.replace("/")
  } catch (e) {
    result.textContent = "magi did not answer: " + e
  }
})
`

export const router = HttpRouter.empty.pipe(
  HttpRouter.get("/pair", HttpServerResponse.text(PAGE, { contentType: "text/html; charset=utf-8", headers: HEADERS })),
  HttpRouter.get("/pair.js", HttpServerResponse.text(SCRIPT, { contentType: "text/javascript; charset=utf-8", headers: HEADERS })),
  HttpRouter.post("/api/pair", pair),
  HttpRouter.get("/api/devices", list),
  HttpRouter.del("/api/devices/:id", revoke)
)
