/** The diff's pure parts: git's numstat read into files, and a line cut to its bound. */
import { Effect, Stream } from "effect"
import { describe, expect, it } from "vitest"
import { boundedLine, boundedLines, LINE_MAX_CHARS, parseNumstat } from "../../src/runs/RunDiff.js"

describe("parseNumstat", () => {
  it.each([
    ["a text file", "3\t1\tsrc/a.ts\0", [{ path: "src/a.ts", from: null, added: 3, deleted: 1, binary: false }]],
    ["a binary file", "-\t-\tlogo.png\0", [{ path: "logo.png", from: null, added: null, deleted: null, binary: true }]],
    ["a rename", "0\t0\t\0old name.ts\0new\tname.ts\0", [{ path: "new\tname.ts", from: "old name.ts", added: 0, deleted: 0, binary: false }]],
    ["a path with a newline", "1\t0\tweird\nname\0", [{ path: "weird\nname", from: null, added: 1, deleted: 0, binary: false }]],
    ["nothing", "", []]
  ])("reads %s", (_what, z, files) => {
    expect(parseNumstat(z)).toEqual(files)
  })

  it("reads a rename between two files as three files in order", () => {
    expect(parseNumstat("1\t2\ta\0" + "0\t0\t\0b\0c\0" + "4\t0\td\0").map((f) => f.path)).toEqual(["a", "c", "d"])
  })
})

describe("boundedLine", () => {
  it("keeps a line up to the bound and cuts a longer one, saying how much is left out", () => {
    expect(boundedLine("x".repeat(LINE_MAX_CHARS))).toBe("x".repeat(LINE_MAX_CHARS))
    const cut = boundedLine("y".repeat(50 * 1024 * 1024))
    expect(cut.length).toBeLessThan(LINE_MAX_CHARS + 60)
    expect(cut.endsWith(`[… ${50 * 1024 * 1024 - LINE_MAX_CHARS} more characters]`)).toBe(true)
  })
})

describe("boundedLines", () => {
  const split = (chunks: ReadonlyArray<string>) => Effect.runSync(Stream.runCollect(boundedLines(Stream.fromIterable(chunks)))).pipe(Array.from)

  it.each([
    ["lines across chunks", ["a\nb", "c\nd\n"], ["a", "bc", "d"]],
    ["a last line with no newline", ["a\nb"], ["a", "b"]],
    ["empty lines", ["\n\n"], ["", ""]],
    ["CRLF", ["a\r\nb\r\n"], ["a", "b"]],
    ["nothing", [], []]
  ])("splits %s", (_what, chunks, lines) => {
    expect(split(chunks)).toEqual(lines)
  })

  it("cuts a 50 MB line as it reads it, holding only its first characters", () => {
    const chunk = "z".repeat(1024 * 1024)
    const lines = split([...Array.from({ length: 50 }, () => chunk), "\nnext\n"])
    expect(lines).toEqual([`${"z".repeat(LINE_MAX_CHARS)} [… ${50 * 1024 * 1024 - LINE_MAX_CHARS} more characters]`, "next"])
  })
})
