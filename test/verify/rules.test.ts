/** The verification's pure rules as tables: reading a review, numbering findings, a round's outcome, the sync's and the gate's. */
import { describe, expect, it } from "vitest"
import type { Check } from "../../src/runs/Competition.js"
import type { Finding, Review, Round } from "../../src/runs/Verification.js"
import { afterGate } from "../../src/verify/GateRules.js"
import { findingId, parseReview } from "../../src/verify/ReviewAnswer.js"
import { afterFix, afterRound, split } from "../../src/verify/Rounds.js"
import { outcome } from "../../src/verify/SyncRules.js"

const block = (o: unknown) => "Here:\n\n```json\n" + JSON.stringify(o) + "\n```\n"
const files = new Set(["src/a.ts"])
const at = { round: 2, seat: "review-1" }

describe("a reviewer's answer", () => {
  it.each([
    ["prose", "Looks fine to me.", "no fenced ```json block"],
    ["an unknown verdict", block({ verdict: "lgtm", findings: [] }), "`verdict` must be one of"],
    ["a severity outside the four", block({ verdict: "reject", findings: [{ severity: "critical", file: "src/a.ts", title: "x" }] }), 'severity "critical"'],
    [
      "a finding on a missing file",
      block({ verdict: "reject", findings: [{ severity: "major", file: "src/gone.ts", title: "x" }] }),
      "src/gone.ts, which is not a file"
    ],
    ["a 5 MB block", block({ verdict: "approve", findings: [{ severity: "nit", file: "src/a.ts", title: "x".repeat(5 * 1024 * 1024) }] }), "more than the"],
    ["a finding with no title", block({ verdict: "reject", findings: [{ severity: "minor", file: "src/a.ts" }] }), "has no `title`"]
  ])("refuses %s with the reason", (_what, text, reason) => {
    const got = parseReview(text, at, (f) => files.has(f))
    expect(got._tag).toBe("refused")
    expect(got._tag === "refused" && got.reason).toContain(reason)
  })

  it("numbers findings R<round>-<seat>-<n>, ignoring the agent's own ids, from where the seat's findings left off", () => {
    const got = parseReview(
      block({
        verdict: "approve_with_findings",
        findings: [{ id: "F9", severity: "minor", file: "./src/a.ts", line: 3, title: "t", body: "b" }, { severity: "nit", title: "u" }]
      }),
      { ...at, first: 3 },
      (f) => files.has(f)
    )
    expect(got).toMatchObject({ _tag: "ok", verdict: "approve_with_findings" })
    expect(got._tag === "ok" && got.findings.map((f) => [f.id, f.file, f.line])).toEqual([["R2-1-3", "src/a.ts", 3], ["R2-1-4", "", null]])
    expect(findingId(1, "review-2", 3)).toBe("R1-2-3")
  })
})

const finding = (severity: Finding["severity"], reply?: Finding["reply"]): Finding => ({
  id: "R1-1-1",
  seat: "review-1",
  severity,
  file: "",
  line: null,
  title: "t",
  body: "",
  ...(reply === undefined ? {} : { reply })
})
const review = (verdict: Review["verdict"], findings: ReadonlyArray<Finding> = [], status: Review["status"] = "answered"): Review => ({
  seat: "review-1",
  agent: "a",
  status,
  verdict,
  findings,
  retries: 0,
  failure: status === "unanswered" ? "prose" : ""
})
const check = (exit: number | null, tail = "out", timed_out = false): Check => ({ command: "c", exit, duration_ms: 1, timed_out, tail })
const round = (n: number, reviews: ReadonlyArray<Review>, e2e: ReadonlyArray<Check> = [], tree = "t1"): Round => ({
  n,
  head: `h${n}`,
  tree,
  reviews,
  revoted: false,
  e2e
})
const rules = { reviewRounds: 4, incompleteReview: "block" as const }

describe("a review round", () => {
  it.each([
    ["approvals and nits are clean", [round(1, [review("approve", [finding("nit"), finding("minor")])])], "clean"],
    ["a major finding goes to the fixer", [round(1, [review("approve", [finding("major")])])], "fix"],
    ["a blocker goes to the fixer", [round(1, [review("reject", [finding("blocker")])])], "fix"],
    ["a red e2e goes to the fixer", [round(1, [review("approve")], [check(1)])], "fix"],
    ["an unanswered reviewer blocks by default", [round(1, [review(null, [], "unanswered")])], "fix"],
    ["past review_rounds it is blocked", [round(4, [review("reject", [finding("major")])])], "blocked"]
  ])("%s", (_what, rounds, tag) => {
    expect(afterRound(rounds, rules)._tag).toBe(tag)
  })

  it("lets an unanswered reviewer through under incomplete_review = allow", () => {
    expect(afterRound([round(1, [review(null, [], "unanswered")])], { ...rules, incompleteReview: "allow" })._tag).toBe("clean")
  })

  it.each(
    [
      [["approve", "reject"], true],
      [["approve", "approve_with_findings"], false],
      [["reject", "reject"], false]
    ] as const
  )("%j is split: %s", (verdicts, expected) => {
    expect(split(round(1, verdicts.map((v) => review(v))))).toBe(expected)
  })

  it.each([
    ["no commit", [round(1, [review("reject", [finding("major")])])], { before: "h1", after: "h1", tree: "t1" }, "blocked"],
    ["a second round with no tree change", [round(1, [], [], "t1"), round(2, [review("reject", [finding("major")])], [], "t1")], {
      before: "h2",
      after: "h3",
      tree: "t1"
    }, "blocked"],
    ["a commit that changed the tree", [round(1, [review("reject", [finding("major")])])], { before: "h1", after: "h2", tree: "t2" }, "review"]
  ])("after the fixer, %s", (_what, rounds, fix, tag) => {
    expect(afterFix(rounds, fix, rules)._tag).toBe(tag)
  })
})

describe("the sync", () => {
  const seen = { cherry: ["+ abc"], treeEqualsBase: false, conflicts: [] as ReadonlyArray<string>, baseMoved: false, attempts: 1 }
  it.each([
    ["a rebased branch", seen, "synced"],
    ["every patch already in the base", { ...seen, cherry: ["- abc", "- def"] }, "already_in_base"],
    ["a tree equal to the base's", { ...seen, treeEqualsBase: true }, "already_in_base"],
    ["a head the base already contains (merged)", { ...seen, cherry: [], headInBase: true }, "already_in_base"],
    ["a conflict left", { ...seen, conflicts: ["a.txt"] }, "conflicted"],
    ["a base that moved", { ...seen, baseMoved: true }, "again"],
    ["a base that moved a fourth time", { ...seen, baseMoved: true, attempts: 4 }, "moving"]
  ])("%s", (_what, o, tag) => {
    expect(outcome(o)._tag).toBe(tag)
  })
})

describe("the gate", () => {
  it.each([
    ["all green", ["a", "b"], [check(0), check(0)], 0, "passed"],
    ["nothing configured is never passed", [], [], 0, "none"],
    ["a failure with output gets a fix round", ["a"], [check(1, "boom")], 0, "fix"],
    ["a failure past the rounds blocks", ["a"], [check(1, "boom")], 2, "blocked"],
    ["a timeout gets no fix round", ["a"], [check(null, "(killed)", true)], 0, "blocked"],
    ["a failure that printed nothing blocks", ["a"], [check(1, "")], 0, "blocked"],
    ["a command that never ran is not passed", ["a", "b"], [check(0)], 0, "blocked"]
  ])("%s", (_what, commands, results, used, tag) => {
    expect(afterGate(commands, results, used, 2)._tag).toBe(tag)
  })
})
