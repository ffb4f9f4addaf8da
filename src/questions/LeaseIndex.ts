/**
 * Every lease of one questions directory, known without a read per question
 * per request.
 *
 * The web says, for each question that may be held, who holds it; read from
 * disk per question per request, a thousand undelivered questions made
 * `/api/health` take 200 ms (2.4 s at twenty connections). The leases only
 * change when a file in `leases/` does, so they are read once per change and
 * kept: the folder's mtime is checked once per look (a rename into it moves
 * it), and the folder is watched as well, because two writes in one mtime
 * tick leave it unchanged and the event is the only sign of the second.
 * Freshness is not cached: a lease
 * goes stale with no file changing, so whether it is fresh is judged from its
 * beat at the moment of asking, as before.
 */
import { FileSystem } from "@effect/platform"
import { Clock, Effect, Layer, Option, Ref, Stream } from "effect"
import * as NodePath from "node:path"
import * as Lease from "./Lease.js"
import { Leases, type LeasesShape } from "./Lease.js"

/** A write in the same mtime tick as a read cannot be told from it until it is this old (ext4, tmpfs: jiffies). */
const RACY_MS = 50

interface Known {
  readonly leases: ReadonlyMap<string, Lease.Lease>
  /** The folder's mtime when read, trusted only once older than `RACY_MS` at the read. */
  readonly mtime: number
  readonly trusted: boolean
}

/** The leases under `root` (the questions directory), read once per change; lives as long as its scope. */
export const make = Effect.fn("LeaseIndex.make")(function* (root: string) {
  const fs = yield* FileSystem.FileSystem
  const dir = NodePath.join(root, Lease.LEASES_DIR)
  const known = yield* Ref.make(Option.none<Known>())
  const dirty = yield* Ref.make(true)
  const reading = yield* Effect.makeSemaphore(1)

  yield* fs.makeDirectory(dir, { recursive: true }).pipe(Effect.ignore)
  yield* fs.watch(dir).pipe(
    Stream.runForEach(() => Ref.set(dirty, true)),
    Effect.ignore,
    Effect.forkScoped
  )

  const mtimeOf = fs.stat(dir).pipe(
    Effect.map((info) => Option.getOrElse(Option.map(info.mtime, (d) => d.getTime()), () => -1)),
    Effect.orElseSucceed(() => -1)
  )

  const refresh = reading.withPermits(1)(
    Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      // Cleared before reading: a change landing during the read marks it again.
      yield* Ref.set(dirty, false)
      const mtime = yield* mtimeOf
      const leases = yield* Lease.readAll(root).pipe(Effect.provideService(FileSystem.FileSystem, fs))
      yield* Ref.set(known, Option.some({ leases, mtime, trusted: mtime >= 0 && mtime < now - RACY_MS }))
      return leases as ReadonlyMap<string, Lease.Lease>
    })
  )

  /**
   * Every lease now: from memory unless something changed. One stat of the
   * folder per call (a lease written by another process a moment ago is seen
   * even before its watch event arrives), never a read per lease.
   */
  const all = Effect.gen(function* () {
    const cached = yield* Ref.get(known)
    if (Option.isSome(cached) && cached.value.trusted && !(yield* Ref.get(dirty))) {
      if ((yield* mtimeOf) === cached.value.mtime) return cached.value.leases
    }
    return yield* refresh
  })

  const bound = <A, E>(e: Effect.Effect<A, E, FileSystem.FileSystem>) => Effect.provideService(e, FileSystem.FileSystem, fs)
  return {
    root,
    // This process's own writes are known at once, without waiting for the watch.
    beat: (id, kind) => Effect.zipRight(bound(Lease.beat(root, id, kind)), Ref.set(dirty, true)),
    read: (id) => Effect.map(all, (leases) => Option.fromNullable(leases.get(id))),
    all,
    clear: (id) => Effect.zipRight(bound(Lease.clear(root, id)), Ref.set(dirty, true))
  } satisfies LeasesShape
})

/** `Leases` for the questions under `root`, from the index. */
export const layer = (root: string) => Layer.scoped(Leases, make(root))
