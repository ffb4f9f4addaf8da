/**
 * The exact commands magi tells an agent to run next, in one place: the
 * `magi ask` that just returned prints them, and the daemon's resume prompt
 * carries the same ones, so the two never drift apart.
 */
import { Config, Effect } from "effect"
import * as Q from "./Question.js"

/** `word` as one word for a POSIX shell: bare when that is safe, else in single quotes. */
export const shellWord = (word: string): string => word !== "" && /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`

/**
 * The reply on `q`'s thread. A reply's `--choice`s replace the question's,
 * so one without them quietly turns it into free text (agents did that by
 * accident): the hint carries the current choices, to keep or change on
 * purpose.
 */
export const threadCommand = (magi: string, q: Q.Question, summary = `"..."`): string =>
  [`${magi} ask --thread ${q.id} --summary ${summary}`, ...q.choices.map((c) => `--choice ${shellWord(c)}`)].join(" ")

/** Said under a thread hint that carries choices, so the agent knows why they are there. */
export const KEEP_CHOICES = "(The --choice options repeat the question's current choices: a reply without them would turn it into a free-text question.)"

/**
 * Does this asker end its turn on `pending` rather than wait again?
 * `MAGI_WAIT=end-turn`, which magi sets only for a run's seat (whose session
 * the waiter can resume with the owner's answer), and only with `MAGI_RUN`
 * naming that run: an ask from anywhere else keeps waiting, since nothing
 * would bring it the answer.
 */
export const endsTurnOnPending: Effect.Effect<boolean> = Effect.zipWith(
  Config.string("MAGI_WAIT").pipe(Config.withDefault("")),
  Config.string("MAGI_RUN").pipe(Config.withDefault("")),
  (mode, run) => mode === "end-turn" && run !== ""
  // fallback: a probe that failed gives the plain hint
).pipe(Effect.orElseSucceed(() => false))

/**
 * What `pending` tells a seat that ends its turn on it: the question stays
 * open and magi brings the answer, so it must neither wait again (`again`
 * names the call it must not make) nor ask again.
 */
export const endTurnLines = (q: Q.Question, again: string): string =>
  `No answer yet: this call's wait slice ran out; question ${Q.shortId(q.id)} is still open, and magi keeps it for you.\n` +
  `End your turn now: reply with one line saying you are waiting on the owner about it. Do not ${again}, and do not ask again:\n` +
  `when the owner answers, magi resumes this same session with their answer, and you carry on from there.\n`
