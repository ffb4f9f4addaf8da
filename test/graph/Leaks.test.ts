/** `[blind] on_leak` (issue 29): which names a candidate's patch leaks, the judges' blanked view, and what each mode makes of it. */
import { describe, expect, it } from "vitest"
import * as Leaks from "../../src/graph/Leaks.js"

const names = [...Leaks.VENDOR_NAMES, "alpha", "x"]

describe("finding agent and vendor names", () => {
  it.each(
    [
      ["a plain patch", ["+const retries = 3"], []],
      ["a vendor, any case", ["+// Written by Claude"], ["claude"]],
      ["a roster id as a word", ["+alpha was here", " Added alpha.txt"], ["alpha"]],
      ["a name inside a longer word is not one", ["+cryptography alphabet opencodex"], []],
      ["several, each once, sorted", ["+OpenAI and Codex", "codex again", "gpt-4"], ["codex", "gpt", "openai"]],
      ["an id under 3 letters is never searched for", ["+x = x + 1"], []]
    ] as const
  )("%s", (_, texts, found) => {
    expect(Leaks.findLeaks(texts, names)).toEqual(found)
  })

  it("blanks every name found for the judges, whatever its case, and nothing else", () => {
    expect(Leaks.redact("+// Claude wrote this; alpha.txt holds it (alphabet)", ["claude", "alpha"])).toBe(
      "+// [redacted] wrote this; [redacted].txt holds it (alphabet)"
    )
    expect(Leaks.redact("unchanged", [])).toBe("unchanged")
  })
})

describe("what on_leak makes of a candidate", () => {
  it.each(
    [
      ["warn", [], "keep"],
      ["warn", ["claude"], "keep"],
      ["redact", [], "keep"],
      ["redact", ["claude"], "redact"],
      ["fail", [], "keep"],
      ["fail", ["claude", "codex"], "drop"]
    ] as const
  )("on_leak = %s with leaks %j: %s", (mode, leaks, tag) => {
    expect(Leaks.decide(mode, leaks)._tag).toBe(tag)
  })

  it("says why a candidate dropped for naming someone", () => {
    const d = Leaks.decide("fail", ["claude", "codex"])
    expect(d._tag === "drop" && d.why).toContain('its patch names claude, codex, and [blind] on_leak = "fail"')
  })
})
