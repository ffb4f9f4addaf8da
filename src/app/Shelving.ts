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
import { QuestionStore } from "../questions/QuestionStore.js"
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

/**
 * On a home written before the month shelves (none of a kind's records was
 * ever shelved), the move, before a command lists: otherwise every listing
 * reads every settled file until a `magi serve` or `magi web` has run. Once
 * a kind has a shelf this is one look at its history folder; a home with
 * nothing settled yet finds nothing to move in the listing it makes anyway
 * (the store keeps it for the command's own).
 */
export const firstMove = Effect.gen(function* () {
  const questions = yield* QuestionStore
  const runStore = yield* Effect.serviceOption(RunStore)
  const taskStore = yield* Effect.serviceOption(TaskStore)
  const moved = { questions: 0, runs: 0, tasks: 0 }
  // A first move killed half-way is finished by the next command, before it
  // lists: otherwise the rest stayed hot until a `magi serve` moved it
  // beside its loop, whose listings re-read the hot folder at every rename.
  if (!(yield* questions.hasHistory) || (yield* questions.unindexedMonths).length > 0) moved.questions = yield* Archiver.archiveNow
  if (runStore._tag === "Some" && !(yield* runStore.value.hasHistory)) moved.runs = yield* runStore.value.archiveFinished(Archiver.BATCH)
  if (taskStore._tag === "Some" && !(yield* taskStore.value.hasHistory)) moved.tasks = yield* taskStore.value.archiveDone(Archiver.BATCH)
  return moved
}).pipe(
  // display: a failed move is logged; every record stays where it was and the next move tries again
  Effect.catchAllCause((cause) => Effect.as(Effect.logWarning(`moving settled records to history failed: ${cause}`), { questions: 0, runs: 0, tasks: 0 })),
  Effect.withSpan("Shelving.firstMove")
)

/** What `firstMove` did, as one line for the owner, or nothing when it moved nothing. */
export const movedWords = (moved: { readonly questions: number; readonly runs: number; readonly tasks: number }): string | undefined => {
  const parts = [
    moved.questions > 0 ? `${moved.questions} settled questions` : "",
    moved.runs > 0 ? `${moved.runs} finished runs` : "",
    moved.tasks > 0 ? `${moved.tasks} done tasks` : ""
  ].filter((p) => p !== "")
  return parts.length === 0 ? undefined : `magi: moved ${parts.join(", ")} to the month shelves (once, for a home written before them)`
}

/** `firstMove`, saying on stderr what it moved. */
export const firstMoveSaid = (say: (line: string) => Effect.Effect<void>) =>
  Effect.flatMap(firstMove, (moved) => {
    const words = movedWords(moved)
    return words === undefined ? Effect.void : say(`${words}\n`)
  })

/** `shelveNow` at once and then every `Archiver.EVERY`, forever; a failed round is a warning, never the end. */
export const shelveLoop = Effect.repeat(
  // display: a failed move is logged; every record stays where it was and the next move tries again
  shelveNow.pipe(Effect.catchAllCause((cause) => Effect.as(Effect.logWarning(`moving settled records to history failed: ${cause}`), undefined))),
  Schedule.spaced(Archiver.EVERY)
).pipe(Effect.asVoid)
