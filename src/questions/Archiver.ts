/**
 * The mover: settled questions out of the hot folder, onto their month's
 * shelf (`History`). `magi web` and `magi serve` run it at start, which is
 * also the migration of a home written before shelves existed, and then
 * every few minutes on the Clock. Two of them at once (a `magi web` beside a
 * `magi serve`) are harmless: each move is judged and done under the
 * question's lock, and a question already moved is simply not there to move.
 */
import { Duration, Effect, Schedule } from "effect"
import { QuestionStore } from "./QuestionStore.js"

/**
 * Questions moved per batch. A batch is a listing of the hot folder plus a
 * lock and a rename per question; between batches the process serves other
 * work (the page, the waiter), so a first migration of 100,000 questions
 * never holds it for long at a stretch.
 */
export const BATCH = 500

/**
 * How often the mover looks again. Questions become movable an hour after
 * they settle (`History.GRACE_MS`), so looking every few minutes keeps the
 * hot folder within minutes of as small as it can be, for one listing (of a
 * small folder) each time.
 */
export const EVERY = Duration.minutes(5)

/** Move everything movable now, batch by batch, index the months filled, and sweep leftovers; how many moved. */
export const archiveNow = Effect.gen(function* () {
  const store = yield* QuestionStore
  // A move killed before its indexing left months without one, however few it moves now.
  const months = new Set<string>(yield* store.unindexedMonths)
  let total = 0
  for (;;) {
    const { moved, more, months: touched } = yield* store.archiveSettled(BATCH)
    total += moved
    for (const m of touched) months.add(m)
    // Nothing moved while more were due: they cannot move now; next round.
    if (!more || moved === 0) break
    yield* Effect.yieldNow()
  }
  if (months.size > 0) yield* store.indexHistory(months)
  // What killed writes left, on the shelves too (nothing else looks there).
  yield* store.sweep
  return total
}).pipe(Effect.withSpan("Archiver.archiveNow"))

/** `archiveNow` at once and then every `EVERY`, forever; a failed round is a warning, never the end. */
export const archiveLoop = Effect.repeat(
  // display: a failed move is logged; every question stays where it was
  archiveNow.pipe(Effect.catchAllCause((cause) => Effect.as(Effect.logWarning(`moving settled questions to history failed: ${cause}`), 0))),
  Schedule.spaced(EVERY)
).pipe(Effect.asVoid)
