import { Effect, Either } from "effect"
import { describe, expect, it } from "vitest"
import { settingsOf } from "../../src/graph/GraphConfig.js"
import { approves, subjectFor } from "../../src/runs/Landing.js"

const read = (graph: Record<string, unknown>) => Effect.runSync(Effect.either(settingsOf({ graph }, ["config.toml"])))

describe("[graph] landing settings", () => {
  it("defaults to no merge, merge style, the approval on, origin, the loop on, 45 minutes, 4 rounds", () => {
    const s = read({})
    expect(Either.isRight(s) && s.right.landing).toEqual({
      merge: "none",
      style: "merge",
      approval: true,
      oneTap: false,
      remote: "origin",
      loop: true,
      waitMs: 45 * 60_000,
      rounds: 4
    })
  })

  it.each([
    [{ merge: "pr", merge_style: "squash", land_wait: 10, land_rounds: 0, remote: "up", one_tap_merge: true, land_approval: false }, {
      merge: "pr",
      style: "squash",
      waitMs: 600_000,
      rounds: 0,
      remote: "up",
      oneTap: true,
      approval: false
    }]
  ])("reads %j", (graph, want) => {
    const s = read(graph)
    expect(Either.isRight(s) && s.right.landing).toMatchObject(want)
  })

  it.each([
    [{ merge: "github" }, '`graph.merge` must be "none", "local", "pr" (in config.toml)'],
    [{ merge_style: "octopus" }, '`graph.merge_style` must be "merge", "squash", "rebase" (in config.toml)'],
    [{ land_approval: "yes" }, "`graph.land_approval` must be true or false (in config.toml)"],
    [{ land_wait: 0 }, "`graph.land_wait` must be a whole number of at least 1 (in config.toml)"],
    [{ remote: "a b" }, '`graph.remote` must be a git remote\'s name, e.g. "origin" (in config.toml)']
  ])("refuses %j with one clear error", (graph, message) => {
    const s = read(graph)
    expect(Either.isLeft(s) && s.left.message).toBe(message)
  })
})

describe("the merge approval's answer", () => {
  it.each([["merge", true], [" Merge ", true], ["hold", false], ["merge it", false], ["", false], [undefined, false]])("%j merges: %j", (a, want) => {
    expect(approves(a)).toBe(want)
  })

  it("the subject is the instruction's first line and the run's short id", () => {
    expect(subjectFor({ id: "20261203-160000-abcd", instruction: "\n  Fix the login\nand more", branch: "magi/x" })).toMatch(/^Fix the login \(magi .+\)$/)
  })
})
