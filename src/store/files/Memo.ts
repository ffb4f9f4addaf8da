/**
 * "Reuse while unchanged", the file backend's one memo: a value computed from
 * a folder (a listing, a shelf's names, a month's index, the leases) is
 * reused for as long as the folder's mtime stays what it was when the value
 * was computed. Every write magi makes lands by a rename into the folder,
 * which moves its mtime.
 *
 * The mtime is trusted only once it is safely older than the computation
 * (`MTIME_SLACK_MS`): filesystem timestamps are coarse, and two writes inside
 * one tick — one before the computation read the folder, one after — would
 * otherwise leave the same mtime and a stale value. Wall time, not `Clock`:
 * this compares against the filesystem's own timestamps.
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import { Effect, Option } from "effect"

/** Filesystem timestamps are coarse on some filesystems; an mtime older than this before a look is settled. */
export const MTIME_SLACK_MS = 50

/** The mtime of `path` in milliseconds; -1 when it cannot be read (never trusted). */
export const mtimeOf = (fs: FileSystem.FileSystem, path: string): Effect.Effect<number> =>
  fs.stat(path).pipe(
    Effect.map((info) => Option.getOrElse(Option.map(info.mtime, (d) => d.getTime()), () => -1)),
    // fallback: no mtime read is "unknown", which is never trusted
    Effect.orElseSucceed(() => -1)
  )

/** May a value computed at `takenAt` (wall time) be reused while the stamp stays `stamp`? */
export const trusted = (stamp: number, takenAt: number): boolean => stamp !== -1 && stamp < takenAt - MTIME_SLACK_MS

export interface Memo<A> {
  /**
   * The value for `key`: the memo while `stamp` reads as it did, else
   * `compute`d now and kept when the stamp was the same before and after and
   * is safely old.
   */
  readonly get: <E, R>(key: string, stamp: Effect.Effect<number>, compute: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** Drop the value for `key` (a write this process knows of). */
  readonly forget: (key: string) => void
}

/**
 * A memo of at most `maxKeys` values (unbounded when not given): where keys
 * come from requests (a history page's cursor and search words), the oldest
 * kept value makes room for a new one.
 */
export const make = <A>(maxKeys = Infinity): Memo<A> => {
  const memos = new Map<string, { readonly stamp: number; readonly value: A }>()
  const keep = (key: string, memo: { readonly stamp: number; readonly value: A }) => {
    memos.delete(key)
    if (memos.size >= maxKeys) {
      const oldest = memos.keys().next()
      if (oldest.done !== true) memos.delete(oldest.value)
    }
    memos.set(key, memo)
  }
  return {
    get: (key, stamp, compute) =>
      Effect.gen(function* () {
        const before = yield* stamp
        const memo = memos.get(key)
        if (memo !== undefined && before !== -1 && memo.stamp === before) return memo.value
        const takenAt = Date.now()
        const value = yield* compute
        const after = yield* stamp
        if (after === before && trusted(after, takenAt)) keep(key, { stamp: after, value })
        else memos.delete(key)
        return value
      }),
    forget: (key) => {
      memos.delete(key)
    }
  }
}
