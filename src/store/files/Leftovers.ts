/**
 * Sweeping what a kill left behind (scratch files, lock-break markers, a
 * kind's own leftovers) once it is clearly abandoned: in the root, inside
 * each record's folder, and on and beside the shelves.
 */
import * as NodePath from "node:path"
import { Clock, Effect, Either, Option } from "effect"
import { type Shelves } from "./Shelves.js"
import { mtimeMs, type StoreContext } from "./StoreContext.js"

/**
 * Scratch left by a kill is removed once it is this old. A write holds its
 * temp file for milliseconds and a panel copy (8 MiB at most) for well under a
 * second; an hour is beyond any writer still alive, even one paused for a
 * while, so what is older has no owner.
 */
export const ABANDONED_AFTER_MS = 60 * 60 * 1000

/** How often a listing looks for leftovers: they are rare, and a sweep stats each one. */
export const SWEEP_EVERY_MS = 10 * 60 * 1000

/** The sweep of leftovers. */
export const make = <A>(
  ctx: StoreContext<A>,
  shelfList: Shelves<A>
) => {
  const { fs, root, flat, names, idsIn, archiveRoot, shelfDirOf, isLeftover } = ctx
  const { shelves, leftoversOn, shelfLeftovers, shelfNames } = shelfList

  let lastSweep = Number.NEGATIVE_INFINITY

  /** Remove the leftovers among `names`, the entries of `dir`, that are clearly abandoned at `now`. */
  const sweepIn = (dir: string, names: ReadonlyArray<string>, now: number) =>
    Effect.gen(function* () {
      let removed = 0
      for (const name of names.filter(isLeftover)) {
        const path = NodePath.join(dir, name)
        const info = yield* Effect.option(fs.stat(path))
        if (Option.isNone(info)) continue
        const at = mtimeMs(info.value)
        // A future mtime (a clock stepped back) is judged as of now: it
        // waits one more full period, never forever.
        if (at < 0 || now - at <= ABANDONED_AFTER_MS) continue
        const gone = yield* fs.remove(path, { recursive: info.value.type === "Directory" }).pipe(Effect.either)
        if (Either.isRight(gone)) removed++
      }
      return removed
    })

  /**
   * The root's leftovers and, in the folder layout, those inside each
   * record's own folder, where its writes happen (`run.json`'s scratch and
   * lock markers; never deeper, where a run keeps its artifacts).
   */
  const sweepNames = (all: ReadonlyArray<string>, inside: ReadonlyArray<string> = idsIn(all)) =>
    Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      lastSweep = now
      let removed = yield* sweepIn(root, all, now)
      if (!flat) {
        for (const id of inside) {
          const dir = NodePath.join(root, id)
          // fallback: a folder that cannot be listed sweeps nothing
          const inside = yield* fs.readDirectory(dir).pipe(Effect.orElseSucceed((): string[] => []))
          // fallback: sweeping leftovers is tidying; a failure removes nothing
          removed += yield* sweepIn(dir, inside, now).pipe(Effect.catchAllCause(() => Effect.succeed(0)))
        }
      }
      return removed
      // fallback: sweeping leftovers is tidying; a failure removes nothing
    }).pipe(Effect.catchAllCause(() => Effect.succeed(0)))

  /** Everything: the root, the records' folders, and the shelves. */
  const sweep = Effect.gen(function* () {
    // fallback: a folder that cannot be listed sweeps nothing
    const removed = yield* sweepNames(yield* Effect.orElseSucceed(names, () => [] as string[]))
    return removed + (yield* sweepArchive(yield* Clock.currentTimeMillis))
  })

  /**
   * The leftovers beside the shelves (a month index's scratch) and on them
   * (a write to a shelved record killed midway). A shelf's leftovers come
   * from their memo while it is unchanged, so a sweep reads no shelf of
   * 10,000 names that nothing wrote to.
   */
  const sweepArchive = (now: number): Effect.Effect<number> =>
    archiveRoot === undefined
      ? Effect.succeed(0)
      : Effect.gen(function* () {
        // fallback: a folder that cannot be listed sweeps nothing
        const beside = yield* fs.readDirectory(archiveRoot).pipe(Effect.orElseSucceed((): string[] => []))
        let removed = yield* sweepIn(archiveRoot, beside, now)
        for (const shelf of yield* shelves) {
          const leftovers = yield* leftoversOn(shelf)
          if (leftovers.length === 0) continue
          removed += yield* sweepIn(shelfDirOf(shelf), leftovers, now)
          shelfLeftovers.forget(shelf)
          shelfNames.forget(shelf)
        }
        return removed
        // fallback: sweeping leftovers is tidying; a failure removes nothing
      }).pipe(Effect.catchAllCause(() => Effect.succeed(0)))

  /** Whether a listing should look for leftovers now: at most once per `SWEEP_EVERY_MS`. */
  const sweepDue = (now: number) => now - lastSweep > SWEEP_EVERY_MS

  return { sweepNames, sweep, sweepDue }
}

export type Leftovers<A> = ReturnType<typeof make<A>>
