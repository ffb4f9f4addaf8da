/**
 * One turn of one seat of a run: find the seat's agent, run it in the run's
 * worktree with the seat's session, and write the seat back. Shared by
 * `magi run` (first turn, `--resume`) and the waiter (delivering an answer),
 * so a seat's session moves forward the same way whoever drives it.
 *
 * A turn holds its seat's busy lock (`<run dir>/leases/seat-<key>.lease`)
 * from before its agent starts until the seat is written back: created only
 * if absent, so two processes (the waiter, `magi run --resume`) can never
 * both resume one session, and beaten while the turn runs. A turn whose
 * process was killed stops beating, and the seat is free again once the lock
 * ages out.
 */
import { FileSystem } from "@effect/platform"
import { Clock, Data, Duration, Effect, Either, Fiber, Option, Random, Schedule, Schema } from "effect"
import { Rosters } from "../agents/AgentRoster.js"
import { Agents, magiNameFor, mintUuid, sessionEnvOf, type CallResult } from "../agents/Agents.js"
import type { MagiName } from "../agents/Prompts.js"
import { createAtomically, writeAtomically } from "../platform/AtomicFile.js"
import * as Lease from "../questions/Lease.js"
import { timestamp } from "../questions/Question.js"
import { QuestionStore } from "../questions/QuestionStore.js"
import { RunStore, outstanding, statusAfterTurn, type Run, type Seat } from "./Runs.js"
import { commitAfterTurn } from "./TurnCommit.js"

/**
 * How often a running turn re-beats its leases: well inside `LEASE_TTL` (90 s),
 * so four beats can be lost to a stalled disk before anyone thinks it dead.
 */
export const TURN_BEAT = Duration.seconds(20)

/** A turn that cannot start: the reason is shown to the owner. */
export class TurnRefused extends Data.TaggedError("TurnRefused")<{ readonly message: string }> {}

/** Another turn holds the seat: nothing ran and nothing is wrong; try again later. */
export class SeatBusy extends Data.TaggedError("SeatBusy")<{ readonly message: string }> {}

const busyId = (seat: string) => `seat-${seat}`

/** The seat's lock: a lease (so `seatBusy` and the owner read it as one) plus whose it is. */
const SeatLock = Schema.Struct({ ...Lease.Lease.fields, token: Schema.String })
const decodeSeatLock = Schema.decodeUnknownOption(Schema.parseJson(SeatLock))

const lockBody = (token: string) =>
  Effect.map(Clock.currentTimeMillis, (ms) =>
    JSON.stringify({ kind: "daemon", pid: process.pid, beat_at: timestamp(new Date(ms)), token } satisfies typeof SeatLock.Type) + "\n"
  )

/** The token in the seat's lock, if there is a readable one. */
const lockToken = (dir: string, seat: string) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) => fs.readFileString(Lease.leasePath(dir, busyId(seat)))).pipe(
    Effect.option,
    Effect.map((body) => Option.map(Option.flatMap(body, decodeSeatLock), (l) => l.token))
  )

/**
 * Is the lock on `seat` still someone's? A beat inside `LEASE_TTL` says so. A
 * lock that cannot be read is judged by its file's age instead: it may be a
 * create-new write caught between create and fill (on a filesystem without
 * hard links), and taking over a live turn's seat is the worse mistake.
 */
const lockHeld = (dir: string, seat: string) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const now = yield* Clock.currentTimeMillis
    const lease = yield* Lease.read(dir, busyId(seat))
    if (Option.isSome(lease)) return Lease.isFresh(lease.value, new Date(now))
    const mtime = yield* fs.stat(Lease.leasePath(dir, busyId(seat))).pipe(
      Effect.map((s) => Option.getOrUndefined(Option.map(s.mtime, (d) => d.getTime()))),
      Effect.orElseSucceed(() => undefined)
    )
    return mtime !== undefined && now - mtime <= Lease.LEASE_TTL_MS
  })

/**
 * Take the seat's lock before anything about the turn is written, or fail
 * with `SeatBusy`. A lock left by a killed turn is taken over; two takers of
 * the same stale lock can both remove it and both create, so the token is
 * read back and only the one whose token stayed goes on.
 */
const takeSeat = (dir: string, seat: string) =>
  Effect.gen(function* () {
    const path = Lease.leasePath(dir, busyId(seat))
    const token = `${process.pid}-${(yield* Random.nextIntBetween(0, 2 ** 31)).toString(36)}`
    const busy = new SeatBusy({ message: `seat ${seat} has a turn running in another process` })
    const create = Effect.flatMap(lockBody(token), (body) => createAtomically(path, body))
    if (!(yield* create)) {
      if (yield* lockHeld(dir, seat)) return yield* busy
      yield* Effect.logInfo(`seat ${seat}'s lock outlived its turn; taking it over`)
      yield* Effect.flatMap(FileSystem.FileSystem, (fs) => fs.remove(path)).pipe(Effect.ignore)
      if (!(yield* create)) return yield* busy
    }
    const held = yield* lockToken(dir, seat)
    if (Option.getOrUndefined(held) !== token) return yield* busy
    return token
  })

/** Refresh the seat's lock, unless it is no longer ours (then it is another turn's to keep). */
const beatSeat = (dir: string, seat: string, token: string) =>
  Effect.gen(function* () {
    if (Option.getOrUndefined(yield* lockToken(dir, seat)) !== token)
      return yield* Effect.logWarning(`seat ${seat}'s lock was taken over while its turn ran`)
    yield* writeAtomically(Lease.leasePath(dir, busyId(seat)), yield* lockBody(token))
  }).pipe(Effect.catchAll((e) => Effect.logDebug(`could not beat seat ${seat}'s lock: ${e.message}`)))

const releaseSeat = (dir: string, seat: string, token: string) =>
  Effect.gen(function* () {
    if (Option.getOrUndefined(yield* lockToken(dir, seat)) === token) yield* Lease.clear(dir, busyId(seat))
  })

/** Is a turn running on this seat right now (in any process)? */
export const seatBusy = Effect.fn("seatBusy")(function* (run: Pick<Run, "id">, seat: string) {
  const runs = yield* RunStore
  const lease = yield* Lease.read(runs.dir(run.id), busyId(seat))
  return Option.isSome(Lease.heldAt(lease, new Date(yield* Clock.currentTimeMillis)))
})

/** Keep `beat` going every `TURN_BEAT` while `body` runs. */
export const beating = <A, E, R, R2>(beat: Effect.Effect<void, never, R2>, body: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const beater = yield* Effect.fork(Effect.repeat(beat, Schedule.spaced(TURN_BEAT)))
    return yield* body.pipe(Effect.ensuring(Fiber.interrupt(beater)))
  })

/**
 * A turn's prompt, or how to write it once the seat's agent is known: the
 * prompt names magi as that agent's shell can run it (`Agents.magiNameFor`).
 */
export type TurnPrompt = string | ((magi: MagiName) => string)

export interface TurnInput {
  readonly run: string
  readonly seat: string
  readonly prompt: TurnPrompt
  readonly timeout: Duration.Duration
  /** Extra work to keep alive during the turn (the waiter beats its question lease). */
  readonly alsoBeat?: Effect.Effect<void>
}

/**
 * Run one turn and store the seat's new session. Fails only when it cannot
 * start: `SeatBusy` when another turn holds the seat, `TurnRefused` otherwise.
 */
export const runTurn = Effect.fn("runTurn")(function* (input: TurnInput) {
  const runs = yield* RunStore
  const rosters = yield* Rosters
  const agents = yield* Agents
  const fs = yield* FileSystem.FileSystem
  const run = yield* runs.get(input.run).pipe(Effect.mapError((e) => new TurnRefused({ message: e.message })))
  const seat = run.seats.find((s) => s.key === input.seat)
  if (seat === undefined) return yield* new TurnRefused({ message: `run ${run.id} has no seat ${input.seat}` })
  const dir = runs.dir(run.id)
  const refuse = (e: { readonly message: string }) => Effect.fail(new TurnRefused({ message: e.message }))
  const bound = <A, E>(e: Effect.Effect<A, E, FileSystem.FileSystem>) => Effect.provideService(e, FileSystem.FileSystem, fs)
  const turn = (token: string) =>
    Effect.gen(function* () {
      // The seat as it is now, under the lock: a turn that just ended on it
      // has moved its session and turn count on.
      const current = (yield* runs.get(run.id).pipe(Effect.mapError((e) => new TurnRefused({ message: e.message })))).seats.find(
        (s) => s.key === seat.key
      ) ?? seat
      const roster = yield* rosters.forRepo(run.repo).pipe(Effect.mapError((e) => new TurnRefused({ message: e.message })))
      const agent = roster.get(current.agent)
      if (Option.isNone(agent))
        return yield* new TurnRefused({ message: `agent ${current.agent} of seat ${current.key} is no longer in the roster` })
      // Recorded before the turn starts, so a turn killed halfway still
      // leaves what the next one needs: the session id a claude session is
      // created under (named by magi up front), the environment the CLI
      // finds its sessions by, and the turn's number, so the next turn's
      // artifacts are numbered after it instead of overwriting its own.
      const seated = {
        ...current,
        session: agent.value.kind === "claude" && current.session === null ? yield* mintUuid : current.session,
        env: current.env ?? sessionEnvOf(agent.value, process.env)
      }
      yield* runs.update(run.id, (r) => ({
        ...r,
        seats: r.seats.map((s): Seat =>
          s.key === current.key ? { ...s, session: seated.session, env: seated.env, turns: current.turns + 1 } : s
        )
      }))
      const beat = Effect.zipRight(bound(beatSeat(dir, current.key, token)), input.alsoBeat ?? Effect.void)
      const result: CallResult = yield* beating(
        beat,
        agents.call({
          agent: agent.value,
          seat: seated,
          prompt: typeof input.prompt === "string" ? input.prompt : input.prompt(yield* bound(magiNameFor(agent.value))),
          cwd: run.worktree,
          allowWrite: current.write,
          timeout: input.timeout,
          artifactsDir: runs.artifactsDir(run.id),
          stem: `${current.key}-${current.turns + 1}`,
          run: run.id,
          node: current.key
        })
      ).pipe(Effect.mapError((e) => new TurnRefused({ message: e.message })))
      yield* runs.update(run.id, (r) => ({
        ...r,
        seats: r.seats.map((s): Seat =>
          s.key === current.key ? { ...s, turns: result.seat.turns, session: result.seat.session, env: result.seat.env } : s
        )
      }))
      // Still under the seat's lock: no next turn can be writing meanwhile.
      // A turn that failed gets a plain message rather than its error as the subject.
      if (current.write)
        yield* commitAfterTurn(run.worktree, result.usable ? result.text : "", `seat ${current.key}'s turn ${result.seat.turns}`)
      return result
    })
  const take: Effect.Effect<string, SeatBusy | TurnRefused> = bound(takeSeat(dir, seat.key)).pipe(
    Effect.catchIf(
      (e): e is Exclude<typeof e, SeatBusy> => e._tag !== "SeatBusy",
      (e) => Effect.fail(new TurnRefused({ message: `cannot take seat ${seat.key}: ${e.message}` }))
    )
  )
  return yield* Effect.acquireUseRelease(
    take,
    (token) => turn(token).pipe(Effect.catchTags({ RunNotFound: refuse, RunStoreError: refuse })),
    (token) => bound(releaseSeat(dir, seat.key, token))
  )
})

/** How many of the run's questions still need a seat; fails when they cannot be listed. */
export const outstandingFor = Effect.fn("outstandingFor")(function* (runId: string) {
  const store = yield* QuestionStore
  const all = yield* store.list
  return all.filter((q) => q.run === runId && outstanding(q)).length
})

/**
 * Settle the run's status after a turn: failed or stalled by how the turn
 * went (never hidden behind `waiting`), else `waiting` while any of its
 * questions is outstanding, else done. The
 * agent's printed reply, when the turn was usable, becomes the run's summary.
 */
export const finishTurn = Effect.fn("finishTurn")(function* (runId: string, result: CallResult) {
  const runs = yield* RunStore
  // Only a usable turn's reply is the agent's account of its work. What a
  // failed turn printed (stdout empty, it is the whole stderr) is no summary:
  // the reason says what went wrong in one line, the `.err` holds the rest.
  if (result.usable && result.text.trim() !== "") yield* runs.update(runId, (r) => ({ ...r, summary: result.text.trim() }))
  // A failed or limited turn settles the run whatever is outstanding.
  const open = result.usable ? yield* Effect.either(outstandingFor(runId)) : Either.right(0)
  if (Either.isLeft(open)) {
    // Unknown is not none: a run called done here would abandon the very
    // questions it may still be waiting on. Waiting can still come back.
    const why = `its questions could not be listed (${open.left.message}), so it is left waiting rather than ended`
    yield* Effect.logWarning(`run ${runId}: ${why}`)
    return yield* runs.setStatus(runId, "waiting", why)
  }
  const status = statusAfterTurn(result, open.right)
  const reason =
    status === "failed"
      ? (result.problem ?? `the agent's turn failed (exit ${result.exitCode ?? "by signal"})`)
      : status === "stalled"
        ? `the agent hit its usage limit${result.quota ? `; it resets ${result.quota}` : ""}`
        : undefined
  return yield* runs.setStatus(runId, status, reason)
})
