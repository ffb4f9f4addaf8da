/**
 * The exact commands magi tells an agent to run next, in one place: the
 * `magi ask` that just returned prints them, and the daemon's resume prompt
 * carries the same ones, so the two never drift apart.
 */
import * as Q from "./Question.js"

/** `word` as one word for a POSIX shell: bare when that is safe, else in single quotes. */
export const shellWord = (word: string): string =>
  word !== "" && /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`

/**
 * The reply on `q`'s thread. A reply's `--choice`s replace the question's,
 * so one without them quietly turns it into free text (agents did that by
 * accident): the hint carries the current choices, to keep or change on
 * purpose.
 */
export const threadCommand = (magi: string, q: Q.Question, summary = `"..."`): string =>
  [`${magi} ask --thread ${q.id} --summary ${summary}`, ...q.choices.map((c) => `--choice ${shellWord(c)}`)].join(" ")

/** Said under a thread hint that carries choices, so the agent knows why they are there. */
export const KEEP_CHOICES =
  "(The --choice options repeat the question's current choices: a reply without them would turn it into a free-text question.)"
