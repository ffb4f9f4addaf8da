/** A judge's private vote and its deliberation pick (issue 29): one viable label, or a reason to send back. */
import { describe, expect, it } from "vitest"
import { ANSWER_MAX_CHARS } from "../../src/graph/JudgeAnswer.js"
import { parsePick, parseVote, voteNudge } from "../../src/graph/VoteAnswer.js"

const L = ["A", "B", "C"]
const block = (o: unknown) => "I weighed them again.\n\n```json\n" + JSON.stringify(o) + "\n```\n"

describe("parseVote", () => {
  it.each([
    { name: "prose", text: "B, clearly.", reason: "no fenced ```json block" },
    { name: "empty", text: " \n", reason: "the answer was empty" },
    { name: "not JSON", text: "```json\n{vote: B}\n```", reason: "not valid JSON" },
    { name: "not an object", text: block(["B"]), reason: "not an object" },
    { name: "no vote", text: block({ pick: "B" }), reason: "`vote` is not one label" },
    { name: "a list of labels", text: block({ vote: ["B", "A"] }), reason: "`vote` is not one label" },
    { name: "an unknown label", text: block({ vote: "D" }), reason: '"D", which is not a viable candidate (the labels are A, B, C)' },
    { name: "10 MB", text: "x".repeat(10 * 1024 * 1024), reason: `more than the ${ANSWER_MAX_CHARS} read` }
  ])("refuses $name", ({ text, reason }) => {
    const out = parseVote(text, L)
    expect(out._tag).toBe("refused")
    expect(out._tag === "refused" && out.reason).toContain(reason)
  })

  it.each([
    { name: "a label", text: block({ vote: "C" }), label: "C" },
    { name: "a label with spaces", text: block({ vote: " B " }), label: "B" },
    { name: "the last block, after quoting the format", text: '```json\n{"vote": "A"}\n```\n' + block({ vote: "B" }), label: "B" }
  ])("reads $name", ({ text, label }) => {
    expect(parseVote(text, L)).toEqual({ _tag: "ok", label })
  })

  it("reads a deliberation's pick, and takes an unreadable one as none", () => {
    expect(parsePick(block({ pick: "A" }), L)).toBe("A")
    expect(parsePick(block({ vote: "A" }), L)).toBeNull()
    expect(parsePick("I lean A.", L)).toBeNull()
  })

  it("nudges with the labels to choose from", () => {
    const n = voteNudge("the answer had no fenced ```json block", L)
    expect(n).toContain("naming one of A, B, C")
    expect(n).toContain('{"vote": "A"}')
  })
})
