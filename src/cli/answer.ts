/**
 * `magi answer`: the owner's side at a terminal. Lists what is waiting,
 * decides (`--reply`) or speaks back (`--say`). Every refusal is the
 * question's own message on stderr, exit 1, and nothing written.
 */
import { firstMoveSaid } from "../app/Shelving.js"
import { Args, Command, Options } from "@effect/cli"
import { Clock, Config, Effect, Either, Option, Stream } from "effect"
import * as Q from "../questions/Question.js"
import { QuestionStore } from "../questions/QuestionStore.js"
import { answerWithText, openQuestions, sayToQuestion, soleOpen, withdrawQuestion } from "../questions/Answers.js"
import * as Lease from "../questions/Leases.js"
import { keptForNextWait, mayBeHeld } from "../questions/Holding.js"
import { WEB_URL_ENV } from "../questions/Notifier.js"
import { CliFailure } from "./CliFailure.js"
import { questionsLayer, questionStoreLayer } from "../app/Layers.js"
import { Hosts, queuedForQuestion } from "../platform/Hosts.js"
import { MagiConfig } from "../platform/MagiConfig.js"
import { MagiHome } from "../platform/MagiHome.js"
import { formatSeconds, localTime, writeErr, writeOut } from "./io.js"
import { forTerminal, forTerminalLine } from "../platform/TerminalText.js"
import type { HelpExtras } from "./Help.js"

const options = {
  reply: Options.text("reply").pipe(
    Options.withDescription("answer: one of the choices exactly, or free text when it offers none"),
    Options.optional
  ),
  say: Options.text("say").pipe(
    Options.withDescription("speak back without deciding (ask for context); the question stays open"),
    Options.optional
  ),
  withdraw: Options.boolean("withdraw").pipe(
    Options.withDescription("withdraw the question: nobody will answer it, and the agent is told so (with --reason, in your words)")
  ),
  reason: Options.text("reason").pipe(Options.withDescription("with --withdraw: why, as the agent will read it"), Options.optional),
  list: Options.boolean("list").pipe(Options.withDescription("list open questions (the default with no id)")),
  all: Options.boolean("all").pipe(
    Options.withDescription("with --list: answered and abandoned ones too, however old; written as they are read, newest first")
  ),
  json: Options.boolean("json").pipe(
    Options.withDescription("with --list: print the questions as one JSON array (with --all, streamed: open and recent ones first, then history newest first)")
  ),
  id: Args.text({ name: "id" }).pipe(
    Args.withDescription("question id, a unique prefix, or its short id or a prefix of it (default with --reply or --say: the only open question)"),
    Args.optional
  )
}

const refused = (e: { readonly message: string }) => CliFailure.refused(e.message)

/** Who is on the other end of an open question, in the words the page uses. */
const holderWords: Record<Lease.LeaseKind | "nobody", string> = {
  asker: "the agent is waiting",
  daemon: "magi is delivering to the agent",
  deputy: "a deputy is with you on it (the conductor moved on)",
  nobody: "no agent is waiting (magi resumes it with your answer)"
}

/** Asked outside any run, nobody resumes it: the owner's words wait for the agent's next `--wait`. */
const holderLine = (q: Q.Question, holder: Lease.LeaseKind | "nobody") =>
  holder === "nobody" && keptForNextWait(q) ? "no agent is waiting (your words are kept for its next `magi ask --wait`)" : holderWords[holder]

/**
 * Output is gathered up to this many characters per write: one write per
 * question would cost a round trip through stdout's callback each, 100,000
 * of them for a year's history.
 */
const FLUSH_CHARS = 64 * 1024

/** How an answer came, when not from the page or a terminal: a notification's button. */
const viaWords = (q: Q.Question) => (q.answered_via === "link" ? " by a notification button" : "")

/** One question's lines: summary, choices, and when it was asked, by which run, who waits. */
const line = (q: Q.Question, now: Date, leases: ReadonlyMap<string, Lease.Lease>) => {
  const state = Q.isOpen(q) ? (Q.waitingOnAgent(q) ? "  (waiting on the agent)" : "") : `  [${q.status}${viaWords(q)}]`
  const options = Q.isFreeText(q) ? "free text" : q.choices.map(forTerminalLine).join(" | ")
  const age = formatSeconds((now.getTime() - Date.parse(q.asked_at)) / 1000)
  const about = [`asked ${localTime(new Date(q.asked_at))} (${age} ago)`]
  if (q.run !== "") about.push(`run ${forTerminalLine(q.run)}`)
  if (mayBeHeld(q)) about.push(holderLine(q, Lease.holder(Option.fromNullable(leases.get(q.id)), now)))
  return `${forTerminalLine(Q.shortId(q.id))}  ${forTerminalLine(q.summary)}${state}\n    ${options}\n    ${about.join(" · ")}\n`
}

/** One element of the pretty-printed array, exactly as `JSON.stringify(all, null, 2)` would indent it. */
const element = (q: Q.Question) => "  " + JSON.stringify(q, null, 2).replaceAll("\n", "\n  ")

/**
 * The open questions read only the hot folder. `--all` streams: each question
 * is written as it is read (the hot folder, then each month of history,
 * newest first), so the first lines come at once however long the history,
 * and `--json` is still one JSON array, written piece by piece.
 */
const listing = (all: boolean, json: boolean) =>
  Effect.gen(function* () {
    const store = yield* QuestionStore
    // A home from before the month shelves is moved first, so this listing and every later one reads only the hot folder.
    // display: a line on stderr that cannot be written changes nothing
    yield* firstMoveSaid((line) => writeErr(line).pipe(Effect.ignore))
    const questions = all
      ? store.everything
      : Stream.fromIterableEffect(Effect.map(store.list, (qs) => qs.filter(Q.isOpen)))
    const now = new Date(yield* Clock.currentTimeMillis)
    // One look at the leases for the whole list, not one per question.
    const leases = json ? new Map<string, Lease.Lease>() : yield* Lease.readAll(store.root)
    let pending = ""
    let count = 0
    const flush = Effect.suspend(() => {
      const text = pending
      pending = ""
      return text === "" ? Effect.void : writeOut(text)
    })
    yield* Stream.runForEachChunk(Stream.mapError(questions, refused), (chunk) => {
      const first = count === 0
      for (const q of chunk) {
        pending += json ? `${count === 0 ? "[\n" : ",\n"}${element(q)}` : line(q, now, leases)
        count++
      }
      // The first chunk goes out at once; then a write per `FLUSH_CHARS`.
      return (first && count > 0) || pending.length >= FLUSH_CHARS ? flush : Effect.void
    })
    if (json) pending += count === 0 ? "[]\n" : "\n]\n"
    else if (count === 0) pending += all ? "No questions yet.\n" : "Nothing is waiting for you: no open questions.\n"
    yield* flush
  })

/** One question in full, for `magi answer ID`. */
const show = (id: string) =>
  Effect.gen(function* () {
    const store = yield* QuestionStore
    const q = yield* store.get(id).pipe(Effect.mapError(refused))
    // Everything here but the status was written by an agent, or could have
    // been: shown escaped, never obeyed by the terminal.
    const who = [q.run, q.node, q.seat].filter((s) => s !== "").map(forTerminalLine).join(" · ")
    const parts = [`${forTerminalLine(q.id)}  [${q.status}]  asked ${localTime(new Date(q.asked_at))} by ${who}`, "", forTerminalLine(q.summary)]
    if (q.detail.trim() !== "") parts.push("", forTerminal(q.detail.trimEnd()))
    for (const turn of q.thread)
      parts.push("", `${turn.who === "operator" ? "you" : "agent"} (${localTime(new Date(turn.at))}):`, forTerminal(turn.body))
    if (q.panel) parts.push("", yield* panelLine(q.id))
    parts.push("")
    if (Q.isOpen(q)) parts.push(Q.isFreeText(q) ? "free text" : `choices: ${q.choices.map(forTerminalLine).join(" | ")}`)
    else if (Q.resolution(q) !== undefined) parts.push(`answer: ${forTerminal(Q.resolution(q)!)}${viaWords(q)}`)
    // The seat's host has all its turns taken: the resume carrying the owner's words waits its turn.
    // display: hosts shown beside the questions; none when they cannot be read
    const hosts = yield* Effect.flatMap(Hosts, (h) => h.list).pipe(Effect.orElseSucceed(() => []))
    const queued = Q.owedToAgent(q) ? queuedForQuestion(hosts, q.id) : undefined
    if (queued !== undefined) parts.push(`delivery: ${forTerminalLine(queued)}; magi resumes the agent as soon as one ends`)
    yield* writeOut(parts.join("\n") + "\n")
  })

/**
 * Where a question's panel opens. A terminal cannot show one (it is a web
 * page the agent wrote), and the page frames it with nothing allowed to
 * run, so the way to it is the page: at `MAGI_WEB_URL` when the owner set
 * it, else the address `magi web` prints.
 */
const panelLine = (id: string) =>
  Effect.map(Config.option(Config.nonEmptyString(WEB_URL_ENV)).pipe(Effect.orDie), (base) => {
    const at = `#/questions/${encodeURIComponent(id)}`
    return Option.match(base, {
      onSome: (url) => `panel: the agent attached a panel; open it at ${url.trim().replace(/\/+$/, "")}/${at}`,
      onNone: () => `panel: the agent attached a panel; open it on the page: run magi web and go to the address it prints, then ${at}`
    })
  })

const target = (id: Option.Option<string>) =>
  Option.match(id, {
    onSome: (wanted) => Effect.succeed(wanted),
    onNone: () =>
      Effect.flatMap(openQuestions.pipe(Effect.mapError(refused)), (open) =>
        Either.match(soleOpen(open), {
          onLeft: (why) => Effect.fail(CliFailure.refused(why)),
          onRight: (q) => Effect.succeed(q.id)
        }))
  })

/** `--reply`, `--say`, or one question in full: everything but the listing. */
const decide = (o: {
  readonly reply: Option.Option<string>
  readonly say: Option.Option<string>
  readonly withdraw: boolean
  readonly reason: Option.Option<string>
  readonly id: Option.Option<string>
}) =>
  Effect.gen(function* () {
    if ([Option.isSome(o.reply), Option.isSome(o.say), o.withdraw].filter(Boolean).length > 1)
      return yield* CliFailure.usage("use one of --reply (decide), --say (speak back) or --withdraw, not several")
    if (Option.isSome(o.reason) && !o.withdraw) return yield* CliFailure.usage('--reason goes with --withdraw: magi answer ID --withdraw --reason "…"')
    if (o.withdraw) {
      // Never the "only open one": withdrawing is for good, so the question is named.
      if (Option.isNone(o.id)) return yield* CliFailure.usage("--withdraw needs the question's id: magi answer ID --withdraw (magi answer lists them)")
      const q = yield* withdrawQuestion(o.id.value, Option.getOrElse(o.reason, () => "")).pipe(Effect.mapError(refused))
      return yield* writeOut(`withdrew ${forTerminalLine(Q.shortId(q.id))} ${forTerminalLine(q.summary)}: the agent is told no answer will come\n`)
    }
    if (Option.isSome(o.reply)) {
      // An agent's shell (a deputy's, the conductor's) carries its seat: it may not decide a tool approval.
      const seat = (yield* Config.string("MAGI_SEAT").pipe(Config.withDefault(""), Effect.orDie)).trim()
      const q = yield* answerWithText(yield* target(o.id), o.reply.value, seat).pipe(Effect.mapError(refused))
      return yield* writeOut(`answered ${forTerminalLine(Q.shortId(q.id))} ${forTerminalLine(q.summary)}\n`)
    }
    if (Option.isSome(o.say)) {
      const q = yield* sayToQuestion(yield* target(o.id), o.say.value).pipe(Effect.mapError(refused))
      return yield* writeOut(`sent to ${forTerminalLine(Q.shortId(q.id))}: the agent reads it when it next checks; the question stays open\n`)
    }
    if (Option.isSome(o.id)) return yield* show(o.id.value)
  })

export const answer = Command.make("answer", options, (o) => {
  // Answering needs nothing from the config files: a broken one is a
  // warning here, never a reason the owner cannot answer.
  const config = MagiConfig.fromFilesOrDefaults(process.cwd(), "answering")
  // A listing reads the store only, and is built only that: it is what the
  // owner runs most, and the services answering needs cost more to set up
  // than an empty or small list costs to read.
  const listsOnly = Option.isNone(o.reply) && Option.isNone(o.say) && !o.withdraw && Option.isNone(o.reason) && (Option.isNone(o.id) || o.list)
  return listsOnly
    ? listing(o.all, o.json).pipe(Effect.provide(questionStoreLayer(MagiHome.fromEnv, config)))
    : decide(o).pipe(Effect.provide(questionsLayer(MagiHome.fromEnv, config)))
}).pipe(Command.withDescription("Answer, or speak back on, the questions agents asked you"))

export const answerHelp: HelpExtras = {
  examples: [
    ["magi answer", "what is waiting: short id, summary, choices, age, run and who is waiting"],
    ["magi answer ab12", "one question in full, with its thread"],
    ["magi answer ab12 --reply SQLite", "decide it (with one question open, the id may be left out)"],
    ['magi answer ab12 --say "what about disk space?"', "ask back; the question stays open"],
    ['magi answer ab12 --withdraw --reason "no longer needed"', "withdraw it: the agent is told no answer will come, in your words"],
    ["magi answer --list --all --json", "every question, as JSON"]
  ]
}
