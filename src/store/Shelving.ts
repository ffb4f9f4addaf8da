/**
 * Settled records of every kind that piles up, off the hot folders and onto
 * their month's shelves: settled questions (`questions/Archiver.ts`),
 * finished runs (`RunStore.archiveFinished`: the record only, the run's
 * folder stays) and done tasks (`TaskStore.archiveDone`). What the hot
 * folders keep is what listings and `magi web`'s poll read, so after months
 * of work they still read only what is live.
 *
 * Here, in `src/store/`, because it spans the domains; `magi web` and `magi
 * serve` run `shelveLoop`, which is also the move of a home written before
 * the shelves. A process without the runs or the queue (none today) moves
 * what it has.
 */
import { Effect, Schedule } from "effect"
import * as Archiver from "../questions/Archiver.js"
import { RunStore } from "../runs/Runs.js"
import { TaskStore } from "../queue/TaskStore.js"

/** Everything movable now, kind after kind; how many of each moved. */
export const shelveNow = Effect.gen(function* () {
  const questions = yield* Archiver.archiveNow
  const runStore = yield* Effect.serviceOption(RunStore)
  const taskStore = yield* Effect.serviceOption(TaskStore)
  const runs = runStore._tag === "Some" ? yield* runStore.value.archiveFinished(Archiver.BATCH) : 0
  const tasks = taskStore._tag === "Some" ? yield* taskStore.value.archiveDone(Archiver.BATCH) : 0
  return { questions, runs, tasks }
}).pipe(Effect.withSpan("Shelving.shelveNow"))

/** `shelveNow` at once and then every `Archiver.EVERY`, forever; a failed round is a warning, never the end. */
export const shelveLoop = Effect.repeat(
  shelveNow.pipe(Effect.catchAllCause((cause) => Effect.as(Effect.logWarning(`moving settled records to history failed: ${cause}`), undefined))),
  Schedule.spaced(Archiver.EVERY)
).pipe(Effect.asVoid)
