import { describe, expect, it } from "vitest"
import { Either } from "effect"
import * as D from "../../src/daemon/ConductorDecide.js"
import * as T from "../../src/queue/Task.js"

const at = new Date("2026-01-01T00:00:00Z")
const mk = (id: string, over: Partial<T.Task> = {}): T.Task => ({ ...T.make({ id, instruction: `Do ${id}\nwith care`, repo: "/repo", now: at }), ...over })
const ok = (r: Either.Either<T.Task, T.TaskRefused>) => Either.getOrThrow(r)

const ctx = (over: Partial<D.DecideContext> = {}): D.DecideContext => ({
  all: [],
  exists: () => true,
  stalled: false,
  survivingBranch: null,
  ...over
})

describe("the conductor's prompt", () => {
  it("shows a task with its attempts, last error, hold, blockers, answers and instruction", () => {
    const t = mk("t1", {
      status: "held",
      attempts: 2,
      last_error: "tests fail",
      hold_source: "machine",
      hold_reason: "failed 2 of 2 attempts",
      blocked_by: ["q9"],
      answers: [{ question: "q1", answer: "Use Redis" }]
    })
    const block = D.taskBlock(t, 2, { run: "r1", status: "failed", branch: "magi/abcd", head: "deadbeef" })
    expect(block.split("\n")).toEqual([
      "### t1",
      "title: Do t1",
      "status: held",
      "priority: 0",
      "repo: /repo",
      "attempts: 2/2",
      "last error: tests fail",
      "hold: machine — failed 2 of 2 attempts",
      "blocked_by: q9",
      'answered "q1": Use Redis',
      "last run: r1 (failed)",
      "surviving branch: magi/abcd at deadbeef (commits ahead of its base)",
      "instruction:",
      "    Do t1",
      "    with care"
    ])
  })

  it("says when no branch survived a finished task's run, and shows a queued one without an outcome", () => {
    expect(D.taskBlock(mk("t1", { status: "failed" }), 2, { run: "r1", status: "failed", branch: null, head: null })).toContain(
      "surviving branch: none survived"
    )
    expect(D.taskBlock(mk("t2"), 3)).not.toContain("last run")
  })

  it("puts the rules before the three lists, and names tasks whose question is still open", () => {
    const p = D.conductorPrompt(
      { runnable: [mk("a")], stalled: [], finished: [mk("b", { status: "failed" })] },
      2,
      new Map(),
      new Set(["b"])
    )
    expect(p).toContain("never run `magi ask`")
    expect(p).toContain("You cannot change priority")
    expect(p).toContain("A manual hold is the owner's")
    expect(p).toContain("Tasks with a question open now: b.")
    expect(p).toContain("exactly one fenced json block, last")
    expect(p.indexOf("## Runnable tasks")).toBeLessThan(p.indexOf("### a"))
    expect(p).toContain("## Stalled tasks\n\n(none)")
    expect(p.indexOf("## Finished tasks")).toBeLessThan(p.indexOf("### b"))
  })
})

describe("when the conductor takes a turn", () => {
  it("takes one for a new snapshot, never twice for the same one, and again when the revision or the ids change", () => {
    const s1 = D.snapshotOf(5, [mk("a")], [mk("b")])
    expect(D.worthALook(undefined, s1)).toBe(true)
    expect(D.worthALook(s1, D.snapshotOf(5, [], [mk("b"), mk("a")]))).toBe(false)
    expect(D.worthALook(s1, D.snapshotOf(6, [mk("a")], [mk("b")]))).toBe(true)
    expect(D.worthALook(s1, D.snapshotOf(5, [mk("a")], []))).toBe(true)
  })

  it("sorts queued tasks as runnable, failed ones whose run stalled as stalled, and other failed or held ones as finished", () => {
    const all = [
      mk("q"),
      mk("s", { status: "failed" }),
      mk("f", { status: "failed" }),
      mk("h", { status: "held" }),
      mk("d", { status: "done" }),
      mk("b", { status: "blocked" })
    ]
    const l = D.listsOf(all, (t) => t.id === "s")
    expect(l.runnable.map((t) => t.id)).toEqual(["q"])
    expect(l.stalled.map((t) => t.id)).toEqual(["s"])
    expect(l.finished.map((t) => t.id).sort()).toEqual(["f", "h"])
  })
})

describe("blockers the conductor gives", () => {
  const a = mk("a")
  const b = ok(T.block(mk("b"), ["a"], "after a"))
  const c = ok(T.block(mk("c"), ["b"], "after b"))

  it("refuses an id that names nothing, naming it", () => {
    expect(D.blockersRefusal([a, b], "a", ["nope"], (id) => id !== "nope")).toContain("blocked_by names nope")
  })

  it("refuses a circle of any length, showing it", () => {
    expect(D.blockersRefusal([a, b], "a", ["b"], () => true)).toBe("waiting on a → b → a would close a circle: none of them could ever run")
    expect(D.blockersRefusal([a, b, c], "a", ["c"], () => true)).toContain("a → c → b → a")
    expect(D.blockersRefusal([a], "a", ["a"], () => true)).toContain("cannot wait on itself")
  })

  it("accepts a wait that closes no circle", () => {
    expect(D.blockersRefusal([a, b, c], "c", ["a"], () => true)).toBeUndefined()
  })
})

describe("each recovery against each status", () => {
  const statuses: ReadonlyArray<T.TaskStatus> = ["queued", "running", "done", "failed", "held", "blocked"]
  const expected: Record<string, Record<T.TaskStatus, string>> = {
    requeue: { queued: "refused", running: "refused", done: "refused", failed: "queued", held: "queued", blocked: "refused" },
    hold: { queued: "refused", running: "refused", done: "refused", failed: "held", held: "refused", blocked: "refused" },
    review: { queued: "refused", running: "refused", done: "refused", failed: "queued", held: "queued", blocked: "refused" },
    done: { queued: "refused", running: "refused", done: "refused", failed: "done", held: "done", blocked: "refused" }
  }
  for (const recovery of ["requeue", "hold", "review", "done"] as const)
    for (const status of statuses)
      it(`${recovery} on a ${status} task (machine hold) → ${expected[recovery]![status]}`, () => {
        const t = mk("t", { status, hold_source: status === "held" ? "machine" : null, attempts: 2, last_error: "boom" })
        const p = D.planDecision(t, { id: "t", recovery }, ctx({ survivingBranch: "magi/abcd" }))
        expect(p._tag === "Change" ? p.task.status : "refused").toBe(expected[recovery]![status])
        if (p._tag === "Change" && recovery === "review") expect(p.task.review_branch).toBe("magi/abcd")
        if (p._tag === "Change" && recovery === "requeue") expect(p.task).toMatchObject({ attempts: 0, fresh_start: true, last_error: null })
      })

  it("review is refused when the task's own last run left no branch ahead of its base", () => {
    const p = D.planDecision(mk("t", { status: "failed" }), { id: "t", recovery: "review" }, ctx())
    expect(p).toMatchObject({ _tag: "Refuse", why: expect.stringContaining("nothing to review") })
  })

  it("a stalled task may be requeued or held, never reviewed or marked done", () => {
    const t = mk("t", { status: "failed" })
    expect(D.planDecision(t, { id: "t", recovery: "requeue" }, ctx({ stalled: true }))._tag).toBe("Change")
    expect(D.planDecision(t, { id: "t", recovery: "hold" }, ctx({ stalled: true }))._tag).toBe("Change")
    expect(D.planDecision(t, { id: "t", recovery: "done" }, ctx({ stalled: true, survivingBranch: "x" }))._tag).toBe("Refuse")
    expect(D.planDecision(t, { id: "t", recovery: "review" }, ctx({ stalled: true, survivingBranch: "x" }))._tag).toBe("Refuse")
  })

  it("leaves the owner's manual hold alone, whatever the decision", () => {
    const t = mk("t", { status: "held", hold_source: "manual", hold_reason: "mine" })
    for (const d of [{ id: "t", recovery: "requeue" as const }, { id: "t", question: "Why?" }, { id: "t", recovery: "done" as const }])
      expect(D.planDecision(t, d, ctx())).toMatchObject({ _tag: "Refuse", why: expect.stringContaining("manual hold") })
  })

  it("a question wins over a blocker and a recovery given beside it", () => {
    const p = D.planDecision(
      mk("t", { status: "failed" }),
      { id: "t", question: "Keep going?", choices: ["yes", " no "], recovery: "done", blocked_by: ["x"] },
      ctx()
    )
    expect(p).toEqual({ _tag: "Ask", question: "Keep going?", choices: ["yes", "no"] })
  })

  it("blocks only a queued task, and never touches its priority", () => {
    const other = mk("o")
    const p = D.planDecision(mk("t", { priority: 7 }), { id: "t", blocked_by: ["o"], reason: "needs o" }, ctx({ all: [other] }))
    expect(p._tag === "Change" && p.task).toMatchObject({ status: "blocked", blocked_by: ["o"], priority: 7, block_reason: "the conductor: needs o" })
    expect(D.planDecision(mk("t", { status: "failed" }), { id: "t", blocked_by: ["o"] }, ctx())._tag).toBe("Refuse")
  })
})

describe("which questions are the conductor's", () => {
  const q = { node: D.NODE }
  it("counts the questions it filed, never a tool approval its own seat raised", () => {
    expect(D.isConductorQuestion(q)).toBe(true)
    expect(D.isConductorQuestion({ ...q, approval: { tool: "Bash", digest: "0123456789abcdef", rule: "Bash(ls)" } })).toBe(false)
    expect(D.isConductorQuestion({ node: "impl" })).toBe(false)
  })
})
