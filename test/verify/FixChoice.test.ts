/** `magi fix -f`: which recorded findings the owner chose, as a table. */
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import * as V from "../../src/runs/Verification.js"
import { choose } from "../../src/verify/FixChoice.js"

const finding = (id: string): V.Finding => ({ id, seat: "review-1", severity: "minor", file: "a.ts", line: 1, title: id, body: "" })
const v: V.Verification = {
  ...V.fresh("impl"),
  rounds: [1, 2].map((n) => ({
    n,
    head: `h${n}`,
    tree: `t${n}`,
    revoted: false,
    e2e: [],
    reviews: [{
      seat: "review-1",
      agent: "a",
      status: "answered",
      verdict: "approve",
      findings: [finding(`R${n}-1-1`), finding(`R${n}-1-2`)],
      retries: 0,
      failure: ""
    }]
  }))
}

describe("choosing findings to fix", () => {
  it.each([
    ["one known id", ["R2-1-1"], ["R2-1-1"]],
    ["any case, spaces, each once, in the order asked", [" r1-1-2", "R2-1-1", "R1-1-2"], ["R1-1-2", "R2-1-1"]],
    ["an unknown id among known ones", ["R1-1-1", "R3-1-1"], "run ab12 has no finding R3-1-1; its findings are R1-1-1, R1-1-2, R2-1-1, R2-1-2"],
    ["nothing given", [], "run ab12 has no finding (none given); its findings are R1-1-1, R1-1-2, R2-1-1, R2-1-2"]
  ])("%s", (_what, ids, want) => {
    const got = choose("ab12", v, ids)
    if (typeof want === "string") expect(Either.isLeft(got) && got.left.message).toBe(want)
    else expect(Either.getOrThrow(got).map((f) => f.id)).toEqual(want)
  })

  it("says when a run found nothing", () => {
    const got = choose("ab12", V.fresh("impl"), ["R1-1-1"])
    expect(Either.isLeft(got) && got.left.message).toBe("run ab12 has no finding R1-1-1; its findings are none (nothing was found)")
  })
})
