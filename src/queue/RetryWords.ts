/**
 * When a failed task goes again, in words: "will retry at 14:05 (in 4 min)".
 * Import-free, so the page (`web/client/queue.ts`) and `magi task list` say
 * the same. The moment itself is the loop's rule (`daemon/QueueDecide.retryAt`).
 */

/** `at` and `now` in ms; `clock` formats a moment as the reader's local time of day. */
export const retryWords = (at: number, now: number, clock: (ms: number) => string): string => {
  const left = at - now
  if (left <= 0) return "will retry on the loop's next tick"
  const minutes = Math.ceil(left / 60_000)
  return `will retry at ${clock(at)} (in ${minutes < 2 ? (left < 60_000 ? `${Math.ceil(left / 1000)} s` : "1 min") : `${minutes} min`})`
}
