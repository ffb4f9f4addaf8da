/**
 * One line of what went wrong, for every place a failure is shown in a row
 * or a card: an agent's stderr can be thousands of lines of debug output,
 * and a queue card, a `magi task list` row or a run's reason must stay one
 * line. The whole output stays in the turn's `.err`, a tap away on the run
 * page. Import-free, so the phone's script uses the same rule.
 */

/** The longest line shown: two lines of a phone held upright, one wide terminal row. */
export const ERROR_LINE_MAX = 160

/** Words an error line says, whichever program printed it. */
const ERRORISH =
  /\b(error|err!|fatal|fail(ed|ure|s)?|exception|panic|denied|refused|forbidden|unauthori[sz]ed|invalid|cannot|can't|couldn't|unable|not found|no such|missing|timed out|timeout|abort(ed)?|traceback)\b|\b[A-Z][A-Z0-9_]{2,}:|\bE[A-Z]{3,}\b|^\S*Error\b/i

/** A stack frame (`at f (file:1:2)`, `File "x.py", line 3`): where, never what. */
const FRAME = /^(at\s|File\s"|\.\.\.\s*\d+\s+more)/

/** `text` cut to `max` characters (code points, so a cut never splits one), `…` standing for the rest. */
export const capLine = (text: string, max: number = ERROR_LINE_MAX): string => {
  const line = text.replace(/\s+/g, " ").trim()
  const chars = Array.from(line)
  return chars.length <= max ? line : chars.slice(0, Math.max(0, max - 1)).join("") + "…"
}

/**
 * The one line of `text` that says what went wrong: the last non-empty line
 * that looks like an error (CLIs print the error last, after their debug
 * lines; a stack trace's frames are skipped), else the last non-empty line;
 * capped at `max`.
 */
export const errorLine = (text: string, max: number = ERROR_LINE_MAX): string => {
  const lines = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== "")
  const errorish = lines.filter((l) => !FRAME.test(l) && ERRORISH.test(l)).at(-1)
  return capLine(errorish ?? lines.at(-1) ?? "", max)
}

/**
 * A reason that quotes a whole error (magi's hold after the last attempt:
 * "failed 2 of 2 attempts; last: …") with the quote cut to its error line;
 * any other reason as one capped line.
 */
export const reasonLine = (reason: string, error: string | null): string =>
  error !== null && error !== "" && reason.includes(error) ? reason.replace(error, errorLine(error)).replace(/\s+/g, " ").trim() : capLine(reason)
