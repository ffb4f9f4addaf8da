/** A judge's answer (issue 29): every bad answer refused with its reason, never a winner it did not name. */
import { describe, expect, it } from "vitest"
import { ANSWER_MAX_CHARS, nudge, parseRanking } from "../../src/graph/JudgeAnswer.js"

const L = ["A", "B", "C"]
const block = (o: unknown) => "Here is my answer.\n\n```json\n" + JSON.stringify(o) + "\n```\n"

describe("parseRanking", () => {
  it.each([
    { name: "prose", text: "B is clearly the best.", reason: "no fenced ```json block" },
    { name: "empty", text: "  \n", reason: "the answer was empty" },
    { name: "not JSON", text: "```json\n{ranking: B}\n```", reason: "not valid JSON" },
    { name: "not an object", text: block(["B", "A", "C"]), reason: "not an object" },
    { name: "an unknown label", text: block({ ranking: ["B", "A", "D"] }), reason: "names D, which is not a candidate" },
    { name: "a repeated label", text: block({ ranking: ["B", "B", "A", "C"] }), reason: "names B more than once" },
    { name: "a missing label", text: block({ ranking: ["B", "A"] }), reason: "leaves out C" },
    { name: "no ranking", text: block({ reasons: {} }), reason: "`ranking` is not a list of labels" },
    { name: "10 MB", text: "x".repeat(10 * 1024 * 1024), reason: `more than the ${ANSWER_MAX_CHARS} read` }
  ])("refuses $name", ({ text, reason }) => {
    const out = parseRanking(text, L)
    expect(out._tag).toBe("refused")
    expect(out._tag === "refused" && out.reason).toContain(reason)
  })

  it("reads the last json block: the ranking, the reasons of known labels, the confidence clamped", () => {
    const text = 'The format is:\n```json\n{"ranking": ["A"]}\n```\n' + block({ ranking: [" C", "A", "B"], reasons: { A: "ok", Z: "?", B: 3 }, confidence: 4 })
    expect(parseRanking(text, L)).toEqual({ _tag: "ok", value: { ranking: ["C", "A", "B"], reasons: { A: "ok" }, confidence: 1 } })
    expect(parseRanking(block({ ranking: ["A", "B", "C"] }), L)).toEqual({ _tag: "ok", value: { ranking: ["A", "B", "C"], reasons: {}, confidence: null } })
  })

  it("nudges with the labels to rank", () => {
    expect(nudge("`ranking` leaves out C: rank every candidate", L)).toContain('"ranking": ["A", "B", "C"]')
  })
})
