/**
 * Counting wrong pairing codes, per client address and overall, so that
 * parallel guesses cannot outrun the limit and one guesser cannot close
 * pairing to the owner at another address.
 *
 * A guess is counted as wrong *before* its code is looked at, in the same
 * locked step that checks the limit (Devices.ts holds both counts' locks):
 * 1,000 guesses sent at once still find the limit reached after the first
 * ten, however the checks interleave, where checking first and counting
 * after let every one through to the code. A right code gives its count
 * back (`refund`). A new code from `magi web pair` starts every count
 * afresh (Devices.issueCode), so the owner is never locked out of a code
 * asked for after the guessing began.
 */
import * as NodeCrypto from "node:crypto"
import { currentGuesses, GUESS_WINDOW_MS, GUESSES_ID, type Guesses, MAX_FAILED_GUESSES, MAX_FAILED_GUESSES_OVERALL } from "./Device.js"

/** One count a guess is held to: its record's id and how many wrong codes it allows per window. */
export interface Counter {
  readonly id: string
  readonly limit: number
}

/** The record id of one address's count: a hash, so the store keeps no list of who tried. */
export const addressGuessesId = (address: string): string =>
  `address-${NodeCrypto.createHash("sha256").update(`magi-pairing-address:${address}`).digest("hex").slice(0, 32)}`

/** The counts a guess from `address` is held to, in the order their locks are taken. */
export const countersFor = (address: string): ReadonlyArray<Counter> => [
  { id: addressGuessesId(address), limit: MAX_FAILED_GUESSES },
  { id: GUESSES_ID, limit: MAX_FAILED_GUESSES_OVERALL }
]

export type Reservation =
  | { readonly _tag: "Closed"; readonly until: number; readonly overall: boolean }
  | { readonly _tag: "Counted"; readonly next: ReadonlyArray<Guesses> }

/** One guess, against the counts as stored (`undefined`: none yet): refused while any is full, else counted in all. */
export const reserve = (counters: ReadonlyArray<Counter>, stored: ReadonlyArray<Guesses | undefined>, now: number): Reservation => {
  const current = counters.map((c, i) => currentGuesses(stored[i], now, c.id))
  const full = counters.findIndex((c, i) => current[i]!.failures >= c.limit)
  if (full >= 0) return { _tag: "Closed", until: current[full]!.window_start + GUESS_WINDOW_MS, overall: counters[full]!.id === GUESSES_ID }
  return { _tag: "Counted", next: current.map((g) => ({ ...g, failures: g.failures + 1 })) }
}

/** A right code's count given back: the count to write, or none when its window has started again since. */
export const refund = (stored: Guesses | undefined, counted: Guesses): Guesses | undefined =>
  stored !== undefined && stored.window_start === counted.window_start && stored.failures > 0 ? { ...stored, failures: stored.failures - 1 } : undefined

const isLoopback = (address: string) => address === "::1" || /^(::ffff:)?127\./.test(address)

/**
 * Who is guessing: the peer's address, or, when the peer is a proxy on this
 * machine (Tailscale's `serve`, nginx: they connect from loopback), the
 * address that proxy says it forwards for, the last entry of
 * `X-Forwarded-For` (the one it added; entries before it are the client's
 * own say). A client reaching magi directly cannot choose its address.
 */
export const clientAddress = (peer: string | undefined, forwardedFor: string | undefined): string => {
  const direct = (peer ?? "unknown").replace(/^::ffff:/, "")
  if (!isLoopback(peer ?? "") || forwardedFor === undefined) return direct
  const last = forwardedFor.split(",").map((s) => s.trim()).filter((s) => s !== "").at(-1)
  return last === undefined ? direct : last.replace(/^::ffff:/, "")
}
