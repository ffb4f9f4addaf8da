/**
 * The deputy's one power over a conductor question: settling it with a
 * choice the owner's own words picked. Nobody waits on a conductor question
 * (the conductor moved on), so a short-lived deputy seat keeps the owner
 * company on it; when the owner answers in free text rather than by tapping
 * a choice, the deputy may settle the question with `magi ask --settle ID
 * --choice LABEL --quote '<the owner's words>'`. It is refused unless it
 * comes from that question's own deputy seat, names an offered label, and
 * quotes an owner turn verbatim, so a deputy can only carry the owner's
 * decision, never make one. It applies nothing to the task: the loop's
 * blocker resolution does, as for any answer.
 */
import { Either, Schema } from "effect"
import { isApproval } from "../approvals/Approval.js"
import { parseVersioned } from "../store/VersionedJson.js"
import * as Q from "../questions/Question.js"
import { type MagiName, PLAIN_MAGI } from "../agents/Prompts.js"
import { NODE as CONDUCT } from "./ConductorDecide.js"

/** The seat of the deputy for question `id`: `deputy-<short id>`. */
export const deputySeat = (id: string): string => `deputy-${Q.shortId(id)}`

export interface SettleRequest {
  /** `MAGI_SEAT` of the process asking to settle. */
  readonly seat: string
  readonly choice: string
  readonly quote: string
}

/** Why `req` may not settle `q`, if it may not. */
export const settleRefusal = (q: Q.Question, req: SettleRequest): string | undefined => {
  const short = Q.shortId(q.id)
  if (isApproval(q)) return `question ${short} is a tool approval; only the owner decides one, never a deputy`
  if (q.node !== CONDUCT) return `question ${short} is not a conductor question; only a conductor question's deputy settles one`
  if (!Q.isOpen(q)) return `question ${short} is ${q.status}; there is nothing left to settle`
  if (req.seat !== deputySeat(q.id))
    return `only seat ${deputySeat(q.id)} may settle question ${short}, not ${req.seat === "" ? "a process outside any seat" : `seat ${req.seat}`}`
  if (!q.choices.includes(req.choice))
    return `\`${req.choice}\` is not one of the choices question ${short} offers: ${q.choices.join(", ") || "(none: it asks for free text)"}`
  const quote = req.quote.trim()
  if (quote === "") return "--quote needs the owner's own words that pick the choice"
  if (!q.thread.some((t) => t.who === "operator" && t.body.includes(quote)))
    return `the owner never said "${quote}" on question ${short}; quote their words exactly as they wrote them`
  return undefined
}

/** Settle `q` with the owner's choice, or why not. */
export const settle = (q: Q.Question, req: SettleRequest, now: Date): Either.Either<Q.Question, string> => {
  const why = settleRefusal(q, req)
  if (why !== undefined) return Either.left(why)
  return Either.mapLeft(Q.answer(q, { choice: req.choice }, now), (e) => e.message)
}

// ---------------------------------------------------------------------------
// When a deputy starts

/** Starts per question before magi stops and asks the owner to pick a choice instead. */
export const MAX_STARTS = 3
/** No deputy restarts within this many ms of its last start: a deputy that dies at once must not spin. */
export const RESTART_AFTER_MS = 30_000

export interface DeputyMemory {
  readonly starts: number
  readonly lastStartMs: number
  readonly noticed: boolean
}

/** The deputy record's format version. */
export const DEPUTY_SCHEMA = 1

/**
 * What magi remembers about one conductor question's deputies, on disk
 * (`<home>/conduct/deputies/<question id>/deputy.json`, beside their
 * artifacts), so a restarted `magi serve` keeps the limits: how many times
 * one was started, when last, and whether the owner was told they gave up.
 */
export const DeputyRecord = Schema.Struct({
  schema: Schema.Number,
  question: Schema.String,
  starts: Schema.Number,
  last_start_at: Q.Timestamp,
  noticed: Schema.Boolean
})
export type DeputyRecord = typeof DeputyRecord.Type

const decodeRecordShape = Schema.decodeUnknownEither(DeputyRecord, { onExcessProperty: "error" })

export const decodeRecord = (body: string, source: string): Either.Either<DeputyRecord, { readonly message: string }> =>
  Either.flatMap(
    parseVersioned(body, source, DEPUTY_SCHEMA, (raw) =>
      `the deputy record of ${typeof (raw as { question?: unknown }).question === "string" ? (raw as { question: string }).question : source}`),
    (raw) =>
      Either.mapLeft(decodeRecordShape(raw), (e) => ({ message: `${source} is not a deputy record magi can read: ${e.message}` }))
  )

export const encodeRecord = (r: DeputyRecord): string => JSON.stringify(r, null, 2) + "\n"

/** The record as `deputiesToStart` reads it. */
export const memoryOf = (r: DeputyRecord): DeputyMemory => ({
  starts: r.starts,
  lastStartMs: Date.parse(r.last_start_at),
  noticed: r.noticed
})

/** The record after one more start at `now`. */
export const started = (questionId: string, before: DeputyRecord | undefined, now: Date): DeputyRecord => ({
  schema: DEPUTY_SCHEMA,
  question: questionId,
  starts: (before?.starts ?? 0) + 1,
  // To the millisecond: the 30 s rule must not be shortened by rounding.
  last_start_at: now.toISOString(),
  noticed: false
})

export interface Candidate {
  readonly q: Q.Question
  /** Someone (an asker, a deputy's `--wait`) holds a fresh lease on it. */
  readonly leased: boolean
}

/**
 * Which open conductor questions get a deputy now (at most `max` running at
 * once), and which get the one notice that the deputies gave up. A question
 * past its deadline gets none unless the owner said something unread.
 */
export const deputiesToStart = (
  candidates: ReadonlyArray<Candidate>,
  memory: ReadonlyMap<string, DeputyMemory>,
  running: ReadonlySet<string>,
  max: number,
  fallbackTimeoutSecs: number,
  nowMs: number
): { readonly start: ReadonlyArray<Q.Question>; readonly notice: ReadonlyArray<Q.Question> } => {
  const start: Q.Question[] = []
  const notice: Q.Question[] = []
  let slots = max - running.size
  for (const { q, leased } of candidates) {
    // A tool approval is the owner's alone, even one a conductor seat's tool call raised.
    if (q.node !== CONDUCT || isApproval(q) || !Q.isOpen(q) || running.has(q.id) || leased) continue
    if (nowMs > Q.deadlineMs(q, fallbackTimeoutSecs) && Q.unreadOwnerTurns(q) === undefined) continue
    const m = memory.get(q.id)
    if (m !== undefined && m.starts >= MAX_STARTS) {
      if (!m.noticed) notice.push(q)
      continue
    }
    if (m !== undefined && nowMs - m.lastStartMs < RESTART_AFTER_MS) continue
    if (slots <= 0) continue
    slots--
    start.push(q)
  }
  return { start, notice }
}

/**
 * The conductor's brief for the deputy of the question it is filing: the
 * blocked task, why it asked (or that it recorded no reason), and what the
 * choices lead to. Written once, when the question is filed, and stored on
 * it (`deputy_brief`): a deputy started later is told what the conductor
 * knew then, not a brief rebuilt from a task that has moved on.
 */
export const conductorBrief = (
  task: { readonly id: string; readonly title: string },
  question: string,
  reason: string,
  choices: ReadonlyArray<string>
): string =>
  [
    `Blocked task: ${task.id} (${task.title}).`,
    `The question: ${question}`,
    `Why the conductor asked: ${reason.trim() === "" ? "it recorded no reason" : reason.trim()}`,
    choices.length > 0
      ? `Choices: ${choices.map((c) => `\`${c}\``).join(", ")}. Whichever the owner picks is recorded on the task and carried into its next run.`
      : "It asks for free text; the owner's answer is carried into the task's next run."
  ].join("\n")

/**
 * The brief of a question filed before briefs were stored: only what the
 * question itself says, and that the conductor's own brief is missing.
 */
const briefFromQuestion = (q: Q.Question): string =>
  [
    `(This question was filed without a stored brief; this is what it says.)`,
    `Blocked task: ${q.run}.`,
    `The question: ${q.summary}`,
    `Why the conductor asked: ${q.detail.trim() === "" ? "it recorded no reason" : q.detail.trim()}`,
    q.choices.length > 0 ? `Choices: ${q.choices.map((c) => `\`${c}\``).join(", ")}.` : "It asks for free text."
  ].join("\n")

/**
 * What a deputy is told: the conductor's brief as stored on the question, and
 * how to keep the owner company, naming magi as its shell can run it.
 */
export const deputyPrompt = (q: Q.Question, magi: MagiName = PLAIN_MAGI): string =>
  [
    `You are the deputy for conductor question ${q.id}. Nobody else waits on it: the conductor moved on.`,
    "",
    "## The brief",
    "",
    q.deputy_brief ?? briefFromQuestion(q),
    "",
    "## What you do",
    "",
    `- Wait with \`${magi.run} ask --wait ${q.id}\`. When the owner asks something back, answer with \`${magi.run} ask --thread ${q.id} --summary "…"\`.`,
    `- Only when the owner's own words clearly pick one choice, settle it: \`${magi.run} ask --settle ${q.id} --choice LABEL --quote '<their words, exactly>'\`.`,
    "- Change no file and decide nothing for the owner; the task itself is left to magi."
  ].join("\n")
