import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { objectSpans, parseVerdict } from "../../src/daemon/ConductorVerdict.js"

const decisions = (reply: string) => {
  const v = parseVerdict(reply)
  if (Either.isLeft(v)) throw new Error(v.left)
  return v.right.decisions
}

describe("reading the conductor's verdict", () => {
  it("takes the last block that has the verdict's shape, past braces in the prose", () => {
    const reply = [
      "Task {a} should wait; the config {} is odd.",
      "```json",
      '{"decisions":[{"id":"t1","blocked_by":["t2"],"reason":"needs the schema"}]}',
      "```"
    ].join("\n")
    expect(decisions(reply)).toEqual([{ id: "t1", blocked_by: ["t2"], reason: "needs the schema" }])
  })

  it("prefers the later of two verdicts", () => {
    const reply = '```json\n{"decisions":[{"id":"old"}]}\n```\nOn reflection:\n```json\n{"decisions":[{"id":"new","recovery":"hold"}]}\n```'
    expect(decisions(reply).map((d) => d.id)).toEqual(["new"])
  })

  it("falls back to an earlier verdict when the last object is something else", () => {
    const reply = '{"decisions":[]}\nand an example of a task: {"id":"x"}'
    expect(decisions(reply)).toEqual([])
  })

  it("is not fooled by braces and quotes inside strings", () => {
    const reply = '{"decisions":[{"id":"t1","reason":"the \\"}\\" in {config}","question":"Split {it}?","choices":["yes","no"]}]}'
    expect(decisions(reply)[0]).toMatchObject({ reason: 'the "}" in {config}', question: "Split {it}?" })
  })

  it("takes a verdict whose fence was never closed", () => {
    expect(decisions('Reasoning.\n```json\n{"decisions":[{"id":"t9","recovery":"requeue"}]}')).toHaveLength(1)
  })

  it("says when there is no JSON at all, and differently when none has the shape", () => {
    expect(parseVerdict("I think we should wait.")).toEqual(Either.left("the conductor's reply contained no JSON object"))
    const wrong = parseVerdict('Here: {"id":"t1","recovery":"hold"} and {}')
    expect(Either.isLeft(wrong) && wrong.left).toContain("no JSON object of the right shape")
  })

  it("refuses a recovery it does not know", () => {
    expect(Either.isLeft(parseVerdict('{"decisions":[{"id":"t1","recovery":"delete"}]}'))).toBe(true)
  })

  it("finds only top-level spans, and none in an unbalanced tail", () => {
    expect(objectSpans('a {"x":{"y":1}} b {"z":2')).toEqual(['{"x":{"y":1}}'])
  })
})
