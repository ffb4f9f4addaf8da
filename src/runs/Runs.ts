/**
 * Runs: one instruction worked by one agent seat in its own git worktree.
 *
 * The record `<home>/runs/<id>/run.json` is the run's whole state, so any
 * process (`magi run`, `magi run --resume`, the daemon's waiter) can pick a run
 * up where another left it: the seats carry their CLI sessions, the status
 * says whether it can still come back. Written via temp + rename, versioned
 * like questions, and updated under a lock file because the process that ran
 * the turn and the waiter delivering an answer both write it.
 */
import { FileSystem } from "@effect/platform"
import { Clock, Context, Data, Duration, Effect, Either, Layer, Option, Schedule, Schema } from "effect"
import * as NodePath from "node:path"
import { writeAtomically } from "../platform/AtomicFile.js"
import { parseVersioned } from "../platform/VersionedJson.js"
import { MagiHome } from "../platform/MagiHome.js"
import * as Q from "../questions/Question.js"
import { QuestionStore } from "../questions/QuestionStore.js"
import { RunStatus, resumable } from "./RunStatus.js"

/** On-disk version of `run.json`; a newer file is refused, an older one reads with defaults. */
export const RUN_SCHEMA = 1

export const Seat = Schema.Struct({
  key: Schema.String,
  agent: Schema.String,
  turns: Schema.Number,
  session: Schema.NullOr(Schema.String),
  /** Implementing seats may change files; every other seat runs read-only. */
  write: Schema.optionalWith(Schema.Boolean, { default: () => true }),
  /**
   * What the seat's CLI needs to find its session again (`HOME`,
   * `CLAUDE_CONFIG_DIR`, …), recorded when the seat starts; every later turn
   * runs with it, so a daemon with another environment still resumes it.
   */
  env: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String }))
})
export type Seat = typeof Seat.Type

export const Run = Schema.Struct({
  schema: Schema.Number,
  id: Schema.String,
  status: RunStatus,
  /** What the owner asked for, verbatim. */
  instruction: Schema.String,
  /** The repository the run branched from. */
  repo: Schema.String,
  /** The branch it branched off, and that branch's tip at the time. */
  base: Schema.String,
  base_commit: Schema.String,
  worktree: Schema.String,
  branch: Schema.String,
  seats: Schema.Array(Seat),
  created_at: Q.Timestamp,
  updated_at: Q.Timestamp,
  /** The agent's last printed reply: its account of what it did. */
  summary: Schema.optionalWith(Schema.String, { default: () => "" }),
  /** Why the run stopped, when it did not simply finish. */
  reason: Schema.optionalWith(Schema.String, { default: () => "" })
})
export type Run = typeof Run.Type

export class RunNotFound extends Data.TaggedError("RunNotFound")<{ readonly message: string }> {}
export class RunStoreError extends Data.TaggedError("RunStoreError")<{ readonly message: string }> {}

const decodeStrict = Schema.decodeUnknownEither(Run, { onExcessProperty: "error", errors: "first" })

/** Read a stored run, refusing one written by a newer magi by name. */
export const decode = (body: string, source: string): Either.Either<Run, RunStoreError> =>
  parseVersioned(body, source, RUN_SCHEMA, () => `run ${source}`).pipe(
    Either.mapLeft((message) => new RunStoreError({ message })),
    Either.flatMap((raw) =>
      Either.mapLeft(decodeStrict(raw), (e) => new RunStoreError({ message: `${source} is not a run magi can read: ${e.message}` }))
    )
  )

export const encode = (run: Run): string => JSON.stringify(run, null, 2) + "\n"

/** The branch a run works on: `magi/<short id>`, short enough to type. */
export const branchFor = (id: string): string => `magi/${Q.shortId(id)}`

/**
 * Does this question still need its seat? Open, or answered but the answer
 * never reached the agent: either way the run is not finished while it
 * exists, because the waiter still has something to carry to the seat.
 */
export const outstanding = Q.awaitsAgent

/**
 * Where a run stands after a turn. A turn that failed failed the run, open
 * questions or not: a failure is never hidden behind `waiting` (its
 * questions are abandoned with the reason, so the owner is not left
 * answering into nothing). A usage limit stalls it instead (it can come back
 * once the limit resets). A turn that went well leaves the run `waiting`
 * while a question is still outstanding (the waiter must deliver it), else
 * `done`.
 */
export const statusAfterTurn = (turn: { readonly usable: boolean; readonly quota: string | null }, openQuestions: number): RunStatus =>
  turn.quota !== null && !turn.usable ? "stalled" : !turn.usable ? "failed" : openQuestions > 0 ? "waiting" : "done"

// ---------------------------------------------------------------------------
// The store

/** A run lock left by a killed writer is broken after this long. */
const LOCK_STALE_MS = 10_000
/** How often a writer retries a held lock, and when it gives up. */
const LOCK_RETRY = Duration.millis(15)
const LOCK_GIVE_UP = Duration.seconds(10)

export interface RunStoreShape {
  readonly root: string
  readonly dir: (id: string) => string
  readonly artifactsDir: (id: string) => string
  readonly put: (run: Run) => Effect.Effect<void, RunStoreError>
  /** An exact id, or a unique prefix or suffix (the short id). */
  readonly get: (idOrShort: string) => Effect.Effect<Run, RunNotFound | RunStoreError>
  /** Every readable run, newest first. */
  readonly list: Effect.Effect<ReadonlyArray<Run>, RunStoreError>
  /** Read, change and write back under the run's lock. */
  readonly update: (
    id: string,
    change: (run: Run, now: Date) => Run
  ) => Effect.Effect<Run, RunNotFound | RunStoreError>
  /**
   * Set the status (and optionally why). When the run can no longer come
   * back, its open questions are abandoned with its fate in the reason.
   */
  readonly setStatus: (id: string, status: RunStatus, reason?: string) => Effect.Effect<Run, RunNotFound | RunStoreError>
}

export class RunStore extends Context.Tag("magi/RunStore")<RunStore, RunStoreShape>() {
  static at = (root: string) => Layer.effect(RunStore, make(root))
  static layer = Layer.effect(RunStore, Effect.flatMap(MagiHome, (home) => make(runsDir(home))))
}

export const runsDir = (home: { readonly dir: string }) => NodePath.join(home.dir, "runs")

export const make = Effect.fn("RunStore.make")(function* (root: string) {
  const fs = yield* FileSystem.FileSystem
  const questions = yield* QuestionStore
  const io = (what: string) => (e: { readonly message: string }) => new RunStoreError({ message: `${what}: ${e.message}` })
  const dir = (id: string) => NodePath.join(root, id)
  const file = (id: string) => NodePath.join(dir(id), "run.json")
  const localWriters = yield* Effect.makeSemaphore(1)

  const put = (run: Run) =>
    writeAtomically(file(run.id), encode(run)).pipe(
      Effect.mapError(io(`write ${file(run.id)}`)),
      Effect.provideService(FileSystem.FileSystem, fs)
    )

  const ids = fs.readDirectory(root).pipe(
    Effect.catchIf(
      (e) => e._tag === "SystemError" && e.reason === "NotFound",
      () => Effect.succeed<string[]>([])
    ),
    Effect.mapError(io(`list ${root}`))
  )

  const readId = (id: string) =>
    fs.readFileString(file(id)).pipe(
      Effect.mapError((e) =>
        e._tag === "SystemError" && e.reason === "NotFound"
          ? new RunNotFound({ message: `no run ${id}` })
          : new RunStoreError({ message: `read ${file(id)}: ${e.message}` })
      ),
      Effect.flatMap((body) => decode(body, file(id)))
    )

  const resolve = (wanted: string) =>
    Effect.gen(function* () {
      const all = yield* ids
      if (all.includes(wanted)) return wanted
      const hits = wanted === "" ? [] : all.filter((id) => id.startsWith(wanted) || id.endsWith(wanted))
      if (hits.length === 1) return hits[0]!
      return yield* new RunNotFound({
        message: hits.length === 0 ? `no run matches \`${wanted}\`` : `\`${wanted}\` matches ${hits.length} runs: ${hits.sort().join(", ")}`
      })
    })

  const get = (wanted: string) => Effect.flatMap(resolve(wanted), readId)

  const list = Effect.gen(function* () {
    const read = yield* Effect.forEach(yield* ids, (id) => Effect.option(readId(id)), { concurrency: 16 })
    return read
      .flatMap((r) => (Option.isSome(r) ? [r.value] : []))
      .sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
  })

  const withLock = <A, E>(id: string, body: Effect.Effect<A, E>) => {
    const lock = NodePath.join(dir(id), "run.lock")
    const held = new RunStoreError({ message: `run ${id} is being updated by another process (${lock} is held)` })
    // Only a lock that exists is worth waiting for; any other failure to
    // create it (no such run directory, a read-only disk) is reported as
    // itself, at once.
    const tryAcquire = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const created = yield* fs.writeFileString(lock, `${process.pid} ${now}\n`, { flag: "wx" }).pipe(
        Effect.as(true),
        Effect.catchIf(
          (e) => e._tag === "SystemError" && e.reason === "AlreadyExists",
          () => Effect.succeed(false)
        ),
        Effect.mapError(io(`lock run ${id}`))
      )
      if (created) return
      const since = yield* fs.stat(lock).pipe(
        Effect.map((s) => Option.getOrElse(Option.map(s.mtime, (d) => d.getTime()), () => now)),
        Effect.orElseSucceed(() => now)
      )
      if (now - since > LOCK_STALE_MS) yield* fs.remove(lock).pipe(Effect.ignore)
      return yield* held
    })
    const acquire = tryAcquire.pipe(
      Effect.retry({ schedule: Schedule.spaced(LOCK_RETRY).pipe(Schedule.upTo(LOCK_GIVE_UP)), while: (e) => e === held })
    )
    return localWriters.withPermits(1)(Effect.acquireUseRelease(acquire, () => body, () => fs.remove(lock).pipe(Effect.ignore)))
  }

  const update = (wanted: string, change: (run: Run, now: Date) => Run) =>
    Effect.gen(function* () {
      const id = yield* resolve(wanted)
      return yield* withLock(
        id,
        Effect.gen(function* () {
          const current = yield* readId(id)
          const now = new Date(yield* Clock.currentTimeMillis)
          const next = { ...change(current, now), updated_at: Q.timestamp(now) }
          yield* put(next)
          return next
        })
      )
    })

  const setStatus = (wanted: string, status: RunStatus, reason?: string) =>
    Effect.gen(function* () {
      const run = yield* update(wanted, (r) => ({ ...r, status, reason: reason ?? (resumable(status) ? "" : r.reason) }))
      if (!resumable(status))
        yield* questions.settleRun(run.id, status).pipe(
          Effect.catchAll((e) => Effect.logWarning(`run ${run.id} ended but its open questions could not be settled: ${e.message}`))
        )
      return run
    })

  return {
    root,
    dir,
    artifactsDir: (id) => NodePath.join(dir(id), "artifacts"),
    put,
    get,
    list,
    update,
    setStatus
  } satisfies RunStoreShape
})
