/** `magi init`'s competition question (issue 29): the answer read, the cost said, the key written. */
import { describe, expect, it } from "vitest"
import * as ConfigDraft from "../../src/platform/ConfigDraft.js"

const agent = (kind: string): ConfigDraft.FoundAgent => ({ kind, path: `/usr/bin/${kind}`, version: "1.0" })

describe("how many candidates", () => {
  it.each(
    [
      ["", 3],
      ["2", 2],
      [" 1 ", 1],
      ["0", undefined],
      ["10", undefined],
      ["three", undefined]
    ] as const
  )("answered %j: %s", (answer, n) => {
    expect(ConfigDraft.candidatesOf(answer, 3)).toBe(n)
  })

  it("says what a competition costs against a solo run", () => {
    expect(ConfigDraft.competitionCost(3)).toBe(
      "3 candidates and 3 judges cost about 9 agent turns a task (3 implementing, a ranking and a vote from each judge; a split panel adds 3 per round of deliberation), where a solo run costs 1"
    )
    expect(ConfigDraft.competitionCost(1)).toContain("one agent turn")
  })

  it("writes [graph] candidates only when two or more agents were found", () => {
    const two = ConfigDraft.render({ agents: [agent("claude"), agent("codex")], repos: [], ntfy: undefined, publicUrl: undefined, candidates: 2 })
    expect(two).toContain("[graph]\n")
    expect(two).toContain("candidates = 2\n")
    expect(two).toContain("about 8 agent turns")
    const one = ConfigDraft.render({ agents: [agent("claude")], repos: [], ntfy: undefined, publicUrl: undefined, candidates: 3 })
    expect(one).not.toContain("[graph]")
  })
})
