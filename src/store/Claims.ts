/**
 * Claims: the one service for every "only one process may do this" that
 * lasts longer than a write — a loop running a task, the waiter delivering
 * to a question's seat. A claim has a key, an owner (host, pid, a token of
 * its own) and a staleness rule, and is:
 *
 * - **acquired** when free, or when its holder is stale: no renewal within
 *   the rule's `ttl`, or (on the same host) its process is gone — a dead pid
 *   is known at once on its own machine, so a crashed loop's work is taken
 *   over in seconds, not when the claim expires;
 * - **renewed** by its holder, which learns there if it was taken over
 *   (paused past its ttl) and must stop;
 * - **released** by its holder only: a holder stalled past its claim never
 *   removes the next one's.
 *
 * Two backends keep the same contract (`test/store/ClaimsContract.test.ts`):
 * files in the home (`FileClaim`, judged on the Clock that wrote them) and
 * PostgreSQL rows (judged on the database's clock, the one clock every host
 * shares). The per-record writer lock is the same idea for milliseconds:
 * `RecordLock` on files, an advisory lock on PostgreSQL.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Clock, Context, Data, Duration, Effect, Either, Layer, Option, Random } from "effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import * as FileClaim from "./files/FileClaim.js"
import { writeAtomically } from "./files/AtomicFile.js"
import { sqlWords } from "./postgres/Postgres.js"
import { untilStoreAnswers } from "./StoreWait.js"

/** Who holds a claim. */
export interface Owner {
  /** The machine: a pid means something only there. */
  readonly host: string
  readonly pid: number
}

/** A claim as it stands. */
export interface Holding {
  readonly key: string
  readonly owner: Owner
  /** When the holder last renewed it (ms since the epoch, on the backend's clock). */
  readonly renewedAt: number
  /** What the holder says it is doing, as it last renewed (the daemon's turns in flight). */
  readonly detail: Readonly<Record<string, unknown>>
}

/** What a holder may say beside its claim: plain JSON fields, never the claim's own. */
export type Detail = Readonly<Record<string, unknown>>

/** A claim this process holds: what renew and release need. */
export interface Claim {
  readonly key: string
  readonly token: string
}

/** When a holder counts as gone. */
export interface Staleness {
  /** Stale once this long passes without a renewal. */
  readonly ttl: Duration.DurationInput
}

/** A claim that lasts across machines (a task's turn, the conductor's): when it goes stale, and how often its holder renews it. */
export interface AcrossHosts extends Staleness {
  readonly ttl: Duration.Duration
  readonly renewEvery: Duration.Duration
}

/**
 * The rule for a claim held across machines, from `[host] claim_ttl`
 * (seconds). A dead process on its own host is known at once; a host that
 * went away is known only when its claim expires, so the ttl is how long a
 * task of a killed host waits. Renewed six times a ttl, so five renewals may
 * fail in a row, and at least every 20 s whatever the ttl: another host
 * judges the claim by its own `claim_ttl`, never under 30 s.
 */
export const acrossHosts = (ttlSecs: number): AcrossHosts => ({
  ttl: Duration.seconds(ttlSecs),
  renewEvery: Duration.min(Duration.millis(Math.floor((ttlSecs * 1000) / 6)), Duration.seconds(20))
})

/** The claims backend could not answer; nothing was taken. */
export class ClaimsError extends Data.TaggedError("ClaimsError")<{
  readonly key: string
  readonly message: string
  readonly cause?: unknown
}> {}

export interface ClaimsShape {
  /** Take `key` unless a live holder has it (which is returned instead); a stale holder's claim is taken over. */
  readonly acquire: (key: string, rule: Staleness, detail?: Detail) => Effect.Effect<Either.Either<Claim, Holding>, ClaimsError>
  /** Keep `claim` fresh (saying `detail`, when given); false when it is no longer this holder's (taken over, or gone). */
  readonly renew: (claim: Claim, detail?: Detail) => Effect.Effect<boolean, ClaimsError>
  /** Let go of `claim`; another holder's claim on the same key is left alone. */
  readonly release: (claim: Claim) => Effect.Effect<void>
  /** The live holder of `key` under `rule`, if any. */
  readonly holder: (key: string, rule: Staleness) => Effect.Effect<Option.Option<Holding>, ClaimsError>
}

/** This process, as a claim's owner. */
export const self = (): Owner => ({ host: NodeOs.hostname(), pid: process.pid })

/**
 * Is `pid` a live process on this machine? EPERM means alive but not ours.
 * A zombie (ended, its exit not yet collected, as under an init that is slow
 * to reap orphans) answers the signal but is not alive: told by its state
 * in `/proc`, the kernel's, where there is one.
 */
export const pidAlive = (pid: number): boolean => {
  if (!Number.isInteger(pid) || pid <= 0) return false
  try {
    process.kill(pid, 0)
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM"
  }
  try {
    const stat = NodeFs.readFileSync(`/proc/${pid}/stat`, "utf8")
    return !/^[ZX]/.test(stat.slice(stat.lastIndexOf(")") + 2))
  } catch {
    return true
  }
}

/** Gone on its own machine: a dead pid there needs no ttl to be known. */
const deadHere = (owner: Owner, alive: (pid: number) => boolean = pidAlive) => owner.host === NodeOs.hostname() && !alive(owner.pid)

const newToken = Effect.map(Random.nextIntBetween(0, 2 ** 31), (n) => `${process.pid}-${n.toString(36)}-${Date.now().toString(36)}`)

/**
 * A claim file's content this build cannot read is someone's until it has
 * sat unchanged for its rule's ttl, and never less than this: a create-new
 * caught between create and fill looks the same for an instant.
 */
export const UNREADABLE_GRACE_MS = 10_000

// ---------------------------------------------------------------------------
// Files

interface FileBody {
  readonly host: string
  readonly pid: number
  readonly token: string
  readonly renewed_at: number
  readonly detail: Detail
}

/** The claim's own fields in a claim file; everything else in it is the holder's detail. */
const OWN_FIELDS = new Set(["host", "pid", "token", "renewed_at"])

/** A claim file's content; older formats are read for their pid (a task claim was `<pid>\n`, a delivery claim `{pid, at}`). */
const parseBody = (text: string): Option.Option<FileBody> => {
  const bare = (pid: number): Option.Option<FileBody> => Option.some({ host: NodeOs.hostname(), pid, token: "", renewed_at: Number.NaN, detail: {} })
  try {
    const raw: unknown = JSON.parse(text)
    if (typeof raw === "number" && Number.isInteger(raw)) return bare(raw)
    if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return Option.none()
    const r = raw as Record<string, unknown>
    const pid = typeof r.pid === "number" ? r.pid : Number.NaN
    // The time of the last renewal; older formats said it as `at` (a
    // delivery claim) or `beat_at` (the daemon's record).
    const at = typeof r.renewed_at === "number"
      ? r.renewed_at
      : typeof r.at === "number"
      ? r.at
      : typeof r.beat_at === "string"
      ? Date.parse(r.beat_at)
      : Number.NaN
    if (!Number.isInteger(pid)) return Option.none()
    const detail = Object.fromEntries(Object.entries(r).filter(([k]) => !OWN_FIELDS.has(k)))
    return Option.some({
      host: typeof r.host === "string" ? r.host : NodeOs.hostname(),
      pid,
      token: typeof r.token === "string" ? r.token : "",
      renewed_at: at,
      detail
    })
  } catch {
    const pid = Number(text.trim().split(/\s+/)[0])
    return Number.isInteger(pid) && pid > 0 ? bare(pid) : Option.none()
  }
}

/**
 * Claims as files placed by `pathOf`; `alive` judges a pid on this machine
 * (tests stand in for a crashed process with it).
 */
export const makeFiles = (pathOf: (key: string) => string, alive: (pid: number) => boolean = pidAlive) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const watch = FileClaim.makeWatch()
    const failed = (key: string, what: string) => (e: { readonly message: string }) =>
      new ClaimsError({ key, message: `${what} the claim ${pathOf(key)}: ${e.message}`, cause: e })

    /** Stale under `rule` as seen now; and the holding it shows. */
    const judge = (key: string, seen: FileClaim.There, ttlMs: number) =>
      Effect.gen(function* () {
        const body = parseBody(seen.content)
        // Unreadable (a create-new caught before its content, a hand edit):
        // someone's until it has aged like a claim, by its mtime.
        if (Option.isNone(body))
          return { stale: (yield* watch.ageOf(pathOf(key), seen, seen.mtime)) > Math.max(ttlMs, UNREADABLE_GRACE_MS), holding: Option.none<Holding>() }
        const owner = { host: body.value.host, pid: body.value.pid }
        const dated = Number.isFinite(body.value.renewed_at) ? body.value.renewed_at : seen.mtime
        const holding: Holding = { key, owner, renewedAt: dated, detail: body.value.detail }
        if (deadHere(owner, alive))
          return { stale: true, holding: Option.some(holding) }
        // Written by an older magi (a bare pid, no renewals): its process
        // held it for as long as it lived, so that is how it is judged.
        if (body.value.token === "" && owner.host === NodeOs.hostname())
          return { stale: false, holding: Option.some(holding) }
        return { stale: (yield* watch.ageOf(pathOf(key), seen, dated)) > ttlMs, holding: Option.some(holding) }
      })

    /** The holder's detail first, the claim's own fields last: a detail can never pose as them. */
    const bodyOf = (token: string, now: number, detail: Detail = {}) => JSON.stringify({ ...detail, ...self(), token, renewed_at: now }, null, 2) + "\n"

    /** Tries before a claim that keeps vanishing between the take and the look is reported as held: each needs a release in a window of microseconds. */
    const TAKE_TRIES = 3

    const acquire = (key: string, rule: Staleness, detail?: Detail): Effect.Effect<Either.Either<Claim, Holding>, ClaimsError> =>
      Effect.gen(function* () {
        const path = pathOf(key)
        const ttlMs = Duration.toMillis(rule.ttl)
        const token = yield* newToken
        yield* fs.makeDirectory(NodePath.dirname(path), { recursive: true }).pipe(Effect.mapError(failed(key, "create the folder of")))
        for (let tries = 1;; tries++) {
          const now = yield* Clock.currentTimeMillis
          const took = yield* FileClaim.take(
            fs,
            path,
            bodyOf(token, now, detail),
            (seen) => Effect.map(judge(key, seen, ttlMs), (j) => j.stale),
            watch,
            UNREADABLE_GRACE_MS
          ).pipe(
            Effect.mapError(failed(key, "take"))
          )
          if (took) return Either.right({ key, token })
          const live = yield* holder(key, rule)
          if (Option.isSome(live)) return Either.left(live.value)
          // Released (or judged stale) between the take and the look: try again.
          if (tries >= TAKE_TRIES) return Either.left({ key, owner: { host: "", pid: 0 }, renewedAt: now, detail: {} })
        }
      })

    const mine = (key: string, token: string) =>
      fs.readFileString(pathOf(key)).pipe(
        Effect.map((text) => Option.exists(parseBody(text), (b) => b.token === token)),
        // fallback: a claim file that cannot be looked at is not ours; nothing is removed
        Effect.orElseSucceed(() => false)
      )

    const renew = (claim: Claim, detail?: Detail) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        // fallback: a claim body that cannot be read is no body; the caller then refuses to take it over
        const current = yield* fs.readFileString(pathOf(claim.key)).pipe(Effect.map(parseBody), Effect.orElseSucceed(() => Option.none<FileBody>()))
        if (!Option.exists(current, (b) => b.token === claim.token)) return false
        // A rewrite, not a touch: the new identity tells a breaker that
        // judged the old file that it is gone, so it removes nothing.
        const said = detail ?? Option.getOrElse(Option.map(current, (b) => b.detail), () => ({}))
        yield* writeAtomically(pathOf(claim.key), bodyOf(claim.token, now, said)).pipe(
          Effect.provideService(FileSystem.FileSystem, fs),
          Effect.mapError(failed(claim.key, "renew"))
        )
        // Taken over in the instant between the look and the rewrite: the
        // rewrite replaced the new holder's file, which it finds at its next
        // renewal; this holder learns it now.
        return yield* mine(claim.key, claim.token)
      })

    const release = (claim: Claim) =>
      Effect.gen(function* () {
        // fallback: best-effort release; a claim left behind expires
        if (yield* mine(claim.key, claim.token)) yield* fs.remove(pathOf(claim.key)).pipe(Effect.ignore)
      })

    /** Looks at a claim being rewritten (a renewal) before it is called unsure: each needs a rewrite inside the look. */
    const LOOK_TRIES = 5

    const holder = (key: string, rule: Staleness): Effect.Effect<Option.Option<Holding>, ClaimsError> =>
      Effect.gen(function* () {
        let seen = yield* FileClaim.look(fs, pathOf(key))
        for (let tries = 1; seen._tag === "unsure" && tries < LOOK_TRIES; tries++) {
          yield* Effect.yieldNow()
          seen = yield* FileClaim.look(fs, pathOf(key))
        }
        if (seen._tag === "gone") return Option.none()
        // Changing under every look: someone is at it, so it is not free.
        if (seen._tag === "unsure") return Option.some({ key, owner: { host: "", pid: 0 }, renewedAt: yield* Clock.currentTimeMillis, detail: {} })
        const judged = yield* judge(key, seen, Duration.toMillis(rule.ttl))
        if (judged.stale) return Option.none()
        return Option.some(Option.getOrElse(judged.holding, () => ({ key, owner: { host: "", pid: 0 }, renewedAt: seen.mtime, detail: {} })))
      })

    return { acquire, renew, release, holder } satisfies ClaimsShape
  })

// ---------------------------------------------------------------------------
// PostgreSQL

interface ClaimRow {
  readonly key: string
  readonly host: string
  readonly pid: number
  readonly token: string
  readonly renewed_ms: string
  readonly age_ms: string
  readonly detail: string
}

/** Claims as rows of `magi_claims`, keys prefixed by `namespace/`. */
export const makePostgres = (sql: SqlClient.SqlClient, namespace = "") =>
  Effect.gen(function* () {
    const failed = (key: string, what: string) => (e: SqlError) =>
      new ClaimsError({ key, message: `${what} the claim ${key} in PostgreSQL: ${sqlWords(e)}`, cause: e })

    const detailOf = (text: string): Detail => {
      try {
        const parsed: unknown = JSON.parse(text)
        return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as Detail) : {}
      } catch {
        return {}
      }
    }
    const holdingOf = (row: ClaimRow): Holding => ({
      key: row.key.slice(namespace.length),
      owner: { host: row.host, pid: row.pid },
      renewedAt: Number(row.renewed_ms),
      detail: detailOf(row.detail)
    })
    const rowKey = (key: string) => `${namespace}${key}`

    const current = (key: string) =>
      sql<ClaimRow>`
        SELECT key, host, pid, token, detail,
               (extract(epoch from renewed_at) * 1000)::bigint::text AS renewed_ms,
               (extract(epoch from (now() - renewed_at)) * 1000)::bigint::text AS age_ms
        FROM magi_claims WHERE key = ${rowKey(key)}`.pipe(Effect.map((rows) => Option.fromNullable(rows[0])))

    const staleRow = (row: ClaimRow, ttlMs: number) => Number(row.age_ms) > ttlMs || deadHere({ host: row.host, pid: row.pid })

    const acquire = (key: string, rule: Staleness, detail: Detail = {}): Effect.Effect<Either.Either<Claim, Holding>, ClaimsError> =>
      Effect.gen(function* () {
        const ttlMs = Duration.toMillis(rule.ttl)
        const token = yield* newToken
        const { host, pid } = self()
        const said = JSON.stringify(detail)
        // Free, or stale by the database's clock: one statement decides, so
        // of two takers exactly one gets the row.
        const took = yield* sql`
          INSERT INTO magi_claims (key, host, pid, token, renewed_at, detail) VALUES (${rowKey(key)}, ${host}, ${pid}, ${token}, now(), ${said})
          ON CONFLICT (key) DO UPDATE SET host = EXCLUDED.host, pid = EXCLUDED.pid, token = EXCLUDED.token, renewed_at = now(), detail = EXCLUDED.detail
          WHERE magi_claims.renewed_at < now() - (${ttlMs} * interval '1 millisecond')
          RETURNING key`
        if (took.length > 0) return Either.right({ key, token })
        const row = yield* current(key)
        if (Option.isNone(row)) return yield* acquire(key, rule, detail)
        // Held by a process this host knows is gone: taken over now, if it is still that holder's.
        if (deadHere({ host: row.value.host, pid: row.value.pid })) {
          const stolen = yield* sql`
            UPDATE magi_claims SET host = ${host}, pid = ${pid}, token = ${token}, renewed_at = now(), detail = ${said}
            WHERE key = ${rowKey(key)} AND token = ${row.value.token} RETURNING key`
          if (stolen.length > 0) return Either.right({ key, token })
        }
        return Either.left(holdingOf(row.value))
      }).pipe(Effect.mapError((e) => (e instanceof ClaimsError ? e : failed(key, "take")(e))))

    const renew = (claim: Claim, detail?: Detail) =>
      (detail === undefined
        ? sql`UPDATE magi_claims SET renewed_at = now() WHERE key = ${rowKey(claim.key)} AND token = ${claim.token} RETURNING key`
        : sql`UPDATE magi_claims SET renewed_at = now(), detail = ${JSON.stringify(detail)} WHERE key = ${
          rowKey(claim.key)
        } AND token = ${claim.token} RETURNING key`).pipe(
          Effect.map((rows) => rows.length > 0),
          Effect.mapError(failed(claim.key, "renew"))
        )

    // Retried while the database is away: a claim left behind by a live loop
    // holds its task until its ttl, and reads as that loop's all the while.
    const release = (claim: Claim) =>
      untilStoreAnswers(`letting go of the claim on ${claim.key}`, sql`DELETE FROM magi_claims WHERE key = ${rowKey(claim.key)} AND token = ${claim.token}`)
        // fallback: best-effort removal of a claim that expired
        .pipe(Effect.ignore)

    const holder = (key: string, rule: Staleness) =>
      current(key).pipe(
        Effect.map(Option.filter((row) => !staleRow(row, Duration.toMillis(rule.ttl)))),
        Effect.map(Option.map(holdingOf)),
        Effect.mapError(failed(key, "read"))
      )

    return { acquire, renew, release, holder } satisfies ClaimsShape
  })

export class Claims extends Context.Tag("magi/Claims")<Claims, ClaimsShape>() {
  /** Claims as files; `pathOf` places each key (it must give a path inside an existing or creatable folder). */
  static files = (pathOf: (key: string) => string) => Layer.effect(Claims, makeFiles(pathOf))
  /** Claims as rows of the database the `SqlClient` reaches. */
  static postgres = Layer.effect(Claims, Effect.flatMap(SqlClient.SqlClient, (sql) => makePostgres(sql)))
}
