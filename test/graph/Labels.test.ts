/** Labels, seeded shuffles and judge rotation (issue 29): pure, as tables. */
import { describe, expect, it } from "vitest"
import * as Labels from "../../src/graph/Labels.js"
import { assign, cycled, judgeAgents, labels, orderFor, shuffle } from "../../src/graph/Labels.js"

describe("labels and shuffles", () => {
  it("labels A… for each candidate", () => {
    expect(labels(3)).toEqual(["A", "B", "C"])
    expect(labels(28).slice(25)).toEqual(["Z", "AA", "AB"])
  })

  it("repeats a shuffle by its seed, and another seed gives another order", () => {
    const items = ["a", "b", "c", "d", "e", "f"]
    expect(shuffle(items, 42)).toEqual(shuffle(items, 42))
    expect(new Set(shuffle(items, 42))).toEqual(new Set(items))
    const orders = new Set([1, 2, 3, 4, 5, 6, 7, 8].map((s) => shuffle(items, s).join("")))
    expect(orders.size).toBeGreaterThan(4)
  })

  it("assigns the implementers cycled, shuffled by the seed", () => {
    expect(cycled(["x", "y"], 3)).toEqual(["x", "y", "x"])
    const a = assign(["x", "y", "z"], 3, 7)
    expect(a.map((c) => c.label)).toEqual(["A", "B", "C"])
    expect(new Set(a.map((c) => c.agent))).toEqual(new Set(["x", "y", "z"]))
    expect(assign(["x", "y", "z"], 3, 7)).toEqual(a)
  })

  it("gives each judge its own reproducible order", () => {
    const seen = [0, 1, 2].map((i) => orderFor(["A", "B", "C"], 99, i))
    expect(seen).toEqual([0, 1, 2].map((i) => orderFor(["A", "B", "C"], 99, i)))
    for (const o of seen) expect([...o].sort()).toEqual(["A", "B", "C"])
  })
})

describe("judge rotation", () => {
  it.each([
    // Judge i never sits across from its own agent's candidate i when the roster allows.
    { pool: ["x", "y", "z"], authors: ["x", "y", "z"], m: 3, want: ["y", "z", "x"] },
    { pool: ["x", "y", "z"], authors: ["y", "x", "z"], m: 3, want: ["x", "z", "y"] },
    // Agents that wrote nothing judge first.
    { pool: ["x", "y", "p", "q", "r"], authors: ["x", "y", "x"], m: 3, want: ["p", "q", "r"] },
    // One agent for everything: no rotation can help.
    { pool: ["x"], authors: ["x", "x", "x"], m: 3, want: ["x", "x", "x"] },
    { pool: [], authors: ["x"], m: 3, want: [] }
  ])("$pool over $authors", ({ pool, authors, m, want }) => {
    const got = judgeAgents(pool, authors, m)
    expect(got).toEqual(want)
  })
})

describe("a limited seat's fallback", () => {
  it.each(
    [
      ["the next implementer", ["claude", "codex", "opencode"], "claude", [], "codex"],
      ["going round from the last", ["claude", "codex", "opencode"], "opencode", [], "claude"],
      ["skipping one that already held the seat", ["claude", "codex", "opencode"], "codex", ["opencode"], "claude"],
      ["none once every implementer has", ["claude", "codex"], "codex", ["claude"], undefined],
      ["none with a one-agent list", ["claude"], "claude", [], undefined],
      ["the first, for an agent no longer listed", ["claude", "codex"], "gemini", [], "claude"]
    ] as const
  )("%s", (_, implementers, current, tried, next) => {
    expect(Labels.fallbackAgent(implementers, current, tried)).toBe(next)
  })
})
