/**
 * A home written before the month shelves (an upgrade): the first command
 * that lists does the move, so neither it again nor any listing after reads
 * the settled files; no `magi serve` or `magi web` has to run first.
 */
import { describe, expect, it } from "vitest"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as Q from "../../src/questions/Question.js"
import { choiceQuestion, freeQuestion, ok } from "../support.js"
import { sampleRun } from "../runSupport.js"
import { seed, seedRun } from "../web/web-support.js"
import { owner } from "./cliSupport.js"

const settled = (day: number, suffix: string) => {
  const at = new Date(2026, 5, day, 9)
  const id = `${Q.makeId(at, 0).slice(0, 15)}-${suffix}`
  return { ...ok(Q.answer({ ...choiceQuestion(id, at), summary: `settled ${suffix}` }, { choice: "Redis" }, at)), answer_delivered: true }
}

describe("a home written before the month shelves", () => {
  it("magi answer --list moves the settled questions to their shelves first, says so once, and lists the open ones", async () => {
    const me = owner()
    const old = [settled(3, "aa01"), settled(4, "aa02"), settled(5, "aa03")]
    const open = { ...freeQuestion("20261101-100000-cc01", new Date(2026, 10, 1, 10)), summary: "still open" }
    await seed(me.home, [...old, open].map((q) => ({ q })))
    expect(NodeFs.existsSync(NodePath.join(me.questionsDir, "history"))).toBe(false)

    const first = await me.run(["answer", "--list"])
    expect(first.code, first.stderr).toBe(0)
    expect(first.stdout).toContain("still open")
    expect(first.stderr).toContain("moved 3 settled questions to the month shelves")
    // The hot folder holds only the open one now: later listings read nothing settled.
    expect(NodeFs.readdirSync(me.questionsDir).filter((n) => n.endsWith(".json"))).toEqual([`${open.id}.json`])
    expect(NodeFs.readdirSync(NodePath.join(me.questionsDir, "history", "2026-06")).sort()).toEqual(old.map((q) => `${q.id}.json`).sort())

    const again = await me.run(["answer", "--list"])
    expect(again.stdout).toContain("still open")
    expect(again.stderr).not.toContain("moved")
    // Still found by id on its shelf.
    expect((await me.run(["answer", old[1]!.id])).stdout).toContain("settled aa02")
  }, 60_000)

  it("magi answer --list finishes a first move killed half-way, and indexes the month it had begun", async () => {
    const me = owner()
    const moved = [settled(3, "ae01"), settled(4, "ae02")]
    const left = [settled(5, "ae03"), settled(6, "ae04"), settled(7, "ae05")]
    const open = { ...freeQuestion("20261101-100000-ce01", new Date(2026, 10, 1, 10)), summary: "still open" }
    await seed(me.home, [...moved, ...left, open].map((q) => ({ q })))
    // What a first move killed half-way leaves: some on their shelf, the month
    // not indexed yet (that comes at the move's end), the rest still hot.
    const shelf = NodePath.join(me.questionsDir, "history", "2026-06")
    NodeFs.mkdirSync(shelf, { recursive: true })
    for (const q of moved) NodeFs.renameSync(NodePath.join(me.questionsDir, `${q.id}.json`), NodePath.join(shelf, `${q.id}.json`))

    const listed = await me.run(["answer", "--list"])
    expect(listed.code, listed.stderr).toBe(0)
    expect(listed.stdout).toContain("still open")
    expect(listed.stderr).toContain("moved 3 settled questions to the month shelves")
    expect(NodeFs.readdirSync(me.questionsDir).filter((n) => n.endsWith(".json"))).toEqual([`${open.id}.json`])
    // The month is indexed whole, the questions moved before the kill with the rest.
    const index = JSON.parse(NodeFs.readFileSync(NodePath.join(me.questionsDir, "history", "2026-06.index.json"), "utf8")) as Record<string, unknown>
    expect(Object.keys(index).sort()).toEqual([...moved, ...left].map((q) => q.id).sort())
    // Once finished, the next listing moves nothing.
    expect((await me.run(["answer", "--list"])).stderr).not.toContain("moved")
  }, 60_000)

  it("magi runs moves the finished runs' records to their shelves, keeps their folders, and lists them still", async () => {
    const me = owner()
    const done = sampleRun("20260603-100000-b001", { status: "done", instruction: "an old finished run" })
    const running = sampleRun("20261101-100000-b002", { status: "running", instruction: "a live run" })
    seedRun(me.home, done, { "stdout.txt": "kept\n" })
    seedRun(me.home, running)
    const listed = await me.run(["runs"])
    expect(listed.code, listed.stderr).toBe(0)
    expect(listed.stderr).toContain("moved 1 finished runs to the month shelves")
    expect(listed.stdout).toContain("a live run")
    expect(listed.stdout).toContain("an old finished run")
    const runs = NodePath.join(me.home, "runs")
    expect(NodeFs.existsSync(NodePath.join(runs, "history", "2026-06", `${done.id}.json`))).toBe(true)
    expect(NodeFs.existsSync(NodePath.join(runs, done.id, "run.json"))).toBe(false)
    expect(NodeFs.readFileSync(NodePath.join(runs, done.id, "artifacts", "stdout.txt"), "utf8")).toBe("kept\n")
    expect(NodeFs.existsSync(NodePath.join(runs, running.id, "run.json"))).toBe(true)
    const shown = await me.run(["show", done.id, "--json"])
    expect(JSON.parse(shown.stdout).instruction).toBe("an old finished run")
  }, 60_000)

  it("magi serve moves the settled questions to their shelves before its loop starts, and says so before its banner", async () => {
    const me = owner()
    const old = [settled(3, "ab01"), settled(4, "ab02")]
    const open = { ...freeQuestion("20261101-100000-cd01", new Date(2026, 10, 1, 10)), summary: "still open" }
    await seed(me.home, [...old, open].map((q) => ({ q })))
    const serve = me.start(["serve"])
    try {
      await me.until(() => serve.stderr().includes("waiting on the questions"), "magi serve's banner", 60_000)
      const said = serve.stderr()
      expect(said).toContain("moved 2 settled questions to the month shelves")
      expect(said.indexOf("moved 2 settled questions")).toBeLessThan(said.indexOf("waiting on the questions"))
      // By the time its waiter looks, the hot folder holds only what is live.
      expect(NodeFs.readdirSync(me.questionsDir).filter((n) => n.endsWith(".json"))).toEqual([`${open.id}.json`])
    } finally {
      serve.child.kill("SIGTERM")
      await serve.done
    }
  }, 90_000)
})
