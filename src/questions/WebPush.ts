/**
 * Web Push: a question sent to the phones whose installed page pressed
 * "Notify this phone", through their browsers' own push services, with
 * buttons (at most two: what phones show) that answer through the same
 * capability links as ntfy's.
 *
 * The payload is built here as data (`payload`, pure); encrypting it to the
 * subscription's keys (RFC 8291, aes128gcm) and signing the VAPID header
 * (RFC 8292) is the `web-push` library's work (`generateRequestDetails`);
 * the request itself goes through Effect's HttpClient, so a push service's
 * answer is read like any other and a test can stand one in on 127.0.0.1.
 *
 * The VAPID key pair identifies this installation to the push services: a
 * subscription is made for its public key, so the pair is made once and
 * kept, a file in the home (0600) or, when the records are in PostgreSQL,
 * one record there shared by every host (as `AnswerLinks.secretShared`).
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { Data, Duration, Effect, Either, Layer, Option, Schema } from "effect"
import * as NodePath from "node:path"
import { createAtomically } from "../store/files/AtomicFile.js"
import * as Postgres from "../store/postgres/Postgres.js"
import * as RecordStore from "../store/RecordStore.js"
import * as StoreBackend from "../store/StoreBackend.js"
import type { PushSubscription } from "../devices/PushSubscription.js"
import { serviceOf } from "../devices/PushSubscription.js"
import * as Q from "./Question.js"

/** `<home>/web-push-vapid.json`: the VAPID key pair, readable by the owner alone. */
export const VAPID_FILE = "web-push-vapid.json"

const SHARED_KEY_ID = "vapid"

/** Phones show two action buttons on a notification (Chrome on Android shows two; desktop Chrome as many). */
export const MAX_ACTIONS = 2

/** A button's label, cut so the phone shows it whole. */
export const LABEL_MAX_CHARS = 40

/**
 * A push service takes 4096 bytes of encrypted payload; the record's
 * overhead is 103, and two tokens with the ids take under 700. The summary
 * is cut so the whole stays well inside.
 */
const BODY_MAX_CHARS = 1500

/**
 * How long a push service keeps a message for a phone that is off: a day.
 * A question that waits longer is still on the page; a notification days
 * old is more likely noise than help.
 */
export const TTL_SECS = 24 * 60 * 60

/** A push service that has not answered in this long is given up on for this question; the others still go. */
export const SEND_TIMEOUT = Duration.seconds(20)

export class VapidUnavailable extends Data.TaggedError("VapidUnavailable")<{ readonly message: string }> {}

export interface VapidKeys {
  /** The uncompressed P-256 public key, base64url: what a page subscribes with (`applicationServerKey`). */
  readonly publicKey: string
  readonly privateKey: string
}

const StoredKeys = Schema.Struct({ publicKey: Schema.String, privateKey: Schema.String })

const valid = (keys: VapidKeys) => /^[A-Za-z0-9_-]{87}$/.test(keys.publicKey) && /^[A-Za-z0-9_-]{43}$/.test(keys.privateKey)

/**
 * The library, loaded when a push is first made or sent: it and its
 * ASN.1 and big-number code are not what every `magi` start should pay for.
 */
const library = Effect.promise(() => import("web-push")).pipe(Effect.map((m) => m.default))

const fresh = Effect.map(library, (lib): VapidKeys => {
  const made = lib.generateVAPIDKeys()
  return { publicKey: made.publicKey, privateKey: made.privateKey }
})

/**
 * This home's key pair, made on first use: created 0600 and linked into
 * place (never replacing one already there), then read back, so two
 * processes making one at once both use the one that landed.
 */
export const vapidKeys = Effect.fn("WebPush.vapidKeys")(function* (homeDir: string) {
  const fs = yield* FileSystem.FileSystem
  const path = NodePath.join(homeDir, VAPID_FILE)
  const unavailable = (e: { readonly message: string }) => new VapidUnavailable({ message: `cannot read or make the Web Push key pair ${path}: ${e.message}` })
  if (!(yield* fs.exists(path).pipe(Effect.mapError(unavailable))))
    yield* createAtomically(path, JSON.stringify(yield* fresh) + "\n", { durable: true, mode: 0o600 }).pipe(Effect.mapError(unavailable))
  const text = yield* fs.readFileString(path).pipe(Effect.mapError(unavailable))
  const keys = Schema.decodeUnknownEither(Schema.parseJson(StoredKeys))(text)
  if (Either.isLeft(keys) || !valid(keys.right))
    return yield* new VapidUnavailable({
      message: `the Web Push key pair ${path} is not one magi made; remove it and magi makes a new one (every phone then presses "Notify this phone" again)`
    })
  return keys.right satisfies VapidKeys
})

const SharedKeys = Schema.Struct({ id: Schema.Literal(SHARED_KEY_ID), publicKey: Schema.String, privateKey: Schema.String })
type SharedKeys = typeof SharedKeys.Type

/** The shared pair's kind: one record, never migrated (a new store makes its own, and phones subscribe again). */
const keyRecords: StoreBackend.KindShape<SharedKeys> = {
  folder: "web-push-vapid",
  kind: {
    noun: "Web Push key pair",
    decode: (body, source) =>
      Either.mapLeft(
        Schema.decodeUnknownEither(Schema.parseJson(SharedKeys))(body),
        (e) => ({ message: `${source} is not a Web Push key pair: ${e.message}` })
      ),
    encode: (record) => JSON.stringify(record) + "\n",
    idOf: (record) => record.id,
    maxBytes: 1024
  }
}

/** The database's pair once read, by store URL: it never changes while magi runs. */
const sharedKeys = new Map<string, VapidKeys>()

/** The installation's pair: in the database when the records are there (every host pushes as one), else the home's file. */
export const vapidKeysShared = Effect.fn("WebPush.vapidKeysShared")(function* (homeDir: string, storeUrl: Option.Option<string>) {
  if (Option.isNone(storeUrl)) return yield* vapidKeys(homeDir)
  const known = sharedKeys.get(storeUrl.value)
  if (known !== undefined) return known
  const fs = yield* FileSystem.FileSystem
  const keys = yield* Effect.gen(function* () {
    const records = yield* StoreBackend.recordsOf(keyRecords)
    // Exactly one creation wins; every racer reads the one that did.
    yield* records.create({ id: SHARED_KEY_ID, ...(yield* fresh) })
    const stored = yield* records.read(SHARED_KEY_ID)
    const pair = { publicKey: stored.publicKey, privateKey: stored.privateKey }
    if (!valid(pair))
      return yield* new VapidUnavailable({ message: "the Web Push key pair in the database is not one magi made; delete its record and magi makes a new one" })
    return pair
  }).pipe(
    Effect.provide(Layer.unwrapEffect(Effect.map(Postgres.parseUrl(storeUrl.value), StoreBackend.StoreBackend.postgres))),
    Effect.provideService(FileSystem.FileSystem, fs),
    Effect.catchIf(RecordStore.isFailure, (e) => Effect.fail(new VapidUnavailable({ message: `cannot read or make the Web Push key pair: ${e.message}` }))),
    Effect.catchTags({
      StoreUnavailable: (e) => Effect.fail(new VapidUnavailable({ message: `cannot read or make the Web Push key pair: ${e.message}` })),
      StoreUrlInvalid: (e) => Effect.fail(new VapidUnavailable({ message: `cannot read or make the Web Push key pair: ${e.message}` }))
    })
  )
  sharedKeys.set(storeUrl.value, keys)
  return keys
})

/** Web Push is offered only where the page is reached over HTTPS: browsers give push only to a secure page, and a phone's page is not on localhost. */
export const offered = (publicUrl: string | null): boolean => publicUrl !== null && publicUrl.trim().toLowerCase().startsWith("https://")

/** What the service worker (`src/web/ServiceWorker.ts`) receives: plain data, shown as text, never markup. */
export interface Payload {
  readonly v: 1
  readonly title: string
  readonly body: string
  /** The question's id: the notification's tag (a second push for it replaces the first) and the card a tap opens. */
  readonly question: string
  /** One per choice when there are at most `MAX_ACTIONS`: the label shown and the capability token it sends. */
  readonly actions: ReadonlyArray<{ readonly title: string; readonly token: string }>
}

const cut = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max - 1)}…`)

/**
 * The push for a question: its summary and its choices in full (the
 * notification shows what a button will send), and a button per choice
 * when there are at most two and tokens were made; a notice has none.
 */
export const payload = (input: {
  readonly question: Q.Question
  readonly tokens: ReadonlyArray<string> | undefined
  readonly notice: boolean
}): Payload => {
  const q = input.question
  const choices = input.notice || q.choices.length === 0 ? "" : `\n${q.choices.map((c, i) => `${i + 1}. ${c}`).join("\n")}`
  const title = cut(input.notice ? `magi notice · ${q.run}` : `magi asks · ${q.run === "" ? Q.shortId(q.id) : q.run}`, 120)
  const tokens = input.tokens
  const answering = !input.notice && Q.isOpen(q) && tokens !== undefined && q.choices.length > 0 && q.choices.length <= MAX_ACTIONS
  return {
    v: 1,
    title,
    body: cut(`${q.summary}${choices}`, BODY_MAX_CHARS),
    question: q.id,
    actions: answering ? q.choices.map((choice, i) => ({ title: cut(choice, LABEL_MAX_CHARS), token: tokens[i]! })) : []
  }
}

/** How one push went: delivered, or the subscription is gone (the push service said 404 or 410), or failed. */
export type Sent =
  | { readonly _tag: "Delivered" }
  | { readonly _tag: "Gone" }
  | { readonly _tag: "Failed"; readonly message: string }

/**
 * Push `body` to one subscription: encrypted to its keys, signed as this
 * installation (`subject`: the page's https address, which the push service
 * may use to reach its owner). Never fails: how it went is the value.
 */
export const send = (input: {
  readonly subscription: PushSubscription
  readonly body: Payload
  readonly keys: VapidKeys
  readonly subject: string
}): Effect.Effect<Sent, never, HttpClient.HttpClient> =>
  Effect.gen(function* () {
    const service = serviceOf(input.subscription.endpoint)
    const lib = yield* library
    const details = yield* Effect.try({
      try: () =>
        lib.generateRequestDetails(
          { endpoint: input.subscription.endpoint, keys: { p256dh: input.subscription.p256dh, auth: input.subscription.auth } },
          JSON.stringify(input.body),
          {
            vapidDetails: { subject: input.subject, publicKey: input.keys.publicKey, privateKey: input.keys.privateKey },
            TTL: TTL_SECS,
            // A question holds an agent up: delivered at once, not batched for the battery.
            urgency: "high"
          }
        ),
      catch: (e) => `could not encrypt a push for ${service}: ${e instanceof Error ? e.message : String(e)}`
    })
    const headers: Record<string, string> = {}
    for (const [name, value] of Object.entries(details.headers)) if (name.toLowerCase() !== "content-length") headers[name] = String(value)
    const request = HttpClientRequest.post(details.endpoint).pipe(
      HttpClientRequest.setHeaders(headers),
      HttpClientRequest.bodyUint8Array(details.body as Buffer, "application/octet-stream")
    )
    const response = yield* (yield* HttpClient.HttpClient).execute(request).pipe(
      Effect.timeoutFail({ duration: SEND_TIMEOUT, onTimeout: () => `the push service ${service} did not answer within ${Duration.format(SEND_TIMEOUT)}` }),
      Effect.mapError((e) => (typeof e === "string" ? e : `could not reach the push service ${service}: ${e.message}`))
    )
    if (response.status === 404 || response.status === 410) return { _tag: "Gone" } satisfies Sent
    if (response.status < 200 || response.status >= 300) {
      // display: the body of a failed response, quoted in its error
      const text = yield* response.text.pipe(Effect.orElseSucceed(() => ""))
      return {
        _tag: "Failed",
        message: `the push service ${service} answered ${response.status}: ${cut(text.trim(), 200) || "no reason given"}`
      } satisfies Sent
    }
    return { _tag: "Delivered" } satisfies Sent
  }).pipe(
    Effect.scoped,
    // fallback: a failed push is its outcome, returned to the caller
    Effect.catchAll((message) => Effect.succeed<Sent>({ _tag: "Failed", message }))
  )
