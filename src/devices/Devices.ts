/**
 * The paired devices and the pairing codes, on the configured backend (the
 * home folder or PostgreSQL), so every `magi web` sharing a store knows the
 * same phones, accepts the same codes once, and counts the same wrong
 * guesses. The rules are `Device.ts`'s; this is the reading and writing.
 */
import { Clock, Effect, Either, Option, Schema } from "effect"
import type * as RecordStore from "../store/RecordStore.js"
import * as StoreBackend from "../store/StoreBackend.js"
import * as Device from "./Device.js"
import * as Guessing from "./Guessing.js"
import * as PushSubscription from "./PushSubscription.js"

export class DeviceNotFound extends Schema.TaggedError<DeviceNotFound>()("DeviceNotFound", {
  message: Schema.String
}) {}

/**
 * Why a pairing was refused: `closed` (too many wrong codes lately),
 * `wrong` (no such code), `spent` (used or expired), `name` (the name will
 * not do, or another device has it).
 */
export class PairingRefused extends Schema.TaggedError<PairingRefused>()("PairingRefused", {
  reason: Schema.Literal("closed", "wrong", "spent", "name"),
  message: Schema.String
}) {}

/** Largest record read: a name and a few hashes. */
const RECORD_MAX_BYTES = 16 * 1024

/** The paired devices' folder in the home, and their key in the database. */
export const DEVICES_FOLDER = "devices"
/** The pairing codes and the guess count; short-lived, so not migrated between stores. */
export const PAIRING_FOLDER = "pairing"

/** The device kind, as `StoreBackend.records` and `magi store migrate` take a kind. */
export const deviceRecords: StoreBackend.KindShape<Device.Device> = {
  folder: DEVICES_FOLDER,
  kind: { noun: "paired device", decode: Device.decodeDevice, encode: Device.encode, idOf: (d) => d.id, maxBytes: RECORD_MAX_BYTES }
}

const codeRecords: StoreBackend.KindShape<Device.PairingCode> = {
  folder: PAIRING_FOLDER,
  kind: { noun: "pairing code", decode: Device.decodeCode, encode: Device.encode, idOf: (c) => c.id, maxBytes: RECORD_MAX_BYTES }
}

const guessRecords: StoreBackend.KindShape<Device.Guesses> = {
  folder: `${PAIRING_FOLDER}-guesses`,
  kind: { noun: "pairing guess count", decode: Device.decodeGuesses, encode: Device.encode, idOf: (g) => g.id, maxBytes: RECORD_MAX_BYTES }
}

/** The Web Push subscriptions, one per browser that asked to be notified. */
export const PUSH_FOLDER = "push-subscriptions"

export const pushRecords: StoreBackend.KindShape<PushSubscription.PushSubscription> = {
  folder: PUSH_FOLDER,
  kind: {
    noun: "push subscription",
    decode: PushSubscription.decode,
    encode: Device.encode,
    idOf: (s) => s.id,
    maxBytes: RECORD_MAX_BYTES
  }
}

export interface Issued {
  readonly code: string
  readonly expiresAt: number
}

export interface Paired {
  readonly device: Device.Device
  /** The cookie's value: shown to nobody, set on the browser that paired. */
  readonly cookie: string
}

export interface DevicesShape {
  /** A new one-time code, good for `Device.CODE_LIFETIME_MS`. */
  readonly issueCode: Effect.Effect<Issued, RecordStore.Failure>
  /** Pair a device named `name` with the code typed from `address` (Guessing.clientAddress); the cookie to set. */
  readonly pair: (typedCode: string, name: string, address: string) => Effect.Effect<Paired, PairingRefused | RecordStore.Failure>
  /** The paired device a cookie's value names, its last use noted; none for anything else (revoked, forged, malformed). */
  readonly authenticate: (cookie: string | undefined) => Effect.Effect<Option.Option<Device.Device>>
  /** Every paired device, most recently used first. */
  readonly list: Effect.Effect<ReadonlyArray<Device.Device>, RecordStore.Failure>
  /** Unpair the device of this name (or id): its cookie is refused from the next request on, and its push subscriptions go. */
  readonly revoke: (nameOrId: string) => Effect.Effect<Device.Device, DeviceNotFound | RecordStore.Failure>
  /** Keep `subscription` for `device` (none on a page that needs no pairing), replacing this browser's earlier one. */
  readonly subscribe: (
    device: Option.Option<Device.Device>,
    subscription: { readonly endpoint: string; readonly p256dh: string; readonly auth: string }
  ) => Effect.Effect<PushSubscription.PushSubscription, RecordStore.Failure>
  /** Every push subscription, oldest first. */
  readonly subscriptions: Effect.Effect<ReadonlyArray<PushSubscription.PushSubscription>, RecordStore.Failure>
  /** Stop pushing to one subscription (by its id); nothing when it is gone already. */
  readonly unsubscribe: (id: string) => Effect.Effect<void, RecordStore.Failure>
}

/** On the configured backend. */
export class Devices extends Effect.Service<Devices>()("magi/Devices", {
  effect: Effect.suspend(() => make)
}) {
  static layer = Devices.Default
}

export const make = Effect.gen(function* () {
  const devices = yield* StoreBackend.recordsOf(deviceRecords)
  const codes = yield* StoreBackend.recordsOf(codeRecords)
  const guesses = yield* StoreBackend.recordsOf(guessRecords)
  const pushes = yield* StoreBackend.recordsOf(pushRecords)

  const subscriptions = Effect.map(pushes.scan, (s) => [...s.records].sort((a, b) => a.created_at - b.created_at))

  const subscribe = (device: Option.Option<Device.Device>, sub: { readonly endpoint: string; readonly p256dh: string; readonly auth: string }) =>
    Effect.gen(function* () {
      const record: PushSubscription.PushSubscription = {
        schema: Device.DEVICE_SCHEMA,
        id: PushSubscription.subscriptionId(sub.endpoint),
        device: Option.match(device, { onNone: () => null, onSome: (d) => d.id }),
        endpoint: sub.endpoint,
        p256dh: sub.p256dh,
        auth: sub.auth,
        created_at: yield* Clock.currentTimeMillis
      }
      yield* pushes.put(record)
      return record
    })

  const unsubscribe = (id: string) => Effect.flatMap(pushes.exists(id), (there) => (there ? pushes.remove(id) : Effect.void))

  const readOption = <A, E>(read: Effect.Effect<A, E>, exists: Effect.Effect<boolean, E>) =>
    Effect.flatMap(exists, (there) => (there ? Effect.map(read, Option.some) : Effect.succeed(Option.none<A>())))

  const list = Effect.map(devices.scan, (s) => [...s.records].sort((a, b) => b.last_used_at - a.last_used_at))

  /** Codes whose time is over, removed when a new one is made: they are never accepted again anyway. */
  const sweepCodes = (now: number) =>
    Effect.flatMap(codes.scan, (s) =>
      Effect.forEach(
        s.records.filter((c) => now >= c.expires_at),
        (c) => codes.remove(c.id),
        { discard: true }
        // fallback: best-effort tidy of expired pairing codes
      )).pipe(Effect.ignore)

  /** Every guess count gone: a new code is guessed at from nothing (Guessing.ts says why). */
  const clearGuesses = Effect.flatMap(
    guesses.scan,
    (s) =>
      Effect.forEach(s.records, (g) => guesses.withLock(g.id, Effect.flatMap(guesses.exists(g.id), (there) => (there ? guesses.remove(g.id) : Effect.void))), {
        discard: true
      })
  )

  const issueCode = Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    yield* sweepCodes(now)
    yield* clearGuesses
    for (;;) {
      const code = Device.newCode()
      const expiresAt = now + Device.CODE_LIFETIME_MS
      const created = yield* codes.create({
        schema: Device.DEVICE_SCHEMA,
        id: Device.codeId(code),
        expires_at: expiresAt,
        used_at: null,
        used_by: null
      })
      if (created) return { code, expiresAt } satisfies Issued
    }
  })

  const readGuesses = (id: string) => Effect.map(readOption(guesses.read(id), guesses.exists(id)), Option.getOrUndefined)

  /** `body` holding every counter's lock, in the order given (the same for every guess, so no two wait on each other). */
  const holdingAll = <B, E>(counters: ReadonlyArray<Guessing.Counter>, body: Effect.Effect<B, E>): Effect.Effect<B, E | RecordStore.Failure> =>
    counters.reduceRight<Effect.Effect<B, E | RecordStore.Failure>>((inner, c) => guesses.withLock(c.id, inner), body)

  /** Check the limits and count this guess as wrong, in one locked step; the counts as written. */
  const reserveGuess = (counters: ReadonlyArray<Guessing.Counter>, now: number) =>
    holdingAll(
      counters,
      Effect.gen(function* () {
        const stored = yield* Effect.forEach(counters, (c) => readGuesses(c.id))
        const reserved = Guessing.reserve(counters, stored, now)
        if (reserved._tag === "Closed")
          return yield* refuse(
            "closed",
            `too many wrong pairing codes lately${reserved.overall ? "" : " from this address"}; pairing is closed until ${
              new Date(reserved.until).toISOString().slice(11, 16)
            } UTC, or until \`magi web pair\` gives a new code`
          )
        yield* Effect.forEach(reserved.next, (g) => guesses.put(g), { discard: true })
        return reserved.next
      })
    )

  /** A guess that was no guess (the right code) given back. */
  const refundGuess = (counters: ReadonlyArray<Guessing.Counter>, counted: ReadonlyArray<Device.Guesses>) =>
    holdingAll(
      counters,
      Effect.forEach(counters, (c, i) =>
        Effect.flatMap(readGuesses(c.id), (stored) => {
          const back = Guessing.refund(stored, counted[i]!)
          return back === undefined ? Effect.void : guesses.put(back)
        }), { discard: true })
    )

  const refuse = (reason: PairingRefused["reason"], message: string) => Effect.fail(new PairingRefused({ reason, message }))

  const pair = (typedCode: string, typedName: string, address: string) =>
    Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const name = Device.checkName(typedName)
      if (Either.isLeft(name)) return yield* refuse("name", name.left)
      const counters = Guessing.countersFor(address)
      const counted = yield* reserveGuess(counters, now)
      const code = Device.normalizeCode(typedCode)
      const id = code === undefined ? undefined : Device.codeId(code)
      if (id === undefined || !(yield* codes.exists(id)))
        return yield* refuse("wrong", "that is not a pairing code magi gave: check it against the code `magi web pair` printed")
      const paired = yield* codes.withLock(
        id,
        Effect.gen(function* () {
          const record = yield* codes.read(id)
          const spent = Device.codeRefusal(record, now)
          if (spent !== undefined) return yield* refuse("spent", spent)
          const taken = (yield* list).some((d) => d.name.toLowerCase() === name.right.toLowerCase())
          if (taken) return Option.none<Paired>()
          const fresh = Device.newSecret()
          // The code is spent before the device exists: whatever fails after
          // this, the code cannot pair a second device.
          yield* codes.put({ ...record, used_at: now, used_by: fresh.id })
          const device: Device.Device = {
            schema: Device.DEVICE_SCHEMA,
            id: fresh.id,
            name: name.right,
            secret_sha256: Device.secretHash(fresh.secret),
            paired_at: now,
            last_used_at: now
          }
          yield* devices.put(device)
          return Option.some<Paired>({ device, cookie: Device.cookieValue(fresh.id, fresh.secret) })
        })
      )
      // The right code was no guess, paired or not (a name in use is the
      // owner's slip). Given back after the code's lock, whose transaction a
      // refusal would roll back on PostgreSQL.
      yield* refundGuess(counters, counted)
      if (Option.isNone(paired)) return yield* refuse("name", `a device named \`${name.right}\` is paired already; pick another name`)
      return paired.value
    })

  const authenticate = (cookie: string | undefined) =>
    Effect.gen(function* () {
      const parts = cookie === undefined ? undefined : Device.parseCookieValue(cookie)
      if (parts === undefined) return Option.none<Device.Device>()
      // Read on every request, never remembered: a revoked device is refused
      // from its very next request, by every `magi web` on the store.
      const device = yield* devices.read(parts.id).pipe(Effect.option)
      if (Option.isNone(device) || !Device.secretMatches(device.value, parts.secret)) return Option.none<Device.Device>()
      const now = yield* Clock.currentTimeMillis
      if (now - device.value.last_used_at >= Device.LAST_USED_EVERY_MS)
        // Revoked in between: the update finds no record and writes nothing.
        // fallback: last_used_at is a hint for the owner; a failed stamp changes nothing else
        yield* devices.update(parts.id, (d) => Either.right({ ...d, last_used_at: Math.max(d.last_used_at, now) })).pipe(Effect.ignore)
      return device
    })

  const revoke = (nameOrId: string) =>
    Effect.gen(function* () {
      const all = yield* list
      const wanted = nameOrId.trim().toLowerCase()
      const found = all.find((d) => d.name.toLowerCase() === wanted) ?? all.find((d) => d.id === wanted)
      if (found === undefined)
        return yield* new DeviceNotFound({
          message: all.length === 0
            ? `no device is paired, so none is named \`${nameOrId}\``
            : `no paired device is named \`${nameOrId}\`; paired: ${all.map((d) => d.name).join(", ")}`
        })
      yield* devices.remove(found.id)
      // Its phone is told nothing more: a revoked device's lock screen is no place for questions.
      const theirs = (yield* subscriptions).filter((s) => s.device === found.id)
      yield* Effect.forEach(theirs, (s) => unsubscribe(s.id), { discard: true })
      return found
    })

  return { issueCode, pair, authenticate, list, revoke, subscribe, subscriptions, unsubscribe } satisfies DevicesShape
})
