/**
 * Agent-written text made safe to print on the owner's terminal.
 *
 * A terminal obeys what it is sent: `\r` and `ESC [2K` erase what the owner
 * was about to read and put other words in its place ("Deploy to staging?"
 * answered as "Run tests only?"), and `ESC ] 52` writes their clipboard. So
 * every printer of text an agent wrote (summary, detail, choices, thread,
 * run summaries, notices, refusals quoting it) passes it through here, and
 * control characters are shown as visible escapes instead of being obeyed.
 *
 * Escaped: C0 controls but newline and tab (`\e`, `\r`, `\xHH`), DEL, the C1
 * controls (U+0080–U+009F, which some terminals read as ESC sequences:
 * U+009B is CSI), and the bidirectional overrides and isolates that reorder
 * what is displayed without changing what is stored ("Trojan source").
 * Backslashes are left as they are: a literal `\e` in the text hides nothing.
 */

const NAMED: Record<string, string> = { "\x1b": "\\e", "\r": "\\r", "\n": "\\n", "\t": "\\t" }

const hex = (c: string, width: 2 | 4) => {
  const code = c.codePointAt(0)!.toString(16).padStart(width, "0")
  return width === 2 ? `\\x${code}` : `\\u${code}`
}

const escapeOne = (c: string): string => {
  const named = NAMED[c]
  if (named !== undefined) return named
  const code = c.codePointAt(0)!
  return code < 0x100 ? hex(c, 2) : hex(c, 4)
}

/** Control characters, DEL, C1, bidi overrides and isolates; newline and tab are handled by the caller's choice. */
const CONTROLS = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g
const CONTROLS_AND_LINES = /[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g

/**
 * Text that may span lines (a detail, a thread turn, a run summary): line
 * breaks and tabs are kept, every other control character is escaped.
 */
export const forTerminal = (text: string): string => text.replace(CONTROLS, escapeOne)

/**
 * Text shown as one line (a summary, a choice, an id, a run's name): line
 * breaks are escaped too, so agent text cannot forge the lines around it
 * (a fake "choices:" line under the real summary).
 */
export const forTerminalLine = (text: string): string => text.replace(CONTROLS_AND_LINES, escapeOne)
