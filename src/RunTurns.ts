/**
 * One turn of one seat of a run: find the seat's agent, run it in the run's
 * worktree with the seat's session, and write the seat back. Shared by
 * `magi run` (first turn, `--resume`) and the waiter (delivering an answer),
 * so a seat's session moves forward the same way whoever drives it.
 *
 * While a turn runs, the seat's busy lease (`<run dir>/seat-<key>.lease`) is
 * beaten, so the waiter never starts a second turn on a seat that is already
 * working; a turn whose process was killed stops beating, and the seat is
 * free again once the lease ages out.
 */
import { Clock, Data, Duration, Effect, Fiber, Option, Schedule } from "effect"
import { Rosters } from "./AgentRoster.js"
import { Agents, mintUuid, type CallResult } from "./Agents.js"
import * as Lease from "./Lease.js"
import { QuestionStore } from "./QuestionStore.js"
import { RunStore, outstanding, statusAfterTurn, type Run, type Seat } from "./Runs.js"

/**
 * How often a running turn re-beats its leases: well inside `LEASE_TTL` (90 s),
 * so four beats can be lost to a stalled disk before anyone thinks it dead.
 */
export const TURN_BEAT = Duration.seconds(20)

/** A turn that cannot start: the reason is shown to the owner. */
export class TurnRefused extends Data.TaggedError("TurnRefused")<{ readonly message: string }> {}

const busyId = (seat: string) => `seat-${seat}`

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

export interface TurnInput {
  readonly run: string
  readonly seat: string
  readonly prompt: string
  readonly timeout: Duration.Duration
  /** Extra work to keep alive during the turn (the waiter beats its question lease). */
  readonly alsoBeat?: Effect.Effect<void>
}

/** Run one turn and store the seat's new session. Fails only when it cannot start. */
export const runTurn = Effect.fn("runTurn")(function* (input: TurnInput) {
  const runs = yield* RunStore
  const rosters = yield* Rosters
  const agents = yield* Agents
  const run = yield* runs.get(input.run).pipe(Effect.mapError((e) => new TurnRefused({ message: e.message })))
  const seat = run.seats.find((s) => s.key === input.seat)
  if (seat === undefined) return yield* new TurnRefused({ message: `run ${run.id} has no seat ${input.seat}` })
  const roster = yield* rosters.forRepo(run.repo).pipe(Effect.mapError((e) => new TurnRefused({ message: e.message })))
  const agent = roster.get(seat.agent)
  if (Option.isNone(agent))
    return yield* new TurnRefused({ message: `agent ${seat.agent} of seat ${seat.key} is no longer in the roster` })
  // A claude session is named by magi up front; recorded before the turn, so
  // a turn that is killed halfway still leaves the id it may have created.
  const seated =
    agent.value.kind === "claude" && seat.session === null
      ? { ...seat, session: yield* mintUuid }
      : seat
  if (seated !== seat)
    yield* runs.update(run.id, (r) => ({
      ...r,
      seats: r.seats.map((s): Seat => (s.key === seat.key ? { ...s, session: seated.session } : s))
    }))
  const dir = runs.dir(run.id)
  const beat = Effect.zipRight(
    Lease.beat(dir, busyId(seat.key), "daemon"),
    input.alsoBeat ?? Effect.void
  )
  const result: CallResult = yield* beating(
    beat,
    agents.call({
      agent: agent.value,
      seat: seated,
      prompt: input.prompt,
      cwd: run.worktree,
      allowWrite: seat.write,
      timeout: input.timeout,
      artifactsDir: runs.artifactsDir(run.id),
      stem: `${seat.key}-${seat.turns + 1}`,
      run: run.id,
      node: seat.key
    })
  ).pipe(
    Effect.ensuring(Lease.clear(dir, busyId(seat.key))),
    Effect.mapError((e) => new TurnRefused({ message: e.message }))
  )
  yield* runs.update(run.id, (r) => ({
    ...r,
    seats: r.seats.map((s): Seat => (s.key === seat.key ? { ...s, turns: result.seat.turns, session: result.seat.session } : s))
  }))
  return result
})

/** How many of the run's questions still need a seat. */
export const outstandingFor = Effect.fn("outstandingFor")(function* (runId: string) {
  const store = yield* QuestionStore
  const all = yield* store.list.pipe(Effect.orElseSucceed(() => []))
  return all.filter((q) => q.run === runId && outstanding(q)).length
})

/**
 * Settle the run's status after a turn: `waiting` while any of its questions
 * is outstanding, else done, stalled or failed by how the turn went. The
 * agent's printed reply becomes the run's summary.
 */
export const finishTurn = Effect.fn("finishTurn")(function* (runId: string, result: CallResult) {
  const runs = yield* RunStore
  const open = yield* outstandingFor(runId)
  const status = statusAfterTurn(result, open)
  if (result.text.trim() !== "") yield* runs.update(runId, (r) => ({ ...r, summary: result.text.trim() }))
  const reason =
    status === "failed"
      ? result.timedOut
        ? "the agent's turn timed out"
        : `the agent's turn failed (exit ${result.exitCode ?? "by signal"})`
      : status === "stalled"
        ? `the agent hit its usage limit${result.quota ? `; it resets ${result.quota}` : ""}`
        : undefined
  return yield* runs.setStatus(runId, status, reason)
})
