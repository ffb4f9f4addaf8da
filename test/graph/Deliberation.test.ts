/** The deliberation's transcript (issue 29): anonymous, the reader's own lines marked, the turns in seat order. */
import { describe, expect, it } from "vitest"
import * as D from "../../src/graph/Deliberation.js"
import type * as C from "../../src/runs/Competition.js"

const judge = (seat: string, agent: string, ranking: ReadonlyArray<string>, reasons: Record<string, string> = {}): C.Judge => ({
  seat,
  agent,
  worktree: `/w/${seat}`,
  order: ["A", "B", "C"],
  status: ranking.length > 0 ? "answered" : "failed",
  ranking,
  reasons,
  confidence: ranking.length > 0 ? 0.8 : null,
  retries: 0,
  failure: ranking.length > 0 ? "" : "it answered prose"
})
const panel = [
  judge("judge-1", "claude", ["C", "B", "A"], { C: "claude thinks C is tidy", B: "fine" }),
  judge("judge-2", "codex", ["B", "C", "A"], { B: "Codex says B handles the retry" }),
  judge("judge-3", "opencode", [])
]
const names = ["claude", "codex", "opencode"]
const said: ReadonlyArray<C.Deliberation> = [{ seat: "judge-1", round: 1, text: "As claude I still like C.", pick: "C" }]

describe("transcript", () => {
  it.each([
    { self: "judge-1", own: "## Judge 1 (you): C > B > A", other: "## Judge 2: B > C > A", turn: "## Judge 1 (you), round 1, leaning C", yous: 2 },
    { self: "judge-2", own: "## Judge 2 (you): B > C > A", other: "## Judge 1: C > B > A", turn: "## Judge 1, round 1, leaning C", yous: 1 }
  ])("for $self: its own marked, the others by number only", ({ other, own, self, turn, yous }) => {
    const t = D.transcript(panel, said, self, names)
    expect(t).toContain(own)
    expect(t).toContain(other)
    expect(t).toContain(turn)
    expect(t.match(/\(you\)/g)?.length).toBe(yous)
    // No agent name, no other judge's seat key, in any case.
    for (const n of names) expect(t).not.toMatch(new RegExp(n, "i"))
    for (const seat of ["judge-1", "judge-2", "judge-3"].filter((s) => s !== self)) expect(t).not.toContain(seat)
  })

  it("gives the openings in ranking order with their reasons, leaves out a judge that gave none, then the turns", () => {
    const t = D.transcript(panel, said, "judge-2", names)
    expect(t).not.toContain("Judge 3")
    expect(t.indexOf("- C: [a judge] thinks C is tidy")).toBeLessThan(t.indexOf("- B: fine"))
    expect(t).toContain("- B: [a judge] says B handles the retry")
    expect(t.indexOf("# The opening rankings")).toBeLessThan(t.indexOf("# The deliberation so far"))
    expect(t).toContain("As [a judge] I still like C.")
    expect(D.transcript(panel, [], "judge-2", names)).not.toContain("# The deliberation so far")
  })
})

describe("who speaks", () => {
  it.each([
    { name: "differing first choices", judges: panel, split: true },
    { name: "one first choice", judges: [panel[0]!, judge("judge-2", "codex", ["C", "A", "B"])], split: false },
    { name: "one ranking among failures", judges: [panel[0]!, panel[2]!], split: false }
  ])("split is $split for $name", ({ judges, split }) => {
    expect(D.split(judges)).toBe(split)
  })

  it.each([
    { rounds: 1, said: [], left: ["judge-1 1", "judge-2 1"] },
    { rounds: 2, said: [], left: ["judge-1 1", "judge-2 1", "judge-1 2", "judge-2 2"] },
    { rounds: 2, said, left: ["judge-2 1", "judge-1 2", "judge-2 2"] },
    { rounds: 0, said: [], left: [] }
  ])("with $rounds round(s) and $said.length said, $left are left", ({ left, rounds, said }) => {
    expect(D.turnsLeft(panel, rounds, said).map((t) => `${t.seat} ${t.round}`)).toEqual(left)
  })

  it("records a turn without its json block, cut", () => {
    expect(D.turnText('I lean B.\n\n```json\n{"pick": "B"}\n```\n')).toBe("I lean B.")
    expect(D.turnText("x".repeat(D.TURN_MAX_CHARS + 10)).length).toBe(D.TURN_MAX_CHARS)
  })
})
