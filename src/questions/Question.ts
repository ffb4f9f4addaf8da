/**
 * Questions: what an agent does when the next decision is the owner's.
 *
 * This module is data and pure transitions only. It never touches the disk or
 * the clock: every transition that stamps a time takes `now` from its caller,
 * so the same rules serve `magi ask`, `magi answer`, the web server and the
 * daemon, and a test can replay any of them at any instant.
 */
import { Data, Either, Schema } from "effect"
import { isNewerSchema, type NewerSchema, parseVersioned } from "../store/VersionedJson.js"

/**
 * On-disk format version. Bumped when a field's meaning changes or a field is
 * added that an older magi has no notion of.
 *
 * A file is refused only when its `schema` is *greater* than this: every field
 * added since 1 has a default, so yesterday's files keep reading after a bump.
 */
export const SCHEMA = 4

/**
 * How long the owner's last word keeps an agent's reply from paging them
 * again. Someone still looking at the card does not need a second buzz; one
 * who walked away five minutes ago does. A judgement about people, not about a
 * repository, so it is not configurable.
 */
export const REPLY_QUIET_WINDOW_MS = 5 * 60 * 1000

/**
 * Largest question record magi writes, encoded. Everything an agent or the
 * owner types lands in it and every listing reads it whole (the phone gets
 * every record), so it is bounded: long evidence belongs in a panel, which is
 * fetched only when its card is opened.
 */
export const RECORD_MAX_BYTES = 1024 * 1024

/*
 * Caps on what an agent or the owner types. Every listing reads every record
 * whole and the phone receives them all, so one unbounded field slows every
 * request and can crash the page; each cap is far above what the field is for,
 * and a refusal names it. Counted in UTF-8 bytes, as stored.
 */
/** The question in one line: a phone card's title. */
export const SUMMARY_MAX_BYTES = 2 * 1024
/** The reasoning behind it: pages of markdown. Evidence (logs, diffs) goes in a panel. */
export const DETAIL_MAX_BYTES = 256 * 1024
/** One thread turn (the owner's say, the agent's reply) or a free-text answer. */
export const TURN_MAX_BYTES = 64 * 1024
/** One choice: a button label. */
export const CHOICE_MAX_BYTES = 512
/** How many choices: buttons on a phone screen. */
export const CHOICES_MAX = 32

const bytes = (text: string) => Buffer.byteLength(text, "utf8")

/** Longest asset name: fits every filesystem the owner may copy a panel to. */
const ASSET_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/

/**
 * The one file-name rule for panel assets, applied on write and on read.
 *
 * The name arrives from two untrusted directions (the agent naming a file, a
 * URL naming it back) and is then joined onto a path, so every character that
 * could change what the join means is outside the set: no `/` or `\`, no
 * leading `.`, no `:`. `..` is refused anywhere so the rule reads the same as
 * the sentence "no traversal".
 */
export const validAssetName = (name: string): boolean => ASSET_NAME.test(name) && !name.includes("..")

/** The pattern quoted back to whoever chose a bad name. */
export const ASSET_NAME_RULE = "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$ and contain no `..`"

// ---------------------------------------------------------------------------
// Shapes

/** Where a question is in its life. */
export const QuestionStatus = Schema.Literal("open", "answered", "abandoned")
export type QuestionStatus = typeof QuestionStatus.Type

/** UTC RFC 3339, what `new Date()` in the phone's browser parses. */
export const Timestamp = Schema.String.pipe(
  Schema.filter((s) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/.test(s) && !Number.isNaN(Date.parse(s)), {
    message: () => "a UTC RFC 3339 timestamp such as 2026-09-02T23:15:01Z"
  })
)

/** `{"choice": …}` for an offered option, `{"text": …}` for free text. */
export const ChoiceAnswer = Schema.Struct({ choice: Schema.String })
export const TextAnswer = Schema.Struct({ text: Schema.String })
export const Answer = Schema.Union(ChoiceAnswer, TextAnswer)
export type Answer = typeof Answer.Type

/** Who said one turn: the owner, or the agent that asked. */
export const Who = Schema.Literal("operator", "agent")
export type Who = typeof Who.Type

/** One turn of the back-and-forth after the question itself. */
export const Turn = Schema.Struct({ who: Who, body: Schema.String, at: Timestamp })
export type Turn = typeof Turn.Type

/** Who is holding a question's wait right now: the asking process or the daemon. */
export const Waiter = Schema.Struct({
  kind: Schema.Literal("asker", "daemon"),
  since: Timestamp
})
export type Waiter = typeof Waiter.Type

/**
 * One decision magi will not take on the owner's behalf. Field names are the
 * JSON names: the web client and older magi builds read them literally.
 */
export const Question = Schema.Struct({
  schema: Schema.Number,
  id: Schema.String,
  run: Schema.String,
  node: Schema.String,
  seat: Schema.String,
  summary: Schema.String,
  detail: Schema.String,
  /** Empty means free text: the whole difference between the two kinds. */
  choices: Schema.Array(Schema.String),
  panel: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  /** Base names copied beside the panel, sorted. */
  assets: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] }),
  status: QuestionStatus,
  asked_at: Timestamp,
  answered_at: Schema.NullOr(Timestamp),
  answer: Schema.NullOr(Answer),
  thread: Schema.optionalWith(Schema.Array(Turn), { default: () => [] }),
  /** Seconds in force when first asked; 0 = unrecorded (older files). */
  answer_timeout: Schema.optionalWith(Schema.Number, { default: () => 0 }),
  // Schema 4: what the daemon's waiter needs to reach the asking seat again
  // once `magi ask` itself is gone.
  /** Working directory of the asking agent; "" when not recorded. */
  cwd: Schema.optionalWith(Schema.String, { default: () => "" }),
  /** How many thread turns the agent has been shown. */
  delivered_turns: Schema.optionalWith(Schema.Number, { default: () => 0 }),
  /** Has the agent been given the answer? */
  answer_delivered: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  /** Who holds the wait; null when nobody does. */
  waiter: Schema.optionalWith(Schema.NullOr(Waiter), { default: () => null }),
  /**
   * A conductor question's brief for its deputy, as the conductor wrote it
   * when it filed the question (the blocked task, why it asked, what the
   * choices lead to): the deputy is told this, never a brief rebuilt later
   * from a task that may have changed since. Absent on every other question,
   * so their files are unchanged.
   */
  deputy_brief: Schema.optional(Schema.String),
  /**
   * How the answer came when not from the page or `magi answer`: `link`, a
   * notification's button (a capability link). Absent on every other
   * question, so their files are unchanged.
   */
  answered_via: Schema.optional(Schema.Literal("link")),
  /**
   * A tool approval's mark (`approvals/Approval.ts`): the tool, a digest of
   * its input, and the rule "Always allow" saves. Only the owner decides an
   * approval, never a deputy or the conductor. Absent on every other
   * question, so their files are unchanged.
   */
  approval: Schema.optional(Schema.Struct({ tool: Schema.String, digest: Schema.String, rule: Schema.String })),
  /**
   * When it was abandoned (an answer's moment is `answered_at`): history is
   * ordered by when a question was settled. Absent on every question not
   * abandoned, and on those abandoned by older builds.
   */
  abandoned_at: Schema.optional(Timestamp),
  /**
   * The thread's length when magi re-sent the owner's ask-back, once, to a
   * seat whose turn had ended without replying to it: recorded before that
   * turn starts, so a restart never sends it twice. Absent until then.
   */
  resent_turns: Schema.optional(Schema.Number)
})
export type Question = typeof Question.Type

// ---------------------------------------------------------------------------
// Errors

/**
 * Why a transition was refused. `reason` lets a caller map it (the web answers
 * 409 for a settled question, 400 for the rest); `message` is shown verbatim
 * to the person who made the mistake, so every reason reads differently.
 */
export class QuestionRejected extends Data.TaggedError("QuestionRejected")<{
  readonly reason:
    | "answered"
    | "abandoned"
    | "empty"
    | "not-offered"
    | "free-text"
    | "multiple-choice"
    | "too-long"
    | "bad-choices"
    | "two-lines"
    | "ambiguous"
    | "not-owner"
  readonly message: string
}> {
  /** Refused because the question is no longer open, rather than bad input. */
  get settled(): boolean {
    return this.reason === "answered" || this.reason === "abandoned"
  }
}

/** A file that is not a question this build can read. */
export class UnreadableQuestion extends Data.TaggedError("UnreadableQuestion")<{
  readonly message: string
}> {}

// ---------------------------------------------------------------------------
// Identity

export { CONDUCTOR_NODE } from "./Owed.js"

/** The short id the phone and reports show: the last segment. */
export const shortId = (id: string): string => id.slice(id.lastIndexOf("-") + 1)

/** A summary on one short line, for lists and messages that name many questions. */
export const headline = (summary: string, max = 60): string => {
  const line = summary.replace(/\s+/g, " ").trim()
  return line.length <= max ? line : `${line.slice(0, max - 1)}…`
}

const pad = (n: number) => String(n).padStart(2, "0")

/**
 * `YYYYMMDD-HHMMSS-xxxx` in local time, the same shape as a run's id so the
 * owner can paste either anywhere an id is taken. `entropy` is 16 random bits.
 */
export const makeId = (now: Date, entropy: number): string => {
  const stamp = `${now.getFullYear()}${pad(now.getMonth() + 1)}${pad(now.getDate())}` +
    `-${pad(now.getHours())}${pad(now.getMinutes())}${pad(now.getSeconds())}`
  return `${stamp}-${(entropy & 0xffff).toString(16).padStart(4, "0")}`
}

/** A timestamp as stored: UTC, RFC 3339, whole seconds. */
export const timestamp = (now: Date): string => now.toISOString().replace(/\.\d+Z$/, "Z")

// ---------------------------------------------------------------------------
// Construction and reading

export interface NewQuestion {
  readonly id: string
  readonly run: string
  readonly node: string
  readonly seat: string
  readonly summary: string
  readonly detail: string
  readonly choices: ReadonlyArray<string>
  readonly now: Date
  /** The asking agent's working directory, when there is one. */
  readonly cwd?: string
  /** A conductor question's brief for its deputy. */
  readonly deputyBrief?: string
  /** A tool approval's mark. */
  readonly approval?: { readonly tool: string; readonly digest: string; readonly rule: string }
}

/** A fresh, open question with no conversation and no recorded deadline yet. */
export const make = (input: NewQuestion): Question => ({
  schema: SCHEMA,
  id: input.id,
  run: input.run,
  node: input.node,
  seat: input.seat,
  summary: input.summary,
  detail: input.detail,
  choices: [...input.choices],
  panel: false,
  assets: [],
  status: "open",
  asked_at: timestamp(input.now),
  answered_at: null,
  answer: null,
  thread: [],
  answer_timeout: 0,
  cwd: input.cwd ?? "",
  delivered_turns: 0,
  answer_delivered: false,
  waiter: null,
  ...(input.deputyBrief === undefined ? {} : { deputy_brief: input.deputyBrief }),
  ...(input.approval === undefined ? {} : { approval: input.approval })
})

const decodeShape = Schema.decodeUnknownEither(Question, { errors: "first" })

/** Every field this build knows, for refusing one it does not. */
const KNOWN_FIELDS: ReadonlySet<string> = new Set(Object.keys(Question.fields))

/**
 * The schema's own excess-property mode is several times slower than
 * decoding, and a store lists thousands of files; checking the key set by hand
 * gives the same refusal for a fraction of the cost.
 */
const decodeStrict = (raw: unknown) => {
  if (typeof raw === "object" && raw !== null && !Array.isArray(raw)) {
    const unknown = Object.keys(raw).find((k) => !KNOWN_FIELDS.has(k))
    if (unknown !== undefined) return Either.left({ message: `unknown field \`${unknown}\`` })
  }
  return decodeShape(raw)
}

/**
 * Read one stored question. A file from a newer magi is refused by name
 * before its shape is judged (it may carry fields this build has never heard
 * of); an older one reads with defaults; an unknown field is refused, because
 * a typo'd field silently dropped would be data lost on the next write.
 */
export const decode = (body: string, source: string): Either.Either<Question, UnreadableQuestion | NewerSchema> =>
  parseVersioned(body, source, SCHEMA, (raw) => `question ${typeof raw.id === "string" ? raw.id : source}`).pipe(
    Either.mapLeft((e) => (isNewerSchema(e) ? e : new UnreadableQuestion({ message: e.message }))),
    Either.flatMap((raw) =>
      Either.mapLeft(
        decodeStrict(raw),
        (e) => new UnreadableQuestion({ message: `${source} is not a question magi can read: ${e.message}` })
      )
    )
  )

/** The stored form: pretty JSON, every field present. */
export const encode = (q: Question): string => JSON.stringify(q, null, 2) + "\n"

// ---------------------------------------------------------------------------
// Reading a question

export const isOpen = (q: Question): boolean => q.status === "open"

export const isFreeText = (q: Question): boolean => q.choices.length === 0

/** The answer as the agent reads it; absent while open or abandoned. */
export const resolution = (q: Question): string | undefined => {
  if (q.status !== "answered" || q.answer === null) return undefined
  return "choice" in q.answer ? q.answer.choice : q.answer.text
}

/** True from the owner speaking back until the agent's next reply. */
export const waitingOnAgent = (q: Question): boolean => isOpen(q) && q.thread.at(-1)?.who === "operator"

/**
 * The agent was shown the owner's ask-back, ended its turn without replying,
 * and nobody has re-sent it yet: the owner's last words, which the waiter
 * brings back to the seat once, unprompted; undefined otherwise.
 */
export const owedUnprompted = (q: Question): string | undefined =>
  waitingOnAgent(q) && unreadOwnerTurns(q) === undefined && (q.resent_turns ?? -1) < q.thread.length ? q.thread.at(-1)?.body : undefined

/**
 * The owner's turns the agent has not been shown: every operator turn at or
 * after `delivered_turns`, joined by a blank line; undefined when there are
 * none. The one definition of "unread", shared by the asker and the daemon.
 */
export const unreadOwnerTurns = (q: Question): string | undefined => {
  const unread = q.thread.slice(q.delivered_turns).filter((t) => t.who === "operator")
  return unread.length === 0 ? undefined : unread.map((t) => t.body).join("\n\n")
}

/**
 * What an open question has for the agent right now, if anything: the owner's
 * unread words; or, while the agent still owes a reply, the owner's last word
 * again (an agent that went back to waiting instead of replying must not wait
 * in silence while the owner waits on it).
 */
export const wordsForAgent = (q: Question): string | undefined => {
  if (!isOpen(q)) return undefined
  return unreadOwnerTurns(q) ?? (waitingOnAgent(q) ? q.thread.at(-1)?.body : undefined)
}

// The rule lives in an import-free module the phone page shares.
export { owedToAgent, keptForNextWait } from "./Owed.js"

/**
 * Record what the agent has now been shown: the answer (when `answer`), and
 * the thread up to `turns`. Nobody holds the wait any more. Never moves
 * `delivered_turns` back, whoever delivered what first.
 */
export const markShown = (q: Question, shown: { readonly answer: boolean; readonly turns: number }): Question => ({
  ...q,
  answer_delivered: q.answer_delivered || shown.answer,
  delivered_turns: Math.max(q.delivered_turns, shown.turns),
  waiter: null
})

/**
 * Should a notification go out now? Always for the first ask; after the owner
 * has spoken, only once strictly more than the quiet window has passed since
 * their last word (exactly five minutes stays quiet).
 */
export const shouldNotify = (q: Question, now: Date): boolean => {
  const lastOwnerTurn = q.thread.findLast((t) => t.who === "operator")
  if (lastOwnerTurn === undefined) return true
  return now.getTime() - Date.parse(lastOwnerTurn.at) > REPLY_QUIET_WINDOW_MS
}

/** The same numbers `answer_timeout` is counted in. */
export const secondsSinceAsked = (q: Question, now: Date): number => Math.max(0, Math.floor((now.getTime() - Date.parse(q.asked_at)) / 1000))

// ---------------------------------------------------------------------------
// Transitions: each returns the new question or the reason it was refused.

type Result = Either.Either<Question, QuestionRejected>

const refuse = (reason: QuestionRejected["reason"], message: string): Result => Either.left(new QuestionRejected({ reason, message }))

/** Refused when `text` is over `max` bytes, naming the field, the cap and where long text belongs. */
const overCap = (field: string, text: string, max: number, instead: string): QuestionRejected | undefined => {
  const size = bytes(text)
  return size > max
    ? new QuestionRejected({ reason: "too-long", message: `${field} is ${size} bytes, over magi's cap of ${max} bytes; ${instead}` })
    : undefined
}

const PANEL_HINT = "put long evidence in a panel (magi ask --panel FILE.html), which the owner opens when they need it"

/**
 * The one rule for a set of choices, on asking and on replying: none means
 * free text; otherwise each must say something (not only spaces: a blank
 * button), be unique (two identical buttons are one decision shown twice),
 * and fit the caps.
 */
export const checkChoices = (choices: ReadonlyArray<string>): QuestionRejected | undefined => {
  if (choices.length > CHOICES_MAX)
    return new QuestionRejected({
      reason: "bad-choices",
      message: `${choices.length} choices is over magi's cap of ${CHOICES_MAX}; offer the main ones, or ask for free text (no --choice)`
    })
  const seen = new Set<string>()
  for (const choice of choices) {
    if (choice.trim() === "")
      return new QuestionRejected({
        reason: "bad-choices",
        message: "a choice cannot be empty or only spaces; give each --choice its words, or none at all for a free-text question"
      })
    const long = overCap(`choice \`${choice.slice(0, 40)}…\``, choice, CHOICE_MAX_BYTES, "a choice is a button label; put the explanation in --detail")
    if (long) return long
    if (seen.has(choice.trim()))
      return new QuestionRejected({
        reason: "bad-choices",
        message: `the choice \`${choice.trim()}\` is offered twice; each --choice must be different`
      })
    seen.add(choice.trim())
  }
  return undefined
}

/** A new question's text within the caps and its choices well formed, or why not. */
export const checkNew = (input: Pick<NewQuestion, "summary" | "detail" | "choices">): Either.Either<void, QuestionRejected> => {
  const wrong = (input.summary.trim() === ""
    ? new QuestionRejected({ reason: "empty", message: "a question needs a summary: the question in one line" })
    : undefined) ??
    // A line feed starts a second line; a lone carriage return does not (it is shown escaped, as any control character).
    (/\n/.test(input.summary.trim())
      ? new QuestionRejected({
        reason: "two-lines",
        message: "the summary is the question in one line, and this one has a line break; put the rest in --detail"
      })
      : undefined) ??
    overCap("the summary", input.summary, SUMMARY_MAX_BYTES, "keep it to the question in one line and put the rest in --detail") ??
    overCap("the detail", input.detail, DETAIL_MAX_BYTES, PANEL_HINT) ??
    checkChoices(input.choices)
  return wrong ? Either.left(wrong) : Either.void
}

/**
 * A record that would be over `RECORD_MAX_BYTES` once written: a thread that
 * has grown that long is refused another turn rather than slowing every
 * listing from then on.
 */
const overRecordCap = (q: Question): Result | undefined => {
  const size = bytes(encode(q))
  return size > RECORD_MAX_BYTES
    ? refuse(
      "too-long",
      `question ${
        shortId(q.id)
      } would be ${size} bytes with this turn, over magi's cap of ${RECORD_MAX_BYTES} bytes for one question; answer it, or ask a new question`
    )
    : undefined
}

/** The two settled states refuse with the same words in every transition. */
const refuseIfSettled = (q: Question, answeredWhy: string): Result | undefined => {
  const short = shortId(q.id)
  if (q.status === "answered") return refuse("answered", `question ${short} was already answered; ${answeredWhy}`)
  if (q.status === "abandoned")
    return refuse("abandoned", `question ${short} was abandoned and the run behind it is gone`)
  return undefined
}

/**
 * Record the owner's decision. Refuses a second answer, an empty one, a choice
 * the question never offered, a choice on a free-text question and text on a
 * multiple-choice one: accepting any of those would hand an agent something
 * the owner never said.
 */
/**
 * The choices `typed` names, ignoring case: `sqlite` is `SQLite` when no
 * other choice reads the same, since a terminal answer is typed by hand.
 * Two that differ only in case are both returned, and neither is taken.
 */
export const choiceMatching = (choices: ReadonlyArray<string>, typed: string): ReadonlyArray<string> => {
  const folded = typed.trim().toLowerCase()
  return choices.filter((c) => c.trim().toLowerCase() === folded)
}

export const answer = (q: Question, given: Answer, now: Date): Result => {
  const settled = refuseIfSettled(q, "the run has moved on and a second answer would be a decision nobody acted on")
  if (settled) return settled
  const short = shortId(q.id)
  const body = "choice" in given ? given.choice : given.text
  if (body.trim() === "")
    return refuse("empty", `question ${short} needs an answer; an empty one tells the agent nothing and it would guess anyway`)
  const long = overCap("the answer", body, TURN_MAX_BYTES, "a longer answer belongs in a file the agent can read; answer with its path")
  if (long) return Either.left(long)
  if ("choice" in given) {
    if (isFreeText(q))
      return refuse("free-text", `question ${short} asks for free text, so \`${given.choice}\` cannot be a choice it offered`)
    if (!q.choices.includes(given.choice)) {
      const chosen = choiceMatching(q.choices, given.choice)
      if (chosen.length > 1) {
        return refuse(
          "ambiguous",
          `\`${given.choice}\` matches more than one choice question ${short} offers (${chosen.join(", ")}); give one exactly as it is written`
        )
      }
      if (chosen.length === 0)
        return refuse("not-offered", `\`${given.choice}\` is not one of the choices question ${short} offers: ${q.choices.join(", ")}`)
      return answer(q, { choice: chosen[0]! }, now)
    }
  } else if (!isFreeText(q)) {
    return refuse("multiple-choice", `question ${short} is multiple choice; answer with one of: ${q.choices.join(", ")}`)
  }
  return Either.right({ ...q, status: "answered", answer: given, answered_at: timestamp(now) })
}

/**
 * Give up on an answer, keeping the record of what was asked, with the reason
 * appended to `detail` (the front end has no other field for it). A settled
 * question is returned unchanged: when the owner answers in the same second a
 * deadline passes, the answer is what is worth keeping.
 */
export const abandon = (q: Question, why: string, now: Date): Question => {
  if (!isOpen(q)) return q
  const reason = why.trim()
  const settled = { ...q, status: "abandoned" as const, abandoned_at: timestamp(now) }
  if (reason === "") return settled
  return { ...settled, detail: `${q.detail}${q.detail === "" ? "" : "\n"}\n_Abandoned: ${reason}._\n` }
}

/**
 * The owner withdrawing an open question: nobody will answer it. The asker
 * (a waiting `magi ask`, the MCP tool) reads it as abandoned, in the owner's
 * words. A settled question is refused: an answer already given (delivered
 * or not) is work the agent is owed, and withdrawing it would lose it.
 */
export const withdraw = (q: Question, why: string, now: Date): Result => {
  const settled = refuseIfSettled(q, "there is nothing to withdraw (the agent gets that answer)")
  if (settled) return settled
  const words = why.trim().replace(/\s+/g, " ").replace(/\.+$/, "")
  const long = overCap("the reason", words, TURN_MAX_BYTES, "say it in a line")
  if (long) return Either.left(long)
  return Either.right(abandon(q, words === "" ? "the owner withdrew it" : `the owner withdrew it: ${words}`, now))
}

/** The owner speaking back without deciding. The question stays open. */
export const say = (q: Question, body: string, now: Date): Result => {
  const settled = refuseIfSettled(q, "there is nothing left to discuss")
  if (settled) return settled
  if (body.trim() === "") return refuse("empty", `a message to question ${shortId(q.id)} cannot be empty`)
  const long = overCap("the message", body, TURN_MAX_BYTES, "say it in a few shorter messages, or point the agent at a file")
  if (long) return Either.left(long)
  const next: Question = { ...q, thread: [...q.thread, { who: "operator", body, at: timestamp(now) }] }
  return overRecordCap(next) ?? Either.right(next)
}

/**
 * The agent replying instead of answering: same question, another round.
 * `choices` replaces the old set wholesale (empty means free text), because
 * what should be offered next may have changed.
 */
export const reply = (q: Question, body: string, choices: ReadonlyArray<string>, now: Date): Result => {
  const settled = refuseIfSettled(q, "replying now would not reach anyone")
  if (settled) return settled
  if (body.trim() === "") return refuse("empty", `a reply to question ${shortId(q.id)} cannot be empty`)
  const wrong = overCap("the reply", body, TURN_MAX_BYTES, PANEL_HINT) ?? checkChoices(choices)
  if (wrong) return Either.left(wrong)
  const next: Question = {
    ...q,
    choices: [...choices],
    thread: [...q.thread, { who: "agent", body, at: timestamp(now) }]
  }
  return overRecordCap(next) ?? Either.right(next)
}

/** The question's whole timeout in seconds: as recorded, else `fallbackSecs`. */
export const timeoutSecs = (q: Question, fallbackSecs: number): number => q.answer_timeout > 0 ? q.answer_timeout : fallbackSecs

/**
 * When the question expires: its last activity (the ask, or the latest turn)
 * plus its timeout. A conversation still going is not one nobody answered, so
 * a turn starts the clock again; `magi ask --wait` adds no turn, so stacked
 * waits can only use the budget up, never stretch it.
 */
export const deadlineMs = (q: Question, fallbackSecs: number): number => {
  const last = Math.max(Date.parse(q.asked_at), ...q.thread.map((t) => Date.parse(t.at)))
  return last + timeoutSecs(q, fallbackSecs) * 1000
}

/** What is left until `deadlineMs`, never below 0. */
export const budgetLeftMs = (q: Question, fallbackSecs: number, now: Date): number => Math.max(0, deadlineMs(q, fallbackSecs) - now.getTime())

/** The words an expired question is abandoned with, by the asker or the daemon alike. */
export const expiryReason = (q: Question, fallbackSecs: number): string => `no answer within ${timeoutSecs(q, fallbackSecs)}s of asking`

/** Is this question a tool approval (approvals/Approval.ts)? Only the owner decides one: never a deputy, never the conductor. */
export const isApproval = (q: { readonly approval?: unknown }): boolean => q.approval !== undefined
