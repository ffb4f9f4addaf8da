/**
 * A Web Push subscription: where a browser's push service takes messages for
 * one installed page (the endpoint) and the keys its payloads are encrypted
 * to (RFC 8291). One is kept per browser that pressed "Notify this phone",
 * tied to the paired device that made it, so it is listed with that device
 * and goes when the device is revoked.
 *
 * The record's id is a hash of the endpoint: the same browser subscribing
 * again replaces its record instead of adding a second, and the endpoint
 * (a bearer address: whoever holds it can push to the phone) is not in a
 * file name.
 */
import { Either, Schema } from "effect"
import * as NodeCrypto from "node:crypto"
import * as NodeNet from "node:net"
import { DEVICE_SCHEMA } from "./Device.js"
import { parseVersioned } from "../store/VersionedJson.js"

export const PushSubscription = Schema.Struct({
  schema: Schema.Literal(DEVICE_SCHEMA),
  id: Schema.String,
  /** The paired device whose page subscribed; null on a page that needs no pairing (loopback only). */
  device: Schema.NullOr(Schema.String),
  endpoint: Schema.String,
  /** The browser's P-256 public key, base64url (65 bytes, uncompressed). */
  p256dh: Schema.String,
  /** The browser's 16-byte authentication secret, base64url. */
  auth: Schema.String,
  created_at: Schema.Number
})
export type PushSubscription = typeof PushSubscription.Type

/** An endpoint is an address, and a long one at most a few hundred characters; this bounds what is kept. */
export const ENDPOINT_MAX_CHARS = 2048

const P256_PUBLIC_BYTES = 65
const AUTH_BYTES = 16

export const subscriptionId = (endpoint: string): string => NodeCrypto.createHash("sha256").update(`magi-push-endpoint:${endpoint}`).digest("hex").slice(0, 32)

const isLoopbackHost = (hostname: string) => {
  const host = hostname.replace(/^\[|\]$/g, "")
  return host === "localhost" || (NodeNet.isIPv4(host) && host.startsWith("127.")) || host === "::1"
}

const b64urlBytes = (text: string): Buffer | undefined => (/^[A-Za-z0-9_-]+={0,2}$/.test(text) ? Buffer.from(text, "base64url") : undefined)

/**
 * What a browser's `PushSubscription.toJSON()` gave, checked: an https
 * endpoint (a push service on this very machine may be plain http, which
 * is what lets a test stand one in), a P-256 point and a 16-byte secret.
 */
export const check = (input: {
  readonly endpoint: string
  readonly p256dh: string
  readonly auth: string
}): Either.Either<{ readonly endpoint: string; readonly p256dh: string; readonly auth: string }, string> => {
  if (input.endpoint.length > ENDPOINT_MAX_CHARS) return Either.left(`a push endpoint is at most ${ENDPOINT_MAX_CHARS} characters`)
  let url: URL
  try {
    url = new URL(input.endpoint)
  } catch {
    return Either.left("the push endpoint is not an address")
  }
  if (url.protocol !== "https:" && !(url.protocol === "http:" && isLoopbackHost(url.hostname)))
    return Either.left("a push endpoint must be an https address (as every browser's push service gives)")
  const key = b64urlBytes(input.p256dh)
  if (key === undefined || key.length !== P256_PUBLIC_BYTES || key[0] !== 0x04)
    return Either.left("the subscription's p256dh is not a P-256 public key (65 bytes, base64url)")
  const auth = b64urlBytes(input.auth)
  if (auth === undefined || auth.length !== AUTH_BYTES) return Either.left("the subscription's auth is not a 16-byte secret (base64url)")
  return Either.right({ endpoint: url.href === input.endpoint ? input.endpoint : url.href, p256dh: input.p256dh, auth: input.auth })
}

export const decode = (body: string, source: string): Either.Either<PushSubscription, { readonly message: string }> =>
  Either.flatMap(
    parseVersioned(body, source, DEVICE_SCHEMA, () => `push subscription ${source}`),
    (raw) =>
      Either.mapLeft(Schema.decodeUnknownEither(PushSubscription, { onExcessProperty: "error" })(raw), (e) => ({
        message: `${source} is not a push subscription magi can read: ${e.message}`
      }))
  )

/** Where a push service is, for messages: its host, never the whole endpoint (a bearer address). */
export const serviceOf = (endpoint: string): string => {
  try {
    return new URL(endpoint).host
  } catch {
    return "an unknown push service"
  }
}
