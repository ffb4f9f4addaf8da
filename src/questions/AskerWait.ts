/**
 * Waiting for the owner, in slices.
 *
 * A question's deadline (`answer_timeout`, a day by default) belongs to the
 * question, not to the process waiting on it: an agent's shell tool kills a
 * command that runs for long, and the command it kills is `magi ask` itself,
 * the one thing that would have read the answer. So one call waits at most a
 * slice and then reports `Pending`; the agent runs `magi ask --wait <id>` in a
 * fresh process, and the deadline the first ask set is never stretched.
 *
 * The answer arrives in a file written by another process. The wait watches
 * the store directory so it hears about that write within milliseconds, and
 * re-reads every `POLL` as well, because watching is not available everywhere
 * (network filesystems, exhausted inotify watches) and a missed event must
 * cost seconds, not the answer.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import { Clock, Config, Data, Duration, Effect, Either, Option, Ref, Stream } from "effect"
import * as Q from "./Question.js"
import type { Question } from "./Question.js"
import { QuestionStore, type StoreError } from "./QuestionStore.js"
import { Notifier } from "./Notifier.js"
import { MagiConfig } from "../platform/MagiConfig.js"
import * as Lease from "./Leases.js"
import * as Announcements from "./Announcements.js"

/**
 * The fallback re-read interval. The answer comes from a person on a phone;
 * three seconds is invisible to them, and the watch delivers the common case
 * far sooner anyway.
 */
export const POLL = Duration.seconds(3)

/**
 * How long the asker waits on the store to record an announcement: a few
 * round trips, given a slow link's worth of room. Past it the record is
 * skipped (at worst a second notification), never the wait.
 */
export const ANNOUNCEMENT_RECORD_TIMEOUT = Duration.seconds(5)

/** How a wait ended. Every variant carries the question as last read. */
export type WaitOutcome = Data.TaggedEnum<{
  /** The owner decided; `answer` is what the agent should read. */
  Answered: { readonly answer: string; readonly question: Question }
  /** The owner spoke back without deciding; the question is still open. */
  Replied: { readonly said: string; readonly question: Question }
  /** This call's slice ran out with budget left: run `--wait` again. */
  /**
   * `storeAway`: the deadline passed while the store could not be written
   * (why, in its words); it is applied by the next wait once it answers.
   */
  Pending: { readonly question: Question; readonly storeAway?: string }
  /** The deadline passed, or the question was closed with no decision. */
  Abandoned: { readonly question: Question }
}>
export const WaitOutcome = Data.taggedEnum<WaitOutcome>()

/** What a fresh read of the question means for the waiting agent, if anything. */
export const outcomeOf = (q: Question): Option.Option<WaitOutcome> => {
  if (!Q.isOpen(q)) {
    const answer = Q.resolution(q)
    // Closed with no decision: abandoned elsewhere, most often because the
    // run behind it settled while this call was waiting.
    return Option.some(
      answer === undefined ? WaitOutcome.Abandoned({ question: q }) : WaitOutcome.Answered({ answer, question: q })
    )
  }
  const said = Q.wordsForAgent(q)
  return said === undefined ? Option.none() : Option.some(WaitOutcome.Replied({ said, question: q }))
}

export interface AskerWaitShape {
  /**
   * File a fresh question, notify, and wait one slice of `timeout`. `filed`
   * runs once the question is on disk, before the notification: what to tell
   * whoever watches (never shown when the write failed).
   */
  readonly askAndWait: (
    q: Question,
    timeout: Duration.Duration,
    filed?: Effect.Effect<void>
  ) => Effect.Effect<WaitOutcome, StoreError>
  /** Notify if the quiet window allows, then wait: after an agent's reply. */
  readonly announceAndWait: (q: Question, timeout: Duration.Duration) => Effect.Effect<WaitOutcome, StoreError>
  /** Pick up a wait already filed: no new turn, no second notification. */
  readonly resumeWait: (q: Question, timeout: Duration.Duration) => Effect.Effect<WaitOutcome, StoreError>
  /**
   * Record that the agent has now read what `outcome` carried, once it is on
   * stdout: the daemon's waiter must not deliver the same words again.
   */
  readonly markDelivered: (outcome: WaitOutcome) => Effect.Effect<void>
}

/** AskerWait whose leases are let go when the layer's scope (the command) ends, however it ends. */
export class AskerWait extends Effect.Service<AskerWait>()("magi/AskerWait", {
  scoped: Effect.gen(function* () {
    const config = yield* MagiConfig
    // A deputy's `magi ask --wait` holds its question as the deputy.
    // fallback: an unset or unreadable variable is empty, as the shell sees it
    const node = yield* Config.string("MAGI_NODE").pipe(Config.withDefault(""), Effect.orElseSucceed(() => ""))
    return yield* make(Duration.seconds(config.waitSliceSecs), POLL, Lease.kindForNode(node))
  })
}) {
  static layer = AskerWait.Default
}

export const make = Effect.fn("AskerWait.make")(function* (
  slice: Duration.Duration,
  /** Only tests change this: virtual-time replays skip the fallback re-reads. */
  poll: Duration.Duration = POLL,
  /** The lease this process beats while it waits: `asker`, or `deputy` for a deputy seat. */
  kind: Lease.LeaseKind = "asker"
) {
  const store = yield* QuestionStore
  const notifier = yield* Notifier
  const fs = yield* FileSystem.FileSystem
  const beaten = yield* Ref.make(new Set<string>())
  // Which host sent a notification is kept on its record, for the owner reading it.
  const host = (yield* MagiConfig).hostName

  // However this process stops waiting (the slice handed back `pending`, the
  // answer was printed and marked read, SIGTERM, SIGINT, a failure), its
  // leases go with the scope: nobody waits any more, and the daemon may act
  // on the owner's answer at once instead of after the lease's ttl. Only
  // leases still its own are removed. A seat whose turn is still running
  // stays protected by the seat's lock, not by this lease.
  // A deputy's lease is the daemon's to let go: it keeps beating it for as
  // long as the deputy's turn runs, between this process's waits too.
  yield* Effect.addFinalizer(() =>
    kind !== "asker"
      ? Effect.void
      : Effect.flatMap(Ref.get(beaten), (ids) => Effect.forEach(ids, (id) => Lease.release(store.root, id, kind), { discard: true })).pipe(
        Effect.provideService(FileSystem.FileSystem, fs),
        // fallback: a lease beat missed is retried at the next beat
        Effect.ignore
      )
  )

  /**
   * Tell the daemon this asker is alive. Beaten when a wait starts and at
   * every re-read; the lease is let go when this process ends its waiting.
   */
  const beat = (id: string) =>
    Effect.zipRight(
      Ref.update(beaten, (s) => (s.has(id) ? s : new Set(s).add(id))),
      Lease.beat(store.root, id, kind).pipe(Effect.provideService(FileSystem.FileSystem, fs))
    )

  /** Re-read the question (by its exact id: one look); a failed read (mid-rename, hand edit) is no news. */
  const observe = (id: string) =>
    store.read(id).pipe(
      Effect.map(outcomeOf),
      // fallback: a question that cannot be re-read is looked at again at the next slice
      Effect.catchAll((e) => Effect.as(Effect.logDebug(`could not re-read question ${id}: ${e.message}`), Option.none()))
    )

  /**
   * The loop shared by every wait. `timeout` is what is left of the question's
   * deadline; this call spends at most `slice` of it. Landing on the slice
   * with budget left is `Pending`; landing on the deadline itself abandons.
   */
  const waitLoop = (q: Question, timeout: Duration.Duration) =>
    Effect.gen(function* () {
      // The owner may have spoken in the gap before this call started; the
      // record itself says whose turn it is, so that word surfaces at once.
      const early = outcomeOf(q)
      if (Option.isSome(early) && early.value._tag === "Replied") return early.value

      yield* beat(q.id)
      const bounded = Duration.min(timeout, slice)
      const isTheRealDeadline = Duration.greaterThanOrEqualTo(bounded, timeout)
      const ownFile = `${q.id}.json`
      const signals = Stream.merge(
        Stream.tick(poll),
        store.changes.pipe(Stream.filter((name) => name === ownFile))
      )
      // Looked at first, beaten after, and only while still waiting: the
      // beat (a lease file rewritten) took 2 to 60 ms on a loaded machine,
      // all of it between the owner's answer and the agent reading it, and
      // an asker about to print needs no lease renewed.
      const heard = yield* signals.pipe(
        Stream.mapEffect(() => Effect.tap(observe(q.id), (o) => (Option.isNone(o) ? beat(q.id) : Effect.void))),
        Stream.filterMap((o) => o),
        Stream.runHead,
        Effect.timeoutOption(bounded),
        Effect.map(Option.flatten)
      )
      if (Option.isSome(heard)) return heard.value
      if (!isTheRealDeadline) {
        // The lease goes with this process, even for a question asked
        // outside any magi run: nobody waits once it has exited, and the
        // owner must not read "the agent is waiting". The waiter keeps such
        // a question's words for the next `--wait` (`WaiterDecide`), so
        // letting go costs no "not delivered" notice.
        // display: the pending outcome shows the question as last read
        return WaitOutcome.Pending({ question: yield* Effect.orElseSucceed(store.get(q.id), () => q) })
      }
      return yield* expire(q, timeout)
    })

  /**
   * The deadline passed. Abandon under the question's lock against the record
   * as it is now: an answer or an owner's word that landed in the same instant
   * wins over the deadline.
   */
  const expire = (q: Question, timeout: Duration.Duration) =>
    Effect.gen(function* () {
      const fallback = Math.max(1, Math.ceil(Duration.toSeconds(timeout)))
      const total = Q.timeoutSecs(q, fallback)
      const now = new Date(yield* Clock.currentTimeMillis)
      const giveUp = (question: Question) => Q.abandon(question, Q.expiryReason(question, fallback), now)
      const settled = yield* store
        .update(q.id, (fresh) => Either.right(Q.unreadOwnerTurns(fresh) === undefined ? giveUp(fresh) : fresh))
        .pipe(
          Effect.catchTags({
            // Deleted or corrupted under us: nothing on disk to abandon, and
            // nobody can answer it any more either.
            QuestionNotFound: () => Effect.succeed(giveUp(q)),
            UnreadableQuestion: () => Effect.succeed(giveUp(q)),
            // A newer magi owns it now: left as it is, and this wait ends.
            NewerSchema: () => Effect.succeed(giveUp(q))
          }),
          Effect.either
        )
      // The store is away: the slice ends as one that ran out, and the
      // deadline (past already) is applied by the next wait, once it answers.
      if (Either.isLeft(settled)) {
        yield* Effect.logDebug(`question ${Q.shortId(q.id)}: its deadline passed but the store is away: ${settled.left.message}`)
        return WaitOutcome.Pending({ question: q, storeAway: settled.left.message })
      }
      return yield* settledOutcome(q, settled.right, total)
    })

  const settledOutcome = (q: Question, settled: Question, total: number) =>
    Effect.gen(function* () {
      const outcome = Option.getOrElse(outcomeOf(settled), () => WaitOutcome.Abandoned({ question: settled }))
      if (outcome._tag === "Abandoned") {
        // Nobody waits on it any more; the daemon must not think otherwise.
        yield* Lease.clear(store.root, q.id).pipe(Effect.provideService(FileSystem.FileSystem, fs))
        yield* Effect.logWarning(`question ${Q.shortId(q.id)} went unanswered for ${total}s; it stays on record as abandoned`)
      }
      return outcome
    })

  const announceAndWait = (q: Question, timeout: Duration.Duration) =>
    Effect.gen(function* () {
      // Alive from the moment the question is filed: the notification may
      // take its twenty seconds, and the daemon must not step in meanwhile.
      yield* beat(q.id)
      const now = new Date(yield* Effect.clockWith((c) => c.currentTimeMillis))
      if (Q.shouldNotify(q, now)) {
        // The announcement is claimed in the store every host shares: a
        // thread length already announced (a retried call) is not announced
        // again, and what happens is recorded, so a loop (outside any
        // sandbox, on any host) notifies once in this asker's place if it
        // could not. A store that cannot be reached costs the record, not
        // the tap on the shoulder.
        const claimed = yield* Effect.either(
          Announcements.claim(store.announcements, q, "asker", host, (current) => Announcements.askerShouldNotify(q, current)).pipe(
            // A store that stopped answering must not hold the wait up.
            Effect.timeout(ANNOUNCEMENT_RECORD_TIMEOUT)
          )
        )
        if (Either.isLeft(claimed)) yield* Effect.logDebug(`could not record the announcement of ${q.id}: ${claimed.left.message}`)
        // Claimed by another process (this turn was announced already): quiet.
        const taken = Either.isRight(claimed) && Option.isNone(claimed.right)
        const finish = (state: "sent" | "failed", reason = "") =>
          Either.isRight(claimed) && Option.isSome(claimed.right)
            // fallback: the announcement's record is a hint; the notification itself went out or not
            ? Announcements.finish(store.announcements, claimed.right.value, state, reason).pipe(Effect.timeout(ANNOUNCEMENT_RECORD_TIMEOUT), Effect.ignore)
            : Effect.void
        // A broken webhook costs the tap on the shoulder, nothing more: the
        // question is on disk and the web UI shows it.
        if (!taken)
          yield* notifier.notify(q).pipe(
            Effect.zipRight(finish("sent")),
            // display: a failed notification is logged; the loop stands in for it
            Effect.catchAll((e) =>
              Effect.zipRight(
                finish("failed", e.message),
                Effect.logWarning(
                  `could not notify about question ${
                    Q.shortId(q.id)
                  }: ${e.message} - the web UI shows it, and magi serve or magi web will try once more if one is running`
                )
              )
            )
          )
      }
      return yield* waitLoop(q, timeout)
    })

  const askAndWait = (q: Question, timeout: Duration.Duration, filed: Effect.Effect<void> = Effect.void) =>
    store.put(q).pipe(
      Effect.zipRight(filed),
      Effect.zipRight(announceAndWait(q, timeout)),
      Effect.withSpan("AskerWait.askAndWait", { attributes: { id: q.id } })
    )

  const resumeWait = (q: Question, timeout: Duration.Duration) =>
    waitLoop(q, timeout).pipe(Effect.withSpan("AskerWait.resumeWait", { attributes: { id: q.id } }))

  const markDelivered = (outcome: WaitOutcome) => {
    const id = outcome.question.id
    // The answer is printed with any of the owner's words not yet read, so
    // either way every turn the outcome carried has now been read.
    const mark = (fresh: Question) => Q.markShown(fresh, { answer: outcome._tag === "Answered", turns: outcome.question.thread.length })
    if (outcome._tag !== "Answered" && outcome._tag !== "Replied") return Effect.void
    // Best effort: failing here only risks the daemon delivering twice.
    return store.update(id, (fresh) => Either.right(mark(fresh))).pipe(
      // display: a delivery record that cannot be written is logged
      Effect.catchAll((e) => Effect.logDebug(`could not record delivery on ${id}: ${e.message}`)),
      Effect.asVoid
    )
  }

  return { askAndWait, announceAndWait, resumeWait, markDelivered } satisfies AskerWaitShape
})
