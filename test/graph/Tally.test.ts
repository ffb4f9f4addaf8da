/** The tally (issue 29): pure, as a table. */
import { describe, expect, it } from "vitest"
import { quorumOf, tally, why, type Ballot } from "../../src/graph/Tally.js"

const b = (seat: string, ranking: ReadonlyArray<string>, vote: string | null = null): Ballot => ({ seat, ranking, vote })
const L = ["A", "B", "C"]

describe("tally", () => {
  it.each([
    {
      name: "unanimous first choices",
      ballots: [b("j1", ["B", "A", "C"]), b("j2", ["B", "C", "A"]), b("j3", ["B", "A", "C"])],
      winner: "B",
      tie: "none",
      first: true,
      final: true,
      changed: 0
    },
    {
      name: "a majority of first choices",
      ballots: [b("j1", ["A", "B", "C"]), b("j2", ["C", "B", "A"]), b("j3", ["A", "C", "B"])],
      winner: "A",
      tie: "none",
      first: false,
      final: false,
      changed: 0
    },
    // A 1–1–1 split on first choices: Borda from the rankings decides (B: 1+1+2 = 4, A: 2+0+1 = 3, C: 0+2+0 = 2).
    {
      name: "a tie broken by Borda",
      ballots: [b("j1", ["A", "B", "C"]), b("j2", ["C", "B", "A"]), b("j3", ["B", "A", "C"])],
      winner: "B",
      tie: "borda",
      first: false,
      final: false,
      changed: 0
    },
    // A 1–1 split with equal Borda: label order.
    {
      name: "a tie broken by label order",
      ballots: [b("j1", ["B", "A"]), b("j2", ["A", "B"])],
      labels: ["A", "B"],
      panel: 2,
      winner: "A",
      tie: "label",
      first: false,
      final: false,
      changed: 0
    },
    // Final votes decide first choices; a changed vote is counted.
    {
      name: "final votes over first rankings",
      ballots: [b("j1", ["A", "B", "C"], "B"), b("j2", ["B", "A", "C"], "B"), b("j3", ["A", "C", "B"], "A")],
      winner: "B",
      tie: "none",
      first: false,
      final: false,
      changed: 1
    },
    // A failed vote (null) counts as the top of that judge's first ranking.
    {
      name: "a failed vote counts as its first ranking's top",
      ballots: [b("j1", ["C", "A", "B"], null), b("j2", ["C", "B", "A"], "C"), b("j3", ["A", "B", "C"], "A")],
      winner: "C",
      tie: "none",
      first: false,
      final: false,
      changed: 0
    },
    // A vote naming no viable label is a failed vote.
    {
      name: "an unknown vote counts as a failed one",
      ballots: [b("j1", ["A", "B", "C"], "Z"), b("j2", ["A", "B", "C"])],
      winner: "A",
      tie: "none",
      first: true,
      final: true,
      changed: 0
    }
  ])("$name", ({ ballots, labels, panel, winner, tie, first, final, changed }) => {
    const out = tally(labels ?? L, panel ?? 3, ballots)
    expect(out._tag).toBe("elected")
    if (out._tag !== "elected") return
    expect(out.tally).toMatchObject({ winner, tie_break: tie, unanimous_first: first, unanimous_final: final, votes_changed: changed })
  })

  it("computes Borda as n − position − 1 from the first rankings", () => {
    const out = tally(L, 3, [b("j1", ["A", "B", "C"]), b("j2", ["C", "B", "A"]), b("j3", ["B", "A", "C"])])
    expect(out._tag === "elected" && out.tally.borda).toEqual({ A: 3, B: 4, C: 2 })
    expect(out._tag === "elected" && out.tally.first_choices).toEqual({ A: 1, B: 1, C: 1 })
  })

  it.each([
    { panel: 3, answered: 1, stalled: true },
    { panel: 3, answered: 2, stalled: false },
    { panel: 4, answered: 2, stalled: true },
    { panel: 4, answered: 3, stalled: false },
    { panel: 1, answered: 1, stalled: false },
    { panel: 5, answered: 0, stalled: true }
  ])("a panel of $panel with $answered rankings stalled: $stalled", ({ panel, answered, stalled }) => {
    const ballots = [
      ...Array.from({ length: answered }, (_, i) => b(`j${i}`, ["A", "B", "C"])),
      ...Array.from({ length: panel - answered }, (_, i) => b(`f${i}`, []))
    ]
    const out = tally(L, panel, ballots)
    expect(out._tag).toBe(stalled ? "stalled" : "elected")
    if (out._tag === "stalled") expect(out).toEqual({ _tag: "stalled", answered, quorum: quorumOf(panel) })
  })

  it("says why the winner won", () => {
    const out = tally(L, 3, [b("j1", ["A", "B", "C"]), b("j2", ["C", "B", "A"]), b("j3", ["B", "A", "C"])])
    expect(out._tag === "elected" && why(out.tally)).toBe("B had 1 of 3 first choices, a tie broken by Borda points (4)")
  })
})
