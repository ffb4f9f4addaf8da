/**
 * Runs: one instruction worked by one agent seat in its own git worktree.
 *
 * The record `<home>/runs/<id>/run.json` is the run's whole state, so any
 * process (`magi run`, `magi run --resume`, the daemon's waiter) can pick a run
 * up where another left it: the seats carry their CLI sessions, the status
 * says whether it can still come back. Stored with the shared record store
 * (`store/files/RecordStore`, folder layout): atomic durable writes, versioned
 * like questions, and updated under the run's lock because the process that
 * ran the turn and the waiter delivering an answer both write it.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import { Clock, Effect, Either, Layer, Schema, Stream } from "effect"
import * as NodePath from "node:path"
import * as RecordStore from "../store/files/RecordStore.js"
import * as ShelfMove from "../store/ShelfMove.js"
import * as StoreBackend from "../store/StoreBackend.js"
import * as ConfiguredStore from "../platform/ConfiguredStore.js"
import { type NewerSchema, parseVersioned } from "../store/VersionedJson.js"
import { MagiHome } from "../platform/MagiHome.js"
import * as Q from "../questions/Question.js"
import { monthOf } from "../questions/History.js"
import { QuestionStore } from "../questions/QuestionStore.js"
import { Competition } from "./Competition.js"
import { Landing } from "./Landing.js"
import { RunStatus, resumable } from "./RunStatus.js"
import { SaidWord } from "./Said.js"
import { Verification } from "./Verification.js"

/** On-disk version of `run.json`; a newer file is refused, an older one reads with defaults. */
export const RUN_SCHEMA = 4

const TurnUsage = {
  input_tokens: Schema.Number,
  output_tokens: Schema.Number,
  cost_usd: Schema.NullOr(Schema.Number),
  context_tokens: Schema.optional(Schema.Number),
  context_window: Schema.optional(Schema.Number)
}

/** A seat's usage: the sum of its turns and each of the newest turns (`agents/Usage.SeatUsage`). */
export const SeatUsage = Schema.Struct({
  ...TurnUsage,
  turns: Schema.Array(Schema.Struct({ turn: Schema.Number, ...TurnUsage }))
})

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
  env: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String })),
  /** Where this seat's turns run, when not the run's worktree: a competition's candidates and judges each have their own. */
  worktree: Schema.optional(Schema.String),
  /** What its turns cost, as its CLI reported them (`agents/Usage.ts`); absent until a turn reports any. */
  usage: Schema.optional(SeatUsage)
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
  reason: Schema.optionalWith(Schema.String, { default: () => "" }),
  /** When `magi run rm` removed its worktree and branch; the record stays, as history. */
  removed_at: Schema.optional(Q.Timestamp),
  /**
   * The host (`[host] name`) whose machine has its worktree and its seats'
   * CLI sessions: only that host runs its turns. A run from before hosts
   * has none, and any host may.
   */
  host: Schema.optional(Schema.String),
  /**
   * When the owner asked the run's turn to stop (`magi run stop`, the run's
   * page). The process running the turn, on whichever host, watches for it
   * and ends the turn; any change of status clears it.
   */
  stop_requested_at: Schema.optional(Q.Timestamp),
  /** Schema 2: several candidates and a panel (`Competition.ts`); absent, a single-seat run. */
  competition: Schema.optional(Competition),
  /** Schema 3: the sync, review rounds and gate after the implementing (`Verification.ts`); absent, nothing verified. */
  verification: Schema.optional(Verification),
  /**
   * `magi review`: the owner's branch this run reviews, and its tip then.
   * The run works on its own copy (`branch`); this one is never rewritten or deleted.
   */
  reviewed: Schema.optional(Schema.Struct({ branch: Schema.String, head: Schema.String })),
  /** Schema 3: how a `ready` run is landed (`Landing.ts`); absent, not landed yet. */
  landing: Schema.optional(Landing),
  /** Schema 4: the owner's words to its seats (`magi say`, `Said.ts`); absent, none said. */
  said: Schema.optional(Schema.Array(SaidWord))
})
export type Run = typeof Run.Type

/** The run without a stop request: what a new status leaves, so an old request never stops a later turn. */
export const withoutStopRequest = (run: Run): Run => {
  const { stop_requested_at: _asked, ...rest } = run
  return rest
}

const decodeStrict = Schema.decodeUnknownEither(Run, { onExcessProperty: "error", errors: "first" })

/** Read a stored run, refusing one written by a newer magi by name. */
export const decode = (body: string, source: string): Either.Either<Run, { readonly message: string } | NewerSchema> =>
  parseVersioned(body, source, RUN_SCHEMA, () => `run ${source}`).pipe(
    Either.flatMap((raw) => Either.mapLeft(decodeStrict(raw), (e) => ({ message: `${source} is not a run magi can read: ${e.message}` })))
  )

export const encode = (run: Run): string => JSON.stringify(run, null, 2) + "\n"

/** The branch a run works on: `magi/<short id>`, short enough to type. */
/** May `self` run turns of `run`? Only on its own host; a run recorded before hosts, anywhere. */
export const runsHere = (run: Pick<Run, "host">, self: string): boolean => run.host === undefined || run.host === self

export const branchFor = (id: string): string => `magi/${Q.shortId(id)}`

/**
 * Does this question still need its seat? Open, or answered but the answer
 * never reached the agent: either way the run is not finished while it
 * exists, because the waiter still has something to carry to the seat.
 */
export const outstanding = Q.owedToAgent

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

/**
 * The most of a turn's reply the record keeps: 64 KiB of characters, far
 * beyond any account an agent gives of its work, and a small part of the
 * record's read cap (`RUN_FILE_MAX_BYTES`), so a turn that prints 20 MB
 * still leaves a record every view can read. The whole output stays in the
 * turn's `.out` artifact.
 */
export const SUMMARY_MAX_CHARS = 64 * 1024

/** The end of a turn's reply, bounded by `SUMMARY_MAX_CHARS`, saying where the rest is when it was cut. */
export const boundedSummary = (text: string, artifact: string): string => {
  if (text.length <= SUMMARY_MAX_CHARS) return text
  const tail = text.slice(text.length - SUMMARY_MAX_CHARS)
  // Start on a line of its own when there is one near: a cut line reads as garbage.
  const cut = tail.indexOf("\n")
  const kept = cut >= 0 && cut < 200 ? tail.slice(cut + 1) : tail
  return `[… the first ${text.length - kept.length} characters of this reply are in the artifact ${artifact}]\n${kept}`
}

// ---------------------------------------------------------------------------
// The store

/** Largest `run.json` read: a run holds an instruction, a summary and a few seats. */
export const RUN_FILE_MAX_BYTES = 4 * 1024 * 1024

export interface RunStoreShape {
  /** This machine's runs folder: each run's artifacts and seat locks live under it, whichever backend holds the records. */
  readonly root: string
  /** Where the run records are, for messages: that folder, or the database with its password masked. */
  readonly where: string
  readonly dir: (id: string) => string
  readonly artifactsDir: (id: string) => string
  readonly put: (run: Run) => Effect.Effect<void, RecordStore.Failed>
  /** An exact id, or a unique prefix or suffix (the short id). */
  readonly get: (idOrShort: string) => Effect.Effect<Run, RecordStore.Failure>
  /**
   * Every readable hot run, newest first: the unfinished ones and those
   * finished within `SETTLED_GRACE_MS`. Older ones are on the month shelves
   * (`page`).
   */
  readonly list: Effect.Effect<ReadonlyArray<Run>, RecordStore.Failed>
  /**
   * Up to `limit` runs older than `before` (from the newest when none),
   * newest first, hot and shelved alike; `next` is the id to ask the next
   * page `before`, null at the end. Reads only the records it returns.
   */
  readonly page: (options: { readonly before?: string | undefined; readonly limit: number }) => Effect.Effect<RunPage, RecordStore.Failed>
  /**
   * Move the runs finished more than `SETTLED_GRACE_MS` ago to their month's
   * shelf, `batch` at a time; how many moved. Their folders (artifacts,
   * worktree) stay where they are: only the record moves.
   */
  readonly archiveFinished: (batch: number) => Effect.Effect<number, RecordStore.Failed>
  /** Whether any run was ever moved to a month's shelf: a home written before the shelves has none. */
  readonly hasHistory: Effect.Effect<boolean>
  /**
   * Read, change and write back under the run's lock. `updated_at` moves,
   * unless `keepUpdatedAt` says the change is about the record, not the
   * run's work (its removal), so the run's duration still ends where it did.
   */
  readonly update: (
    id: string,
    change: (run: Run, now: Date) => Run,
    options?: { readonly keepUpdatedAt?: boolean }
  ) => Effect.Effect<Run, RecordStore.Failure>
  /**
   * Set the status (and optionally why). When the run can no longer come
   * back, its open questions are abandoned with its fate in the reason.
   */
  readonly setStatus: (id: string, status: RunStatus, reason?: string) => Effect.Effect<Run, RecordStore.Failure>
  /**
   * Remove what kills left in the runs' folders (a `run.json` write's
   * scratch, a lock-break marker) once clearly abandoned; how many. Listing
   * does it too, at most every ten minutes.
   */
  readonly sweep: Effect.Effect<number>
  /**
   * Where the records stand: `revision` moves whenever a run is created or
   * its record rewritten (0 with no runs); `newest` is the newest record's
   * mtime on the file backend (a listing is trusted only once it is safely
   * older, see `Memo`), 0 where the revision is exact (PostgreSQL).
   */
  readonly stamp: Effect.Effect<RunsStamp>
  /**
   * Ids of runs written by any process on any host, as the database
   * notifies them (`<id>.json`); none on the file backend, where a page
   * follows the runs by `stamp` alone.
   */
  readonly changes: Stream.Stream<string>
}

export interface RunPage {
  readonly runs: ReadonlyArray<Run>
  readonly next: string | null
}

/**
 * How long a finished run stays hot after its last write. `magi runs`, the
 * page and `magi show` read it hot meanwhile; an hour is beyond the moments
 * it is most looked at, and shelved or hot it is found by id either way.
 */
export const SETTLED_GRACE_MS = 60 * 60 * 1000

/** The folder inside the runs folder holding one shelf of run records per month. */
export const HISTORY_DIR = "history"

/** May this run's record move to its month's shelf at `now`? Only once it can never come back, and has been quiet a while. */
export const archivable = (run: Run, now: number): boolean => {
  if (resumable(run.status) || monthOf(run.id) === undefined) return false
  const at = Date.parse(run.updated_at)
  return Number.isNaN(at) || now - at >= SETTLED_GRACE_MS
}

/** What a shelf's index keeps of a run: what a search of runs would match, lowercased and short. */
export const digest = (run: Run): string => [run.id, run.status, run.repo, run.branch, run.instruction.slice(0, 200)].join("\n").toLowerCase()

export interface RunsStamp {
  readonly revision: number
  readonly newest: number
}

/**
 * The owner's runs on the configured backend: records in `<home>/runs`
 * or the database of `[store] url`; the runs' folders (artifacts, seat
 * locks) in `<home>/runs` either way, on the machine whose agent ran.
 */
export class RunStore extends Effect.Service<RunStore>()("magi/RunStore", {
  effect: Effect.gen(function* () {
    const home = yield* MagiHome
    const shape: RunStoreShape = yield* StoreBackend.byBackend({
      files: () => make(runsDir(home)),
      postgres: (backend) =>
        Effect.gen(function* () {
          const records = yield* StoreBackend.recordsOf(runRecords)
          const fs = yield* FileSystem.FileSystem
          const changes = StoreBackend.changes(runRecords.folder).pipe(
            Stream.provideService(StoreBackend.StoreBackend, backend),
            Stream.provideService(FileSystem.FileSystem, fs)
          )
          return yield* assemble(runsDir(home), records, Effect.map(records.revision, (revision) => ({ revision, newest: 0 })), changes)
        })
    })
    return shape
  }),
  dependencies: [ConfiguredStore.layer]
}) {
  /** Runs in the folder `root`, records and all. */
  static at = (root: string) => Layer.effect(RunStore, Effect.map(make(root), RunStore.make))

  /** The configured store, as every process's layer names it. */
  static layer = RunStore.Default
}

export const runsDir = (home: { readonly dir: string }) => NodePath.join(home.dir, "runs")

/**
 * The run kind in the home folder (`<home>/runs`), as `StoreBackend.records`
 * and `magi store migrate` take a kind. A run is a folder (its record, its
 * lock, its artifacts) in the shared record store's folder layout; only
 * `run.json` is the record, the artifacts stay on the machine that made them.
 */
export const runRecords: StoreBackend.KindShape<Run> = {
  folder: "runs",
  layout: { _tag: "folder", file: "run.json" },
  // Only the record moves: `<home>/runs/history/<YYYY-MM>/<id>.json`; the
  // run's folder, its artifacts and lock stay.
  archive: { dir: HISTORY_DIR, shelfOf: (id) => monthOf(id), digest },
  kind: { noun: "run", decode, encode, idOf: (run: Run) => run.id, maxBytes: RUN_FILE_MAX_BYTES }
}

export const make = Effect.fn("RunStore.make")(function* (root: string) {
  const { folder: _folder, ...options } = runRecords
  const records = yield* RecordStore.make({ ...options, root })
  return yield* assemble(root, records, records.stamp, Stream.empty)
})

const assemble = Effect.fn("RunStore.assemble")(function* (
  root: string,
  records: RecordStore.RecordStore<Run>,
  stamp: Effect.Effect<RunsStamp>,
  changes: Stream.Stream<string>
) {
  const questions = yield* QuestionStore
  const dir = (id: string) => NodePath.join(root, id)

  const newestFirst = (a: Run, b: Run) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0)
  const list = Effect.map(records.scan, (scan) => [...scan.records].sort(newestFirst))

  // Runs keep no order of their own on the shelves: the key is the id, so the cursor is one.
  const page = (options: { readonly before?: string | undefined; readonly limit: number }) =>
    records.pageById(options).pipe(
      Effect.map((found) => ({ runs: found.records, next: found.next }) satisfies RunPage),
      Effect.withSpan("RunStore.page")
    )

  const archiveFinished = (batch: number) =>
    Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      return yield* ShelfMove.moveDue(records, {
        due: (yield* list).filter((r) => archivable(r, now)),
        idOf: (r) => r.id,
        shelfOf: monthOf,
        // Judged again under the lock, on the record as it is then.
        still: (fresh) => archivable(fresh, now),
        batch,
        cannotMove: (id, message) => `could not move run ${Q.shortId(id)} to history: ${message}`
      })
    }).pipe(Effect.withSpan("RunStore.archiveFinished"))

  const update = (wanted: string, change: (run: Run, now: Date) => Run, options?: { readonly keepUpdatedAt?: boolean }) =>
    records.update(wanted, (current) =>
      Effect.map(Clock.currentTimeMillis, (ms) => {
        const now = new Date(ms)
        return { ...change(current, now), updated_at: options?.keepUpdatedAt === true ? current.updated_at : Q.timestamp(now) }
      }))

  const setStatus = (wanted: string, status: RunStatus, reason?: string) =>
    Effect.gen(function* () {
      // A reason belongs to the status it came with: a run done, or back on
      // its way, is no longer "interrupted" (or whatever stopped it before).
      const run = yield* update(wanted, (r) => ({
        ...withoutStopRequest(r),
        status,
        reason: reason ?? (resumable(status) || status === "done" ? "" : r.reason)
      }))
      if (!resumable(status))
        yield* questions.abandonForRun(run.id, `run ${run.id} ${status}, so nothing is waiting for this answer`).pipe(
          // display: the run's end stands; open questions not settled are logged and settled by the waiter
          Effect.catchAll((e) => Effect.logWarning(`run ${run.id} ended but its open questions could not be settled: ${e.message}`))
        )
      return run
    })

  return {
    root,
    where: records.root,
    dir,
    artifactsDir: (id) => NodePath.join(dir(id), "artifacts"),
    put: records.put,
    get: records.get,
    list,
    page,
    archiveFinished,
    // display: "has history" errs towards showing the history link
    hasHistory: Effect.map(records.shelves, (s) => s.length > 0).pipe(Effect.orElseSucceed(() => true)),
    update,
    setStatus,
    sweep: records.sweep,
    stamp,
    changes
  } satisfies RunStoreShape
})
