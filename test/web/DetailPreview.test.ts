import { describe, expect, it } from "vitest"
import { DETAIL_PREVIEW_CHARS, previewOf } from "../../src/web/DetailPreview.js"

describe("a listed detail's preview", () => {
  it.each([
    ["a short detail is whole", "Both are dependencies.", 10_000, "Both are dependencies."],
    ["a long one is its start", "abcdefgh", 5, "abcde"],
    ["never half of an emoji", "abcd😀efg", 5, "abcd"],
    ["an emoji that fits is kept", "abc😀efg", 5, "abc😀"]
  ])("%s", (_, text, max, preview) => {
    expect(previewOf(text, max)).toBe(preview)
  })

  it("is bounded by default", () => {
    expect(previewOf("x".repeat(300_000)).length).toBe(DETAIL_PREVIEW_CHARS)
  })
})
