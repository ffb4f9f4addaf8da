import { describe, expect, it } from "vitest"
import { localRefusal } from "../../src/land/LandDriver.js"
import { DIFF_MAX_CHARS, numstatRows, render } from "../../src/land/LandPanel.js"

const base = {
  run: "r",
  instruction: "Fix <b>it</b>",
  branch: "magi/ab12",
  base: "trunk",
  subject: "Fix it (magi ab12)",
  style: "squash",
  numstat: "3\t1\tsrc/a.ts\n-\t-\tlogo.png",
  diff: "diff --git a/src/a.ts b/src/a.ts\n-old\n+new <img src=x onerror=alert(1)>",
  commits: "abc1234 Fix it",
  checks: ["npm test: passed"],
  findings: []
}

describe("the merge approval's panel", () => {
  it("reads numstat as rows, binary files named as such", () => {
    expect(numstatRows(base.numstat)).toEqual([
      { added: "3", deleted: "1", path: "src/a.ts" },
      { added: "binary", deleted: "binary", path: "logo.png" }
    ])
  })

  it("holds the table, the gutter diff, the checks, the commits and the exact subject, all escaped", () => {
    const html = render(base)
    expect(html).toContain("<td>3</td><td>1</td><td>src/a.ts</td>")
    expect(html).toContain("\n-old\n+new &lt;img src=x onerror=alert(1)&gt;")
    expect(html).toContain("<li>npm test: passed</li>")
    expect(html).toContain("abc1234 Fix it")
    expect(html).toContain("<pre>Fix it (magi ab12)</pre>")
    expect(html).toContain("Fix &lt;b&gt;it&lt;/b&gt;")
    expect(html).not.toContain("<img")
  })

  it("says how much of a long diff it left out", () => {
    const html = render({ ...base, diff: "+".repeat(DIFF_MAX_CHARS + 10) })
    expect(html).toContain("The diff goes on for 10 more characters")
  })
})

describe("a local merge's preconditions", () => {
  it.each([
    [{ checkedOut: "trunk", base: "trunk", status: "" }, null],
    [{ checkedOut: "other", base: "trunk", status: "" }, /base branch trunk is not checked out .*other is/],
    [{ checkedOut: "", base: "trunk", status: "" }, /a detached HEAD is/],
    [{ checkedOut: "trunk", base: "trunk", status: " M a.ts" }, /uncommitted changes on trunk/]
  ])("%j", (input, want) => {
    const got = localRefusal(input)
    if (want === null) expect(got).toBeNull()
    else expect(got).toMatch(want)
  })
})
