/**
 * Paired devices: the records and the pure rules of pairing a phone with
 * `magi web` when the page is reachable beyond this machine.
 *
 * A device is paired by a one-time code (`magi web pair` prints it and its
 * QR); entering it on the pairing page gives the browser a long-lived cookie
 * `<device id>.<secret>`. Only a hash of the secret is stored, so a copy of
 * the store (a backup, the database) cannot be replayed as a device. A code
 * is stored as its hash too: it is a password for the few minutes it lives.
 *
 * Guessing is bounded store-wide (every `magi web` sharing the store counts
 * the same failures), per client address and overall: after
 * `MAX_FAILED_GUESSES` wrong codes from one address in `GUESS_WINDOW_MS`, or
 * `MAX_FAILED_GUESSES_OVERALL` from all, no code is accepted from there
 * until the window has passed or the owner issues a new code (Guessing.ts).
 */
import { Either, Schema } from "effect"
import * as NodeCrypto from "node:crypto"
import { parseVersioned } from "../store/VersionedJson.js"

/** How long a pairing code is good for: long enough to find the phone and scan, short enough that a code left in a scrollback is dead. */
export const CODE_LIFETIME_MS = 10 * 60 * 1000

/**
 * Wrong codes allowed from one client address per window. A code is 40
 * random bits and lives 10 minutes, so 10 guesses per 10 minutes leave a
 * guesser one chance in about 10^11 per code; the owner who mistypes has 9
 * more tries.
 */
export const MAX_FAILED_GUESSES = 10
/**
 * Wrong codes allowed from every address together per window: a guesser
 * with many addresses still has one chance in about 10^10 per code, and one
 * address's guesses never close pairing to the owner at another.
 */
export const MAX_FAILED_GUESSES_OVERALL = 100
export const GUESS_WINDOW_MS = 10 * 60 * 1000

/**
 * How often a device's "last used" is written: once a minute is enough for a
 * person to tell a phone in use from a lost one, and the page makes a
 * request every few seconds.
 */
export const LAST_USED_EVERY_MS = 60 * 1000

/** The cookie that carries `<device id>.<secret>`. */
export const COOKIE_NAME = "magi_device"

/**
 * The cookie's lifetime: 400 days, the most Chromium keeps one for; a paired
 * phone stays paired until revoked, and each visit could only renew it that far.
 */
export const COOKIE_MAX_AGE_SECS = 400 * 24 * 60 * 60

/** Longest device name: a name is for the owner's list, not a note. */
export const NAME_MAX_CHARS = 64

/** Crockford's base32: no I, L, O, U, so a code read aloud or retyped has no look-alikes. */
const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

/** Characters in a code: 8 × 5 bits = 40 random bits. */
export const CODE_CHARS = 8

export const DEVICE_SCHEMA = 1

export const Device = Schema.Struct({
  schema: Schema.Literal(DEVICE_SCHEMA),
  id: Schema.String,
  name: Schema.String,
  /** sha256 of the cookie's secret, hex. */
  secret_sha256: Schema.String,
  paired_at: Schema.Number,
  last_used_at: Schema.Number
})
export type Device = typeof Device.Type

export const PairingCode = Schema.Struct({
  schema: Schema.Literal(DEVICE_SCHEMA),
  /** The code's hash (hex, shortened): the record's id, so a lookup needs no listing and the code is not stored. */
  id: Schema.String,
  expires_at: Schema.Number,
  /** When it was used, and by which device; null while it is still good. */
  used_at: Schema.NullOr(Schema.Number),
  used_by: Schema.NullOr(Schema.String)
})
export type PairingCode = typeof PairingCode.Type

/** The store-wide count of wrong codes in the current window. */
export const Guesses = Schema.Struct({
  schema: Schema.Literal(DEVICE_SCHEMA),
  /** `GUESSES_ID` for every address together, `Guessing.addressGuessesId` for one. */
  id: Schema.String,
  window_start: Schema.Number,
  failures: Schema.Number
})
export type Guesses = typeof Guesses.Type

export const GUESSES_ID = "guesses"

const decoder = <A, I>(schema: Schema.Schema<A, I>, noun: string) => (body: string, source: string): Either.Either<A, { readonly message: string }> => {
  const decode = Schema.decodeUnknownEither(schema, { onExcessProperty: "error" })
  return Either.flatMap(
    parseVersioned(body, source, DEVICE_SCHEMA, () => `${noun} ${source}`),
    (raw) => Either.mapLeft(decode(raw), (e) => ({ message: `${source} is not a ${noun} magi can read: ${e.message}` }))
  )
}

export const decodeDevice = decoder(Device, "paired device")
export const decodeCode = decoder(PairingCode, "pairing code")
export const decodeGuesses = decoder(Guesses, "pairing guess count")
export const encode = (record: unknown): string => JSON.stringify(record, null, 2) + "\n"

const sha256 = (text: string) => NodeCrypto.createHash("sha256").update(text).digest("hex")

/** A new code, as shown: `ABCD-EFGH`. */
export const newCode = (): string => {
  const bytes = NodeCrypto.randomBytes(CODE_CHARS)
  // 256 is a multiple of 32: taking each byte mod 32 is uniform.
  const chars = [...bytes].map((b) => ALPHABET[b % ALPHABET.length]!)
  return `${chars.slice(0, 4).join("")}-${chars.slice(4).join("")}`
}

/**
 * A code as typed, to its canonical characters: case, spaces and dashes
 * ignored, and the letters Crockford reads as digits (O, I, L) read so.
 * Undefined when it cannot be a code at all.
 */
export const normalizeCode = (typed: string): string | undefined => {
  const plain = typed
    .toUpperCase()
    .replace(/[\s-]/g, "")
    .replace(/O/g, "0")
    .replace(/[IL]/g, "1")
  if (plain.length !== CODE_CHARS || [...plain].some((c) => !ALPHABET.includes(c))) return undefined
  return plain
}

/** A code's record id: its hash, never the code. */
export const codeId = (code: string): string => sha256(`magi-pairing-code:${normalizeCode(code) ?? code}`).slice(0, 32)

/** A new device's id and the secret its cookie carries. */
export const newSecret = (): { readonly id: string; readonly secret: string } => ({
  id: NodeCrypto.randomBytes(8).toString("hex"),
  secret: NodeCrypto.randomBytes(32).toString("base64url")
})

export const secretHash = (secret: string): string => sha256(`magi-device-secret:${secret}`)

/** The cookie's value for a device. */
export const cookieValue = (id: string, secret: string): string => `${id}.${secret}`

/** `<id>.<secret>` apart, or undefined when it is not of that shape. */
export const parseCookieValue = (value: string): { readonly id: string; readonly secret: string } | undefined => {
  const m = /^([0-9a-f]{16})\.([A-Za-z0-9_-]{43})$/.exec(value)
  return m === null ? undefined : { id: m[1]!, secret: m[2]! }
}

/** Does `secret` match the stored hash? Compared in constant time. */
export const secretMatches = (device: Device, secret: string): boolean => {
  const want = Buffer.from(device.secret_sha256, "hex")
  const got = Buffer.from(secretHash(secret), "hex")
  return want.length === got.length && NodeCrypto.timingSafeEqual(want, got)
}

/** The value of cookie `name` in a `Cookie` header. */
export const cookieFrom = (header: string | undefined, name: string = COOKIE_NAME): string | undefined => {
  for (const part of (header ?? "").split(";")) {
    const eq = part.indexOf("=")
    if (eq < 0) continue
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim()
  }
  return undefined
}

/** The `Set-Cookie` for a paired device: HttpOnly, SameSite=Strict, Secure when the page is reached over HTTPS. */
export const setCookie = (value: string, secure: boolean): string =>
  `${COOKIE_NAME}=${value}; Path=/; Max-Age=${COOKIE_MAX_AGE_SECS}; HttpOnly; SameSite=Strict${secure ? "; Secure" : ""}`

/** A name as the owner typed it, or why it will not do. */
export const checkName = (typed: string): Either.Either<string, string> => {
  // Control characters never reach a terminal's `magi web devices`.
  const name = typed.replace(/[\p{Cc}\p{Cf}]/gu, "").trim()
  if (name === "") return Either.left("give this device a name (e.g. `phone`), so you can tell it apart and revoke it")
  if (name.length > NAME_MAX_CHARS) return Either.left(`a device name is at most ${NAME_MAX_CHARS} characters`)
  return Either.right(name)
}

/** Why a code is refused, or none: it is good now. */
export const codeRefusal = (code: PairingCode, now: number): string | undefined => {
  if (code.used_at !== null) return "this pairing code was used already; run `magi web pair` for a new one"
  if (now >= code.expires_at) return "this pairing code has expired; run `magi web pair` for a new one"
  return undefined
}

/** The guess count as it is now: a window that has passed starts again from nothing. */
export const currentGuesses = (stored: Guesses | undefined, now: number, id: string = GUESSES_ID): Guesses =>
  stored === undefined || now - stored.window_start >= GUESS_WINDOW_MS
    ? { schema: DEVICE_SCHEMA, id: stored?.id ?? id, window_start: now, failures: 0 }
    : stored

/** When guessing is closed: the time it opens again; none while a guess is allowed. */
export const guessingClosedUntil = (guesses: Guesses, now: number, limit: number = MAX_FAILED_GUESSES): number | undefined => {
  const current = currentGuesses(guesses, now)
  return current.failures >= limit ? current.window_start + GUESS_WINDOW_MS : undefined
}

/** One more wrong code counted. */
export const withFailure = (guesses: Guesses | undefined, now: number, id: string = GUESSES_ID): Guesses => {
  const current = currentGuesses(guesses, now, id)
  return { ...current, failures: current.failures + 1 }
}
