/**
 * Notices: what magi tells the owner about its own failures to act, as
 * opposed to the questions agents ask. Today one kind: the waiter could not
 * carry the owner's words to the agent, and why. Each is a file under
 * `<home>/notices/` (for the web's notices page) and goes out through the
 * notification command (so the owner hears it without looking).
 */
import { FileSystem } from "@effect/platform"
import { Clock, Context, Effect, Layer, Option, Random, Schema } from "effect"
import * as NodePath from "node:path"
import { writeAtomically } from "../platform/AtomicFile.js"
import { MagiHome } from "../platform/MagiHome.js"
import { Notifier } from "../questions/Notifier.js"
import * as Q from "../questions/Question.js"

export const Notice = Schema.Struct({
  id: Schema.String,
  at: Q.Timestamp,
  /** The question the notice is about. */
  question: Schema.String,
  run: Schema.String,
  seat: Schema.String,
  /** Which of the owner's inputs it is about (e.g. `Answered@3`): one notice per input and reason. */
  input: Schema.optionalWith(Schema.String, { default: () => "" }),
  /** One line for the phone. */
  summary: Schema.String,
  /** Why magi could not act, in full. */
  reason: Schema.String
})
export type Notice = typeof Notice.Type

export interface NoticesShape {
  readonly root: string
  /**
   * Write the notice and send it through the notification command, unless
   * the same notice (question, input, reason) was already raised: a seat that
   * stays unreachable is worth one tap on the shoulder, not one per retry,
   * and a restarted daemon must not repeat it either.
   */
  readonly raise: (about: Q.Question, input: string, summary: string, reason: string) => Effect.Effect<Option.Option<Notice>>
  /** Every readable notice, newest first. */
  readonly list: Effect.Effect<ReadonlyArray<Notice>>
}

export class Notices extends Context.Tag("magi/Notices")<Notices, NoticesShape>() {
  static at = (root: string) => Layer.effect(Notices, make(root))
  static layer = Layer.effect(Notices, Effect.flatMap(MagiHome, (home) => make(noticesDir(home))))
}

export const noticesDir = (home: { readonly dir: string }) => NodePath.join(home.dir, "notices")

const decodeNotice = Schema.decodeUnknownOption(Schema.parseJson(Notice))

/**
 * Every readable notice under `root`, newest first (ids start with their
 * time). Read-only, so the web's notices page can list them without the
 * notification command `raise` needs; an unreadable file is skipped, so one
 * torn write never hides the rest.
 */
export const listIn = Effect.fn("Notices.list")(function* (root: string) {
  const fs = yield* FileSystem.FileSystem
  const names = yield* fs.readDirectory(root).pipe(Effect.orElseSucceed(() => [] as string[]))
  const read = yield* Effect.forEach(
    names.filter((n) => n.endsWith(".json")),
    (n) => fs.readFileString(NodePath.join(root, n)).pipe(Effect.option, Effect.map(Option.flatMap(decodeNotice))),
    { concurrency: 16 }
  )
  return read.flatMap((n) => (Option.isSome(n) ? [n.value] : [])).sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
})

export const make = Effect.fn("Notices.make")(function* (root: string) {
  const fs = yield* FileSystem.FileSystem
  const notifier = yield* Notifier

  const raise = (about: Q.Question, input: string, summary: string, reason: string) =>
    Effect.gen(function* () {
      const earlier = yield* list
      if (earlier.some((n) => n.question === about.id && n.input === input && n.reason === reason)) return Option.none<Notice>()
      const now = new Date(yield* Clock.currentTimeMillis)
      const notice: Notice = {
        id: Q.makeId(now, yield* Random.nextIntBetween(0, 0x10000)),
        at: Q.timestamp(now),
        question: about.id,
        run: about.run,
        seat: about.seat,
        input,
        summary,
        reason
      }
      const path = NodePath.join(root, `${notice.id}.json`)
      yield* writeAtomically(path, JSON.stringify(notice, null, 2) + "\n").pipe(
        Effect.provideService(FileSystem.FileSystem, fs),
        Effect.catchAll((e) => Effect.logWarning(`could not write the notice ${path}: ${e.message}`))
      )
      // The notification reuses the question's run so `{run}` still says
      // which run it is about; the summary is the notice's, not the question's.
      yield* notifier
        .notify({ ...about, summary })
        .pipe(Effect.catchAll((e) => Effect.logWarning(`could not send the notice for ${Q.shortId(about.id)}: ${e.message}`)))
      return Option.some(notice)
    })

  const list = Effect.provideService(listIn(root), FileSystem.FileSystem, fs)

  return { root, raise, list } satisfies NoticesShape
})
