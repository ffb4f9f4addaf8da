/**
 * The waiter inside `magi web`: the same loop as `magi serve`, run beside the
 * page so one command is enough for an answer to reach an agent whose
 * `magi ask` is gone. Kept apart from the server so it can be tested (and
 * reasoned about) without the HTTP stack.
 */
import { Cause, Duration, Effect, Layer, Option, Schedule } from "effect"
import type { MagiHome } from "../platform/MagiHome.js"
import { waiterLayer, waiterLoop } from "./serve.js"

/** The one line that says why the waiter does not run here, and what that costs. */
const notRunning = (cause: Cause.Cause<unknown>): string => {
  // A failure carries its own message; a crash is squashed to its error's.
  const error = Option.getOrElse(Cause.failureOption(cause), () => Cause.squash(cause))
  const why = typeof error === "object" && error !== null && "message" in error ? String(error.message) : String(error)
  if (typeof error === "object" && error !== null && "_tag" in error && error._tag === "HomeTaken")
    return `magi web is not running the waiter: ${why}. That loop delivers the answers; this server serves the page, and takes the loop over if that one stops.`
  return (
    `magi web is not running the waiter: ${why}. Answers are still recorded, but none reaches an agent ` +
    "whose `magi ask` is gone until this is fixed and magi web (or magi serve) is restarted."
  )
}

/**
 * How often a `magi web` that found another loop owning the home looks again.
 * That loop's record goes stale 30 s after it dies, so the answers stop
 * flowing for at most about a minute before this server picks the loop up.
 */
export const TAKEOVER_RETRY = Duration.seconds(30)

const isHomeTaken = (e: unknown): boolean => typeof e === "object" && e !== null && "_tag" in e && e._tag === "HomeTaken"

/**
 * The waiter, for as long as the server runs. Its config is read here, not
 * before serving: any failure (a broken config, a crash later on) becomes one
 * warning, and the page keeps serving. Another loop owning the home is
 * warned about once, then watched: when it stops, this server takes over.
 */
export const inProcessWaiter = (home: Layer.Layer<MagiHome>) =>
  Effect.gen(function* () {
    let warned = false
    return yield* waiterLoop((dir) => `magi web: delivering answers for the questions in ${dir} too (pid ${process.pid})\n`).pipe(
      Effect.provide(waiterLayer(home)),
      Effect.tapError((e) =>
        isHomeTaken(e) && !warned
          ? Effect.zipRight(Effect.sync(() => (warned = true)), Effect.logWarning(notRunning(Cause.fail(e))))
          : Effect.void
      ),
      Effect.retry({ while: isHomeTaken, schedule: Schedule.spaced(TAKEOVER_RETRY) })
    )
  }).pipe(Effect.catchAllCause((cause) => (Cause.isInterruptedOnly(cause) ? Effect.void : Effect.logWarning(notRunning(cause)))))
