/** Follow-ups of a ready run's open findings, as a table. */
import { describe, expect, it } from "vitest"
import * as V from "../../src/runs/Verification.js"
import { followUps } from "../../src/verify/FollowUps.js"

const finding = (id: string, severity: V.Severity, title: string, reply?: V.Reply): V.Finding => ({
  id,
  seat: "review-1",
  severity,
  file: "a.ts",
  line: 3,
  title,
  body: "the body",
  ...(reply === undefined ? {} : { reply })
})
const ready = (findings: ReadonlyArray<V.Finding>, step: V.VerifyStep = "ready"): V.Verification => ({
  ...V.fresh("impl"),
  step,
  rounds: [{
    n: 1,
    head: "h",
    tree: "t",
    revoted: false,
    e2e: [],
    reviews: [{ seat: "review-1", agent: "a", status: "answered", verdict: "approve_with_findings", findings, retries: 0, failure: "" }]
  }]
})
const none = { openTitles: [], filed: [], generation: 0 }
const run = { short: "ab12", branch: "magi/ab12" }
const fixed: V.Reply = { kind: "fixed", commit: "c", argument: "" }

describe("follow-ups of a ready run", () => {
  it.each([
    ["an open minor and an open nit", ready([finding("R1-1-1", "minor", "name it"), finding("R1-1-2", "nit", "a typo")]), none, [
      "[review@ab12] name it",
      "[review@ab12] a typo"
    ]],
    ["a blocking finding (it could not be open on a ready run)", ready([finding("R1-1-1", "major", "broken")]), none, []],
    ["a finding the fixer answered", ready([finding("R1-1-1", "minor", "name it", fixed)]), none, []],
    ["a finding already filed (a second pass, after a kill)", ready([finding("R1-1-1", "minor", "name it"), finding("R1-1-2", "nit", "b")]), {
      ...none,
      filed: ["R1-1-1"]
    }, ["[review@ab12] b"]],
    ["a title an open task already has, in any case", ready([finding("R1-1-1", "minor", "Name  it")]), { ...none, openTitles: ["[review@AB12] name it"] }, []],
    ["two findings with one title", ready([finding("R1-1-1", "minor", "same"), finding("R1-1-2", "nit", "same")]), none, ["[review@ab12] same"]],
    ["a follow-up's run (generation 1)", ready([finding("R1-1-1", "minor", "x")]), { ...none, generation: 1 }, ["[review@ab12] x"]],
    ["a follow-up of a follow-up (generation 2)", ready([finding("R1-1-1", "minor", "x")]), { ...none, generation: 2 }, []],
    ["a run that is not ready", ready([finding("R1-1-1", "minor", "x")], "blocked"), none, []]
  ])("%s", (_what, v, known, titles) => {
    expect(followUps(run, v, known).map((f) => f.title)).toEqual(titles)
  })

  it("says where the finding came from in the task's instruction", () => {
    const [f] = followUps(run, ready([finding("R1-1-1", "minor", "name it")]), none)
    expect(f).toMatchObject({ finding: "R1-1-1" })
    expect(f!.instruction).toContain("minor finding open (R1-1-1, at a.ts:3)")
    expect(f!.instruction).toContain("the body")
  })
})
