/**
 * Every lease of one questions directory, known without a read per question
 * per request.
 *
 * The web says, for each question that may be held, who holds it; read from
 * disk per question per request, a thousand undelivered questions made
 * `/api/health` take 200 ms (2.4 s at twenty connections). The leases only
 * change when a file in `leases/` does, so they are kept in memory and only
 * what changed is read again:
 *
 * - the folder is watched, and a lease named by an event is re-read (a live
 *   asker beats every few seconds: one file, not a thousand);
 * - each look also stats the folder once: a rename into it moves its mtime,
 *   so a lease written a moment ago is noticed even before its event is
 *   delivered (the event loop is given a turn to deliver it), and where
 *   watching does not work at all, a moved mtime re-reads the whole folder.
 *
 * Freshness is never cached: a lease goes stale with no file changing, so it
 * is judged from its beat at the moment of asking, as before.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import { Effect, Layer, Option, Ref, Stream } from "effect"
import * as NodePath from "node:path"
import * as Memo from "../store/files/Memo.js"
import * as Lease from "./Leases.js"
import { Leases, type LeasesShape } from "./Leases.js"

const SUFFIX = ".lease"

interface Known {
  readonly leases: ReadonlyMap<string, Lease.Lease>
  /** The folder's mtime as last looked at. */
  readonly mtime: number
  /** When (wall time) the leases were read: an mtime not safely older than this proves nothing. */
  readonly takenAt: number
}

/** Two turns of the event loop: enough for a watch event already queued to be delivered. */
const letEventsIn = Effect.promise(() => new Promise<void>((r) => setImmediate(() => setImmediate(r))))

/** The leases under `root` (the questions directory), kept up to date; lives as long as its scope. */
export const make = Effect.fn("LeaseIndex.make")(function* (root: string) {
  const fs = yield* FileSystem.FileSystem
  const dir = NodePath.join(root, Lease.LEASES_DIR)
  const known = yield* Ref.make(Option.none<Known>())
  /** Question ids whose lease file an event named since the last look. */
  const changed = yield* Ref.make(new Set<string>())
  const watching = yield* Ref.make(true)
  const updating = yield* Effect.makeSemaphore(1)
  const bound = <A, E>(e: Effect.Effect<A, E, FileSystem.FileSystem>) => Effect.provideService(e, FileSystem.FileSystem, fs)

  // fallback: the folder is made if it can be; watching it then fails loudly if it is not there
  yield* fs.makeDirectory(dir, { recursive: true }).pipe(Effect.ignore)
  yield* fs.watch(dir).pipe(
    Stream.map((event) => NodePath.basename(event.path)),
    Stream.filter((name) => name.endsWith(SUFFIX)),
    Stream.runForEach((name) => Ref.update(changed, (s) => new Set(s).add(name.slice(0, -SUFFIX.length)))),
    // fallback: the lease index is a view for the web; a failed refresh is retried
    Effect.ignore,
    // Ended or failed: from now on a moved mtime is the only sign of a change.
    Effect.ensuring(Ref.set(watching, false)),
    Effect.forkScoped
  )

  const mtimeOf = Memo.mtimeOf(fs, dir)

  /** Re-read everything: the first look, and any change no event explained. */
  const readWhole = (mtime: number) =>
    Effect.gen(function* () {
      const takenAt = Date.now()
      yield* Ref.set(changed, new Set())
      const leases = yield* bound(Lease.readAll(root))
      yield* Ref.set(known, Option.some({ leases, mtime, takenAt }))
      return leases
    })

  /** Re-read only the leases events named. */
  const readChanged = (before: Known, mtime: number) =>
    Effect.gen(function* () {
      // Taken before reading: an event during the reads names its file again.
      const takenAt = Date.now()
      const ids = yield* Ref.getAndSet(changed, new Set())
      const leases = new Map(before.leases)
      for (const id of ids) {
        const lease = yield* bound(Lease.read(root, id))
        if (Option.isSome(lease)) leases.set(id, lease.value)
        else leases.delete(id)
      }
      yield* Ref.set(known, Option.some({ leases, mtime, takenAt }))
      return leases as ReadonlyMap<string, Lease.Lease>
    })

  /** Every lease now: from memory, with only what changed read again. */
  const known_: Effect.Effect<ReadonlyMap<string, Lease.Lease>> = updating.withPermits(1)(
    Effect.gen(function* () {
      const cached = yield* Ref.get(known)
      const mtime = yield* mtimeOf
      if (Option.isNone(cached)) return yield* readWhole(mtime)
      if ((yield* Ref.get(changed)).size > 0) return yield* readChanged(cached.value, mtime)
      // The same mtime proves nothing unchanged while it is as young as the
      // read (`Memo.trusted`): a lease removed in the same timestamp tick as
      // the read leaves the folder's mtime where it was.
      if (mtime === cached.value.mtime && Memo.trusted(mtime, cached.value.takenAt)) return cached.value.leases
      // The folder moved but no event said what: give a queued event its
      // turn, then, if none came (watching does not work here), read it all.
      if (yield* Ref.get(watching)) yield* letEventsIn
      if ((yield* Ref.get(changed)).size > 0) return yield* readChanged(cached.value, mtime)
      return yield* readWhole(mtime)
    })
  )

  // Like freshness, whether a lease's process lives is judged at the moment
  // of asking: it dies with no file changing.
  const all = Effect.map(known_, (leases) => {
    const live = new Map<string, Lease.Lease>()
    for (const [id, lease] of leases) if (Lease.mayLive(lease)) live.set(id, lease)
    return live as ReadonlyMap<string, Lease.Lease>
  })

  return {
    root,
    beat: (id, kind) => Effect.zipRight(bound(Lease.beat(root, id, kind)), Ref.update(changed, (s) => new Set(s).add(id))),
    read: (id) => Effect.map(all, (leases) => Option.fromNullable(leases.get(id))),
    all,
    clear: (id) => Effect.zipRight(bound(Lease.clear(root, id)), Ref.update(changed, (s) => new Set(s).add(id)))
  } satisfies LeasesShape
})

/** `Leases` for the questions under `root`, from the index. */
export const layer = (root: string) => Layer.scoped(Leases, Effect.map(make(root), Leases.make))
