/**
 * A tool approval is the owner's alone: a deputy's or the conductor's shell
 * (any process magi started in a seat, told by MAGI_SEAT) cannot decide one
 * with `magi answer`, nor with `magi ask --settle`; the owner's terminal can.
 * The built CLI on a real home on disk, as an agent would run it.
 */
import { describe, expect, it } from "vitest"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as Q from "../../src/questions/Question.js"
import { magi } from "../runSupport.js"
import { tempDirSync } from "../support.js"

describe("a tool approval is decided by the owner only", () => {
  it("refuses Allow from a deputy's and the conductor's seat, changing nothing, and takes it from the owner's terminal", () => {
    const dir = tempDirSync()
    const home = NodePath.join(dir, "home")
    const at = new Date("2026-01-01T00:00:00Z")
    // The conductor seat's own tool call, as magi mcp's approve tool files it.
    const q: Q.Question = {
      ...Q.make({
        id: "20260101-000000-ab12",
        run: "t",
        node: "conduct",
        seat: "conduct",
        summary: "Bash: `rm -rf build/`",
        detail: "",
        choices: ["Allow", "Deny"],
        now: at
      }),
      approval: { tool: "Bash", digest: "0123456789abcdef", rule: "Bash(rm -rf build/)" }
    }
    const file = NodePath.join(home, "questions", `${q.id}.json`)
    NodeFs.mkdirSync(NodePath.dirname(file), { recursive: true })
    NodeFs.writeFileSync(file, Q.encode(q))
    const before = NodeFs.readFileSync(file, "utf8")
    const inSeat = (seat: string) => ({ MAGI_HOME: home, MAGI_RUN: "t", MAGI_NODE: seat === "conduct" ? "conduct" : "deputy", MAGI_SEAT: seat })

    for (const seat of ["deputy-ab12", "conduct"]) {
      const r = magi(dir, inSeat(seat), "answer", "ab12", "--reply", "Allow")
      expect(r.status, seat).toBe(1)
      expect(r.stderr).toBe(`magi: question ab12 is a tool approval; only the owner decides one, never an agent (this process runs in seat ${seat})\n`)
    }
    const settled = magi(dir, inSeat("deputy-ab12"), "ask", "--settle", "ab12", "--choice", "Allow", "--quote", "Allow")
    expect(settled.status).toBe(1)
    expect(settled.stderr).toContain("is a tool approval; only the owner decides one")
    expect(NodeFs.readFileSync(file, "utf8")).toBe(before)

    const owner = magi(dir, { MAGI_HOME: home, MAGI_SEAT: "" }, "answer", "ab12", "--reply", "Allow")
    expect(owner.stderr).toBe("")
    expect(owner.status).toBe(0)
    expect(JSON.parse(NodeFs.readFileSync(file, "utf8"))).toMatchObject({ status: "answered", answer: { choice: "Allow" } })
  }, 60_000)
})
