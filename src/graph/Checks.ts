/**
 * `[verify] checks`: shell commands (no agent) run in a candidate's
 * worktree before judging, each bounded by `[verify] check_timeout`. What a
 * judge is shown of each: its exit code, how long it took and the last 4 KB
 * of its output. A check that fails is evidence, not an error: it is shown.
 */
import * as Command from "@effect/platform/Command"
import * as CommandExecutor from "@effect/platform/CommandExecutor"
import { Clock, Duration, Effect, Option, Stream } from "effect"
import type { Check } from "../runs/Competition.js"
import { CHECK_TAIL_BYTES } from "./JudgePrompt.js"

/** Keep only the last `max` characters of what streams through. */
const tailOf = (s: Stream.Stream<Uint8Array, unknown>, max: number) =>
  Stream.decodeText(s).pipe(
    Stream.runFold("", (acc, chunk) => {
      const joined = acc + chunk
      return joined.length > max ? joined.slice(-max) : joined
    }),
    // display: the tail of a check's output; empty when it cannot be read
    Effect.orElseSucceed(() => "")
  )

export const runCheck = Effect.fn("Checks.run")(function* (cwd: string, command: string, timeout: Duration.Duration) {
  const executor = yield* CommandExecutor.CommandExecutor
  const started = yield* Clock.currentTimeMillis
  const ran = yield* Effect.scoped(
    Effect.gen(function* () {
      const proc = yield* Command.make("sh", "-c", command).pipe(
        Command.workingDirectory(cwd),
        Command.env({ GIT_TERMINAL_PROMPT: "0", CI: "1" }),
        Command.feed(""),
        Command.start
      )
      const both = Effect.all([tailOf(proc.stdout, CHECK_TAIL_BYTES), tailOf(proc.stderr, CHECK_TAIL_BYTES), proc.exitCode], { concurrency: 3 })
      return yield* Effect.timeoutOption(both, timeout)
    })
  ).pipe(
    Effect.map((o) =>
      Option.match(o, {
        onNone: () => ({ exit: null, timed_out: true, tail: `(killed after ${Duration.format(timeout)})` }),
        onSome: ([out, err, code]) => ({ exit: Number(code), timed_out: false, tail: `${out}${err}`.slice(-CHECK_TAIL_BYTES) })
      })
    ),
    // fallback: a check that cannot start is recorded as such (exit null and the reason)
    Effect.catchAll((e) => Effect.succeed({ exit: null, timed_out: false, tail: `could not start: ${e.message}` })),
    Effect.provideService(CommandExecutor.CommandExecutor, executor)
  )
  const ended = yield* Clock.currentTimeMillis
  return { command, duration_ms: ended - started, ...ran } satisfies Check
})
