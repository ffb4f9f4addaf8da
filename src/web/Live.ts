/**
 * Telling open pages that the store changed, for `GET /api/events`.
 *
 * One watcher per server, however many phones are connected: it follows the
 * store's file-change stream (milliseconds after `magi answer` renames a
 * question into place) and also re-reads the revision every second, because
 * watching is unavailable on some filesystems and a missed event must cost a
 * second, not the owner's attention. Each change is published to every
 * connected page; a page then refetches the list.
 */
import { Context, Deferred, Duration, Effect, Layer, PubSub, Ref, Schedule, Stream } from "effect"
import { QuestionStore } from "../QuestionStore.js"

/** How often the revision is re-read when no file event arrives. */
export const POLL = Duration.seconds(1)
/** A comment line this often keeps proxies and phones from dropping an idle stream. */
export const KEEP_ALIVE = Duration.seconds(15)

/** What a change event carries: the revision of each store the page shows. */
export interface Revisions {
  readonly questions: number
}

/**
 * A question file landed: `<id>.json`, not its `.tmp` scratch, lock or lease,
 * which change around every write without changing what the page shows.
 */
const isQuestionFile = (name: string) => name.endsWith(".json")

export class Live extends Context.Tag("magi/web/Live")<
  Live,
  {
    /**
     * The revisions now, then once per change, for as long as the stream is
     * read. Subscribes before reading the first value, so nothing falls in the
     * gap between them.
     */
    readonly changes: Stream.Stream<Revisions>
    /** Completes when the server is shutting down, so event streams can end. */
    readonly closing: Effect.Effect<void>
  }
>() {
  static layer = Layer.scoped(
    Live,
    Effect.gen(function* () {
      const store = yield* QuestionStore
      const hub = yield* PubSub.sliding<Revisions>(16)
      const last = yield* Ref.make(yield* store.revision)
      const closing = yield* Deferred.make<void>()
      yield* Effect.addFinalizer(() => Deferred.succeed(closing, undefined))

      const publish = (revision: number) =>
        Effect.zipRight(Ref.set(last, revision), PubSub.publish(hub, { questions: revision }))

      // A file event always publishes: two writes in one timestamp tick leave
      // the revision unchanged, and the event is the only sign of the second.
      const onFileEvent = Effect.flatMap(store.revision, publish)
      const onPoll = Effect.gen(function* () {
        const revision = yield* store.revision
        if (revision !== (yield* Ref.get(last))) yield* publish(revision)
      })

      yield* store.changes.pipe(
        Stream.filter(isQuestionFile),
        Stream.runForEach(() => onFileEvent),
        Effect.forkScoped
      )
      yield* onPoll.pipe(Effect.repeat(Schedule.spaced(POLL)), Effect.forkScoped)

      const changes = Stream.unwrapScoped(
        Effect.gen(function* () {
          const subscription = yield* PubSub.subscribe(hub)
          const now = yield* store.revision
          return Stream.concat(Stream.succeed<Revisions>({ questions: now }), Stream.fromQueue(subscription))
        })
      )
      return { changes, closing: Deferred.await(closing) }
    })
  )
}
