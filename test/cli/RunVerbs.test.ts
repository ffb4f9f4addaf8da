import { describe, expect, it } from "vitest"
import { dashDashAfterRun, readRunWords } from "../../src/cli/RunVerbs.js"

describe("magi run's words (issue 27.3)", () => {
  it.each(
    [
      [["add", "a", "cache"], false, "Instruction"],
      [["stop", "ab12"], false, "Verb"],
      [["rm", "ab12"], false, "Verb"],
      [["stop"], false, "Verb"],
      [["stpo", "ab12"], false, "Refused"],
      [["stop", "the", "server"], false, "Refused"],
      [["rm", "the", "old", "file"], false, "Refused"],
      [["stop", "the", "server"], true, "Instruction"],
      [["stop the server"], false, "Instruction"],
      [["refactor", "the", "store"], false, "Instruction"],
      [[], false, "Instruction"]
    ] as const
  )("%j (-- given: %s) is %s", (words, dashDash, tag) => {
    expect(readRunWords(words, dashDash)._tag).toBe(tag)
  })

  it("sees -- only after run", () => {
    expect(dashDashAfterRun(["node", "magi.js", "run", "--", "stop", "x"])).toBe(true)
    expect(dashDashAfterRun(["node", "magi.js", "run", "stop", "x"])).toBe(false)
  })
})
