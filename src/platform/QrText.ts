/**
 * A QR code drawn with terminal text, for what a phone should scan off the
 * owner's screen: `magi web pair`'s pairing link, `magi init`'s ntfy
 * subscription. The code itself comes from `qrcode` (a kept library: the
 * encoding, masking and error correction are not ours to get wrong); the
 * drawing is ours, so it is plain characters a test can read back.
 *
 * Two rows of modules per line of text, in half blocks, black on white
 * whatever the terminal's own colours: a scanner wants dark modules on a
 * light ground, and a dark terminal drawing the "on" modules light would
 * show it the negative.
 */
import QRCode from "qrcode"

/** The light margin around the code, in modules: the 4 the QR standard asks for. */
export const QUIET_ZONE = 4

const BLACK_ON_WHITE = "\x1b[30;47m"
const RESET = "\x1b[0m"

/** The code's modules, true for dark, rows of columns (without the quiet zone). */
export const modules = (text: string): ReadonlyArray<ReadonlyArray<boolean>> => {
  // Level L (7 % redundancy): the smallest code, and a screen is not a torn label.
  const qr = QRCode.create(text, { errorCorrectionLevel: "L" })
  const size = qr.modules.size
  return Array.from({ length: size }, (_, r) => Array.from({ length: size }, (_, c) => qr.modules.get(r, c) === 1))
}

/** The half-block character for a top and a bottom module. */
const cell = (top: boolean, bottom: boolean) => (top ? (bottom ? "█" : "▀") : bottom ? "▄" : " ")

/**
 * `text` as a QR code in lines of terminal text; `colour` false leaves out
 * the escape codes (the caller's terminal is known to draw dark on light).
 */
export const render = (text: string, colour = true): string => {
  const inner = modules(text)
  const size = inner.length + 2 * QUIET_ZONE
  const dark = (r: number, c: number) => inner[r - QUIET_ZONE]?.[c - QUIET_ZONE] === true
  const lines: Array<string> = []
  for (let r = 0; r < size; r += 2) {
    let line = ""
    for (let c = 0; c < size; c++) line += cell(dark(r, c), r + 1 < size && dark(r + 1, c))
    lines.push(colour ? `${BLACK_ON_WHITE}${line}${RESET}` : line)
  }
  return lines.join("\n") + "\n"
}

/** The modules a drawing shows, quiet zone included, read back from its characters (what a test checks against `modules`). */
export const readBack = (drawn: string): ReadonlyArray<ReadonlyArray<boolean>> =>
  drawn
    .replace(/\x1b\[[0-9;]*m/g, "")
    .split("\n")
    .filter((l) => l !== "")
    .flatMap((line) => {
      const chars = [...line]
      return [chars.map((ch) => ch === "█" || ch === "▀"), chars.map((ch) => ch === "█" || ch === "▄")]
    })
