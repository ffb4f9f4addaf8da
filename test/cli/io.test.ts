import { describe, expect, it } from "vitest"
import { fitWidth } from "../../src/cli/io.js"

describe("a status line redrawn in place", () => {
  const texts = ["waiting for the owner on ab12: 3s so far", "waiting on ab12: 3s", "ab12: 3s"]
  it("is said in full when the terminal is wide enough, or its width is unknown", () => {
    expect(fitWidth(texts, 120)).toBe(texts[0])
    expect(fitWidth(texts, undefined)).toBe(texts[0])
  })
  it("falls back to a shorter wording that fits, keeping the last column free", () => {
    expect(fitWidth(texts, 20)).toBe("waiting on ab12: 3s")
    expect(fitWidth(texts, 19)).toBe("ab12: 3s")
  })
  it("is cut to fit when no wording does", () => {
    expect(fitWidth(texts, 6)).toBe("ab12…")
    expect(fitWidth(texts, 6).length).toBeLessThan(6)
  })
})
