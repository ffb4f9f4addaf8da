import { describe, expect, it } from "vitest"
import { fileable, reviewDraft } from "../../src/queue/TaskFileReview.js"

const GOOD = `# Add retries to the fetcher

## Context
The fetcher in src/fetch.ts gives up on the first network error, and nightly imports fail about once a week.

## Change
Retry idempotent requests three times with exponential backoff.

## Constraints
Keep the public API.

## Completion criteria
- [ ] a request failing twice then succeeding returns the response
- [ ] a POST is never retried

## Out of scope
Circuit breaking.
`

const messages = (body: string) => reviewDraft(body).map((p) => p.message)

describe("the task-file review", () => {
  it("finds nothing wrong with a whole task file", () => {
    expect(reviewDraft(GOOD)).toEqual([])
    expect(fileable(reviewDraft(GOOD))).toBe(true)
  })

  it("says only that an empty draft is empty", () => {
    expect(messages("  \n\n ")).toEqual(["the draft is empty"])
  })

  it("wants a title: a first line of nothing but markers has none", () => {
    const body = GOOD.replace("# Add retries to the fetcher", "# ")
    expect(messages(body).some((m) => m.includes("no title"))).toBe(true)
    expect(fileable(reviewDraft(body))).toBe(false)
  })

  it.each([
    ["a checkbox in any list style", "Do it.\n* [x] done when green\n"],
    ["a checked box", "Do it.\n+ [X] done\n"],
    ["a decorated criteria heading", "Do it.\n**Acceptance criteria:** it works\n"],
    ["a Japanese heading", "Do it.\n## 完了条件\nテストが通る\n"]
  ])("accepts %s as completion criteria", (_, tail) => {
    const body = `# Title\n\n${tail}${"x".repeat(300)}\n`
    expect(reviewDraft(body)).toEqual([])
  })

  it("does not take prose that starts with a criteria word for a heading", () => {
    const body = `# Title\n\nacceptance of the new format is what we want\n${"x".repeat(300)}\n`
    expect(messages(body).some((m) => m.includes("no completion criteria"))).toBe(true)
  })

  it("warns of a short draft, and that warning alone still files", () => {
    const body = "# Fix it\n- [ ] green\n"
    const problems = reviewDraft(body)
    expect(problems).toHaveLength(1)
    expect(problems[0]!.soft).toBe(true)
    expect(fileable(problems)).toBe(true)
  })

  it("lists every problem at once", () => {
    expect(reviewDraft("#\nsomething").map((p) => p.soft)).toEqual([false, false, true])
  })
})
