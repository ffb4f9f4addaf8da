/**
 * `magi ask --settle` as a deputy runs it: the built CLI, a real home on
 * disk, the seat told by MAGI_SEAT as magi tells every agent it starts.
 */
import { describe, expect, it } from "vitest"
import { Either } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as Q from "../../src/questions/Question.js"
import { magi } from "../runSupport.js"
import { tempDirSync } from "../support.js"

describe("magi ask --settle", () => {
  it("settles a conductor question from its own deputy seat with the owner's quoted words, and refuses a forgery or another seat, changing nothing", () => {
    const dir = tempDirSync()
    const home = NodePath.join(dir, "home")
    const at = new Date("2026-01-01T00:00:00Z")
    const asked = Q.make({
      id: "20260101-000000-ab12",
      run: "t",
      node: "conduct",
      seat: "conduct",
      summary: "Which database?",
      detail: "",
      choices: ["Postgres", "SQLite"],
      now: at
    })
    const q = Either.getOrThrow(Q.say(asked, "sqlite is fine for now", at))
    const file = NodePath.join(home, "questions", `${q.id}.json`)
    NodeFs.mkdirSync(NodePath.dirname(file), { recursive: true })
    NodeFs.writeFileSync(file, Q.encode(q))
    const env = (seat: string) => ({ MAGI_HOME: home, MAGI_RUN: "", MAGI_NODE: "deputy", MAGI_SEAT: seat })
    const before = NodeFs.readFileSync(file, "utf8")

    const forged = magi(dir, env("deputy-ab12"), "ask", "--settle", "ab12", "--choice", "SQLite", "--quote", "use SQLite")
    expect(forged.status).toBe(1)
    expect(forged.stderr).toContain('the owner never said "use SQLite"')
    const other = magi(dir, env("deputy-cd34"), "ask", "--settle", "ab12", "--choice", "SQLite", "--quote", "sqlite is fine")
    expect(other.status).toBe(1)
    expect(other.stderr).toContain("only seat deputy-ab12 may settle question ab12")
    expect(NodeFs.readFileSync(file, "utf8")).toBe(before)

    const ok = magi(dir, env("deputy-ab12"), "ask", "--settle", "ab12", "--choice", "SQLite", "--quote", "sqlite is fine")
    expect(ok.stderr).toBe("")
    expect(ok.status).toBe(0)
    expect(ok.stdout).toBe("settled ab12: SQLite\n")
    expect(JSON.parse(NodeFs.readFileSync(file, "utf8"))).toMatchObject({ status: "answered", answer: { choice: "SQLite" } })
  }, 60_000)
})
