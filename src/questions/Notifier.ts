/**
 * The tap on the owner's shoulder: run the configured notification command
 * (ntfy, a webhook script…) for a question.
 *
 * The command is argv, never a shell line, and the placeholders are filled in
 * one left-to-right pass: a summary containing `; rm -rf ~` is one argument to
 * one program, and a summary mentioning `{run}` is not expanded again. That is
 * what makes it safe to put agent-written text in a notification at all.
 */
import { Command, CommandExecutor } from "@effect/platform"
import { Config, Context, Data, Duration, Effect, Layer, Stream } from "effect"
import type { Question } from "./Question.js"
import { MagiConfig } from "../platform/MagiConfig.js"

/**
 * A webhook that hangs must not hang the ask: twenty seconds covers a slow
 * HTTP round trip and still files the question in bounded time.
 */
export const NOTIFY_TIMEOUT = Duration.seconds(20)

/** Names the web UI's base URL, for `{url}`; `magi web` prints the value. */
export const WEB_URL_ENV = "MAGI_WEB_URL"

export class NotifyFailed extends Data.TaggedError("NotifyFailed")<{ readonly message: string }> {}

/**
 * Point a base URL at the view that can answer: `/#/questions` is appended
 * unless the owner already wrote a fragment (then they chose where to land).
 * Blank stays blank: a link to an address nothing listens on is worse than no
 * link.
 */
export const questionUrl = (base: string): string => {
  const trimmed = base.trim().replace(/\/+$/, "")
  if (trimmed === "" || trimmed.includes("#")) return trimmed
  return `${trimmed}/#/questions`
}

const PLACEHOLDER = /\{(summary|run|url)\}/g

/**
 * Fill `{summary}`, `{run}`, `{url}` in one pass; other braces are kept.
 *
 * Agent-written text that would make an argument start with `-` gets a
 * leading space: without a shell it cannot run anything, but as the first
 * character of an argument it could still be read as an option
 * (`--attach=/home/me/.ssh/id_rsa`). A dash the owner wrote is theirs.
 */
export const expand = (template: string, q: Pick<Question, "summary" | "run">, url: string): string => {
  const filled = template.replace(PLACEHOLDER, (_, name: "summary" | "run" | "url") =>
    name === "summary" ? q.summary : name === "run" ? q.run : url
  )
  return filled.startsWith("-") && !template.startsWith("-") ? ` ${filled}` : filled
}

/**
 * How much of a notifier's stderr is kept: the end, where the reason a
 * command failed is. A command that floods stderr (3 GB in its twenty
 * seconds, seen) must cost this much memory, not all it wrote.
 */
export const STDERR_TAIL_BYTES = 16 * 1024

/** Keep only the last `max` characters of a stream of text, however much comes. */
export const keepTail = <E, R>(text: Stream.Stream<string, E, R>, max: number = STDERR_TAIL_BYTES) =>
  Stream.runFold(text, "", (kept, chunk) => {
    const both = kept + chunk
    return both.length > max ? both.slice(both.length - max) : both
  })

/**
 * Said when no notification command is set: a question then waits with
 * nobody told about it, which an owner should hear once, with what to set.
 */
export const notConfigured = (configFile: string): string =>
  `nobody is being notified: no notification command is configured. Set one in ${configFile}, ` +
  `for example: [notify] command = ["ntfy", "publish", "--click", "{url}", "my-topic", "{summary}"] (magi notify --test tries it)`

/** The last non-blank line a failed command wrote to stderr. */
export const lastStderrLine = (stderr: string): string =>
  stderr
    .split("\n")
    .map((l) => l.trim())
    .findLast((l) => l !== "") ?? "no output on stderr"

export interface NotifierShape {
  /** The configured argv; empty means notifications are off. */
  readonly command: ReadonlyArray<string>
  /** Run the command for `q`. Fails with the reason; succeeds when off. */
  readonly notify: (q: Question) => Effect.Effect<void, NotifyFailed>
}

export class Notifier extends Context.Tag("magi/Notifier")<Notifier, NotifierShape>() {
  /** Notifications as configured, `{url}` from `MAGI_WEB_URL`. */
  static layer = Layer.effect(
    Notifier,
    Effect.gen(function* () {
      const config = yield* MagiConfig
      const base = yield* Config.string(WEB_URL_ENV).pipe(Config.withDefault(""), Effect.orDie)
      return yield* make(config.notifyCommand, questionUrl(base))
    })
  )

  /** No notifications: the web UI is the only surface. */
  static off = Layer.succeed(Notifier, { command: [], notify: () => Effect.void })
}

export const make = Effect.fn("Notifier.make")(function* (command: ReadonlyArray<string>, url: string) {
  const executor = yield* CommandExecutor.CommandExecutor
  const [program, ...args] = command

  const notify = (q: Question): Effect.Effect<void, NotifyFailed> => {
    if (program === undefined) return Effect.void
    const argv = args.map((a) => expand(a, q, url))
    const run = Effect.gen(function* () {
      if (url === "" && command.some((a) => a.includes("{url}")))
        yield* Effect.logWarning(
          `the notification command uses {url} but ${WEB_URL_ENV} is unset, so the link will be empty; export it with the address \`magi web\` printed`
        )
      // stdin is fed nothing and closed; stdout is drained so a chatty
      // notifier never blocks on a full pipe.
      const proc = yield* Command.make(program, ...argv).pipe(Command.feed(""), Command.start)
      // On the timeout, the whole process group is killed outright: a
      // notifier that ignores SIGTERM must not hold the ask hostage.
      yield* Effect.addFinalizer((exit) =>
        exit._tag === "Failure" ? proc.kill("SIGKILL").pipe(Effect.ignore) : Effect.void
      )
      const [stderr, , code] = yield* Effect.all(
        [
          keepTail(Stream.decodeText(proc.stderr)),
          Stream.runDrain(proc.stdout),
          proc.exitCode
        ],
        { concurrency: "unbounded" }
      )
      if (code !== 0)
        return yield* new NotifyFailed({
          message: `notification command \`${program}\` exited with status ${code}: ${lastStderrLine(stderr)}`
        })
    }).pipe(
      Effect.scoped,
      Effect.timeoutFail({
        duration: NOTIFY_TIMEOUT,
        onTimeout: () =>
          new NotifyFailed({
            message: `notification command \`${program}\` did not finish within ${Duration.toSeconds(NOTIFY_TIMEOUT)}s and was killed`
          })
      }),
      Effect.catchTag("SystemError", "BadArgument", (e) =>
        Effect.fail(
          new NotifyFailed({
            message:
              e._tag === "SystemError" && e.reason === "NotFound"
                ? `notification command \`${program}\` could not be started: no such program`
                : `notification command \`${program}\` could not be started: ${e.message}`
          })
        )
      ),
      Effect.provideService(CommandExecutor.CommandExecutor, executor)
    )
    return run.pipe(Effect.withSpan("Notifier.notify", { attributes: { question: q.id } }))
  }
  return { command, notify } satisfies NotifierShape
})
