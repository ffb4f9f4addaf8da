/**
 * The conductor: one agent seat that, once per loop cycle and only when
 * something changed, decides `blocked_by` for queued tasks and a recovery
 * for stalled and finished ones (see `ConductorDecide` for the rules).
 *
 * Non-blocking by construction: a decision that wants the owner's judgement
 * files a question and blocks its task on it, and the cycle moves on; nothing
 * here waits for an answer (the loop's blocker resolution carries the answer
 * into the task). Fails soft, always: an unusable roster, a timed-out turn or
 * an unreadable reply is logged and the cycle changes nothing; `cycle` never
 * fails, and the loop goes on to its own next task whatever happened here.
 *
 * On this machine, under `<home>/conduct/`: `seat.json` (its CLI
 * conversation, so it keeps its context between turns: the CLI's session is
 * this machine's too) and `artifacts/turn-<n>/` (each turn's prompt and
 * output). Every decision, applied or refused with why, goes to the
 * `ConductorLog`: `decisions.jsonl` there too, or the database when the
 * records are in PostgreSQL.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import { Clock, Context, Duration, Effect, Either, Layer, Option, Random, Ref, Schedule } from "effect"
import * as NodePath from "node:path"
import { Rosters } from "../agents/AgentRoster.js"
import { Agents, newSeat, type SeatState } from "../agents/Agents.js"
import { writeAtomically } from "../store/files/AtomicFile.js"
import { MagiConfig } from "../platform/MagiConfig.js"
import { MagiHome } from "../platform/MagiHome.js"
import * as Q from "../questions/Question.js"
import { QuestionStore } from "../questions/QuestionStore.js"
import { resolveBlocker } from "../queue/Filing.js"
import * as T from "../queue/Task.js"
import { TaskStore } from "../queue/TaskStore.js"
import { RunStore, type Run } from "../runs/Runs.js"
import { git } from "../runs/Worktree.js"
import * as CommandExecutor from "@effect/platform/CommandExecutor"
import * as Claims from "../store/Claims.js"
import * as StoreBackend from "../store/StoreBackend.js"
import * as ConfiguredStore from "../platform/ConfiguredStore.js"
import * as D from "./ConductorDecide.js"
import { ConductorLog, type DecisionRecord } from "./ConductorLog.js"
import { parseVerdict, type Decision } from "./ConductorVerdict.js"
import * as Deputy from "./Deputy.js"

/** A conductor turn reads the queue and writes one JSON block; five minutes is ample, and bounds a hung CLI. */
export const CONDUCTOR_TURN_TIMEOUT = Duration.seconds(300)

export const conductDir = (home: { readonly dir: string }) => NodePath.join(home.dir, "conduct")
export const seatPath = (home: { readonly dir: string }) => NodePath.join(conductDir(home), "seat.json")

/**
 * The conductor is one per installation: the host whose loop holds this
 * claim conducts, the others' cycles do nothing. Its lifetime is `[host]
 * claim_ttl`, as a task's claim: a host that went away hands it on within
 * it; one that died on this machine, at once (its pid). It is renewed
 * (`renewEvery`) while a turn runs, which may take `CONDUCTOR_TURN_TIMEOUT`,
 * longer than the claim.
 */
const conductorClaim = (config: { readonly claimTtlSecs: number }) => Claims.acrossHosts(config.claimTtlSecs)
/** The claim's key, under the `conduct` folder (`<home>/conduct/conductor.claim`, or a row). */
const CONDUCTOR_KEY = "conductor"

/** The branch a task's own run left with commits ahead of its base, if one did. */
export type SurvivingBranch = (run: Run) => Effect.Effect<Option.Option<{ readonly branch: string; readonly head: string }>>

/** By git: the run's branch, when it has commits its base commit does not. */
export const gitSurvivingBranch = (executor: CommandExecutor.CommandExecutor): SurvivingBranch => (run) =>
  Effect.gen(function* () {
    if (run.branch === "" || run.base_commit === "") return Option.none()
    const ahead = yield* git(run.repo, "rev-list", "--count", `${run.base_commit}..${run.branch}`)
    if (Number(ahead) <= 0) return Option.none()
    const head = yield* git(run.repo, "rev-parse", run.branch)
    return Option.some({ branch: run.branch, head })
    // fallback: a repository whose state cannot be read adds nothing to the conductor's prompt
  }).pipe(Effect.provideService(CommandExecutor.CommandExecutor, executor), Effect.orElseSucceed(() => Option.none()))

export interface ConductorOptions {
  /** `magi serve --no-conductor`: off whatever `[roles] conductor` says. */
  readonly disabled?: boolean | undefined
  readonly maxAttempts?: number | undefined
  /** How a surviving branch is found; git by default. */
  readonly survivingBranch?: SurvivingBranch | undefined
}

export interface ConductorShape {
  /** One cycle: a turn if something changed and there is anything to show; lines saying what it did. Never fails. */
  readonly cycle: Effect.Effect<ReadonlyArray<string>>
  /** Is a conductor turn in flight right now? */
  readonly busy: Effect.Effect<boolean>
}

export class Conductor extends Context.Tag("magi/Conductor")<Conductor, ConductorShape>() {
  /** The conductor, its decisions logged on the configured backend. */
  static layer = (options: ConductorOptions = {}) =>
    Layer.scoped(Conductor, Effect.suspend(() => make(options))).pipe(Layer.provide(Layer.merge(ConductorLog.layer, ConfiguredStore.layer)))
  /** No conductor at all (tests of the loop alone, embedding). */
  static off = Layer.succeed(Conductor, { cycle: Effect.succeed([]), busy: Effect.succeed(false) })
}

const SeatFile = (s: unknown): SeatState | undefined => {
  if (typeof s !== "object" || s === null) return undefined
  const o = s as Record<string, unknown>
  if (typeof o.key !== "string" || typeof o.agent !== "string" || typeof o.turns !== "number") return undefined
  return { key: o.key, agent: o.agent, turns: o.turns, session: typeof o.session === "string" ? o.session : null }
}

export const make = Effect.fn("Conductor.make")(function* (options: ConductorOptions) {
  const tasks = yield* TaskStore
  const questions = yield* QuestionStore
  const runs = yield* RunStore
  const rosters = yield* Rosters
  const agents = yield* Agents
  const config = yield* MagiConfig
  const home = yield* MagiHome
  const fs = yield* FileSystem.FileSystem
  const log = yield* ConductorLog
  const executor = yield* Effect.serviceOption(CommandExecutor.CommandExecutor)
  const survivingBranch: SurvivingBranch = options.survivingBranch ??
    (Option.isSome(executor) ? gitSurvivingBranch(executor.value) : () => Effect.succeed(Option.none()))
  const maxAttempts = options.maxAttempts ?? config.maxAttempts
  const lastSeen = yield* Ref.make<D.Snapshot | undefined>(undefined)
  const inTurn = yield* Ref.make(false)
  const dir = conductDir(home)
  const nowDate = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))
  const withFs = <A, E>(e: Effect.Effect<A, E, FileSystem.FileSystem>) => Effect.provideService(e, FileSystem.FileSystem, fs)

  // -- one conductor across hosts ----------------------------------------------------

  const backend = yield* StoreBackend.StoreBackend
  const claims = yield* withFs(StoreBackend.claims("conduct", ".claim").pipe(Effect.provideService(StoreBackend.StoreBackend, backend)))
  const held = yield* Ref.make(Option.none<Claims.Claim>())
  // An orderly stop hands the conductor on at once, not after the claim's ttl.
  yield* Effect.addFinalizer(() => Effect.flatMap(Ref.get(held), (mine) => (Option.isSome(mine) ? claims.release(mine.value) : Effect.void)))

  /** Does this host conduct now? It keeps the claim it has, or takes it when free; a live holder elsewhere keeps it. */
  const mayConduct = Effect.gen(function* () {
    const mine = yield* Ref.get(held)
    if (Option.isSome(mine)) {
      if (yield* claims.renew(mine.value)) return true
      yield* Ref.set(held, Option.none())
      yield* Effect.logWarning("conductor: another host took the conductor's claim over while this one was not renewing it; it conducts now")
    }
    const got = yield* claims.acquire(CONDUCTOR_KEY, conductorClaim(config), { host: config.hostName })
    if (Either.isLeft(got)) return false
    yield* Ref.set(held, Option.some(got.right))
    yield* Effect.logInfo(`conductor: this host (${config.hostName}) conducts`)
    return true
  }).pipe(
    // fallback: a claim that cannot be read is "not ours": this cycle changes nothing
    Effect.catchAll((e) => Effect.as(Effect.logWarning(`conductor: could not read the conductor's claim (${e.message}); this cycle changes nothing`), false))
  )

  /** Keep the claim fresh while `effect` (a turn) runs. */
  const keepingClaim = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.gen(function* () {
      const mine = yield* Ref.get(held)
      if (Option.isNone(mine)) return yield* effect
      // fallback: a missed renewal is retried on the schedule; a lost claim is seen at the next cycle
      const renew = claims.renew(mine.value).pipe(Effect.ignore)
      const every = conductorClaim(config).renewEvery
      return yield* Effect.scoped(
        Effect.zipRight(Effect.forkScoped(Effect.repeat(renew, Schedule.spaced(every)).pipe(Effect.delay(every))), effect)
      )
    })

  const loadSeat = fs.readFileString(seatPath(home)).pipe(
    Effect.map((text) => SeatFile(JSON.parse(text))),
    // fallback: a seat file that cannot be read starts a fresh conductor session
    Effect.orElseSucceed(() => undefined)
  )
  const saveSeat = (s: SeatState) => withFs(writeAtomically(seatPath(home), JSON.stringify(s, null, 2) + "\n"))

  const nextTurn = Effect.gen(function* () {
    // fallback: turn folders that cannot be listed number the next turn 1 (a folder that exists is not overwritten)
    const names = yield* fs.readDirectory(NodePath.join(dir, "artifacts")).pipe(Effect.orElseSucceed((): string[] => []))
    const used = names.map((n) => /^turn-(\d+)$/.exec(n)?.[1]).filter((n) => n !== undefined).map(Number)
    return used.length === 0 ? 1 : Math.max(...used) + 1
  })

  const lastRun = (t: T.Task) => {
    const id = t.runs.at(-1)
    // Only a run that is gone is "no run": a failed read would hide a stalled run from the rule that it may only be requeued or held.
    // @effect-diagnostics-next-line effectSucceedWithVoid:off -- the value is "no run", not "no result"
    return id === undefined ? Effect.succeed(undefined) : runs.get(id).pipe(Effect.catchTag("RecordNotFound", () => Effect.succeed(undefined)))
  }

  // display: the decision log is a record for the owner; a failed append is logged
  const record = (r: DecisionRecord) => log.append(r).pipe(Effect.catchAll((e) => Effect.logWarning(`conductor: could not record a decision: ${e.message}`)))

  /** Abandon open conductor questions no task waits on any more: nobody would read their answer. */
  const abandonOrphans = (all: ReadonlyArray<T.Task>) =>
    Effect.gen(function* () {
      const waited = new Set(all.flatMap((t) => t.blocked_by))
      // fallback: questions that cannot be listed abandon nothing this cycle
      const open = (yield* questions.list.pipe(Effect.orElseSucceed(() => []))).filter((q) => D.isConductorQuestion(q) && Q.isOpen(q))
      const now = new Date(yield* Clock.currentTimeMillis)
      for (const q of open)
        if (!waited.has(q.id))
          // fallback: an orphan question left open is abandoned at the next cycle
          yield* questions.update(q.id, (x) => Either.right(Q.abandon(x, "no task waits on this conductor question any more", now))).pipe(Effect.ignore)
    })

  // -- applying -----------------------------------------------------------------------

  /** Apply one decision; the record of what came of it. */
  const applyOne = (turn: number, d: Decision): Effect.Effect<DecisionRecord> =>
    Effect.gen(function* () {
      const at = T.timestamp(yield* nowDate)
      const base = { at, turn, task: d.id, decision: d }
      const refused = (why: string): DecisionRecord => ({ ...base, outcome: "refused", why })
      const id = yield* Effect.either(tasks.resolveId(d.id))
      if (Either.isLeft(id)) return refused(id.left.message)
      const full = { ...base, task: id.right }
      // fallback: a claim that cannot be taken is a refusal: nothing is written
      if (!(yield* tasks.claim(id.right).pipe(Effect.orElseSucceed(() => false))))
        return { ...full, outcome: "refused", why: `task ${T.shortId(id.right)} is claimed by a loop working on it` } satisfies DecisionRecord
      return yield* applyClaimed(full, d).pipe(Effect.ensuring(tasks.unclaim(id.right)))
    })

  const applyClaimed = (base: Omit<DecisionRecord, "outcome" | "why">, d: Decision): Effect.Effect<DecisionRecord> =>
    Effect.gen(function* () {
      const refused = (why: string): DecisionRecord => ({ ...base, outcome: "refused", why })
      const current = yield* Effect.either(tasks.get(base.task))
      if (Either.isLeft(current)) return refused(current.left.message)
      // Blockers go through the queue's own resolution (`--after`'s): an id
      // that names nothing, or names two things, is refused by its message.
      let resolved = d
      if (d.question === undefined && d.blocked_by !== undefined && d.blocked_by.length > 0) {
        const ids: string[] = []
        for (const b of d.blocked_by) {
          const r = yield* Effect.either(resolveBlocker(b).pipe(Effect.provideService(TaskStore, tasks), Effect.provideService(QuestionStore, questions)))
          if (Either.isLeft(r)) return refused(r.left.message.replace(/^--after /, "blocked_by "))
          ids.push(r.right.id)
        }
        resolved = { ...d, blocked_by: ids }
      }
      // The queue as it is: read as empty, a circle through it would go unseen and be written (refused below instead).
      const all = yield* tasks.list
      const run = yield* lastRun(current.right)
      const branch = run === undefined ? Option.none() : yield* survivingBranch(run)
      const ctx: D.DecideContext = {
        all,
        exists: () => true,
        stalled: run?.status === "stalled",
        survivingBranch: Option.match(branch, { onNone: () => null, onSome: (b) => b.branch })
      }
      const plan = D.planDecision(current.right, resolved, ctx)
      if (plan._tag === "Refuse") return refused(plan.why)
      if (plan._tag === "Ask") return yield* ask(base, current.right, plan, d.reason ?? "")
      const after = yield* Effect.either(
        tasks.update(base.task, (fresh) => {
          const again = D.planDecision(fresh, resolved, { ...ctx, all })
          return again._tag === "Change" ? Either.right(again.task) : Either.left(again._tag === "Refuse" ? again.why : "the task changed")
        })
      )
      if (Either.isLeft(after)) return refused(typeof after.left === "string" ? after.left : after.left.message)
      return { ...base, outcome: "applied", why: plan.what } satisfies DecisionRecord
      // fallback: any failure of one decision is its refusal, recorded; nothing more is written for it
    }).pipe(Effect.catchAll((e): Effect.Effect<DecisionRecord> => Effect.succeed({ ...base, outcome: "refused" as const, why: e.message })))

  /** File (or reuse) this task's conductor question and block the task on it. Never waits. */
  const ask = (base: Omit<DecisionRecord, "outcome" | "why">, t: T.Task, plan: { question: string; choices: ReadonlyArray<string> }, reason: string) =>
    Effect.gen(function* () {
      // A failed read is not "no question yet": filing on it could ask the
      // owner twice. The decision is refused and the next tick looks again.
      const listed = yield* Effect.either(questions.list)
      if (Either.isLeft(listed)) {
        yield* Ref.set(lastSeen, undefined)
        return { ...base, outcome: "refused", why: `the questions could not be read (${listed.left.message}); nothing was filed` } satisfies DecisionRecord
      }
      const existing = listed.right.find((q) => D.isConductorQuestion(q) && q.run === t.id && Q.isOpen(q))
      let qid: string
      if (existing !== undefined) qid = existing.id
      else {
        const now = yield* nowDate
        for (;;) {
          const q = Q.make({
            id: Q.makeId(now, yield* Random.nextIntBetween(0, 0x10000)),
            run: t.id,
            node: D.NODE,
            seat: D.NODE,
            summary: plan.question,
            detail: reason.trim() === "" ? "(the conductor recorded no reason)" : reason.trim(),
            choices: plan.choices,
            // No cwd: nobody waits on it, so the waiter has no seat to carry
            // the answer to; the loop's blocker resolution reads it instead.
            now,
            // The deputy's brief, as the conductor knows it now, kept with the question.
            deputyBrief: Deputy.conductorBrief(t, plan.question, reason, plan.choices)
          })
          if (yield* questions.create(q)) {
            qid = q.id
            break
          }
        }
      }
      // A held task cannot wait on anything by the queue's rules; the
      // conductor only ever holds for the machine, so it puts it back first.
      const after = yield* Effect.either(
        tasks.update(t.id, (fresh) => {
          if (fresh.blocked_by.includes(qid)) return Either.right(fresh)
          const from = fresh.status === "held" && fresh.hold_source === "machine" ? Either.getOrElse(T.release(fresh), () => fresh) : fresh
          return T.block(from, [qid], `the conductor asked the owner: ${plan.question}`)
        })
      )
      if (Either.isLeft(after)) return { ...base, outcome: "refused", why: after.left.message, question: qid } satisfies DecisionRecord
      return {
        ...base,
        outcome: "applied",
        why: `${existing !== undefined ? "waits on its open question" : "asked the owner"} ${Q.shortId(qid)}`,
        question: qid
      } satisfies DecisionRecord
    })

  // -- the turn -----------------------------------------------------------------------

  const turnOf = (lists: D.Lists) =>
    Effect.gen(function* () {
      const lines: string[] = []
      const say = (line: string) => Effect.zipRight(Effect.logInfo(`conductor: ${line}`), Effect.sync(() => lines.push(line)))
      const shown = [...lists.runnable, ...lists.stalled, ...lists.finished]
      // Its turn runs in a clone this host has (tasks named by repository
      // may be for others' clones only).
      const repo = shown.map((t) => T.repoHere(t, config.repos)).find((r) => r !== undefined)
      if (repo === undefined) {
        yield* say("none of the tasks it would look at is in a repository this host has a clone of; this cycle changes nothing")
        return lines
      }
      const roster = yield* Effect.either(rosters.forRepo(repo))
      const spec = Either.isRight(roster) ? roster.right.get(config.conductor!) : Option.none()
      if (Option.isNone(spec)) {
        yield* say(
          Either.isLeft(roster)
            ? `the roster for ${repo} cannot be read (${roster.left.message}); this cycle changes nothing`
            : `[roles] conductor names ${config.conductor}, which is not in the roster for ${repo}; this cycle changes nothing`
        )
        return lines
      }
      const outcomes = new Map<string, D.Outcome>()
      for (const t of [...lists.stalled, ...lists.finished]) {
        const run = yield* lastRun(t)
        if (run === undefined) continue
        const b = yield* survivingBranch(run)
        outcomes.set(t.id, {
          run: run.id,
          status: run.status,
          branch: Option.match(b, { onNone: () => null, onSome: (x) => x.branch }),
          head: Option.match(b, { onNone: () => null, onSome: (x) => x.head })
        })
      }
      // Unread, the open questions would be shown as none, and the turn would ask again.
      const listed = yield* Effect.either(questions.list)
      if (Either.isLeft(listed)) {
        yield* Ref.set(lastSeen, undefined)
        yield* say(`the questions cannot be read (${listed.left.message}); this cycle changes nothing`)
        return lines
      }
      const open = new Set(listed.right.filter((q) => D.isConductorQuestion(q) && Q.isOpen(q)).map((q) => q.run))
      const prompt = D.conductorPrompt(lists, maxAttempts, outcomes, open)
      const saved = yield* loadSeat
      const seat = saved !== undefined && saved.agent === spec.value.id ? saved : newSeat(D.NODE, spec.value.id)
      const turn = yield* nextTurn
      const result = yield* Effect.either(
        agents.call({
          agent: spec.value,
          seat,
          prompt,
          cwd: repo,
          allowWrite: false,
          timeout: CONDUCTOR_TURN_TIMEOUT,
          artifactsDir: NodePath.join(dir, "artifacts", `turn-${turn}`),
          stem: D.NODE,
          run: "",
          node: D.NODE
        })
      )
      if (Either.isLeft(result)) {
        yield* say(`turn ${turn} could not start (${result.left.message}); this cycle changes nothing`)
        return lines
      }
      // display: a seat that cannot be saved is logged; the next turn starts a fresh session
      yield* saveSeat(result.right.seat).pipe(Effect.catchAll((e) => Effect.logWarning(`conductor: could not save its seat: ${e.message}`)))
      if (!result.right.usable) {
        yield* say(
          result.right.timedOut
            ? `turn ${turn} timed out after ${Duration.toSeconds(CONDUCTOR_TURN_TIMEOUT)} s; this cycle changes nothing`
            : `turn ${turn} failed (exit ${result.right.exitCode ?? "?"}); this cycle changes nothing`
        )
        return lines
      }
      const verdict = parseVerdict(result.right.text)
      if (Either.isLeft(verdict)) {
        yield* say(`turn ${turn}: ${verdict.left}; this cycle changes nothing`)
        return lines
      }
      for (const d of verdict.right.decisions) {
        const r = yield* applyOne(turn, d).pipe(
          // display: a failed turn is logged and changes nothing
          Effect.catchAllCause((c) =>
            nowDate.pipe(
              Effect.map((now): DecisionRecord => ({
                at: T.timestamp(now),
                turn,
                task: d.id,
                decision: d,
                outcome: "refused",
                why: `it could not be applied: ${c}`
              }))
            )
          )
        )
        yield* record(r)
        yield* say(`${r.outcome} for task ${T.shortId(r.task)}: ${r.why}`)
      }
      return lines
    })

  const cycle = Effect.gen(function* () {
    if (options.disabled === true || config.conductor === null) return [] as ReadonlyArray<string>
    if (!(yield* mayConduct)) return [] as ReadonlyArray<string>
    // fallback: a queue that cannot be listed makes this cycle do nothing
    const all = yield* tasks.list.pipe(Effect.orElseSucceed(() => [] as ReadonlyArray<T.Task>))
    yield* abandonOrphans(all)
    const stalledIds = new Set<string>()
    for (const t of all) if (t.status === "failed" && (yield* lastRun(t))?.status === "stalled") stalledIds.add(t.id)
    const lists = D.listsOf(all, (t) => stalledIds.has(t.id))
    if (D.isEmpty(lists)) return []
    const snapshot = D.snapshotOf(yield* tasks.revision, lists.stalled, lists.finished)
    if (!D.worthALook(yield* Ref.get(lastSeen), snapshot)) return []
    // Set before the call: a failed turn is not retried until something changes.
    yield* Ref.set(lastSeen, snapshot)
    yield* Ref.set(inTurn, true)
    return yield* keepingClaim(turnOf(lists)).pipe(Effect.ensuring(Ref.set(inTurn, false)))
    // display: the failed cycle is logged and changes nothing
  }).pipe(Effect.catchAllCause((c) => Effect.as(Effect.logWarning(`conductor: the cycle failed and changes nothing: ${c}`), [] as ReadonlyArray<string>)))

  return { cycle, busy: Ref.get(inTurn) } satisfies ConductorShape
})
