/**
 * The tally: pure, no agent. First choices from the final votes (a judge
 * whose vote failed counts with the top of its first ranking); Borda points
 * from the first rankings (n − position − 1); the most first choices win, a
 * tie goes to Borda, then to label order. Quorum is a majority of the panel:
 * below it there is no winner, and the run stalls until the missing seats answer.
 */
import type { Tally } from "../runs/Competition.js"

export interface Ballot {
  readonly seat: string
  /** Its first ranking; empty when the judge never gave one. */
  readonly ranking: ReadonlyArray<string>
  /** Its final private vote; null when it failed or was never asked. */
  readonly vote: string | null
}

export type Outcome =
  | { readonly _tag: "elected"; readonly tally: Tally }
  | { readonly _tag: "stalled"; readonly answered: number; readonly quorum: number }

/** A majority of a panel of `m`. */
export const quorumOf = (m: number): number => Math.floor(m / 2) + 1

export const tally = (labels: ReadonlyArray<string>, panel: number, ballots: ReadonlyArray<Ballot>): Outcome => {
  const counted = ballots.filter((b) => b.ranking.length > 0)
  const quorum = quorumOf(panel)
  if (counted.length < quorum || labels.length === 0) return { _tag: "stalled", answered: counted.length, quorum }
  const zero = () => Object.fromEntries(labels.map((l) => [l, 0])) as Record<string, number>
  const first = zero()
  const borda = zero()
  const n = labels.length
  let changed = 0
  const finals: Array<string> = []
  for (const b of counted) {
    const top = b.ranking[0]!
    const final = b.vote !== null && labels.includes(b.vote) ? b.vote : top
    if (final !== top) changed++
    finals.push(final)
    first[final] = (first[final] ?? 0) + 1
    b.ranking.forEach((l, i) => {
      if (l in borda) borda[l] = borda[l]! + (n - i - 1)
    })
  }
  const most = Math.max(...labels.map((l) => first[l]!))
  const leaders = labels.filter((l) => first[l] === most)
  let winner = leaders[0]!
  let tie_break: Tally["tie_break"] = "none"
  if (leaders.length > 1) {
    const best = Math.max(...leaders.map((l) => borda[l]!))
    const byBorda = leaders.filter((l) => borda[l] === best)
    tie_break = byBorda.length === 1 ? "borda" : "label"
    winner = [...byBorda].sort()[0]!
  }
  const tops = counted.map((b) => b.ranking[0]!)
  return {
    _tag: "elected",
    tally: {
      winner,
      first_choices: first,
      borda,
      unanimous_first: tops.every((t) => t === tops[0]),
      unanimous_final: finals.every((f) => f === finals[0]),
      votes_changed: changed,
      tie_break,
      answered: counted.length,
      quorum
    }
  }
}

/** Why the winner won, in one line for `magi show`. */
export const why = (t: Tally): string => {
  const votes = t.first_choices[t.winner] ?? 0
  const base = `${t.winner} had ${votes} of ${t.answered} first choice${t.answered === 1 ? "" : "s"}`
  const unanimity = t.unanimous_first ? ", unanimous" : ""
  const tie = t.tie_break === "borda" ? `, a tie broken by Borda points (${t.borda[t.winner]})` : t.tie_break === "label" ? ", a tie broken by label order" : ""
  return `${base}${unanimity}${tie}`
}
