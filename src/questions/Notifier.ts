/**
 * The tap on the owner's shoulder: run the configured notification command
 * (a webhook script, anything), publish to ntfy (`Ntfy.ts`), push to the
 * phones that asked for it (`WebPush.ts`), or all of them, for a question.
 * Every channel goes through this one `notify`, so the once-only
 * bookkeeping around it (`Announcements.ts`) covers them alike.
 *
 * The command is argv, never a shell line, and the placeholders are filled in
 * one left-to-right pass: a summary containing `; rm -rf ~` is one argument to
 * one program, and a summary mentioning `{run}` is not expanded again. That is
 * what makes it safe to put agent-written text in a notification at all.
 */
import * as Command from "@effect/platform/Command"
import * as CommandExecutor from "@effect/platform/CommandExecutor"
import * as FileSystem from "@effect/platform/FileSystem"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpClient from "@effect/platform/HttpClient"
import { Config, Context, Data, Duration, Effect, Either, Layer, Option, Ref, Stream } from "effect"
import * as Clock from "effect/Clock"
import * as Q from "./Question.js"
import type { Question } from "./Question.js"
import * as ConfiguredStore from "../platform/ConfiguredStore.js"
import * as AnswerLinks from "./AnswerLinks.js"
import * as Ntfy from "./Ntfy.js"
import * as WebPush from "./WebPush.js"
import * as LastNotification from "./LastNotification.js"
import { Devices } from "../devices/Devices.js"
import type { PushSubscription } from "../devices/PushSubscription.js"
import { serviceOf } from "../devices/PushSubscription.js"
import { MagiConfig, type NtfySettings } from "../platform/MagiConfig.js"
import { MagiHome } from "../platform/MagiHome.js"

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
  const filled = template.replace(PLACEHOLDER, (_, name: "summary" | "run" | "url") => name === "summary" ? q.summary : name === "run" ? q.run : url)
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
  `for example: [notify] ntfy = { topic = "a-long-random-topic" } (subscribe to it in the ntfy app), ` +
  `or [notify] command = ["my-notifier", "{summary}", "{url}"] (magi notify --test tries it)`

/** The last non-blank line a failed command wrote to stderr. */
export const lastStderrLine = (stderr: string): string =>
  stderr
    .split("\n")
    .map((l) => l.trim())
    .findLast((l) => l !== "") ?? "no output on stderr"

export interface NotifyOptions {
  /**
   * A notice about `q` (the waiter could not deliver), not `q` itself asking:
   * no buttons answer it.
   */
  readonly notice?: boolean
}

export interface NotifierShape {
  /** The configured argv; empty means no command is run. */
  readonly command: ReadonlyArray<string>
  /** Whether any channel (the command, ntfy, Web Push) is configured; false means nobody is told. */
  readonly configured: boolean
  /** Each configured channel in a few words, for `magi notify --test`. */
  readonly channels: ReadonlyArray<string>
  /**
   * Tell the owner about `q` on every configured channel. Fails with the
   * reasons only when every channel failed: one that reached the owner is a
   * notification given, and trying again would repeat it there.
   */
  readonly notify: (q: Question, options?: NotifyOptions) => Effect.Effect<void, NotifyFailed>
}

/** What the ntfy channel needs beyond its settings. */
export interface NtfyChannel {
  readonly settings: NtfySettings
  /** Where the phone reaches `magi web`: the card link and the buttons' target; "" for neither. */
  readonly base: string
  /** The access token `token_env` names, read from the environment. */
  readonly token: string | undefined
  readonly client: HttpClient.HttpClient
  /** The home's capability-link secret, read (or made) when a button needs it. */
  readonly secret: Effect.Effect<Buffer, AnswerLinks.SecretUnavailable>
  /** `[ask] answer_timeout`, for a question that recorded none: the tokens' expiry. */
  readonly fallbackSecs: number
}

/** What the Web Push channel needs: offered where `[web] public_url` is https. */
export interface PushChannel {
  /** The page's https address: the VAPID subject. */
  readonly subject: string
  readonly client: HttpClient.HttpClient
  readonly keys: Effect.Effect<WebPush.VapidKeys, WebPush.VapidUnavailable>
  /** The subscriptions now: read at each question, so a phone that just subscribed is told. */
  readonly subscriptions: Effect.Effect<ReadonlyArray<PushSubscription>, string>
  /** Forget a subscription its push service says is gone. */
  readonly forget: (id: string) => Effect.Effect<void>
  readonly secret: Effect.Effect<Buffer, AnswerLinks.SecretUnavailable>
  readonly fallbackSecs: number
}

/**
 * `effect`'s value once it has succeeded, kept from then on; a failure is
 * not kept (unlike `Effect.cached`), so a database that was down at the first
 * question is tried again at the next one rather than leaving a long-running
 * process without buttons or pushes until it restarts.
 */
export const keptOnceGot = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const kept = yield* Ref.make(Option.none<A>())
    const one = yield* Effect.makeSemaphore(1)
    // @effect-diagnostics-next-line returnEffectInGen:off -- the kept effect is the value made here, run later by its caller
    return one.withPermits(1)(
      Effect.flatMap(Ref.get(kept), (got) => (Option.isSome(got) ? Effect.succeed(got.value) : Effect.tap(effect, (a) => Ref.set(kept, Option.some(a)))))
    )
  })

export class Notifier extends Context.Tag("magi/Notifier")<Notifier, NotifierShape>() {
  /**
   * Notifications as configured. Links point at `[web] public_url`, else at
   * `MAGI_WEB_URL` (the address `magi web` printed).
   */
  static layer = Layer.scoped(
    Notifier,
    Effect.gen(function* () {
      const config = yield* MagiConfig
      const fromEnv = yield* Config.string(WEB_URL_ENV).pipe(Config.withDefault(""), Effect.orDie)
      const base = (config.publicUrl ?? fromEnv).trim().replace(/\/+$/, "")
      const ntfy = config.ntfy
      const pushOffered = WebPush.offered(config.publicUrl)
      const home = yield* MagiHome
      const fs = yield* FileSystem.FileSystem
      if (ntfy === null && !pushOffered) return recordingIn(home.dir, fs, yield* make(config.notifyCommand, questionUrl(base)))
      const storeUrl = yield* ConfiguredStore.configuredUrl
      const secret = yield* keptOnceGot(AnswerLinks.secretShared(home.dir, storeUrl).pipe(Effect.provideService(FileSystem.FileSystem, fs)))
      const client = yield* HttpClient.HttpClient
      let ntfyChannel: NtfyChannel | undefined
      if (ntfy !== null) {
        const token = ntfy.tokenEnv === null
          ? Option.none<string>()
          : yield* Config.option(Config.nonEmptyString(ntfy.tokenEnv)).pipe(Effect.orDie)
        if (ntfy.tokenEnv !== null && Option.isNone(token))
          yield* Effect.logWarning(`[notify] ntfy names token_env = "${ntfy.tokenEnv}", but that variable is unset: publishing without a token`)
        ntfyChannel = { settings: ntfy, base, token: Option.getOrUndefined(token), client, secret, fallbackSecs: config.answerTimeoutSecs }
      }
      let pushChannel: PushChannel | undefined
      if (pushOffered) {
        // The subscriptions are records on the configured store, opened on
        // the first question (not at every `magi` start) and kept open.
        const scope = yield* Effect.scope
        const devices = yield* keptOnceGot(
          Layer.buildWithScope(Devices.layer.pipe(Layer.provide(ConfiguredStore.layer)), scope).pipe(
            Effect.map((context) => Context.get(context, Devices)),
            Effect.provideService(FileSystem.FileSystem, fs),
            Effect.provideService(MagiHome, home),
            Effect.provideService(MagiConfig, config),
            Effect.mapError((e) => e.message)
          )
        )
        pushChannel = {
          subject: base,
          client,
          keys: yield* keptOnceGot(WebPush.vapidKeysShared(home.dir, storeUrl).pipe(Effect.provideService(FileSystem.FileSystem, fs))),
          subscriptions: Effect.flatMap(devices, (d) => Effect.mapError(d.subscriptions, (e) => e.message)),
          // fallback: best-effort removal of a subscription the push service refused
          forget: (id) => Effect.flatMap(devices, (d) => d.unsubscribe(id)).pipe(Effect.ignore),
          secret,
          fallbackSecs: config.answerTimeoutSecs
        }
      }
      return recordingIn(home.dir, fs, yield* make(config.notifyCommand, questionUrl(base), ntfyChannel, pushChannel), [
        ...(ntfyChannel === undefined ? [] : [{ value: ntfyChannel.settings.topic, as: "<the ntfy topic>" }]),
        ...(ntfyChannel?.token === undefined ? [] : [{ value: ntfyChannel.token, as: "<the ntfy token>" }])
      ])
    })
  ).pipe(Layer.provide(FetchHttpClient.layer))

  /** No notifications: the web UI is the only surface. */
  static off = Layer.succeed(Notifier, { command: [], configured: false, channels: [], notify: () => Effect.void })
}

/**
 * `notifier` writing each attempt's outcome to the home
 * (`LastNotification.ts`), so `magi doctor` can say the last one failed.
 */
export const recordingIn = (
  home: string,
  fs: FileSystem.FileSystem,
  notifier: NotifierShape,
  secrets: ReadonlyArray<{ readonly value: string; readonly as: string }> = []
): NotifierShape => ({
  ...notifier,
  notify: (q, options) =>
    notifier.configured
      ? notifier.notify(q, options).pipe(
        Effect.either,
        Effect.tap((outcome) => LastNotification.record(home, Either.mapLeft(outcome, (e) => LastNotification.scrub(e.message, secrets)))),
        Effect.flatten,
        Effect.provideService(FileSystem.FileSystem, fs)
      )
      : notifier.notify(q, options)
})

/**
 * A capability token per choice of `q`, or none when the home's key cannot
 * be read: then the owner is still notified, without buttons (the tap on
 * the shoulder matters more than the shortcut).
 */
const tokensFor = (q: Question, secretOf: Effect.Effect<Buffer, AnswerLinks.SecretUnavailable>, fallbackSecs: number) =>
  Effect.gen(function* () {
    const secret = yield* Effect.either(secretOf)
    if (Either.isLeft(secret)) {
      yield* Effect.logWarning(`notifying without answer buttons: ${secret.left.message}`)
      return undefined
    }
    const expiresAt = AnswerLinks.expiryFor(Q.deadlineMs(q, fallbackSecs), yield* Clock.currentTimeMillis)
    return q.choices.map((_, index) => AnswerLinks.mint(secret.right, { question: q.id, choices: q.choices, index, expiresAt }))
  })

/** Publish `q` to ntfy, with a capability token per choice when its buttons may answer. */
const publishNtfy = (channel: NtfyChannel, q: Question, options: NotifyOptions) =>
  Effect.gen(function* () {
    const notice = options.notice === true
    const buttons = !notice && channel.base !== "" && Q.isOpen(q) && q.choices.length > 0 && q.choices.length <= Ntfy.MAX_ACTIONS
    const tokens = buttons ? yield* tokensFor(q, channel.secret, channel.fallbackSecs) : undefined
    const msg = Ntfy.message({ question: q, topic: channel.settings.topic, base: channel.base, tokens, notice })
    yield* Ntfy.publish(channel.settings, msg, channel.token)
  }).pipe(
    Effect.provideService(HttpClient.HttpClient, channel.client),
    Effect.mapError((e) => new NotifyFailed({ message: typeof e === "string" ? e : `could not publish to ntfy at ${channel.settings.server}: ${e.message}` })),
    Effect.timeoutFail({
      duration: NOTIFY_TIMEOUT,
      onTimeout: () => new NotifyFailed({ message: `ntfy at ${channel.settings.server} did not answer within ${Duration.toSeconds(NOTIFY_TIMEOUT)}s` })
    })
  )

/**
 * Push `q` to every subscription at once. Reached (true) when one phone
 * took it; false when there was nobody to push to (none subscribed, or
 * every push service said its subscription is gone: forgotten then, as the
 * browser dropped it). Fails when every push failed otherwise.
 */
const pushAll = (channel: PushChannel, q: Question, options: NotifyOptions): Effect.Effect<boolean, NotifyFailed> =>
  Effect.gen(function* () {
    const subscriptions = yield* channel.subscriptions
    if (subscriptions.length === 0) return false
    const keys = yield* Effect.mapError(channel.keys, (e) => e.message)
    const notice = options.notice === true
    const buttons = !notice && Q.isOpen(q) && q.choices.length > 0 && q.choices.length <= WebPush.MAX_ACTIONS
    const tokens = buttons ? yield* tokensFor(q, channel.secret, channel.fallbackSecs) : undefined
    const body = WebPush.payload({ question: q, tokens, notice })
    const sent = yield* Effect.forEach(
      subscriptions,
      (subscription) => Effect.map(WebPush.send({ subscription, body, keys, subject: channel.subject }), (result) => ({ subscription, result })),
      { concurrency: "unbounded" }
    )
    for (const { result, subscription } of sent)
      if (result._tag === "Gone") {
        yield* Effect.logInfo(`the push service ${serviceOf(subscription.endpoint)} says a phone's subscription is gone: forgotten`)
        yield* channel.forget(subscription.id)
      }
    const failed = sent.flatMap(({ result }) => (result._tag === "Failed" ? [result.message] : []))
    if (sent.some(({ result }) => result._tag === "Delivered")) {
      for (const reason of failed) yield* Effect.logWarning(`one phone's push failed, another's went: ${reason}`)
      return true
    }
    if (failed.length > 0) return yield* Effect.fail(failed.join("; "))
    return false
  }).pipe(
    Effect.provideService(HttpClient.HttpClient, channel.client),
    Effect.mapError((message) => new NotifyFailed({ message }))
  )

export const make = Effect.fn("Notifier.make")(function* (command: ReadonlyArray<string>, url: string, ntfy?: NtfyChannel, push?: PushChannel) {
  const argv = yield* makeCommand(command, url)
  const channels = [
    ...(command.length === 0 ? [] : [`the command ${JSON.stringify(command)}`]),
    ...(ntfy === undefined ? [] : [`ntfy topic ${Ntfy.maskedTopic(ntfy.settings.topic)} at ${ntfy.settings.server}`]),
    ...(push === undefined ? [] : [`Web Push to the phones that pressed "Notify this phone" on ${push.subject}`])
  ]
  const notify = (q: Question, options: NotifyOptions = {}): Effect.Effect<void, NotifyFailed> =>
    Effect.gen(function* () {
      const attempts: Array<Effect.Effect<boolean, NotifyFailed>> = [
        ...(command.length === 0 ? [] : [Effect.as(argv(q), true)]),
        ...(ntfy === undefined ? [] : [Effect.as(publishNtfy(ntfy, q, options), true)]),
        ...(push === undefined ? [] : [pushAll(push, q, options)])
      ]
      if (attempts.length === 0) return
      const results = yield* Effect.all(attempts.map(Effect.either), { concurrency: "unbounded" })
      const failed = results.filter(Either.isLeft).map((r) => r.left.message)
      // A channel with nobody on it (no phone subscribed) neither reaches the owner nor fails.
      const tried = results.filter((r) => Either.isLeft(r) || r.right)
      if (failed.length > 0 && failed.length === tried.length) return yield* new NotifyFailed({ message: failed.join("; ") })
      for (const reason of failed) yield* Effect.logWarning(`one notification channel failed, the other reached the owner: ${reason}`)
    })
  return { command, configured: channels.length > 0, channels, notify } satisfies NotifierShape
})

/** The argv channel: run `command` for a question. */
const makeCommand = Effect.fn("Notifier.makeCommand")(function* (command: ReadonlyArray<string>, url: string) {
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
      // fallback: best-effort kill of the notify command
      yield* Effect.addFinalizer((exit) => exit._tag === "Failure" ? proc.kill("SIGKILL").pipe(Effect.ignore) : Effect.void)
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
            message: e._tag === "SystemError" && e.reason === "NotFound"
              ? `notification command \`${program}\` could not be started: no such program`
              : `notification command \`${program}\` could not be started: ${e.message}`
          })
        )),
      Effect.provideService(CommandExecutor.CommandExecutor, executor)
    )
    return run.pipe(Effect.withSpan("Notifier.notify", { attributes: { question: q.id } }))
  }
  return notify
})
