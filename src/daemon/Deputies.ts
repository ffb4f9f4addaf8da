/**
 * The deputies: a short-lived seat (`deputy-<short>`, node `deputy`) per
 * open conductor question nobody waits on, at most `[daemon] max_deputies`
 * at once, each started at most `MAX_STARTS` times and never within
 * `RESTART_AFTER_MS` of its last start. The counts are stored (on the
 * configured backend) and the running deputies are known by their `deputy`
 * leases, so all of it holds across a restart of `magi serve`. Which question gets one is
 * `Deputy.deputiesToStart`; this is the I/O around it. The deputy applies
 * nothing: an answer it carries is picked up by the loop's blocker
 * resolution like any other.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import { Clock, Data, Duration, Effect, FiberSet, Option, Ref } from "effect"
import * as NodePath from "node:path"
import { Rosters } from "../agents/AgentRoster.js"
import { Agents, magiNameFor, newSeat } from "../agents/Agents.js"
import { MagiConfig } from "../platform/MagiConfig.js"
import { MagiHome } from "../platform/MagiHome.js"
import * as StoreBackend from "../store/StoreBackend.js"
import * as ConfiguredStore from "../platform/ConfiguredStore.js"
import * as Lease from "../questions/Leases.js"
import * as Q from "../questions/Question.js"
import { QuestionStore } from "../questions/QuestionStore.js"
import * as T from "../queue/Task.js"
import { TaskStore } from "../queue/TaskStore.js"
import { beating } from "../runs/RunTurns.js"
import { conductDir } from "./Conductor.js"
import { NODE as CONDUCT } from "./ConductorDecide.js"
import * as Deputy from "./Deputy.js"
import { Notices } from "./Notices.js"

/** A deputy's one turn: it waits on the owner in `magi ask --wait` slices, so it may last a while; half an hour bounds a stuck one. */
export const DEPUTY_TURN_TIMEOUT = Duration.minutes(30)

export interface DeputiesShape {
  /** Start the deputies now due; they run in the background. Never fails. */
  readonly tick: Effect.Effect<void>
  readonly settle: Effect.Effect<void>
}

/** The deputies, their records on the configured backend. */
export class Deputies extends Effect.Service<Deputies>()("magi/Deputies", {
  scoped: Effect.suspend(() => make),
  dependencies: [ConfiguredStore.layer]
}) {
  static layer = Deputies.Default
}

/** The deputies' records' folder in the home (`conduct/deputies`), and their key in the database. */
export const DEPUTIES_FOLDER = NodePath.join("conduct", "deputies")

/**
 * The deputies' folder: `<home>/conduct/deputies/<question id>/` holds one
 * question's artifacts on this machine, and its record too on the
 * home-folder backend (`deputy.json`; a row in PostgreSQL otherwise).
 */
export const deputiesDir = (home: { readonly dir: string }) => NodePath.join(conductDir(home), "deputies")

/** The deputy's folder could not be made; the tick logs it and starts nothing for that question. */
class DeputyRecordError extends Data.TaggedError("DeputyRecordError")<{ readonly message: string }> {}

/**
 * The deputy record kind in the home folder (`<home>/conduct/deputies`), as
 * `StoreBackend.records` and `magi store migrate` take a kind: one folder
 * per conductor question, its `deputy.json` the record (the folder also
 * holds the deputy's artifacts, which stay on this machine).
 */
export const deputyRecords: StoreBackend.KindShape<Deputy.DeputyRecord> = {
  folder: DEPUTIES_FOLDER,
  layout: { _tag: "folder", file: "deputy.json" },
  kind: {
    noun: "deputy record",
    decode: Deputy.decodeRecord,
    encode: Deputy.encodeRecord,
    idOf: (r: Deputy.DeputyRecord) => r.question,
    maxBytes: 64 * 1024
  }
}

export const make = Effect.gen(function* () {
  const questions = yield* QuestionStore
  const tasks = yield* TaskStore
  const agents = yield* Agents
  const rosters = yield* Rosters
  const config = yield* MagiConfig
  const home = yield* MagiHome
  const notices = yield* Notices
  const fs = yield* FileSystem.FileSystem
  const dir = deputiesDir(home)
  // The counts are stored, one record per conductor question, so a
  // restarted `magi serve` keeps to the 3 starts, the 30 s and the one notice.
  const records = yield* StoreBackend.recordsOf(deputyRecords)
  const withFs = <A, E>(e: Effect.Effect<A, E, FileSystem.FileSystem>) => Effect.provideService(e, FileSystem.FileSystem, fs)
  /** The deputies this process runs now; a restarted one knows the others by their leases. */
  const running = yield* Ref.make(new Set<string>())
  const fibers = yield* FiberSet.make<void, never>()

  const recordOf = (id: string) =>
    records.read(id).pipe(
      Effect.map(Option.some),
      // No record: never started. One that cannot be read is logged and
      // read as never started, rather than stopping every deputy.
      // display: a deputy that could not start is logged; its question stays open
      Effect.catchAll((e) =>
        Effect.as(
          records.exists(id).pipe(
            // fallback: a deputy that could not start is "not started"; its question stays open for the next tick
            Effect.orElseSucceed(() => false),
            Effect.flatMap((there) => (there ? Effect.logWarning(`deputies: ${e.message}`) : Effect.void))
          ),
          Option.none<Deputy.DeputyRecord>()
        )
      )
    )

  /**
   * Change one question's record under its lock, making its folder first
   * (the record's own on the home-folder backend; on any, where this
   * machine keeps the deputy's artifacts).
   */
  const change = (id: string, next: (before: Option.Option<Deputy.DeputyRecord>) => Deputy.DeputyRecord) =>
    Effect.gen(function* () {
      yield* fs.makeDirectory(NodePath.join(dir, id), { recursive: true }).pipe(Effect.mapError((e) => new DeputyRecordError({ message: e.message })))
      yield* records.withLock(id, Effect.flatMap(recordOf(id), (before) => records.put(next(before))))
    })

  const leaseOf = (id: string) => withFs(Lease.read(questions.root, id))

  const run = (q: Q.Question, starts: number) =>
    Effect.gen(function* () {
      const task = yield* tasks.get(q.run).pipe(Effect.option)
      const repo = Option.match(task, { onNone: () => home.dir, onSome: (t) => T.repoHere(t, config.repos) ?? home.dir })
      const roster = yield* rosters.forRepo(repo)
      const spec = roster.get(config.conductor ?? "")
      if (Option.isNone(spec)) return yield* Effect.logWarning(`deputy for ${Q.shortId(q.id)}: [roles] conductor names no agent of the roster for ${repo}`)
      yield* agents.call({
        agent: spec.value,
        seat: newSeat(Deputy.deputySeat(q.id), spec.value.id),
        prompt: Deputy.deputyPrompt(q, yield* magiNameFor(spec.value).pipe(Effect.provideService(FileSystem.FileSystem, fs))),
        cwd: repo,
        allowWrite: false,
        timeout: DEPUTY_TURN_TIMEOUT,
        artifactsDir: NodePath.join(dir, q.id),
        stem: `start-${starts}`,
        run: "",
        node: Lease.DEPUTY_NODE
      })
    }).pipe(
      // The deputy's lease says, for as long as its turn runs, that someone
      // keeps the owner company: the page words it, and no second deputy
      // (from this process or a restarted one) starts for the question.
      // Beaten once before the agent starts, then every 20 s until it ends.
      (turn) => {
        const beat = withFs(Lease.beat(questions.root, q.id, "deputy"))
        return beating(beat, Effect.zipRight(beat, turn))
      },
      // display: a deputy's bad end is logged; its question stays as it was
      Effect.catchAllCause((c) => Effect.logWarning(`deputy for ${Q.shortId(q.id)} ended badly: ${c}`)),
      Effect.ensuring(
        Effect.gen(function* () {
          // Still the deputy's (not an owner's own `magi ask --wait` since): let it go.
          const lease = yield* leaseOf(q.id)
          if (Option.isSome(lease) && lease.value.kind === "deputy") yield* withFs(Lease.clear(questions.root, q.id))
          yield* Ref.update(running, (s) => {
            const n = new Set(s)
            n.delete(q.id)
            return n
          })
        })
      )
    )

  const tick = Effect.gen(function* () {
    if (config.conductor === null) return
    const now = yield* Clock.currentTimeMillis
    // fallback: questions that cannot be listed start no deputy this tick
    const open = (yield* questions.list.pipe(Effect.orElseSucceed(() => []))).filter((q) => q.node === CONDUCT && Q.isOpen(q))
    const candidates: Deputy.Candidate[] = []
    const memory = new Map<string, Deputy.DeputyMemory>()
    const busy = new Set(yield* Ref.get(running))
    for (const q of open) {
      const held = Lease.heldAt(yield* leaseOf(q.id), new Date(now))
      candidates.push({ q, leased: Option.isSome(held) })
      // A deputy this process did not start (a `magi serve` before a restart) still counts against the limit.
      if (Option.contains(held, "deputy")) busy.add(q.id)
      const record = yield* recordOf(q.id)
      if (Option.isSome(record)) memory.set(q.id, Deputy.memoryOf(record.value))
    }
    const due = Deputy.deputiesToStart(candidates, memory, busy, config.maxDeputies, config.answerTimeoutSecs, now)
    for (const q of due.notice) {
      yield* notices.raise(
        q,
        "deputies",
        `no deputy could settle "${q.summary}"; answer it with one of its choices`,
        `its deputy was started ${Deputy.MAX_STARTS} times`
      )
      yield* change(q.id, (before) => ({ ...Option.getOrElse(before, () => Deputy.started(q.id, undefined, new Date(now))), noticed: true }))
    }
    for (const q of due.start) {
      // On disk before it starts: a start a crash interrupts still counts.
      let starts = 0
      yield* change(q.id, (before) => {
        const next = Deputy.started(q.id, Option.getOrUndefined(before), new Date(now))
        starts = next.starts
        return next
      })
      yield* Ref.update(running, (s) => new Set(s).add(q.id))
      yield* FiberSet.run(fibers, run(q, starts))
    }
    // display: the failed tick is logged; the next tick looks again
  }).pipe(Effect.catchAllCause((c) => Effect.logWarning(`deputies: tick failed: ${c}`)))

  return { tick, settle: FiberSet.awaitEmpty(fibers) } satisfies DeputiesShape
})
