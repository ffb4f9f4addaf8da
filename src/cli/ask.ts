/**
 * `magi ask`: what an agent runs when the next decision is the owner's.
 *
 * Three forms: a fresh question, a reply on a question's thread (`--thread`),
 * and resuming a wait already filed (`--wait`). All three end in one of four
 * outcomes, each with its own stdout and exit code, because the reader is an
 * agent that acts on exactly what it is told.
 */
import { Command, Options } from "@effect/cli"
import { Clock, Config, Duration, Effect, Either, Fiber, Option, Ref, Schedule } from "effect"
import * as Deputy from "../daemon/Deputy.js"
import * as Q from "../questions/Question.js"
import type { Question } from "../questions/Question.js"
import { QuestionStore } from "../questions/QuestionStore.js"
import * as Asking from "../questions/Asking.js"
import { MagiConfig, userConfigFile } from "../platform/MagiConfig.js"
import { Notifier, notConfigured } from "../questions/Notifier.js"
import { AskerWait, type WaitOutcome } from "../questions/AskerWait.js"
import { CliFailure } from "./CliFailure.js"
import { questionsLayer } from "../app/Layers.js"
import { fitWidth, formatSeconds, readStdinUpTo, writeErr, writeOut } from "./io.js"
import { forTerminalLine } from "../platform/TerminalText.js"
import { endsTurnOnPending, endTurnLines, KEEP_CHOICES, shellWord, threadCommand } from "../questions/AgentHints.js"
import { receivedSignal } from "./Signals.js"
import type { HelpExtras } from "./Help.js"
import { outcomesText } from "./askOutcomes.js"

const options = {
  summary: Options.text("summary").pipe(
    Options.withDescription("the question in one line (required, except with --wait); with --thread, your reply to the owner"),
    Options.optional
  ),
  detail: Options.text("detail").pipe(
    Options.withDescription("the reasoning behind it, as markdown; `-` reads it from stdin"),
    Options.optional
  ),
  choice: Options.text("choice").pipe(
    Options.withPseudoName("CHOICE"),
    Options.withDescription("an answer the owner may pick; repeat for each; none means free text"),
    Options.repeated
  ),
  timeout: Options.integer("timeout").pipe(
    Options.withPseudoName("SECONDS"),
    Options.withDescription("the question's whole deadline in seconds (default: [ask] answer_timeout, a day)"),
    Options.optional
  ),
  panel: Options.text("panel").pipe(
    Options.withPseudoName("FILE.html"),
    Options.withDescription("an HTML file shown to the owner beside the question, as evidence"),
    Options.optional
  ),
  asset: Options.text("asset").pipe(
    Options.withPseudoName("FILE"),
    Options.withDescription("a file the panel uses (an image, a stylesheet), copied beside it; the panel names it by its bare file name"),
    Options.repeated
  ),
  thread: Options.text("thread").pipe(
    Options.withPseudoName("ID"),
    Options.withDescription("reply on this open question instead of asking a new one"),
    Options.optional
  ),
  wait: Options.text("wait").pipe(
    Options.withPseudoName("ID"),
    Options.withDescription("keep waiting on this question after a slice ran out (no new turn, no notification)"),
    Options.optional
  ),
  settle: Options.text("settle").pipe(
    Options.withPseudoName("ID"),
    Options.withDescription("(a conductor question's deputy) settle this question with the one --choice the owner's words picked"),
    Options.optional
  ),
  quote: Options.text("quote").pipe(
    Options.withDescription("with --settle: the owner's own words, verbatim, that pick the choice"),
    Options.optional
  ),
  json: Options.boolean("json").pipe(Options.withDescription("print one JSON object instead of prose"))
}

type AskOptions = {
  readonly [K in keyof typeof options]: (typeof options)[K] extends Options.Options<infer A> ? A : never
}

const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

/** A refusal by the asking rules, as the command's exit code says it. */
const asCli = (e: Asking.AskRefused) => (e.kind === "usage" ? CliFailure.usage(e.message) : CliFailure.refused(e.message))

const panelOf = (o: AskOptions): Option.Option<Asking.PanelSource> => Option.map(o.panel, (path) => ({ _tag: "File", path, assets: o.asset }) as const)

/**
 * Did the command line hold a `--choice` with an empty value? The option
 * parser drops an empty value, so `--choice ""` alone would arrive as no
 * choice at all and silently become a free-text question; the raw arguments
 * still say what the agent typed.
 */
const emptyChoiceTyped = (argv: ReadonlyArray<string> = process.argv) =>
  argv.some((arg, i) => arg === "--choice=" || (arg === "--choice" && argv[i + 1] === ""))

/** The choices as typed, with an empty one kept so the rule can refuse it. */
const typedChoices = (o: AskOptions): ReadonlyArray<string> => (emptyChoiceTyped() ? [...o.choice, ""] : o.choice)

const newQuestion = (o: AskOptions) =>
  Effect.gen(function* () {
    if (Option.isNone(o.summary) || o.summary.value.trim() === "")
      return yield* CliFailure.usage("magi ask needs --summary: the question in one line (or --wait ID to resume a wait)")
    if (Option.isSome(o.timeout) && o.timeout.value <= 0)
      return yield* CliFailure.usage(`--timeout must be a number of seconds above 0, not ${o.timeout.value}`)
    const detail = yield* detailText(o.detail)
    const { question: q, budgetMs } = yield* Asking.fileQuestion({
      summary: o.summary.value,
      detail,
      choices: typedChoices(o),
      timeoutSecs: o.timeout,
      panel: panelOf(o),
      cwd: process.cwd()
    }).pipe(Effect.mapError(asCli))
    yield* writeErr(`asked ${Q.shortId(q.id)} — waiting for the owner\n`)
    // Said once per question, when it is announced (never again on --wait or --thread).
    if (!(yield* Notifier).configured) yield* writeErr(`magi: ${notConfigured(yield* userConfigFile)}\n`)
    const waits = yield* AskerWait
    return yield* watching(q, budgetMs, (waitingFrom) => Effect.zipRight(waitingFrom, waits.announceAndWait(q, Duration.millis(budgetMs))))
  })

const detailText = (detail: Option.Option<string>) =>
  Option.match(detail, {
    onNone: () => Effect.succeed(""),
    // Stdin is read only when asked for: an agent's shell may leave it open,
    // and reading it unasked would block forever. Never past the cap.
    onSome: (d) =>
      d === "-"
        ? Effect.flatMap(readStdinUpTo(Q.DETAIL_MAX_BYTES), (text) =>
          text === undefined
            ? Effect.fail(
              CliFailure.refused(
                `the detail on stdin is over magi's cap of ${Q.DETAIL_MAX_BYTES} bytes (reading stopped there); put long evidence in a panel (--panel FILE.html)`
              )
            )
            : Effect.succeed(text))
        : Effect.succeed(d)
  })

const replyOnThread = (o: AskOptions, id: string) =>
  Effect.gen(function* () {
    if (Option.isNone(o.summary) || o.summary.value.trim() === "")
      return yield* CliFailure.usage("magi ask --thread needs --summary: your reply to the owner")
    if (Option.isSome(o.timeout))
      return yield* CliFailure.usage("--timeout belongs to a fresh question; a thread keeps the deadline it was asked with")
    const detail = yield* detailText(o.detail)
    const { question: q, budgetMs } = yield* Asking.replyOn(
      id,
      { summary: o.summary.value, detail, choices: typedChoices(o), panel: panelOf(o) },
      "--thread"
    ).pipe(Effect.mapError(asCli))
    yield* writeErr(`replied on ${Q.shortId(q.id)} — waiting for the owner again\n`)
    const waits = yield* AskerWait
    return yield* watching(q, budgetMs, (waitingFrom) => Effect.zipRight(waitingFrom, waits.announceAndWait(q, Duration.millis(budgetMs))))
  })

const resume = (o: AskOptions, id: string) =>
  Effect.gen(function* () {
    if (Option.isSome(o.summary) || o.choice.length > 0 || Option.isSome(o.panel) || Option.isSome(o.timeout))
      return yield* CliFailure.usage(
        "magi ask --wait only resumes a wait; to say something on the question use --thread ID --summary TEXT"
      )
    const { question: q, budgetMs } = yield* Asking.openForWait(id, "--wait").pipe(Effect.mapError(asCli))
    const waits = yield* AskerWait
    return yield* watching(q, budgetMs, (waitingFrom) => Effect.zipRight(waitingFrom, waits.resumeWait(q, Duration.millis(budgetMs))))
  })

/**
 * Run `wait`, telling whoever watches stderr what it waits for. On a terminal
 * the line updates in place; piped into an agent's tool it is one plain line.
 */
const watching = <E, R>(
  q: Question,
  budgetMs: number,
  wait: (waitingFrom: Effect.Effect<void>) => Effect.Effect<WaitOutcome, E, R>
) => watchingProgress(q, budgetMs, wait).pipe(Effect.onInterrupt(() => writeErr(interruptedLine(q))))

/**
 * What a wait stopped by a signal means: the question is still open (only
 * this process stopped waiting, and its lease went with it), and how to wait
 * again. The exit code (130 for SIGINT, 143 for SIGTERM) says which signal.
 */
export const interruptedLine = (q: Question, signal = receivedSignal()) =>
  `\nmagi: stopped by ${signal ?? "an interrupt"} while waiting on question ${Q.shortId(q.id)}; ` +
  `the question stays open and the owner can still answer it (in a magi run, magi serve or magi web resumes this seat with the answer). ` +
  `To keep waiting in the foreground: magi ask --wait ${q.id}\n`

const watchingProgress = <E, R>(
  q: Question,
  budgetMs: number,
  wait: (waitingFrom: Effect.Effect<void>) => Effect.Effect<WaitOutcome, E, R>
) =>
  Effect.gen(function* () {
    const config = yield* MagiConfig
    const sliceMs = Math.min(budgetMs, config.waitSliceSecs * 1000)
    const short = Q.shortId(q.id)
    if (!process.stderr.isTTY) {
      // Said once the wait has begun (for a fresh question: once it is on disk).
      return yield* wait(
        writeErr(
          `waiting up to ${formatSeconds(sliceMs / 1000)} on ${short} (the question's deadline is in ${formatSeconds(budgetMs / 1000)})\n`
        )
      )
    }
    const line = (started: number) =>
      Effect.gen(function* () {
        const elapsed = ((yield* Clock.currentTimeMillis) - started) / 1000
        const [so, returns, deadline] = [elapsed, sliceMs / 1000 - elapsed, budgetMs / 1000 - elapsed].map(formatSeconds)
        // Read each tick: the terminal may have been resized meanwhile.
        const text = fitWidth(
          [
            `waiting for the owner on ${short}: ${so} so far, this call returns in ${returns}, deadline in ${deadline}`,
            `waiting on ${short}: ${so}, returns in ${returns}, deadline in ${deadline}`,
            `${short}: ${so}, back in ${returns}`
          ],
          process.stderr.columns
        )
        yield* writeErr(`\r\x1b[2K${text}`)
      })
    const ticker = yield* Ref.make(Option.none<Fiber.RuntimeFiber<unknown>>())
    const startTicker = Effect.gen(function* () {
      const started = yield* Clock.currentTimeMillis
      const fiber = yield* Effect.forkDaemon(Effect.repeat(line(started), Schedule.spaced(Duration.seconds(1))))
      yield* Ref.set(ticker, Option.some(fiber))
    })
    const stopTicker = Effect.flatMap(Ref.get(ticker), (f) => Option.isSome(f) ? Effect.zipRight(Fiber.interrupt(f.value), writeErr("\r\x1b[2K")) : Effect.void)
    return yield* wait(startTicker).pipe(Effect.ensuring(stopTicker))
  })

/**
 * magi as the agent can run it again: `MAGI_BIN`, the path magi gives the
 * agents it starts (a login shell, like codex's `bash -lc`, may reset PATH
 * and lose plain `magi`), quoted for a shell when it must be; else `magi`.
 */
const selfCommand = Config.string("MAGI_BIN").pipe(
  Config.withDefault("magi"),
  Effect.map((bin) => (bin === "" ? "magi" : shellWord(bin))),
  // fallback: the program's name in hints; "magi" when it cannot be worked out
  Effect.orElseSucceed(() => "magi")
)

/** Print the outcome the way the agent reading stdout needs it. */
const report = (outcome: WaitOutcome, json: boolean) =>
  Effect.gen(function* () {
    const q = outcome.question
    const magi = yield* selfCommand
    const endTurn = yield* endsTurnOnPending
    if (json) {
      const body: Record<string, string> = { outcome: outcome._tag.toLowerCase(), id: q.id }
      // Pending, for a seat that ends its turn on it: what to do next is that.
      if (outcome._tag === "Pending" && endTurn) body.next = "end-turn"
      if (outcome._tag === "Answered") {
        body.answer = outcome.answer
        // Words the owner said that the agent never read travel with it.
        const unread = Q.unreadOwnerTurns(q)
        if (unread !== undefined) body.said = unread
      }
      if (outcome._tag === "Replied") body.said = outcome.said
      // Why, as the MCP tool's result says it: the deadline, or the owner's own words withdrawing it.
      if (outcome._tag === "Abandoned") body.message = abandonedLine(q)
      yield* writeOut(JSON.stringify(body) + "\n")
      if (outcome._tag === "Abandoned") return yield* CliFailure.refused(abandonedLine(q))
      return
    }
    switch (outcome._tag) {
      case "Answered": {
        const answer = outcome.answer.endsWith("\n") ? outcome.answer : outcome.answer + "\n"
        // Words the owner said that this agent never saw come first, so the
        // decision is read with what was said around it.
        const unread = Q.unreadOwnerTurns(q)
        if (unread === undefined) return yield* writeOut(answer)
        return yield* writeOut(`The owner said, before deciding:\n\n${unread}\n\nThe owner's answer:\n${answer}`)
      }
      case "Replied":
        return yield* writeOut(
          `The owner replied on question ${Q.shortId(q.id)} without deciding:\n\n${outcome.said}\n\n` +
            `Answer them on the same question (it stays open), then keep waiting:\n` +
            `  ${threadCommand(magi, q)}\n` +
            (Q.isFreeText(q)
              ? ""
              : `${KEEP_CHOICES}\n`)
        )
      case "Pending":
        if (outcome.storeAway !== undefined)
          yield* writeErr(
            `magi: question ${Q.shortId(q.id)}'s deadline has passed, but the store cannot be reached (${
              forTerminalLine(outcome.storeAway)
            }); it is applied once the store answers, by the next --wait\n`
          )
        if (endTurn) return yield* writeOut(endTurnLines(q, `run \`${magi} ask --wait\``))
        return yield* writeOut(
          `No answer yet: this call's wait slice ran out (not the question's deadline); question ${Q.shortId(q.id)} is still open.\n` +
            `Keep waiting in the foreground with:\n` +
            `  ${magi} ask --wait ${q.id}\n`
        )
      case "Abandoned":
        return yield* CliFailure.refused(abandonedLine(q))
    }
  })

const abandonedLine = Asking.abandonedLine

/** `--settle`: a deputy carries the owner's free-text pick onto its conductor question. */
const settleQuestion = (o: AskOptions, id: string) =>
  Effect.gen(function* () {
    if (o.choice.length !== 1) return yield* CliFailure.usage("magi ask --settle needs exactly one --choice: the label the owner's words picked")
    if (Option.isNone(o.quote)) return yield* CliFailure.usage("magi ask --settle needs --quote: the owner's own words that pick it")
    const seat = yield* Config.string("MAGI_SEAT").pipe(Config.withDefault(""), Effect.orDie)
    const current = yield* Asking.load(id).pipe(Effect.mapError(asCli))
    const at = yield* now
    const request = { seat, choice: o.choice[0]!, quote: o.quote.value }
    const refused = Deputy.settleRefusal(current, request)
    if (refused !== undefined) return yield* CliFailure.refused(refused)
    const q = yield* (yield* QuestionStore)
      .update(current.id, (fresh) => Either.mapLeft(Deputy.settle(fresh, request, at), (message: string) => CliFailure.refused(message)))
      .pipe(Effect.mapError((e) => (e instanceof CliFailure ? e : CliFailure.refused((e as { message: string }).message))))
    yield* writeOut(`settled ${Q.shortId(q.id)}: ${request.choice}\n`)
  })

export const ask = Command.make("ask", options, (o) =>
  Effect.gen(function* () {
    if (Option.isSome(o.settle)) return yield* settleQuestion(o, o.settle.value)
    if (Option.isSome(o.thread) && Option.isSome(o.wait))
      return yield* CliFailure.usage("use either --thread (reply, then wait) or --wait (only wait), not both")
    if (o.asset.length > 0 && Option.isNone(o.panel))
      return yield* CliFailure.usage("--asset needs --panel: assets are files the panel's HTML uses")
    const outcome = Option.isSome(o.wait)
      ? yield* resume(o, o.wait.value)
      : Option.isSome(o.thread)
      ? yield* replyOnThread(o, o.thread.value)
      : yield* newQuestion(o)
    yield* report(outcome, o.json)
    // Only once it is on stdout has the agent read it.
    yield* Effect.flatMap(AskerWait, (waits) => waits.markDelivered(outcome))
  }).pipe(Effect.provide(questionsLayer()))).pipe(
    Command.withDescription(
      "Ask the owner a question and wait for the answer (agents run this; blocks at most one wait slice)"
    )
  )

/** What `magi ask --help` adds to its options: the forms, examples, and the outcomes an agent acts on. */
export const askHelp: HelpExtras = {
  usage: [
    "magi ask --summary TEXT [--detail TEXT|-] [--choice CHOICE]... [--timeout SECONDS] [--panel FILE.html [--asset FILE]...] [--json]",
    "magi ask --thread ID --summary TEXT [--detail TEXT|-] [--choice CHOICE]... [--json]",
    "magi ask --wait ID [--json]"
  ],
  sections: [
    {
      title: "Panels",
      lines: [
        '--panel FILE.html is shown beside the question as evidence, in a sandbox: no script, nothing loaded from the network. Give each file it uses with --asset FILE; the panel refers to it by its bare name, e.g. <img src="chart.png"> or <link rel="stylesheet" href="panel.css">. 8 MiB in all.'
      ]
    },
    { title: "Outcomes and exit codes", lines: outcomesText() }
  ],
  examples: [
    ['magi ask --summary "Which backend for the cache?" --choice SQLite --choice Redis', "ask, offering two answers; prints the one the owner picks"],
    ['git diff | magi ask --summary "Ship this diff?" --detail - --choice yes --choice no', "the detail from stdin"],
    ['magi ask --summary "Which layout?" --panel cmp.html --asset a.png --asset b.png', "show evidence beside the question"],
    [
      'magi ask --thread ID --summary "SQLite needs no server" --choice SQLite --choice Redis',
      "answer the owner's words on the same question (repeat its choices)"
    ],
    ["magi ask --wait ID", "keep waiting after a slice ran out"]
  ]
}
