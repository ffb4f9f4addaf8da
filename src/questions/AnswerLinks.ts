/**
 * Capability links: a token that allows exactly one thing, answering one
 * question with one of its choices, so a notification's button can answer
 * without the page, a cookie or a login.
 *
 * A token is `v1.<payload>.<mac>`: the payload names the question, the
 * choice (by its place in the choice set), a digest of the whole choice set
 * and an expiry; the mac is HMAC-SHA256 of it under a secret only this home
 * holds. Forging one needs the secret; changing any part breaks the mac.
 * The digest makes a token die when the agent replies with other choices
 * (index 1 of the new set is not what the button said), and the expiry is
 * when the question can no longer be answered (`expiryFor`). Being used once
 * needs no bookkeeping: a question is answered once, so a second press finds
 * it settled.
 *
 * The rules here are pure (`mint`, `verify`); the secret is the only I/O,
 * made on first use so that two processes racing to make it agree on one:
 * a file in the home (0600, created atomically), or, when the records are
 * in PostgreSQL, one record there (`secretShared`), since the host whose
 * `magi ask` sent the button and the `magi web` that takes the press may be
 * different machines.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import { Data, Effect, Either, Layer, Option, Schema } from "effect"
import * as NodeCrypto from "node:crypto"
import * as NodePath from "node:path"
import { createAtomically } from "../store/files/AtomicFile.js"
import * as Postgres from "../store/postgres/Postgres.js"
import * as RecordStore from "../store/RecordStore.js"
import * as StoreBackend from "../store/StoreBackend.js"

/** `<home>/answer-links.key`: the HMAC secret, hex, readable by the owner alone. */
export const SECRET_FILE = "answer-links.key"

/** The one record holding the key on a shared store. */
const SHARED_KEY_ID = "answer-links"

/** 32 random bytes: HMAC-SHA256's own block of strength; nothing gains from more. */
const SECRET_BYTES = 32

/** Separates this use of the secret from any other one it may be given later. */
const MAC_CONTEXT = "magi answer link v1\n"

const VERSION = "v1"

/** What a valid token allows. */
export interface Claim {
  readonly question: string
  /** The choice's place in the set the token was made for. */
  readonly index: number
  /** The digest of that set (`choicesDigest`). */
  readonly digest: string
  /** When the token stops working, in ms since the epoch. */
  readonly expiresAt: number
}

/**
 * Why a token was refused before any question was read. The message is
 * what the person pressing sees; it never repeats the token.
 */
export class LinkRefused extends Data.TaggedError("LinkRefused")<{
  readonly reason: "malformed" | "forged" | "expired"
  readonly message: string
}> {}

export class SecretUnavailable extends Data.TaggedError("SecretUnavailable")<{ readonly message: string }> {}

const b64url = (bytes: Buffer) => bytes.toString("base64url")

/**
 * The digest of a choice set, order included: the same labels in another
 * order put a different choice under the same index.
 */
export const choicesDigest = (choices: ReadonlyArray<string>): string =>
  b64url(NodeCrypto.createHash("sha256").update(JSON.stringify(choices)).digest()).slice(0, 22)

const mac = (secret: Buffer, payload: string) => NodeCrypto.createHmac("sha256", secret).update(MAC_CONTEXT + payload).digest()

/**
 * The least a token lives: a day, what a push service keeps a message for a
 * phone that is off. A token is no wider for living longer: it answers only
 * its question, only while that question is open with the same choices, and
 * only once; the expiry is the backstop for a question that stays open.
 */
export const MIN_LIFETIME_MS = 24 * 60 * 60 * 1000

/** Hosts sharing a PostgreSQL store may disagree on the time by this much; a press at the deadline is not refused for it. */
export const CLOCK_GRACE_MS = 5 * 60 * 1000

/**
 * When a token sent at `now` for a question due at `deadlineMs` stops
 * working. Not the deadline itself: the deadline moves (a turn on the thread
 * starts its clock again, a question with no timeout of its own takes
 * `[ask] answer_timeout`, which the waiting host may have set otherwise
 * than the sending one), and a button must not die while the question it
 * answers is still open. The later of the deadline and a day from now,
 * with a grace for clocks: a question past that is answered on the page.
 */
export const expiryFor = (deadlineMs: number, now: number): number => Math.max(deadlineMs, now + MIN_LIFETIME_MS) + CLOCK_GRACE_MS

/** A token allowing `question` to be answered with `choices[index]` until `expiresAt`. */
export const mint = (
  secret: Buffer,
  input: { readonly question: string; readonly choices: ReadonlyArray<string>; readonly index: number; readonly expiresAt: number }
): string => {
  const payload = b64url(
    Buffer.from(
      JSON.stringify({ q: input.question, i: input.index, h: choicesDigest(input.choices), e: Math.floor(input.expiresAt / 1000) }),
      "utf8"
    )
  )
  return `${VERSION}.${payload}.${b64url(mac(secret, payload))}`
}

/** The longest token looked at: an id, an index, a digest and a time fit in a fraction of this. */
const TOKEN_MAX_CHARS = 1024

const malformed = () =>
  new LinkRefused({ reason: "malformed", message: "this answer link is not one magi made (it is cut short or altered); open the page to answer" })

/**
 * What `token` allows at `now`, or why not: malformed, forged (the mac does
 * not match this home's secret), or expired. The mac is compared in
 * constant time and checked before the payload is even parsed, so a forger
 * learns nothing from which refusal comes back.
 */
export const verify = (secret: Buffer, token: string, now: number): Either.Either<Claim, LinkRefused> => {
  if (token.length > TOKEN_MAX_CHARS) return Either.left(malformed())
  const parts = token.split(".")
  if (parts.length !== 3 || parts[0] !== VERSION) return Either.left(malformed())
  const [, payload, given] = parts as [string, string, string]
  if (!/^[A-Za-z0-9_-]+$/.test(payload) || !/^[A-Za-z0-9_-]{43}$/.test(given)) return Either.left(malformed())
  const expected = mac(secret, payload)
  const presented = Buffer.from(given, "base64url")
  if (presented.length !== expected.length || !NodeCrypto.timingSafeEqual(presented, expected))
    return Either.left(
      new LinkRefused({ reason: "forged", message: "this answer link was not made by this magi (or its key was replaced); open the page to answer" })
    )
  let raw: unknown
  try {
    raw = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"))
  } catch {
    return Either.left(malformed())
  }
  if (typeof raw !== "object" || raw === null) return Either.left(malformed())
  const { q, i, h, e } = raw as Record<string, unknown>
  if (typeof q !== "string" || typeof h !== "string" || !Number.isInteger(i) || (i as number) < 0 || typeof e !== "number")
    return Either.left(malformed())
  if (now >= e * 1000)
    return Either.left(
      new LinkRefused({ reason: "expired", message: "this answer link has expired; open the page to see where its question stands" })
    )
  return Either.right({ question: q, index: i as number, digest: h, expiresAt: e * 1000 })
}

/**
 * This home's secret, made on first use. Created with 0600 and linked into
 * place (never replacing a file already there), then read back: when two
 * processes make one at once, both use the one that landed.
 */
export const secret = Effect.fn("AnswerLinks.secret")(function* (homeDir: string) {
  const fs = yield* FileSystem.FileSystem
  const path = NodePath.join(homeDir, SECRET_FILE)
  const unavailable = (e: { readonly message: string }) => new SecretUnavailable({ message: `cannot read or make the answer-link key ${path}: ${e.message}` })
  const exists = yield* fs.exists(path).pipe(Effect.mapError(unavailable))
  if (!exists)
    yield* createAtomically(path, NodeCrypto.randomBytes(SECRET_BYTES).toString("hex") + "\n", { durable: true, mode: 0o600 }).pipe(
      Effect.mapError(unavailable)
    )
  const text = (yield* fs.readFileString(path).pipe(Effect.mapError(unavailable))).trim()
  if (!/^[0-9a-f]{64}$/.test(text))
    return yield* new SecretUnavailable({
      message: `the answer-link key ${path} is not 64 hex digits; remove it and magi makes a new one (old links stop working)`
    })
  return Buffer.from(text, "hex")
})

/** The key as one record on a shared store: `{ "id": "answer-links", "key": "<64 hex>" }`. */
const StoredKey = Schema.Struct({ id: Schema.Literal(SHARED_KEY_ID), key: Schema.String })
type StoredKey = typeof StoredKey.Type

/** The shared key's kind: one record, never migrated (a new store makes its own, and older links stop working). */
const keyRecords: StoreBackend.KindShape<StoredKey> = {
  folder: "answer-links",
  kind: {
    noun: "answer-link key",
    decode: (body, source) =>
      Either.mapLeft(Schema.decodeUnknownEither(Schema.parseJson(StoredKey))(body), (e) => ({ message: `${source} is not an answer-link key: ${e.message}` })),
    encode: (record) => JSON.stringify(record) + "\n",
    idOf: (record) => record.id,
    maxBytes: 1024
  }
}

/** The database's key once read, by store URL: it never changes while magi runs. */
const sharedKeys = new Map<string, Buffer>()

/**
 * The installation's secret: in the database when the records are there
 * (`storeUrl`, as `ConfiguredStore.configuredUrl` gives it: every host signs
 * and checks with the one key), else this home's file.
 */
export const secretShared = Effect.fn("AnswerLinks.secretShared")(function* (homeDir: string, storeUrl: Option.Option<string>) {
  if (Option.isNone(storeUrl)) return yield* secret(homeDir)
  const known = sharedKeys.get(storeUrl.value)
  if (known !== undefined) return known
  const fs = yield* FileSystem.FileSystem
  const key = yield* Effect.gen(function* () {
    const records = yield* StoreBackend.recordsOf(keyRecords)
    // Exactly one creation wins; every racer reads the one that did.
    yield* records.create({ id: SHARED_KEY_ID, key: NodeCrypto.randomBytes(SECRET_BYTES).toString("hex") })
    const stored = yield* records.read(SHARED_KEY_ID)
    if (!/^[0-9a-f]{64}$/.test(stored.key))
      return yield* new SecretUnavailable({ message: "the answer-link key in the database is not 64 hex digits; delete its record and magi makes a new one" })
    return Buffer.from(stored.key, "hex")
  }).pipe(
    // The database named, not whatever this process's environment names.
    Effect.provide(Layer.unwrapEffect(Effect.map(Postgres.parseUrl(storeUrl.value), StoreBackend.StoreBackend.postgres))),
    Effect.provideService(FileSystem.FileSystem, fs),
    Effect.catchIf(RecordStore.isFailure, (e) => Effect.fail(new SecretUnavailable({ message: `cannot read or make the answer-link key: ${e.message}` }))),
    Effect.catchTags({
      StoreUnavailable: (e) => Effect.fail(new SecretUnavailable({ message: `cannot read or make the answer-link key: ${e.message}` })),
      StoreUrlInvalid: (e) => Effect.fail(new SecretUnavailable({ message: `cannot read or make the answer-link key: ${e.message}` }))
    })
  )
  sharedKeys.set(storeUrl.value, key)
  return key
})
