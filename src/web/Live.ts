/**
 * Telling open pages that the store changed, for `GET /api/events`.
 *
 * One watcher per server, however many phones are connected: it follows the
 * store's file-change stream (milliseconds after `magi answer` renames a
 * question into place) and also re-reads the revision every second, because
 * watching is unavailable on some filesystems and a missed event must cost a
 * second, not the owner's attention. Each change is published to every
 * connected page; a page then refetches the list.
 *
 * What a page shows changes with the questions, the notices the waiter
 * writes, the chats, the queue and the runs (each store's change feed: a
 * folder's watch, or on PostgreSQL the one `LISTEN` connection of this
 * process, which hears a write made by any process on any host within
 * milliseconds; the runs on the file backend by the poll alone), the hosts
 * (what a page shows of them: a turn queued, a host gone), and who holds a
 * question's wait. The last can change with no file written at all (an
 * asker killed mid-wait just stops beating its lease, which goes stale), so
 * the poll also compares the holders.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import { Clock, Context, Duration, Effect, Layer, Option, PubSub, Ref, Schedule, Stream } from "effect"
import * as Daemon from "../daemon/Daemon.js"
import { MagiHome } from "../platform/MagiHome.js"
import { QuestionStore } from "../questions/QuestionStore.js"
import { NoticeFeed } from "./NoticeFeed.js"
import { RunFeed } from "./RunFeed.js"
import { TaskStore } from "../queue/TaskStore.js"
import { Chats } from "../chat/Chats.js"
import { Snapshots } from "./Snapshot.js"
import { RunStore } from "../runs/Runs.js"
import { Hosts, type HostView } from "../platform/Hosts.js"

/** How often the revision is re-read when no file event arrives. */
export const POLL = Duration.seconds(1)
/** How far behind `POLL` the last reading may be before `latest` reads afresh: three missed polls. */
export const POLL_LATE = Duration.times(POLL, 3)
/** A comment line this often keeps proxies and phones from dropping an idle stream. */
export const KEEP_ALIVE = Duration.seconds(15)

/** What a change event carries: the revision of each store the page shows. */
export interface Revisions {
  readonly questions: number
  readonly notices: number
  readonly runs: number
  readonly queue: number
  readonly chats: number
  /**
   * What the page shows of the hosts (online or not, turns running and
   * queued), as a number that moves when any of it does: not every beat,
   * which changes only when each host was last seen.
   */
  readonly hosts: number
}

/**
 * The pid of the live loop (`magi serve`, or a `magi web`) that owns the
 * home, or null when none does: without one, nothing will resume an agent
 * whose `magi ask` is gone, and the page must not promise that it will.
 */
export type LoopPid = number | null

/** What an open page is sent: a change, or a keep-alive comment. */
export type Message =
  | { readonly _tag: "Change"; readonly revisions: Revisions; readonly loop: LoopPid }
  | { readonly _tag: "KeepAlive" }

/** The live loop owning `home` now, from its heartbeat file. */
export const loopNow = (home: string) =>
  Effect.gen(function* () {
    const owner = yield* Daemon.liveOwner(home)
    return Option.getOrNull(owner)
  })

/** What a page shows of the hosts, hashed (FNV-1a): every field but when each was last seen. */
export const hostsShown = (hosts: ReadonlyArray<HostView>): number => {
  const text = JSON.stringify(
    hosts.map((h) => [h.name, h.online, h.online ? "" : h.last_seen, h.version, h.turns, h.queued, h.waiting, h.max_turns, h.repos, h.loop])
  )
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193) >>> 0
  return hash
}

/**
 * A question or notice file landed: `<id>.json`, not its `.tmp` scratch, lock
 * or lease, which change around every write without changing what the page
 * shows.
 */
const isRecordFile = (name: string) => name.endsWith(".json")

/** The kinds of record whose changes a page hears of, by their key in `Revisions`. */
type FeedKind = "questions" | "notices" | "runs" | "queue" | "chats"

export class Live extends Context.Tag("magi/web/Live")<
  Live,
  {
    /**
     * The revisions now, then a message per change and a keep-alive every
     * `KEEP_ALIVE`, for as long as it is read; ends when the server shuts
     * down, so an open phone does not hold the shutdown up. Subscribes before
     * reading the first revision, so nothing falls in the gap between them.
     */
    readonly messages: Stream.Stream<Message>
    /** The revision of every store a page shows, read now. */
    readonly revisions: Effect.Effect<Revisions>
    /**
     * The revisions and loop as this watcher last read them (its poll, at
     * most `POLL` ago, or a file event since): what open pages were last
     * told, for `/api/health`. Reading them per request cost a stat of
     * every run's record and a read of `daemon.json` each time. Should the
     * poll have fallen more than `POLL_LATE` behind, they are read now
     * instead, so a stuck poll can never leave health reporting old news.
     */
    readonly latest: Effect.Effect<{ readonly revisions: Revisions; readonly loop: LoopPid }>
  }
>() {
  static layer = Layer.scoped(
    Live,
    Effect.gen(function* () {
      const store = yield* QuestionStore
      const notices = yield* NoticeFeed
      const runs = yield* RunFeed
      const tasks = yield* TaskStore
      const chats = yield* Chats
      const snapshots = yield* Snapshots
      const runStore = yield* RunStore
      // A server built without hosts (a test's) has none to show.
      const hosts = yield* Effect.serviceOption(Hosts)
      const hostsNow: Effect.Effect<number> = Option.match(hosts, {
        onNone: () => Effect.succeed(0),
        // display: the hosts count on the page; 0 when it cannot be read
        onSome: (h) => h.list.pipe(Effect.map(hostsShown), Effect.orElseSucceed(() => 0))
      })
      const fs = yield* FileSystem.FileSystem
      const loop = loopNow((yield* MagiHome).dir).pipe(Effect.provideService(FileSystem.FileSystem, fs))
      // Everything a page is sent is published here once, whatever the number
      // of pages: each page's stream is then only a queue read, and a change
      // reaches fifty phones within milliseconds of reaching the first.
      const hub = yield* PubSub.sliding<Message>(16)
      yield* Effect.addFinalizer(() => PubSub.shutdown(hub))
      /** How each kind's revision is read: all of them by the poll, one by a change to that kind. */
      const revisionOf: Record<FeedKind, Effect.Effect<number>> = {
        questions: store.revision,
        notices: notices.revision,
        runs: runs.revision,
        queue: tasks.revision,
        chats: chats.revision
      }
      const revisionsNow: Effect.Effect<Revisions> = Effect.all({
        ...revisionOf,
        hosts: hostsNow
        // Read side by side: on PostgreSQL each is a round trip, and a change
        // from another host reaches open pages once all are in.
      }, { concurrency: "unbounded" })
      const last = yield* Ref.make({
        revisions: yield* revisionsNow,
        holders: yield* snapshots.holders,
        loop: yield* loop,
        at: yield* Clock.currentTimeMillis
      })
      /** Remember a reading, taken at `at` (before it began, so its age is never understated). */
      const remember = (revisions: Revisions, holders: string, loop: LoopPid, at: number) => Ref.set(last, { revisions, holders, loop, at })

      const publish = (revisions: Revisions, holders: string, loop: LoopPid, at: number) =>
        Effect.zipRight(remember(revisions, holders, loop, at), PubSub.publish(hub, { _tag: "Change", revisions, loop }))

      // A file event always publishes: two writes in one timestamp tick leave
      // the revision unchanged, and the event is the only sign of the second.
      // The loop pid is only re-read by the poll, so the event keeps the poll's time.
      // Only the changed kind's revision is read again: one round trip, not
      // six (the hosts' a read of every host's record) on every change any
      // host makes; the poll still reads them all. Merged into the last
      // reading in one step, so two kinds changing at once lose neither.
      const onFileEvent = (kind: FeedKind) =>
        Effect.gen(function* () {
          const now = yield* revisionOf[kind]
          const merged = yield* Ref.updateAndGet(last, (l) => ({ ...l, revisions: { ...l.revisions, [kind]: now } }))
          yield* PubSub.publish(hub, { _tag: "Change", revisions: merged.revisions, loop: merged.loop })
        })
      const onPoll = Effect.gen(function* () {
        const at = yield* Clock.currentTimeMillis
        const revisions = yield* revisionsNow
        const holders = yield* snapshots.holders
        const owner = yield* loop
        const before = yield* Ref.get(last)
        if (
          (Object.keys(revisions) as Array<keyof Revisions>).some((k) => revisions[k] !== before.revisions[k]) ||
          holders !== before.holders ||
          owner !== before.loop
        )
          yield* publish(revisions, holders, owner, at)
        else yield* remember(revisions, holders, owner, at)
      })

      const feeds: ReadonlyArray<readonly [FeedKind, Stream.Stream<string>]> = [
        ["questions", store.changes],
        ["notices", notices.changes],
        ["queue", tasks.changes],
        ["chats", chats.changes],
        ["runs", runStore.changes]
      ]
      yield* Stream.mergeAll(
        feeds.map(([kind, changes]) => changes.pipe(Stream.filter(isRecordFile), Stream.mapEffect(() => onFileEvent(kind)))),
        { concurrency: feeds.length }
      ).pipe(Stream.runDrain, Effect.forkScoped)
      // A host's record is rewritten by every beat; only what a page shows
      // of it (a turn queued, a host gone) is news.
      if (Option.isSome(hosts))
        yield* hosts.value.changes.pipe(
          Stream.runForEach(() =>
            Effect.gen(function* () {
              const before = yield* Ref.get(last)
              const shown = yield* hostsNow
              if (shown !== before.revisions.hosts) yield* publish({ ...before.revisions, hosts: shown }, before.holders, before.loop, before.at)
            })
          ),
          Effect.forkScoped
        )
      yield* onPoll.pipe(Effect.repeat(Schedule.spaced(POLL)), Effect.forkScoped)
      yield* PubSub.publish(hub, { _tag: "KeepAlive" }).pipe(
        Effect.delay(KEEP_ALIVE),
        Effect.forever,
        Effect.forkScoped
      )

      const messages = Stream.unwrapScoped(
        Effect.gen(function* () {
          const subscription = yield* PubSub.subscribe(hub)
          const first: Message = { _tag: "Change", revisions: yield* revisionsNow, loop: yield* loop }
          // A shut-down hub ends the queue, and with it the stream.
          return Stream.concat(Stream.succeed(first), Stream.fromQueue(subscription))
        })
      )
      const latest = Effect.gen(function* () {
        const known = yield* Ref.get(last)
        if ((yield* Clock.currentTimeMillis) - known.at <= Duration.toMillis(POLL_LATE)) return known
        return { revisions: yield* revisionsNow, loop: yield* loop }
      })
      return { messages, revisions: revisionsNow, latest }
    })
  )
}
