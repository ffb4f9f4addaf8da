/**
 * Hosts: the machines sharing one store. A worktree and an agent's CLI
 * session exist on one machine only, while questions, answers and tasks
 * belong to the whole installation, so each loop (`magi serve`, or `magi
 * web` running the waiter) says which host it is:
 *
 * - **the name is claimed** (`hosts/<name>`, `Claims` on the configured
 *   backend: one row on PostgreSQL, which every host sees), so two live loops
 *   calling themselves one host are impossible: the second is refused, rather
 *   than two daemons resuming one host's seats;
 * - **the host's record** (`hosts/<name>`, a record kind on `StoreBackend`)
 *   says what it is (magi version, the repositories it can run, its turn
 *   capacity) and when it was last seen; it stays when the host goes, so
 *   "offline since …" can be said of it;
 * - both are renewed every `HEARTBEAT` on Effect's Clock; a host whose beats
 *   stop for `STALE_AFTER` is offline (on its own machine a dead pid is known
 *   at once, so a restart there is let in straight away).
 */
import * as FileSystem from "@effect/platform/FileSystem"
import { Clock, Data, Duration, Effect, Either, Option, Schedule, Schema, type Scope, Stream } from "effect"
import * as NodeOs from "node:os"
import { defaults, MagiConfig } from "./MagiConfig.js"
import type * as RecordStore from "../store/RecordStore.js"
import * as StoreBackend from "../store/StoreBackend.js"
import * as ConfiguredStore from "./ConfiguredStore.js"
import { isNewerSchema, type NewerSchema, parseVersioned } from "../store/VersionedJson.js"
import { VERSION } from "./Version.js"

/** How often a host says it is alive. */
export const HEARTBEAT = Duration.seconds(5)

/** Six missed heartbeats: the host is gone, not just slow (as the home's own loop claim). */
export const STALE_AFTER = Duration.seconds(30)

export const HOST_SCHEMA = 1

export const HostRecord = Schema.Struct({
  schema: Schema.Number,
  name: Schema.String,
  /** The magi version the host runs. */
  version: Schema.String,
  /** The machine's own hostname and the loop's pid there. */
  machine: Schema.String,
  pid: Schema.Number,
  /** The repository names it can run (`[repos]`). */
  repos: Schema.Array(Schema.String),
  /** `[host] max_turns`. */
  max_turns: Schema.Number,
  /** Agent turns it runs now, and turns waiting for room. */
  turns: Schema.optionalWith(Schema.Number, { default: () => 0 }),
  queued: Schema.optionalWith(Schema.Number, { default: () => 0 }),
  /** The turns waiting for room, by run, and how many turns are ahead of each. */
  waiting: Schema.optionalWith(
    Schema.Array(Schema.Struct({ run: Schema.String, question: Schema.optional(Schema.String), ahead: Schema.Number })),
    { default: () => [] }
  ),
  started_at: Schema.String,
  seen_at: Schema.String,
  /** Set when the loop stopped in order; a host killed never says so, and is judged by `seen_at`. */
  stopped_at: Schema.optional(Schema.String),
  /**
   * False when a page-only `magi web` (`--no-loop`) speaks for the host: the
   * machine is up, but no loop runs there (no waiter, no queue), so its
   * runs wait for one. Older records, all written by loops, are true.
   */
  loop: Schema.optionalWith(Schema.Boolean, { default: () => true }),
  /** On a page's record: when the host's loop was last heard from, if it ever ran. */
  loop_seen_at: Schema.optional(Schema.String)
})
export type HostRecord = typeof HostRecord.Type

/** A host as the page and `magi hosts` show it. */
export type HostView = HostRecord & {
  readonly online: boolean
  /** When it was last heard from (its last beat, or its orderly stop). */
  readonly last_seen: string
}

export class HostError extends Data.TaggedError("HostError")<{ readonly message: string; readonly cause?: unknown }> {}

/** Another live loop holds this host's name. */
export class HostTaken extends Data.TaggedError("HostTaken")<{ readonly name: string; readonly pid: number; readonly message: string }> {}

const decodeStrict = Schema.decodeUnknownEither(HostRecord, { onExcessProperty: "ignore", errors: "first" })

export const decode = (body: string, source: string): Either.Either<HostRecord, HostError | NewerSchema> =>
  parseVersioned(body, source, HOST_SCHEMA, () => `host ${source}`).pipe(
    Either.mapLeft((e) => (isNewerSchema(e) ? e : new HostError({ message: e.message }))),
    Either.flatMap((raw) => Either.mapLeft(decodeStrict(raw), (e) => new HostError({ message: `${source} is not a host record magi can read: ${e.message}` })))
  )

export const encode = (host: HostRecord): string => JSON.stringify(host, null, 2) + "\n"

/** The host kind, as `StoreBackend.records` takes it. */
export const hostRecords: StoreBackend.KindShape<HostRecord> = {
  folder: "hosts",
  kind: { noun: "host", decode, encode, idOf: (h: HostRecord) => h.name, maxBytes: 64 * 1024 }
}

/** The name's claim: stale once its beats stop for `STALE_AFTER`. */
const NAME_CLAIM = { ttl: STALE_AFTER } as const

/** Online: heard from within `STALE_AFTER`, and not stopped in order since. */
export const viewOf = (host: HostRecord, nowMs: number): HostView => {
  const seen = Date.parse(host.seen_at)
  const online = host.stopped_at === undefined && Number.isFinite(seen) && nowMs - seen <= Duration.toMillis(STALE_AFTER)
  return { ...host, online, last_seen: host.stopped_at ?? host.seen_at }
}

/**
 * "host buildbox offline since 2026-…", or nothing when `name`'s loop is
 * online (or unknown: a run from before hosts). A host whose page alone is
 * up runs no loop, so for its runs it is as offline as a host that is down.
 */
export const offlineWords = (hosts: ReadonlyArray<HostView>, name: string | undefined): string | undefined => {
  if (name === undefined) return undefined
  const host = hosts.find((h) => h.name === name)
  if (host === undefined || (host.online && host.loop)) return undefined
  if (!host.online) return `host ${name} offline since ${host.last_seen}`
  return host.loop_seen_at === undefined
    ? `host ${name} runs no magi serve (only its page is up)`
    : `host ${name} offline since ${host.loop_seen_at} (only its page is up)`
}

/** "queued behind 3 turns on buildbox" for a run whose turn waits for room on its host, else nothing. */
export const queuedWords = (hosts: ReadonlyArray<HostView>, run: string): string | undefined => {
  for (const h of hosts) {
    if (!h.online) continue
    const w = h.waiting.find((x) => x.run === run)
    if (w !== undefined) return `queued behind ${w.ahead} turn${w.ahead === 1 ? "" : "s"} on ${h.name}`
  }
  return undefined
}

/** Every question whose answer waits for room on an online host to be resumed, with its words: what question cards are rendered with. */
export const queuedQuestions = (hosts: ReadonlyArray<HostView>): ReadonlyMap<string, string> => {
  const found = new Map<string, string>()
  for (const h of hosts)
    if (h.online) {
      for (const w of h.waiting)
        if (w.question !== undefined && !found.has(w.question)) found.set(w.question, `queued behind ${w.ahead} turn${w.ahead === 1 ? "" : "s"} on ${h.name}`)
    }
  return found
}

/**
 * "queued behind 3 turns on buildbox" for a question whose answer waits for
 * room on its host to be resumed, else nothing: what `magi answer ID` says.
 */
export const queuedForQuestion = (hosts: ReadonlyArray<HostView>, question: string): string | undefined => queuedQuestions(hosts).get(question)

/** What this host's loop says of itself beside its beat. */
export interface Load {
  readonly turns: number
  readonly queued: number
  readonly waiting: ReadonlyArray<{ readonly run: string; readonly question?: string; readonly ahead: number }>
}

export interface Registered {
  readonly name: string
  /** Write the record now (after the load changed). */
  readonly refresh: Effect.Effect<void>
  /** Never succeeds; fails when the name was taken over while this loop was not beating (paused past `STALE_AFTER`). */
  readonly lost: Effect.Effect<never, HostTaken>
}

export interface HostsShape {
  /** This process's host name (`[host] name`). */
  readonly self: string
  /** Claim the name and beat for the rest of the scope; refused when another live loop has it. */
  readonly register: (load?: Effect.Effect<Load>) => Effect.Effect<Registered, HostTaken | HostError | RecordStore.Failed, Scope.Scope>
  /**
   * Say, for the rest of the scope, that this host is up with a page (`magi
   * web`) and maybe no loop: every beat in which no live loop holds the
   * name, the host's record is written as the page's (no repositories, no
   * turns, `loop: false`). It claims nothing, so a `magi serve` starting
   * here is not refused; that loop's record replaces the page's at once.
   */
  readonly registerPage: Effect.Effect<void, never, Scope.Scope>
  /** Every host that ever registered on this store, by name. */
  readonly list: Effect.Effect<ReadonlyArray<HostView>, RecordStore.Failed>
  /** Moves whenever a host's record is written (a beat, a turn queued or started). */
  readonly revision: Effect.Effect<number>
  /** Names of hosts whose record another process wrote, as the database notifies them; none on the file backend. */
  readonly changes: Stream.Stream<string>
}

export class Hosts extends Effect.Service<Hosts>()("magi/Hosts", {
  effect: Effect.suspend(() => make()),
  dependencies: [ConfiguredStore.layer]
}) {
  static layer = Hosts.Default
}

const iso = (ms: number) => new Date(ms).toISOString()

export const make = Effect.fn("Hosts.make")(function* () {
  // A process without a config of its own (a page served in a test) reads the hosts as the defaults' host.
  const config = Option.getOrElse(yield* Effect.serviceOption(MagiConfig), () => defaults)
  const records = yield* StoreBackend.recordsOf(hostRecords)
  const claims = yield* StoreBackend.claims("hosts", ".claim")
  const fs = yield* FileSystem.FileSystem
  const name = config.hostName

  const list = Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    const { records: all } = yield* records.scan
    return [...all].sort((a, b) => a.name.localeCompare(b.name)).map((h) => viewOf(h, now))
  })

  const register = (load: Effect.Effect<Load> = Effect.succeed({ turns: 0, queued: 0, waiting: [] })) =>
    Effect.gen(function* () {
      const startedAt = iso(yield* Clock.currentTimeMillis)
      const recordNow = (stopped: boolean) =>
        Effect.gen(function* () {
          const now = iso(yield* Clock.currentTimeMillis)
          const { turns, queued, waiting } = yield* load
          const record: HostRecord = {
            schema: HOST_SCHEMA,
            name,
            version: VERSION,
            machine: NodeOs.hostname(),
            pid: process.pid,
            repos: Object.keys(config.repos).sort(),
            max_turns: config.maxTurns,
            turns,
            queued,
            waiting,
            started_at: startedAt,
            seen_at: now,
            ...(stopped ? { stopped_at: now } : {}),
            loop: true
          }
          yield* records.put(record)
        })
      const got = yield* claims.acquire(name, NAME_CLAIM, { started_at: startedAt }).pipe(
        Effect.mapError((e) => new HostError({ message: e.message, cause: e }))
      )
      if (Either.isLeft(got)) {
        const other = got.left
        return yield* new HostTaken({
          name,
          pid: other.owner.pid,
          message: `host name ${name} is taken by another live magi loop (pid ${other.owner.pid} on ${other.owner.host || "another machine"}); ` +
            "each machine sharing the store needs a name of its own: set `[host] name` in its config"
        })
      }
      const mine = got.right
      yield* recordNow(false)
      // fallback: best-effort last record on the way out; the claim is released after it
      yield* Effect.addFinalizer(() => Effect.zipRight(recordNow(true).pipe(Effect.ignore), claims.release(mine)))
      const takenOver = new HostTaken({
        name,
        pid: 0,
        message: `another magi loop took the host name ${name} over while this one was not beating (paused?); this one stops`
      })
      const beat = Effect.gen(function* () {
        // display: a renewal that failed is logged; the claim's own expiry decides
        const still = yield* claims.renew(mine).pipe(Effect.catchAll((e) => Effect.as(Effect.logWarning(`could not renew host ${name}: ${e.message}`), true)))
        if (!still) return yield* takenOver
        // display: a host record that cannot be written is logged
        yield* recordNow(false).pipe(Effect.catchAll((e) => Effect.logWarning(`could not record host ${name}: ${e.message}`)))
      })
      const beating = yield* Effect.forkScoped(Effect.repeat(beat, Schedule.spaced(HEARTBEAT)).pipe(Effect.delay(HEARTBEAT)))
      return {
        name,
        // fallback: a refresh that failed is retried at the next beat
        refresh: recordNow(false).pipe(Effect.ignore),
        lost: Effect.flatMap(beating.await, () => Effect.fail(takenOver))
      } satisfies Registered
    }).pipe(Effect.provideService(FileSystem.FileSystem, fs))

  /**
   * The page's record, written only while no live loop holds the name; on
   * the way out (`stopped`), only over a record that is still this page's.
   * A loop that takes the name between the look and the write has its
   * record replaced until its next beat (`HEARTBEAT`), no longer.
   */
  const pageRecord = (startedAt: string, stopped: boolean) =>
    Effect.gen(function* () {
      if (Option.isSome(yield* claims.holder(name, NAME_CLAIM))) return
      const before = yield* Effect.option(records.read(name))
      const machine = NodeOs.hostname()
      const mine = (b: HostRecord) => !b.loop && b.pid === process.pid && b.machine === machine
      if (stopped && Option.exists(before, (b) => !mine(b))) return
      const loopSeen = Option.flatMap(before, (b) => (b.loop ? Option.some(b.stopped_at ?? b.seen_at) : Option.fromNullable(b.loop_seen_at)))
      const now = iso(yield* Clock.currentTimeMillis)
      yield* records.put({
        schema: HOST_SCHEMA,
        name,
        version: VERSION,
        machine,
        pid: process.pid,
        repos: [],
        max_turns: 0,
        turns: 0,
        queued: 0,
        waiting: [],
        started_at: startedAt,
        seen_at: now,
        loop: false,
        ...(Option.isSome(loopSeen) ? { loop_seen_at: loopSeen.value } : {}),
        ...(stopped ? { stopped_at: now } : {})
      })
      // display: a host record that cannot be written is logged
    }).pipe(Effect.catchAll((e) => Effect.logWarning(`could not record host ${name}: ${e.message}`)))

  const registerPage = Effect.gen(function* () {
    const startedAt = iso(yield* Clock.currentTimeMillis)
    yield* pageRecord(startedAt, false)
    yield* Effect.addFinalizer(() => pageRecord(startedAt, true))
    yield* Effect.forkScoped(Effect.repeat(pageRecord(startedAt, false), Schedule.spaced(HEARTBEAT)).pipe(Effect.delay(HEARTBEAT)))
  }).pipe(Effect.provideService(FileSystem.FileSystem, fs))

  const backend = yield* StoreBackend.StoreBackend
  const changes = StoreBackend.changesAcrossHosts(hostRecords.folder).pipe(
    Stream.provideService(StoreBackend.StoreBackend, backend),
    Stream.provideService(FileSystem.FileSystem, fs)
  )
  return { self: name, register, registerPage, list, revision: records.revision, changes } satisfies HostsShape
})
