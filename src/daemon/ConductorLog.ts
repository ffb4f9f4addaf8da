/**
 * The conductor's decisions log: one entry per decision, applied or refused
 * with why, so the owner can see what the conductor did to a task and what
 * it was not allowed to do. Only the loop that runs the conductor appends;
 * `magi task show` and `GET /api/conduct` read it.
 *
 * One interface (`ConductorLog`), two forms:
 *
 * - **the home folder**: `<home>/conduct/decisions.jsonl`, one line per
 *   decision, one write per line (a line torn by a crash is skipped);
 * - **PostgreSQL**: one record per decision in the record store (kind
 *   `conductor-log`), its id its time to the millisecond then a random part,
 *   so ids sort as the decisions were made and two never overwrite each other.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import { Clock, Data, Effect, Either, Layer, Random } from "effect"
import * as NodePath from "node:path"
import { MagiHome } from "../platform/MagiHome.js"
import type * as RecordStore from "../store/files/RecordStore.js"
import * as StoreBackend from "../store/StoreBackend.js"
import * as ConfiguredStore from "../platform/ConfiguredStore.js"
import type { Decision } from "./ConductorVerdict.js"

export interface DecisionRecord {
  readonly at: string
  /** The conductor turn it came from. */
  readonly turn: number
  /** The task's full id when it resolved, else what the conductor wrote. */
  readonly task: string
  readonly decision: Decision
  readonly outcome: "applied" | "refused"
  /** What was done, or why nothing was. */
  readonly why: string
  /** The conductor question the task waits on, when it asked. */
  readonly question?: string
}

/** The log file could not be written (in the database, the store's own errors say why). */
export class ConductorLogError extends Data.TaggedError("ConductorLogError")<{ readonly message: string }> {}

export interface ConductorLogShape {
  /** Where the log is, for messages: its file, or the database with its password masked. */
  readonly where: string
  /** Record one decision. */
  readonly append: (r: DecisionRecord) => Effect.Effect<void, ConductorLogError | RecordStore.Failed>
  /** Every readable decision, newest first; none when the conductor never ran (or the log cannot be read). */
  readonly read: Effect.Effect<ReadonlyArray<DecisionRecord>>
}

/** The owner's log on the configured backend: `<home>/conduct/decisions.jsonl`, or the database. */
export class ConductorLog extends Effect.Service<ConductorLog>()("magi/ConductorLog", {
  effect: Effect.suspend(() => onBackend),
  dependencies: [ConfiguredStore.layer]
}) {
  /** The log file in the folder `conductDir`, over whichever `FileSystem` is provided. */
  static at = (conductDir: string) => Layer.effect(ConductorLog, Effect.suspend(() => Effect.map(inFile(conductDir), ConductorLog.make)))
  static layer = ConductorLog.Default
}

export const decisionsPath = (conductDir: string) => NodePath.join(conductDir, "decisions.jsonl")

/** Append one record (one line, one write). */
export const appendDecision = (conductDir: string, r: DecisionRecord) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    yield* fs.makeDirectory(conductDir, { recursive: true })
    yield* fs.writeFileString(decisionsPath(conductDir), JSON.stringify(r) + "\n", { flag: "a" })
  })

/** Is this parsed value a decision record (as far as a reader relies on)? */
const isDecisionRecord = (r: unknown): r is DecisionRecord =>
  typeof r === "object" &&
  r !== null &&
  typeof (r as DecisionRecord).task === "string" &&
  ((r as DecisionRecord).outcome === "applied" || (r as DecisionRecord).outcome === "refused")

/** Parse the log's text: every readable record, newest first; a torn or foreign line is skipped. */
export const parseDecisions = (text: string): ReadonlyArray<DecisionRecord> => {
  const out: DecisionRecord[] = []
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue
    try {
      const r: unknown = JSON.parse(line)
      if (isDecisionRecord(r)) out.push(r)
    } catch {
      // A line cut short by a crash mid-append: the rest still read.
    }
  }
  return out.reverse()
}

/** Every recorded decision, newest first; none when the conductor never ran. */
export const readDecisions = (conductDir: string) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) =>
    fs.readFileString(decisionsPath(conductDir)).pipe(
      Effect.map(parseDecisions),
      // display: the decision log as shown; nothing when it cannot be read
      Effect.orElseSucceed((): ReadonlyArray<DecisionRecord> => [])
    ))

/** The latest decision about `task`, if any. */
export const latestFor = (records: ReadonlyArray<DecisionRecord>, task: string): DecisionRecord | undefined => records.find((r) => r.task === task)

/** The log as the file `<conductDir>/decisions.jsonl`. */
export const inFile = (conductDir: string): Effect.Effect<ConductorLogShape, never, FileSystem.FileSystem> =>
  Effect.map(FileSystem.FileSystem, (fs) => ({
    where: decisionsPath(conductDir),
    append: (r) =>
      appendDecision(conductDir, r).pipe(
        Effect.provideService(FileSystem.FileSystem, fs),
        Effect.mapError((e) => new ConductorLogError({ message: `could not append to ${decisionsPath(conductDir)}: ${e.message}` }))
      ),
    read: readDecisions(conductDir).pipe(Effect.provideService(FileSystem.FileSystem, fs))
  }))

// ---------------------------------------------------------------------------
// One record per decision

/** The log's folder in the home, and its key in the database. */
export const CONDUCTOR_LOG_FOLDER = "conductor-log"

/** One decision as a record: its id (time, then a random part) beside the decision record itself. */
export interface Entry {
  readonly id: string
  readonly record: DecisionRecord
}

/** A decision entry is a short JSON object; a MiB is no entry magi wrote. */
const ENTRY_MAX_BYTES = 1024 * 1024

const entryKind: RecordStore.RecordKind<Entry> = {
  noun: "conductor decision",
  encode: (e) => JSON.stringify({ id: e.id, ...e.record }) + "\n",
  decode: (body, source) => {
    try {
      const parsed: unknown = JSON.parse(body)
      if (!isDecisionRecord(parsed) || typeof (parsed as { id?: unknown }).id !== "string")
        return Either.left({ message: `${source} is not a conductor decision magi can read` })
      const { id, ...record } = parsed as DecisionRecord & { readonly id: string }
      return Either.right({ id, record })
    } catch {
      return Either.left({ message: `${source} is not JSON` })
    }
  },
  idOf: (e) => e.id,
  maxBytes: ENTRY_MAX_BYTES
}

const pad = (n: number, width = 2) => String(n).padStart(width, "0")

/** An id that sorts as its time does, to the millisecond (UTC). */
export const entryId = (ms: number, entropy: number): string => {
  const d = new Date(ms)
  const stamp = `${d.getUTCFullYear()}${pad(d.getUTCMonth() + 1)}${pad(d.getUTCDate())}` +
    `-${pad(d.getUTCHours())}${pad(d.getUTCMinutes())}${pad(d.getUTCSeconds())}${pad(d.getUTCMilliseconds(), 3)}`
  return `${stamp}-${(entropy & 0xffffff).toString(16).padStart(6, "0")}`
}

/**
 * The log as one record per decision in `records`. Decisions a turn makes
 * in the same millisecond keep their order: each id's time is at least a
 * millisecond after the last one this process wrote.
 */
export const inRecords = (
  records: RecordStore.RecordStore<Entry>
): Effect.Effect<ConductorLogShape> =>
  Effect.sync(() => {
    let lastMs = 0
    const append = (r: DecisionRecord) =>
      Effect.gen(function* () {
        // Two writers drawing the same id cannot overwrite each other: a taken id is drawn again.
        for (let tries = 0; tries < 16; tries++) {
          const ms = Math.max(yield* Clock.currentTimeMillis, lastMs + 1)
          lastMs = ms
          if (yield* records.create({ id: entryId(ms, yield* Random.nextIntBetween(0, 0x1000000)), record: r })) return
        }
        return yield* new ConductorLogError({ message: `could not record a decision in ${records.root}: every id drawn was taken` })
      })
    const read = records.scan.pipe(
      Effect.map((scan) => [...scan.records].sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0)).map((e) => e.record)),
      // display: the decision log as shown; nothing when it cannot be read
      Effect.orElseSucceed((): ReadonlyArray<DecisionRecord> => [])
    )
    return { where: records.root, append, read }
  })

/** The log on the configured backend: the JSONL file in the home folder, or one record per decision in the database. */
export const onBackend: Effect.Effect<ConductorLogShape, never, StoreBackend.StoreBackend | MagiHome | FileSystem.FileSystem> = Effect.gen(
  function* () {
    const home = yield* MagiHome
    return yield* StoreBackend.byBackend({
      // `<home>/conduct`, as `Conductor.conductDir` (not imported: the conductor imports this module).
      files: () => inFile(NodePath.join(home.dir, "conduct")),
      postgres: () => Effect.flatMap(StoreBackend.recordsOf({ folder: CONDUCTOR_LOG_FOLDER, kind: entryKind }), inRecords)
    })
  }
)
