/**
 * `magi answer` over a home whose settled questions are on month shelves:
 * the open list from the hot folder only, an archived question shown and
 * answered-for by id, and `--list --all --json` as one array of everything,
 * written as it is read.
 */
import { describe, expect, it } from "vitest"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as Q from "../../src/questions/Question.js"
import { archiveNow } from "../../src/questions/Archiver.js"
import { choiceQuestion, freeQuestion, ok } from "../support.js"
import { seed, withStore } from "../web/web-support.js"
import { owner } from "./cliSupport.js"

/** Settled in `month` (0-based) of 2026, read by the agent: history once the mover has run. */
const settled = (month: number, day: number, suffix: string, summary: string) => {
  const at = new Date(2026, month, day, 9)
  const id = `${Q.makeId(at, 0).slice(0, 15)}-${suffix}`
  return { ...ok(Q.answer({ ...choiceQuestion(id, at), summary }, { choice: "Redis" }, at)), answer_delivered: true }
}

describe("magi answer over archived history", () => {
  it("lists only the open questions, shows an archived one by id, and streams every question as one JSON array with --list --all --json", async () => {
    const me = owner()
    const june = [settled(5, 3, "aa01", "june one"), settled(5, 9, "aa02", "june two")]
    const july = [settled(6, 4, "bb01", "july one")]
    const open = { ...freeQuestion("20261101-100000-cc01", new Date(2026, 10, 1, 10)), summary: "still open" }
    await seed(me.home, [...june, ...july, open].map((q) => ({ q })))
    expect(await withStore(me.home, archiveNow)).toBe(3)
    expect(NodeFs.readdirSync(NodePath.join(me.questionsDir, "history")).sort()).toEqual(["2026-06", "2026-06.index.json", "2026-07", "2026-07.index.json"])

    const list = await me.run(["answer"])
    expect(list.code).toBe(0)
    expect(list.stdout).toContain("still open")
    expect(list.stdout).not.toContain("june")

    const shown = await me.run(["answer", june[0]!.id])
    expect(shown.code, shown.stderr).toBe(0)
    expect(shown.stdout).toContain("june one")
    expect(shown.stdout).toContain("answer: Redis")
    // The short id finds it on its shelf too.
    expect((await me.run(["answer", "aa02"])).stdout).toContain("june two")

    const all = await me.run(["answer", "--list", "--all", "--json"])
    expect(all.code, all.stderr).toBe(0)
    const parsed = JSON.parse(all.stdout) as Array<{ id: string }>
    expect(parsed.map((q) => q.id)).toEqual([open.id, july[0]!.id, june[1]!.id, june[0]!.id])
    // The same text a whole-array stringify gives: scripts that read it see no change.
    expect(all.stdout).toBe(JSON.stringify(parsed, null, 2) + "\n")

    const lines = await me.run(["answer", "--list", "--all"])
    expect(lines.stdout.match(/\[answered\]/g)).toHaveLength(3)
  }, 60_000)

  it("prints an empty JSON array for a home with no questions", async () => {
    const me = owner()
    const none = await me.run(["answer", "--list", "--all", "--json"])
    expect(none.code).toBe(0)
    expect(none.stdout).toBe("[]\n")
  }, 30_000)
})
