/**
 * The waiter: something that keeps waiting on a question after the process
 * that asked it is gone.
 *
 * `magi ask` blocks in the agent's own shell tool, which kills long commands,
 * and an agent can background the call and finish. Either way the owner's
 * answer would land in a file nobody reads. Whenever a question changes or an
 * asker lets go of its lease (and every `TICK` regardless) the waiter looks
 * at each question a seat filed and `decide`s: leave it (the asker is still
 * there), expire it (nobody answered in time), or deliver the owner's words by
 * resuming the *same* seat's CLI session, so the agent that holds the context
 * carries on. It never starts a fresh agent: when the seat cannot be resumed,
 * the owner gets a notice saying why, and nothing runs.
 *
 * All state that matters is on disk (the question, its lease, its claim), so a
 * restarted daemon picks up exactly where the last one stopped. The only
 * memory is which inputs just failed, so one broken seat is not retried (and
 * the owner not re-notified) every five seconds.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import { Cause, Clock, Duration, Effect, Either, FiberMap, Option, Queue, Ref, Schedule, Stream } from "effect"
import * as NodePath from "node:path"
import { Rosters } from "../agents/AgentRoster.js"
import { hasSession, type CallResult } from "../agents/Agents.js"
import { CompetitionDriver } from "../graph/CompetitionDriver.js"
import * as C from "../runs/Competition.js"
import { VerifyDriver } from "../verify/VerifyDriver.js"
import * as Lease from "../questions/Leases.js"
import { MagiConfig } from "../platform/MagiConfig.js"
import * as Announcements from "../questions/Announcements.js"
import { Notifier } from "../questions/Notifier.js"
import { Notices } from "./Notices.js"
import * as Prompts from "../agents/Prompts.js"
import * as Claims from "../store/Claims.js"
import * as Q from "../questions/Question.js"
import { QuestionStore } from "../questions/QuestionStore.js"
import { resumable } from "../runs/RunStatus.js"
import { RunDriver } from "../runs/RunDriver.js"
import * as TurnSlots from "../agents/TurnSlots.js"
import { RunStore, runsHere } from "../runs/Runs.js"
import { decide, type Action, type Word } from "./WaiterDecide.js"

/**
 * How often the waiter looks when nothing it watches has changed: the
 * fallback for what no watch reports (a seat's lock released, a lease gone
 * stale, a filesystem that cannot be watched), seconds at a negligible cost.
 */
export const TICK = Duration.seconds(5)

/**
 * Does this beat look at every question, or only at those a wake named?
 * Every question at least every `TICK`, however busy the wakes keep the
 * loop: what no watch reports (a seat's lock released, a lease gone stale)
 * is found by the full look only.
 */
export const fullLookDue = (all: boolean, nowMs: number, lastFullMs: number): boolean => all || nowMs - lastFullMs >= Duration.toMillis(TICK)

/**
 * The longest one resumed turn may run. A delivery is a continuation (read
 * the answer, carry on a little, reply), not a whole task; fifteen minutes
 * covers that and frees the seat if the agent wanders off.
 */
export const DELIVERY_TIMEOUT = Duration.minutes(15)

/** How long a failed input waits before it is tried (and the owner told) again. */
export const RETRY_AFTER = Duration.minutes(10)

/** A delivery claim older than this outlived any turn (15 min) and is taken over. */
export const CLAIM_STALE = Duration.minutes(16)

/** A delivery is claimed once, never renewed: its turn ends within `DELIVERY_TIMEOUT`, inside the claim's life. */
const DELIVERY_CLAIM = { ttl: CLAIM_STALE } as const

/** What one tick did, for logs and tests. */
export interface TickReport {
  readonly expired: ReadonlyArray<string>
  readonly started: ReadonlyArray<string>
  readonly refused: ReadonlyArray<string>
  /** Questions whose notification this loop sent in their asker's place. */
  readonly announced: ReadonlyArray<string>
}

export interface WaiterShape {
  /** Look at every question once; deliveries start in the background. */
  readonly tick: Effect.Effect<TickReport>
  /** Wait until no delivery is in flight (tests, orderly shutdown). */
  readonly settle: Effect.Effect<void>
  /**
   * The loop until interrupted: a tick, then `after` (the queue's turn in
   * `magi serve`), then again at once when something the waiter acts on
   * changes, or after `TICK` when nothing did.
   */
  readonly beats: <E, R>(after: Effect.Effect<void, E, R>) => Effect.Effect<never, E, R>
  /** `beats` with nothing after the tick. */
  readonly run: Effect.Effect<never>
}

/** A waiter whose in-flight deliveries end with the layer's scope. */
export class Waiter extends Effect.Service<Waiter>()("magi/Waiter", {
  scoped: Effect.suspend(() => make())
}) {
  static layer = Waiter.Default
}

/** A tick's report as it is made. */
interface Reporting {
  readonly expired: Array<string>
  readonly started: Array<string>
  readonly refused: Array<string>
  readonly announced: Array<string>
}

/** What the waiter's next look is for: every question, or the ones named. */
interface Pending {
  readonly all: boolean
  readonly ids: ReadonlySet<string>
}
const nothingPending: Pending = { all: false, ids: new Set() }

/** The keys of what runs beside the ticks: a question's delivery, its notification. */
const delivering = (id: string) => `deliver ${id}`
const announcing = (id: string) => `announce ${id}`
const verifying = (runId: string) => `verify ${runId}`
const competing = (run: string, question: string) => `compete ${run} ${question}`

/** A seat, across runs. */
const seatKey = (q: Q.Question) => `${q.run}\u0000${q.seat}`

const without = (key: string) => (s: ReadonlySet<string>) => {
  const n = new Set(s)
  n.delete(key)
  return n
}

/** The key an input is remembered by: the same words on the same thread. */
const inputKey = (q: Q.Question, word: Word) => `${q.id}\u0000${q.thread.length}\u0000${word._tag}\u0000${word.text}`

const sameDelivery = (a: Action, word: Word) => a._tag === "Deliver" && a.word._tag === word._tag && a.word.text === word.text

export const make = Effect.fn("Waiter.make")(function* () {
  const fs = yield* FileSystem.FileSystem
  const store = yield* QuestionStore
  const runs = yield* RunStore
  const rosters = yield* Rosters
  const notices = yield* Notices
  const config = yield* MagiConfig
  const notifier = yield* Notifier
  const driver = yield* RunDriver
  // A solo run whose turn the waiter ended well goes on into its sync,
  // review and gate, as it would have in `magi run`; a waiter built without
  // the verification (some tests) leaves it done.
  // A competition's answered candidate goes on through the competition (and its verification); a loop built without them settles every run as one seat.
  const competition = yield* Effect.serviceOption(CompetitionDriver)
  const verifier = yield* Effect.serviceOption(VerifyDriver)
  // A question's lease and announcement records (`Lease`, `Announcements`)
  // are plain module functions over the filesystem: they get this one, so
  // the waiter needs nothing from whoever runs it.
  const bound = <A, E>(e: Effect.Effect<A, E, FileSystem.FileSystem>) => Effect.provideService(e, FileSystem.FileSystem, fs)
  const failedAt = yield* Ref.make(new Map<string, number>())
  // Seats with a delivery in flight here. The seat's own lock is only taken
  // once the delivery's turn starts, so two answers on one seat found by the
  // same tick would otherwise both go; across processes the lock decides.
  const seatsInFlight = yield* Ref.make(new Set<string>())
  // What runs beside the ticks, keyed by what it is for: a question's
  // delivery, or its notification in its asker's place. A key is there
  // exactly while its fiber runs, so one question never has two.
  const deliveries = yield* FiberMap.make<string, void, never>()
  const root = store.root
  // What the next look is for: every question, or the ones that changed
  // since the last look. One pending wake-up is enough: a burst of changes
  // during a look costs one more look at what changed, not one per change.
  const pending = yield* Ref.make<Pending>(nothingPending)
  const wake = yield* Queue.sliding<void>(1)
  const ring = Effect.asVoid(Queue.offer(wake, undefined))
  /** Look at every question at once. */
  const wakeNow = Effect.zipRight(Ref.update(pending, (p) => ({ ...p, all: true })), ring)
  /** Look at question `id` at once. */
  const wakeFor = (id: string) => Effect.zipRight(Ref.update(pending, (p) => ({ ...p, ids: new Set(p.ids).add(id) })), ring)
  const nowDate = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

  /**
   * A question on a run of another host is that host's to carry: the seat's
   * worktree and CLI session are on its machine. This waiter neither
   * delivers, refuses nor expires it; the run's own host does, when it is
   * up (its waiter looks at everything on start), so an answer given while
   * it was down reaches the seat once it is back.
   */
  const elsewhere = (q: Q.Question) =>
    q.run === ""
      ? Effect.succeed(false)
      : runs.get(q.run).pipe(
        Effect.map((run) => !runsHere(run, config.hostName)),
        // A run that is gone is nobody else's; one that failed to read may be, so this look skips the question.
        Effect.catchTag("RecordNotFound", () => Effect.succeed(false))
      )

  const busyFor = (q: Q.Question) =>
    q.run === ""
      ? Effect.succeed(false)
      : runs.get(q.run).pipe(
        Effect.flatMap((run) => driver.seatBusy(run, q.seat)),
        // Not "free" on a failed read: a free seat past the deadline is expired, a write.
        Effect.catchTag("RecordNotFound", () => Effect.succeed(false))
      )

  const decideNow = (q: Q.Question) =>
    Effect.gen(function* () {
      const lease = yield* Lease.read(root, q.id)
      const busy = yield* busyFor(q)
      return decide(q, lease, busy, config.answerTimeoutSecs, yield* nowDate)
    })

  // -- expiry -----------------------------------------------------------------

  /** Abandon under the question's lock, deciding again against the record as it is now. */
  const expire = (q: Q.Question) =>
    Effect.gen(function* () {
      const lease = yield* Lease.read(root, q.id)
      const busy = yield* busyFor(q)
      const now = yield* nowDate
      const after = yield* store.update(q.id, (fresh) => {
        const again = decide(fresh, lease, busy, config.answerTimeoutSecs, now)
        return Either.right(again._tag === "Expire" ? Q.abandon(fresh, again.reason, now) : fresh)
      })
      if (after.status !== "abandoned") return false
      yield* Lease.clear(root, q.id)
      yield* Effect.logInfo(`question ${Q.shortId(q.id)} expired unanswered; abandoned`)
      return true
    }).pipe(
      // display: a question that could not be expired is logged and stays open
      Effect.catchAll((e) => Effect.as(Effect.logWarning(`could not expire question ${Q.shortId(q.id)}: ${e.message}`), false))
    )

  // -- refusal ----------------------------------------------------------------

  /** The daemon lets go of `id`'s wait, if it held it; never someone else's hold. */
  const dropHold = (id: string) =>
    store
      .update(id, (fresh) => Either.right(fresh.waiter?.kind === "daemon" ? { ...fresh, waiter: null } : fresh))
      // fallback: a hold not dropped is dropped at the next look
      .pipe(Effect.ignore)

  /**
   * Tell the owner their words cannot reach the agent (once per input and
   * reason), and leave the input alone for `RETRY_AFTER`.
   */
  const refuse = (q: Q.Question, word: Word, reason: string) =>
    Effect.gen(function* () {
      const what = word._tag === "Answered" ? "your answer" : "what you said"
      yield* Effect.logWarning(`cannot deliver to question ${Q.shortId(q.id)}: ${reason}`)
      yield* notices.raise(q, `${word._tag}@${q.thread.length}`, `magi could not give the agent ${what} on "${q.summary}": ${reason}`, reason)
      yield* dropHold(q.id)
      const now = yield* Clock.currentTimeMillis
      yield* Ref.update(failedAt, (m) => new Map(m).set(inputKey(q, word), now))
    })

  // -- claim --------------------------------------------------------------------

  /** This waiter's delivery claims, by question. */
  const claimed = new Map<string, Claims.Claim>()

  /** Claim delivering `id`'s words; a claim older than `CLAIM_STALE` (or whose daemon died here) is taken over. */
  const claim = (id: string) =>
    Effect.gen(function* () {
      const got = yield* store.claims.acquire(id, DELIVERY_CLAIM)
      if (Either.isLeft(got)) return false
      claimed.set(id, got.right)
      return true
    }).pipe(Effect.catchTag("ClaimsError", (e) => Effect.as(Effect.logWarning(`cannot claim question ${Q.shortId(id)}: ${e.message}`), false)))

  const release = (id: string) =>
    Effect.suspend(() => {
      const mine = claimed.get(id)
      claimed.delete(id)
      return mine === undefined ? Effect.void : store.claims.release(mine)
    })

  // -- delivery -----------------------------------------------------------------

  /** The seat to resume, or why there is none. */
  const target = (q: Q.Question) =>
    Effect.gen(function* () {
      // A look that failed is not "gone": the refusal would tell the owner their words cannot reach the agent.
      if (q.cwd === "" || !(yield* fs.exists(q.cwd)))
        return Either.left(`the agent's working directory ${q.cwd || "(not recorded)"} is gone`)
      // Asked outside any run: `decide` only gets here once the deadline
      // passed with the words unread (until then they wait for `--wait`).
      if (q.run === "")
        return Either.left(
          `it was not asked from a magi run, so there is no agent session to resume, and no \`magi ask --wait ${q.id}\` read it before its deadline`
        )
      const run = yield* Effect.either(runs.get(q.run))
      if (Either.isLeft(run)) return Either.left(`its run ${q.run} cannot be read: ${run.left.message}`)
      if (!resumable(run.right.status)) return Either.left(`its run ${q.run} is ${run.right.status} and cannot be resumed`)
      // The owner stopped it: nothing resumes it behind their back, only their own `magi run --resume`.
      if (run.right.status === "stopped")
        return Either.left(`its run ${q.run} was stopped by you; magi run --resume ${Q.shortId(q.run)} continues it, and then this is delivered`)
      const seat = run.right.seats.find((s) => s.key === q.seat)
      if (seat === undefined) return Either.left(`its run ${q.run} has no seat ${q.seat}`)
      const roster = yield* Effect.either(rosters.forRepo(run.right.repo))
      if (Either.isLeft(roster)) return Either.left(`the agent roster cannot be read: ${roster.left.message}`)
      const agent = roster.right.get(seat.agent)
      if (Option.isNone(agent)) return Either.left(`agent ${seat.agent} has left the roster`)
      if (!hasSession(agent.value.kind, seat))
        return Either.left(`seat ${seat.key} has no ${agent.value.kind} session to resume, and magi never starts a fresh agent in its place`)
      return Either.right(run.right)
    })

  /** What to record once the agent has been given `word` (carried = thread length it was shown). */
  const markDelivered = (word: Word, carried: number, printed: string) => (fresh: Q.Question, now: Date) => {
    if (word._tag === "Answered") return Q.markShown(fresh, { answer: true, turns: 0 })
    const marked = Q.markShown(fresh, { answer: false, turns: carried })
    const repliedItself = fresh.thread.slice(carried).some((t) => t.who === "agent")
    if (repliedItself || printed.trim() === "" || !Q.isOpen(marked)) return marked
    // The agent answered in its output instead of on the thread: record it
    // there, so the owner reads it where they spoke.
    return Either.getOrElse(Q.reply(marked, printed.trim(), marked.choices, now), () => marked)
  }

  /**
   * Each run's lock, in this waiter: a delivered answer is marked and its
   * candidate settled under it, and a competition goes on under it, so two
   * candidates answered at once are both settled before either carries the
   * run on (the second would otherwise find it going, and be left waiting).
   */
  const runLocks = new Map<string, Effect.Semaphore>()
  const underRun = (runId: string) => {
    let lock = runLocks.get(runId)
    if (lock === undefined) runLocks.set(runId, lock = Effect.unsafeMakeSemaphore(1))
    return lock.withPermits(1)
  }

  /**
   * Settle the run after a delivered turn (under the run's lock). A
   * competition's candidate is settled by the competition, only that seat
   * having been resumed; the competition then goes on beside the ticks
   * (judging is many turns, and this delivery is done), under the run's
   * lock: each delivery's going on re-reads the run, so a second one finds
   * it carried on already, or carries it on itself.
   */
  const settleRun = (q: Q.Question, result: CallResult) =>
    Effect.gen(function* () {
      const run = yield* runs.get(q.run)
      if (Option.isNone(competition) || run.competition === undefined || !C.isCandidateSeat(run.competition, q.seat)) {
        // A verification that follows is set up in the write that ends the
        // turn: a queue tick in between would settle the task as done.
        const verifies = Option.isNone(verifier) || run.competition !== undefined ? Option.none() : yield* verifier.value.follows(run)
        return yield* Effect.asVoid(driver.finish(q.run, result, Option.getOrUndefined(verifies)))
      }
      const compete = competition.value
      if (!(yield* compete.settleAnswer(q.run, q.seat, result))) return
      const goOn = compete.resume(q.run).pipe(
        Effect.flatMap((ran) => Option.match(verifier, { onNone: () => Effect.succeed(ran), onSome: (v) => v.afterImplementing(ran) })),
        underRun(q.run),
        // display: the competition going on after an answer is logged; it stays resumable at its step
        Effect.catchAllCause((c) =>
          Cause.isInterruptedOnly(c) ? Effect.void : Effect.logWarning(`run ${Q.shortId(q.run)} could not go on after the answer: ${Cause.pretty(c)}`)
        ),
        Effect.asVoid,
        Effect.interruptible
      )
      yield* FiberMap.run(deliveries, competing(q.run, q.id), goOn, { onlyIfMissing: true })
    })

  /** Give up the wait on `id` with nothing delivered: the lease and the holder go, so the next try can start at once. */
  const letGo = (id: string) => Effect.zipRight(Lease.clear(root, id), dropHold(id))

  const deliver = (q0: Q.Question, word: Word) =>
    Effect.gen(function* () {
      const found = yield* target(q0)
      if (Either.isLeft(found)) return yield* Effect.as(refuse(q0, word, found.left), "refused" as const)
      if (!(yield* claim(q0.id))) return "skipped" as const
      return yield* Effect.gen(function* () {
        // Someone may have answered, read or expired it since the tick looked.
        const q = yield* store.get(q0.id)
        if (!sameDelivery(yield* decideNow(q), word)) return "skipped" as const
        const since = Q.timestamp(yield* nowDate)
        // A re-sent ask-back is recorded as re-sent before the turn starts:
        // whatever comes of it, no restart sends it a second time.
        yield* store.update(q.id, (fresh) =>
          Either.right({
            ...fresh,
            waiter: { kind: "daemon" as const, since },
            ...(word._tag === "Resent" ? { resent_turns: fresh.thread.length } : {})
          }))
        yield* Lease.beat(root, q.id, "daemon")
        const carried = q.thread.length
        const result = yield* driver.turn({
          run: q.run,
          seat: q.seat,
          prompt: (magi) => Prompts.deliveryPrompt(q, word, magi),
          timeout: DELIVERY_TIMEOUT,
          alsoBeat: bound(Lease.beat(root, q.id, "daemon"))
        }).pipe(
          // The owner is waiting on this one: it goes before tasks and the
          // conductor when the host's turns are all taken.
          Effect.locally(TurnSlots.priority, "resume"),
          // Shown on the question's card while it waits for room ("queued behind 3 turns").
          Effect.locally(TurnSlots.question, q.id),
          Effect.either
        )
        // Another process started a turn on the seat since it was looked
        // at: not a failure, the words go once that turn has ended.
        if (Either.isLeft(result) && result.left._tag === "SeatBusy") return yield* Effect.as(letGo(q.id), "skipped" as const)
        // An agent that answered the owner on the thread has read their
        // words, even if its turn then failed or ran out of time (typically
        // waiting on the owner again): delivering them a second time would
        // only make it answer twice.
        const repliedOnThread = word._tag !== "Answered" &&
          (yield* store.get(q.id).pipe(
            Effect.map((fresh) => fresh.thread.slice(carried).some((t) => t.who === "agent"))
          ))
        if (Either.isLeft(result) || (!result.right.usable && !repliedOnThread)) {
          yield* Lease.clear(root, q.id)
          const why = Either.isLeft(result)
            ? result.left.message
            : result.right.timedOut
            ? `the resumed turn did not finish within ${Duration.toMinutes(DELIVERY_TIMEOUT)} minutes`
            : result.right.quota !== null
            ? `the agent hit its usage limit${result.right.quota === "" ? "" : ` (it resets ${result.right.quota})`}`
            : (result.right.problem ??
              `the resumed turn failed (exit ${result.right.exitCode ?? "by signal"}): ${result.right.text.split("\n").at(-1) ?? ""}`)
          // A usage limit is a stall, not a failure: the run says so (and
          // when it lifts); the words are tried again after RETRY_AFTER.
          if (Either.isRight(result) && result.right.quota !== null)
            yield* runs
              .setStatus(q.run, "stalled", `the agent hit its usage limit${result.right.quota === "" ? "" : `; it resets ${result.right.quota}`}`)
              // display: a run that could not be marked is logged
              .pipe(Effect.catchAll((e) => Effect.logWarning(`could not mark run ${q.run} stalled: ${e.message}`)))
          yield* refuse(q, word, why)
          return "refused" as const
        }
        const settled = result.right
        yield* Effect.gen(function* () {
          const now = yield* nowDate
          yield* store.update(q.id, (fresh) => Either.right(markDelivered(word, carried, settled.text)(fresh, now)))
          yield* Lease.clear(root, q.id)
          yield* settleRun(q, settled).pipe(
            // display: the run update after a delivery is logged; the delivery stands
            Effect.catchAll((e) => Effect.logWarning(`delivered to ${Q.shortId(q.id)} but could not update run ${q.run}: ${e.message}`))
          )
        }).pipe(underRun(q.run))
        yield* Effect.logInfo(`delivered the owner's ${word._tag === "Answered" ? "answer" : "words"} on ${Q.shortId(q.id)} to seat ${q.seat}`)
        return "delivered" as const
      }).pipe(
        // Stopped mid-turn: nothing was confirmed, so nothing is marked; the
        // lease and the holder go too, so the next daemon can start at once.
        Effect.onInterrupt(() => letGo(q0.id)),
        Effect.ensuring(release(q0.id))
      )
    }).pipe(
      // display: a stopped delivery is logged; nothing was confirmed so nothing is marked
      Effect.catchAll((e) => Effect.as(Effect.logWarning(`delivery on ${Q.shortId(q0.id)} stopped: ${e.message}`), "refused" as const)),
      bound
    )

  // -- notifying in the asker's place ------------------------------------------

  /**
   * Notify the owner about `q` because its asker could not (a sandbox with
   * no network, or it died mid-send). The attempt is claimed in the store
   * before it is made, against the record as it is then: of every loop on
   * every host that sees the asker's failure, exactly one tries, once,
   * whatever comes of it.
   */
  const maybeAnnounce = (q: Q.Question) =>
    Effect.gen(function* () {
      if (!Q.isOpen(q) || (yield* FiberMap.has(deliveries, announcing(q.id)))) return false
      const now = yield* nowDate
      if (!Announcements.loopShouldNotify(q, yield* Announcements.read(store.announcements, q.id), now)) return false
      const claimed = yield* Announcements.claim(store.announcements, q, "loop", config.hostName, (current) => Announcements.loopShouldNotify(q, current, now))
        // fallback: an announcement claim that cannot be taken is "not ours"; nothing is sent
        .pipe(Effect.catchAll((e) => Effect.as(Effect.logWarning(`could not claim the announcement of ${Q.shortId(q.id)}: ${e.message}`), Option.none())))
      if (Option.isNone(claimed)) return false
      const mine = claimed.value
      const announce = Effect.gen(function* () {
        const sent = yield* Effect.either(notifier.notify(q))
        if (Either.isRight(sent)) {
          yield* Announcements.finish(store.announcements, mine, "sent")
          return yield* Effect.logInfo(`notified the owner about question ${Q.shortId(q.id)}, which its asker could not`)
        }
        yield* Announcements.finish(store.announcements, mine, "failed", sent.left.message)
        yield* Effect.logWarning(`could not notify about question ${Q.shortId(q.id)} in its asker's place either: ${sent.left.message}`)
      })
      yield* FiberMap.run(deliveries, announcing(q.id), Effect.interruptible(announce))
      return true
    })

  // -- the tick -----------------------------------------------------------------

  const recentlyFailed = (q: Q.Question, word: Word) =>
    Effect.gen(function* () {
      const at = (yield* Ref.get(failedAt)).get(inputKey(q, word))
      return at !== undefined && (yield* Clock.currentTimeMillis) - at < Duration.toMillis(RETRY_AFTER)
    })

  /** Look at one question: notify in its asker's place, expire it, or start delivering to its seat; said in `report`. */
  const consider = (q: Q.Question, report: Reporting) =>
    Effect.gen(function* () {
      // Notifying in an asker's place is any host's: the claim in the
      // shared store lets exactly one loop do it, even for a question whose
      // own host is down.
      if (Q.isOpen(q) && (yield* maybeAnnounce(q))) report.announced.push(q.id)
      // Settled for good: skipped before any file is read, since most
      // questions on disk are these.
      if (q.cwd === "" || !Q.owedToAgent(q)) return
      if (yield* FiberMap.has(deliveries, delivering(q.id))) return
      if (yield* elsewhere(q)) return
      const action = yield* decideNow(q)
      if (action._tag === "Expire") {
        if (yield* expire(q)) report.expired.push(q.id)
      } else if (action._tag === "Deliver") {
        if ((yield* Ref.get(seatsInFlight)).has(seatKey(q))) return
        if (yield* recentlyFailed(q, action.word)) return
        // Refusals that need no process are settled here, in the tick, so
        // the report says so; a real delivery runs beside the next ticks.
        const found = yield* target(q)
        if (Either.isLeft(found)) {
          yield* refuse(q, action.word, found.left)
          report.refused.push(q.id)
          return
        }
        yield* Ref.update(seatsInFlight, (s) => new Set(s).add(seatKey(q)))
        report.started.push(q.id)
        yield* FiberMap.run(
          deliveries,
          delivering(q.id),
          deliver(q, action.word).pipe(
            Effect.ensuring(Ref.update(seatsInFlight, without(seatKey(q)))),
            // Delivered: the seat is free again, so look at once, since an
            // answer on it that landed meanwhile was passed over while it was
            // taken. Only then: a delivery skipped because another process
            // holds the claim or the seat would otherwise be retried in a
            // loop with no pause, where `TICK` paces it.
            Effect.tap((outcome) => (outcome === "delivered" ? Effect.zipRight(verifyAfter(q.run), wakeNow) : Effect.void)),
            Effect.asVoid,
            Effect.interruptible
          )
        )
      }
    })

  /**
   * The delivered turn ended its run well: the verification runs beside the
   * ticks (keyed by the run, so two answers never start it twice), and stops
   * with the loop, leaving the run resumable at its step.
   */
  const verifyAfter = (runId: string) =>
    Option.isNone(verifier) ? Effect.void : Effect.gen(function* () {
      const run = yield* runs.get(runId).pipe(Effect.option)
      if (Option.isNone(run) || !verifier.value.goesOn(run.value) || run.value.competition !== undefined) return
      const going = verifier.value.afterImplementing(run.value).pipe(
        // fallback: a stopped verification leaves the run at its step, resumable; the loop goes on
        Effect.catchAll((e) => Effect.logWarning(`the verification of run ${Q.shortId(runId)} stopped: ${e.message}`)),
        Effect.asVoid
      )
      yield* FiberMap.run(deliveries, verifying(runId), Effect.interruptible(going), { onlyIfMissing: true })
    })

  /**
   * A look taken to its end before a stop takes effect; a delivery in
   * flight is interrupted (and marks nothing), because it was never confirmed.
   */
  const looking = (questions: Effect.Effect<ReadonlyArray<Q.Question>, never, FileSystem.FileSystem>, span: string) =>
    Effect.gen(function* () {
      const report: Reporting = { expired: [], started: [], refused: [], announced: [] }
      for (const q of yield* questions) {
        // display: a question that could not be looked at is only logged; nothing was written for it, the next look tries again.
        yield* consider(q, report).pipe(
          // display: a question that could not be looked at is only logged; nothing was written for it, the next look tries again
          Effect.catchAll((e) => Effect.logWarning(`could not look at question ${Q.shortId(q.id)}: ${e.message}; the next look tries again`))
        )
      }
      return report satisfies TickReport
    }).pipe(Effect.uninterruptible, bound, Effect.withSpan(span))

  const tick = looking(
    store.list.pipe(
      // fallback: a listing that failed looks at no question this time (nothing is written on it); the next tick lists again.
      Effect.catchAll((e) =>
        Effect.as(Effect.logWarning(`waiter: could not list the questions (${e.message}); the next tick looks again`), [] as ReadonlyArray<Q.Question>)
      )
    ),
    "Waiter.tick"
  )

  /**
   * Look at the questions named, and only them: what a change to one
   * question can call for. Listing every question (and reading each open
   * one's announcement record) on every change was each loop's work on
   * every host whenever any question anywhere changed, on the path of the
   * owner's answer reaching its asker. One gone since is nothing to do.
   */
  const lookAt = (ids: ReadonlySet<string>) =>
    looking(
      // Gone since is nothing to do; a read that failed is logged, and the full look at the next tick finds it.
      Effect.map(
        Effect.forEach(ids, (id) =>
          store.read(id).pipe(
            Effect.map(Option.some),
            Effect.catchTag("QuestionNotFound", () => Effect.succeedNone),
            // display: logged only; no question read means nothing is written for it.
            Effect.catchAll((e) => Effect.as(Effect.logWarning(`waiter: could not read question ${Q.shortId(id)} (${e.message})`), Option.none<Q.Question>()))
          )),
        (found) => found.flatMap((q) => Option.toArray(q))
      ),
      "Waiter.lookAt"
    )

  /**
   * Wake the loop when something it acts on changes: a question file (an
   * answer, a word from the owner) or a lease let go (an asker that exited).
   * Both are watched, so an answer reaches a seat whose asker is gone
   * within moments, not at the next look; `TICK` stays as the fallback for
   * what is not watched (a seat's lock released, a lease gone stale, a
   * filesystem without watching). A lease event only wakes when the lease is
   * gone: a waiting asker beats every few seconds, and that changes nothing.
   */
  const wakeups = Effect.gen(function* () {
    const leases = NodePath.join(root, Lease.LEASES_DIR)
    // fallback: the folder is made if it can be; watching it then fails loudly if it is not there
    yield* fs.makeDirectory(leases, { recursive: true }).pipe(Effect.ignore)
    // `<id>.json`, or `announced/<id>.json` for its announcement record
    // (an asker that could not notify calls for a loop to do it).
    const questionChanged = store.changes.pipe(
      Stream.filter((name) => name.endsWith(".json")),
      Stream.map((name) => NodePath.basename(name, ".json"))
    )
    const leaseGone = fs.watch(leases).pipe(
      Stream.map((event) => NodePath.basename(event.path)),
      Stream.filter((name) => name.endsWith(".lease")),
      Stream.filterEffect((name) => Effect.map(fs.exists(NodePath.join(leases, name)), (there) => !there)),
      Stream.map((name) => NodePath.basename(name, ".lease")),
      Stream.catchAll(() => Stream.empty)
    )
    yield* Stream.merge(questionChanged, leaseGone).pipe(Stream.runForEach(wakeFor))
  })

  // display: the failed tick is logged; the next tick looks again
  const once = tick.pipe(Effect.catchAllCause((c) => Effect.logWarning(`waiter tick failed: ${c}`)))
  const onceAt = (ids: ReadonlySet<string>) =>
    // display: the failed look is logged; the next tick looks again
    ids.size === 0 ? Effect.void : lookAt(ids).pipe(Effect.catchAllCause((c) => Effect.logWarning(`waiter look failed: ${c}`)))

  /** Until the next wake, or `TICK` when none comes: the pause between two beats. */
  const pause = Effect.asVoid(Effect.timeoutOption(Queue.take(wake), TICK))

  const beats = <E, R>(after: Effect.Effect<void, E, R>): Effect.Effect<never, E, R> =>
    Effect.scoped(
      Effect.gen(function* () {
        yield* Effect.forkScoped(wakeups)
        const lastFull = yield* Ref.make(Number.NEGATIVE_INFINITY)
        const beat = Effect.gen(function* () {
          const { all, ids } = yield* Ref.getAndSet(pending, nothingPending)
          const now = yield* Clock.currentTimeMillis
          if (fullLookDue(all, now, yield* Ref.get(lastFull))) {
            yield* Ref.set(lastFull, now)
            yield* once
          } else yield* onceAt(ids)
          yield* after
        })
        // A beat, then the pause, for as long as the scope lasts: the pace is
        // the pause's (a wake at once, else `TICK`), so the schedule only repeats.
        yield* Effect.repeat(Effect.zipRight(beat, pause), Schedule.forever)
        return yield* Effect.never
      })
    )

  return { tick, settle: FiberMap.awaitEmpty(deliveries), beats, run: beats(Effect.void) } satisfies WaiterShape
})
