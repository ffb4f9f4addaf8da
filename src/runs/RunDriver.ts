/**
 * Runs as a service: setting a run up and driving its seats' turns, for
 * `magi run` at a terminal, the queue's loop (each task) and the waiter (each
 * delivered answer). Written once, so a task runs exactly like `magi run`
 * (its own worktree, branch and record; the same turn, settled the same way)
 * and a seat's session moves forward the same way whoever drives it.
 *
 * The stores, the agents, the roster and the workspaces are taken once, when
 * the layer is built; every method is a plain effect with nothing left to
 * provide, so the long-lived loops hold the service instead of a captured
 * context to re-provide around each call.
 */
import * as CommandExecutor from "@effect/platform/CommandExecutor"
import * as FileSystem from "@effect/platform/FileSystem"
import { Cause, Clock, Duration, Effect, Either, Option, Random, Schedule, Schema } from "effect"
import { Rosters, type AgentSpec } from "../agents/AgentRoster.js"
import { Agents, KILL_GRACE, magiNameFor, mintUuid, sessionEnvOf, takesImages, type CallResult } from "../agents/Agents.js"
import { AgentProcess, endLeftover } from "../agents/Guardian.js"
import * as Lease from "../questions/Leases.js"
import * as RecordStore from "../store/RecordStore.js"
import { storeAway, untilStoreAnswers } from "../store/StoreWait.js"
import * as NodePath from "node:path"
import { MagiHome } from "../platform/MagiHome.js"
import { MagiConfig } from "../platform/MagiConfig.js"
import * as Q from "../questions/Question.js"
import { QuestionStore, type StoreError } from "../questions/QuestionStore.js"
import { IMPL_SEAT, RUN_TURN_TIMEOUT, RunNotStarted, Workspaces, type TurnOutcome } from "./NewRun.js"
import type * as Claims from "../store/Claims.js"
import { beating, makeSeatLocks, STOP_POLL, TurnRefused, TurnStopped, type SeatBusy, type TurnInput, type TurnPrompt } from "./RunTurns.js"
import { boundedSummary, RUN_SCHEMA, RunStore, outstanding, runsHere, statusAfterTurn, type Run, type Seat } from "./Runs.js"
import { commitAfterTurn } from "./TurnCommit.js"
import { nodeOfSeat } from "./Competition.js"
import * as Usage from "../agents/Usage.js"
import * as Prompts from "../agents/Prompts.js"
import * as Said from "./Said.js"

export interface RunDriverShape {
  /**
   * The git root of `dir`, or why there is none: a run works in a worktree
   * of a repository, so asked from anywhere else it is refused with the fix.
   */
  readonly repoRoot: (dir: string) => Effect.Effect<string, RunNotStarted>
  /**
   * Set a run up: a fresh id that names neither an existing run nor an
   * existing branch, its worktree off the tip of `repoDir`'s checkout, and
   * its record, `running`, with one implementing seat for `agent`.
   */
  readonly create: (instruction: string, agent: AgentSpec, repoDir: string) => Effect.Effect<Run, RunNotStarted>
  /**
   * Run the impl seat's turn and settle the run by how it went (`finish`).
   * A turn that cannot start fails the run with the reason. Interrupted (the
   * owner's Ctrl-C, the loop stopping), the run is left `stalled`: its seat
   * keeps its session, so it can be picked up again rather than sit
   * "running". Stopped by the owner, it is left `stopped`. Fails with `SeatBusy` only when another turn holds the seat.
   */
  readonly drive: (
    runId: string,
    prompt: TurnPrompt,
    timeout?: Duration.Duration
  ) => Effect.Effect<TurnOutcome, SeatBusy | RecordStore.Failure>
  /**
   * Run one turn of any seat and store the seat's new session. Fails only
   * when it cannot start: `SeatBusy` when another turn holds the seat,
   * `TurnRefused` otherwise; or with `TurnStopped` when the owner stopped it
   * (the run is then `stopped`).
   */
  readonly turn: (input: TurnInput) => Effect.Effect<CallResult, SeatBusy | TurnRefused | TurnStopped>
  /**
   * Settle the run's status after a turn: failed or stalled by how the turn
   * went (never hidden behind `waiting`), else `waiting` while any of its
   * questions is outstanding, else done. The agent's printed reply, when the
   * turn was usable, becomes the run's summary. `verifies`, given when a
   * verification follows, is what a run that would be done becomes instead,
   * in the same write: no reader (the queue's tick) ever sees it done before
   * it is verified.
   */
  readonly finish: (runId: string, result: CallResult, verifies?: (run: Run) => Run) => Effect.Effect<Run, RecordStore.Failure>
  /** Is a turn running on this seat right now (in any process)? */
  readonly seatBusy: (run: Pick<Run, "id">, seat: string) => Effect.Effect<boolean>
  /** How many of the run's questions still need a seat; fails when they cannot be listed. */
  readonly outstanding: (runId: string) => Effect.Effect<number, StoreError>
}

export class RunDriver extends Effect.Service<RunDriver>()("magi/RunDriver", {
  effect: Effect.suspend(() => make())
}) {
  static layer = RunDriver.Default
}

export const make = Effect.fn("RunDriver.make")(function* () {
  const runs = yield* RunStore
  const questions = yield* QuestionStore
  const rosters = yield* Rosters
  const agents = yield* Agents
  const workspaces = yield* Workspaces
  const home = yield* MagiHome
  const fs = yield* FileSystem.FileSystem
  // The host this process runs as: recorded on every run it creates, and the
  // only one whose runs' turns it starts (their worktrees are on its disk).
  const self = (yield* MagiConfig).hostName
  // Optional, as it always was: with no processes to start (the in-memory
  // tests) a turn's leftovers are simply not committed.
  const executor = yield* Effect.serviceOption(CommandExecutor.CommandExecutor)
  // magi's own path is a plain module function over the
  // filesystem; it gets this one, as the seats' locks do.
  const bound = <A, E>(e: Effect.Effect<A, E, FileSystem.FileSystem>) => Effect.provideService(e, FileSystem.FileSystem, fs)
  const commit = (worktree: string, summary: string, label: string) =>
    Option.match(executor, {
      onNone: () => Effect.void,
      onSome: (ex) => commitAfterTurn(worktree, summary, label).pipe(Effect.provideService(CommandExecutor.CommandExecutor, ex))
    })

  const repoRoot = (dir: string) =>
    workspaces.repoRoot(dir).pipe(
      Effect.mapError(
        () =>
          new RunNotStarted({
            message: `${dir} is not inside a git repository; a run works in a worktree of one, so run it from inside the repository or give --repo DIR`
          })
      )
    )

  const create = Effect.fn("RunDriver.create")(function* (instruction: string, agent: AgentSpec, repoDir: string) {
    const at = new Date(yield* Clock.currentTimeMillis)
    const draw = Effect.map(Random.nextIntBetween(0, 0x10000), (n) => Q.makeId(at, n))
    let id = yield* draw
    while (Option.isSome(yield* Effect.option(runs.get(id))) || (yield* workspaces.branchTaken(repoDir, Q.shortId(id)))) id = yield* draw
    const tree = yield* workspaces
      .create(repoDir, home.dir, id, Q.shortId(id))
      .pipe(Effect.mapError((e) => new RunNotStarted({ message: e.message })))
    const run: Run = {
      schema: RUN_SCHEMA,
      id,
      status: "running",
      instruction,
      repo: tree.repo,
      base: tree.base,
      base_commit: tree.baseCommit,
      worktree: tree.path,
      branch: tree.branch,
      seats: [{ key: IMPL_SEAT, agent: agent.id, turns: 0, session: null, write: true }],
      created_at: Q.timestamp(at),
      updated_at: Q.timestamp(at),
      summary: "",
      reason: "",
      host: self
    }
    yield* runs.put(run).pipe(Effect.mapError((e) => new RunNotStarted({ message: e.message })))
    return run
  })

  const seatLocks = yield* bound(makeSeatLocks)
  /** A run's write after a turn ran: waited out while the store is away, never dropped (the turn would be run again). */
  const surely = <A, E extends { readonly _tag: string; readonly message: string }>(what: string, write: Effect.Effect<A, E>) =>
    untilStoreAnswers(what, write, storeAway)

  // The agent process of a seat's turn, kept beside the seat's lock while
  // the turn runs: a turn whose magi died is ended by whoever finds it so.
  const agentFile = (runId: string, seat: string) => NodePath.join(runs.dir(runId), Lease.LEASES_DIR, `seat-${seat}.agent.json`)
  const recordAgent = (runId: string, seat: string) => (p: AgentProcess) =>
    fs.writeFileString(agentFile(runId, seat), JSON.stringify(p)).pipe(
      // display: the agent's pid file is a hint for magi stop; a failed write is logged
      Effect.catchAll((e) => Effect.logWarning(`run ${runId}: could not record seat ${seat}'s agent process: ${e.message}`))
    )
  // fallback: best-effort removal of the pid file
  const forgetAgent = (runId: string, seat: string) => fs.remove(agentFile(runId, seat)).pipe(Effect.ignore)
  /** End what is left of the seat's last turn's agent, if its turn is gone and it is not. */
  const endLeftoverAgent = (runId: string, seat: string) =>
    Effect.gen(function* () {
      const text = yield* fs.readFileString(agentFile(runId, seat)).pipe(Effect.option)
      if (Option.isNone(text)) return
      const rec = Schema.decodeUnknownOption(Schema.parseJson(AgentProcess))(text.value)
      if (Option.isSome(rec)) yield* endLeftover(rec.value, KILL_GRACE)
      yield* forgetAgent(runId, seat)
    })

  // No turn is going on once the seat's lock is free and its last agent, if
  // its magi died under it, has been ended: a retry never overlaps it.
  const seatBusy = (run: Pick<Run, "id">, seat: string) =>
    Effect.flatMap(seatLocks.held(runs.dir(run.id), seat), (held) => held ? Effect.succeed(true) : Effect.as(endLeftoverAgent(run.id, seat), false))

  const turn = Effect.fn("RunDriver.turn")(function* (input: TurnInput) {
    const run = yield* runs.get(input.run).pipe(Effect.mapError((e) => new TurnRefused({ message: e.message })))
    if (!runsHere(run, self))
      return yield* new TurnRefused({
        message: `run ${
          Q.shortId(run.id)
        } lives on host ${run.host}: its worktree and its agent's session are there, so only that host's magi runs its turns (this is ${self})`
      })
    const seat = run.seats.find((s) => s.key === input.seat)
    if (seat === undefined) return yield* new TurnRefused({ message: `run ${run.id} has no seat ${input.seat}` })
    const dir = runs.dir(run.id)
    const refuse = (e: { readonly message: string }) => Effect.fail(new TurnRefused({ message: e.message }))
    const underLock = (lock: Claims.Claim) =>
      Effect.gen(function* () {
        // The seat as it is now, under the lock: a turn that just ended on it
        // has moved its session and turn count on.
        const current = (yield* runs.get(run.id).pipe(Effect.mapError((e) => new TurnRefused({ message: e.message })))).seats.find(
          (s) => s.key === seat.key
        ) ?? seat
        // A turn before this one whose magi died may have left its agent running.
        yield* endLeftoverAgent(run.id, current.key)
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
        // The owner's words queued for this seat are taken in the same write
        // that counts the turn (`Said.take`): given to this turn and no other.
        let said: ReadonlyArray<Said.SaidWord> = []
        yield* runs.update(run.id, (r, now) => {
          const took = Said.take(r.said, current.key, current.turns + 1, now)
          said = took.taken
          if (input.saidOnly === true && took.taken.length === 0) return r
          return {
            ...r,
            ...(took.taken.length === 0 ? {} : { said: took.said }),
            seats: r.seats.map((s): Seat => s.key === current.key ? { ...s, session: seated.session, env: seated.env, turns: current.turns + 1 } : s)
          }
        })
        if (input.saidOnly === true && said.length === 0)
          return yield* new TurnRefused({ message: `seat ${current.key} of run ${Q.shortId(run.id)} has no words of the owner's waiting` })
        const beat = Effect.zipRight(seatLocks.beat(current.key, lock), input.alsoBeat ?? Effect.void)
        // The owner's stop, asked from any process on any host, lands in the
        // record: looked for every STOP_POLL while the agent works. Seeing it
        // interrupts the call, whose scope ends the agent's process group.
        const stopAsked = runs.get(run.id).pipe(
          Effect.map((r) => r.stop_requested_at !== undefined),
          // fallback: a record that cannot be read is "no stop asked" this time; the next poll reads it again
          Effect.orElseSucceed(() => false),
          Effect.repeat({ schedule: Schedule.spaced(STOP_POLL), until: (asked) => asked })
        )
        const images = said.flatMap((w) => (w.images ?? []).map((name) => NodePath.join(runs.dir(run.id), Said.IMAGES_DIR, name)))
        const called = yield* Effect.raceFirst(
          beating(
            beat,
            agents.call({
              agent: agent.value,
              seat: seated,
              prompt: Prompts.withOwnerWords(
                typeof input.prompt === "string" ? input.prompt : input.prompt(yield* bound(magiNameFor(agent.value))),
                said.map((w) => ({ ...w, images: (w.images ?? []).map((name) => NodePath.join(runs.dir(run.id), Said.IMAGES_DIR, name)) })),
                { imagesGiven: takesImages(agent.value) }
              ),
              ...(images.length === 0 ? {} : { images }),
              cwd: current.worktree ?? run.worktree,
              allowWrite: current.write,
              timeout: input.timeout,
              artifactsDir: runs.artifactsDir(run.id),
              stem: `${current.key}-${current.turns + 1}`,
              run: run.id,
              node: nodeOfSeat(current.key),
              repo: run.repo,
              onStart: recordAgent(run.id, current.key)
            })
          ).pipe(Effect.map(Either.right)),
          Effect.as(stopAsked, Either.left(new TurnStopped({ run: run.id, seat: current.key })))
        ).pipe(
          Effect.ensuring(forgetAgent(run.id, current.key)),
          Effect.mapError((e) => new TurnRefused({ message: e.message }))
        )
        if (Either.isLeft(called)) {
          // What the stopped agent left is kept on the branch, so nothing is lost whatever the owner does next.
          if (current.write) yield* commit(current.worktree ?? run.worktree, "", `seat ${current.key}'s turn ${current.turns + 1}, stopped by the owner`)
          yield* runs.setStatus(run.id, "stopped", `stopped by the owner; continue it with magi run --resume ${Q.shortId(run.id)}`)
          return yield* called.left
        }
        const result: CallResult = called.right
        // The turn ran: its seat is saved, the store waited for if it is away.
        yield* surely(
          `run ${Q.shortId(run.id)}: saving seat ${current.key}`,
          runs.update(run.id, (r) => ({
            ...r,
            seats: r.seats.map((s): Seat => {
              if (s.key !== current.key) return s
              const usage = Usage.withTurn(s.usage, result.seat.turns, result.usage)
              return { ...s, turns: result.seat.turns, session: result.seat.session, env: result.seat.env, ...(usage === undefined ? {} : { usage }) }
            })
          }))
        )
        // Still under the seat's lock: no next turn can be writing meanwhile.
        // A turn that failed gets a plain message rather than its error as the subject.
        if (current.write) yield* commit(current.worktree ?? run.worktree, result.usable ? result.text : "", `seat ${current.key}'s turn ${result.seat.turns}`)
        return result
      })
    const take: Effect.Effect<Claims.Claim, SeatBusy | TurnRefused> = seatLocks.take(dir, seat.key).pipe(
      Effect.catchIf(
        (e): e is Exclude<typeof e, SeatBusy> => e._tag !== "SeatBusy",
        (e) => Effect.fail(new TurnRefused({ message: `cannot take seat ${seat.key}: ${e.message}` }))
      )
    )
    return yield* Effect.acquireUseRelease(
      take,
      (lock) => underLock(lock).pipe(Effect.catchIf((e): e is Extract<typeof e, RecordStore.Failure> => RecordStore.isFailure(e), refuse)),
      (lock) => seatLocks.release(lock)
    )
  })

  const outstandingFor = Effect.fn("RunDriver.outstanding")(function* (runId: string) {
    const all = yield* questions.list
    return all.filter((q) => q.run === runId && outstanding(q)).length
  })

  /**
   * The owner asked back, the seat's `magi ask` showed it their words, and
   * the agent answered them in its printed reply and ended its turn instead
   * of replying on the thread: that reply is recorded on the thread, where
   * the owner reads it (the waiter does the same for a turn it resumed).
   * A question of the seat still owing a reply, with every word of the
   * owner's shown, is the one this turn answered.
   */
  const replyOwed = (runId: string, seat: string, text: string) =>
    Effect.gen(function* () {
      const owed = (yield* questions.list).filter((q) => q.run === runId && q.seat === seat && Q.waitingOnAgent(q) && Q.unreadOwnerTurns(q) === undefined)
      const now = new Date(yield* Clock.currentTimeMillis)
      for (const q of owed)
        yield* questions.update(q.id, (fresh) =>
          Q.waitingOnAgent(fresh) && Q.unreadOwnerTurns(fresh) === undefined
            ? Either.orElse(Q.reply(fresh, text, fresh.choices, now), () => Either.right(fresh))
            : Either.right(fresh))
      // display: a reply not put on its question is logged; the turn's result stands
    }).pipe(Effect.catchAll((e) => Effect.logWarning(`run ${runId}: the agent's reply could not be put on its question: ${e.message}`)))

  const finish = Effect.fn("RunDriver.finish")(function* (runId: string, result: CallResult, verifies?: (run: Run) => Run) {
    // Only a usable turn's reply is the agent's account of its work. What a
    // failed turn printed (stdout empty, it is the whole stderr) is no summary:
    // the reason says what went wrong in one line, the `.err` holds the rest.
    const what = `run ${Q.shortId(runId)}: settling its turn`
    if (result.usable && result.text.trim() !== "") yield* replyOwed(runId, result.seat.key, result.text.trim())
    // Bounded: a turn that printed megabytes keeps its tail here, the whole in its `.out`.
    if (result.usable && result.text.trim() !== "")
      yield* surely(what, runs.update(runId, (r) => ({ ...r, summary: boundedSummary(result.text.trim(), `${result.seat.key}-${result.seat.turns}.out`) })))
    // A failed or limited turn settles the run whatever is outstanding.
    const open = result.usable ? yield* Effect.either(untilStoreAnswers(what, outstandingFor(runId))) : Either.right(0)
    if (Either.isLeft(open)) {
      // Unknown is not none: a run called done here would abandon the very
      // questions it may still be waiting on. Waiting can still come back.
      const why = `its questions could not be listed (${open.left.message}), so it is left waiting rather than ended`
      yield* Effect.logWarning(`run ${runId}: ${why}`)
      return yield* surely(what, runs.setStatus(runId, "waiting", why))
    }
    const status = statusAfterTurn(result, open.right)
    const reason = status === "failed"
      ? (result.problem ?? `the agent's turn failed (exit ${result.exitCode ?? "by signal"})`)
      : status === "stalled"
      ? `the agent hit its usage limit${result.quota ? `; it resets ${result.quota}` : ""}`
      : undefined
    if (status === "done" && verifies !== undefined) return yield* surely(what, runs.update(runId, verifies))
    return yield* surely(what, runs.setStatus(runId, status, reason))
  })

  const drive = Effect.fn("RunDriver.drive")(function* (runId: string, prompt: TurnPrompt, timeout: Duration.Duration = RUN_TURN_TIMEOUT) {
    const result = yield* turn({ run: runId, seat: IMPL_SEAT, prompt, timeout }).pipe(
      Effect.map((r): CallResult | undefined => r),
      // fallback: best-effort status; the refusal itself is what is reported
      Effect.catchTag("TurnRefused", (e) => Effect.as(runs.setStatus(runId, "failed", e.message).pipe(Effect.ignore), undefined)),
      // The turn already left the run `stopped`, as the owner asked.
      Effect.catchTag("TurnStopped", () => Effect.succeed<CallResult | undefined>(undefined)),
      // fallback: best-effort status on an interrupted run; a resume reads the record as it is
      Effect.onInterrupt(() => runs.setStatus(runId, "stalled", "interrupted; continue with magi run --resume").pipe(Effect.ignore)),
      // Anything else unexpected (a defect, an I/O error in between) settles
      // the run as failed with the reason: never `running` forever.
      Effect.tapErrorCause((cause) =>
        Cause.isInterruptedOnly(cause) || Cause.failureOption(cause).pipe(Option.exists((e) => e._tag === "SeatBusy"))
          ? Effect.void
          // fallback: best-effort status; the defect itself propagates
          : runs.setStatus(runId, "failed", `the turn ended unexpectedly: ${Cause.pretty(cause).split("\n")[0]}`).pipe(Effect.ignore)
      )
    )
    if (result === undefined) return { run: yield* runs.get(runId), result } satisfies TurnOutcome
    return { run: yield* finish(runId, result), result } satisfies TurnOutcome
  })

  return { repoRoot, create, drive, turn, finish, seatBusy, outstanding: outstandingFor } satisfies RunDriverShape
})
