import { describe, expect, it } from "@effect/vitest"
import { resetAt, resolveBlockers, orphanSettlement, parkedCompetition, settle, settlementFor, type BlockerState } from "../../src/daemon/QueueDecide.js"
import * as T from "../../src/queue/Task.js"
import { ok } from "../support.js"

const NOW = new Date("2026-09-02T10:00:00Z")
const base = T.make({ id: "20260902-100000-ab12", instruction: "x", repo: "/r", now: NOW })

describe("resolving blockers", () => {
  const blocked = ok(T.block(base, ["20260902-100001-aaaa", "20260902-100002-bbbb"], "after a and b"))
  const world = (states: Record<string, BlockerState>) => (id: string): BlockerState => states[id] ?? { kind: "missing" }

  it("leaves a task alone while its blockers are pending", () => {
    const lookup = world({
      "20260902-100001-aaaa": { kind: "task", status: "running" },
      "20260902-100002-bbbb": { kind: "question", status: "open", answer: undefined }
    })
    expect(resolveBlockers(blocked, lookup)).toBe(blocked)
  })

  it("drops a done task and an answered question, recording the answer, and restores the status once none is left", () => {
    const one = resolveBlockers(
      blocked,
      world({ "20260902-100001-aaaa": { kind: "task", status: "done" }, "20260902-100002-bbbb": { kind: "question", status: "open", answer: undefined } })
    )
    expect(one).toMatchObject({ status: "blocked", blocked_by: ["20260902-100002-bbbb"] })
    const both = resolveBlockers(one, world({ "20260902-100002-bbbb": { kind: "question", status: "answered", answer: "Redis" } }))
    expect(both).toMatchObject({ status: "queued", blocked_by: [], answers: [{ question: "20260902-100002-bbbb", answer: "Redis" }] })
  })

  it("holds for the owner, naming it, a blocker that is gone or a question abandoned unanswered", () => {
    const gone = resolveBlockers(blocked, world({ "20260902-100002-bbbb": { kind: "question", status: "open", answer: undefined } }))
    expect(gone).toMatchObject({ status: "held", hold_source: "machine" })
    expect(gone.hold_reason).toContain("waits on aaaa, which no longer exists")
    const abandoned = resolveBlockers(
      blocked,
      world({
        "20260902-100001-aaaa": { kind: "task", status: "queued" },
        "20260902-100002-bbbb": { kind: "question", status: "abandoned", answer: undefined }
      })
    )
    expect(abandoned.hold_reason).toContain("question bbbb it waited on was abandoned unanswered")
  })

  it("touches only blocked tasks", () => {
    const held = ok(T.hold(blocked, "mine"))
    expect(resolveBlockers(held, () => ({ kind: "missing" }))).toBe(held)
  })
})

describe("a task follows its run", () => {
  const running = ok(T.start(base, "run-1"))
  it.each(
    [
      ["done", "", "done", 1],
      ["failed", "exit 3", "failed", 1],
      ["superseded", "", "failed", 1],
      ["stalled", "usage limit", "failed", 0],
      ["waiting", "", "running", 1],
      ["running", "", "running", 1],
      ["ready", "reviewed and gated", "done", 1],
      ["already_in_base", "in the base", "done", 1],
      ["blocked", "R2-1-1 still open", "held", 1],
      ["merged", "merged into main", "done", 1],
      ["closed", "closed on the forge", "held", 1]
    ] as const
  )("a %s run leaves the task %s", (runStatus, reason, taskStatus, attempts) => {
    const after = settle(running, "run-1", settlementFor({ status: runStatus, reason }), 2)
    expect(after).toMatchObject({ status: taskStatus, attempts })
  })

  it("a ready run whose pull request is open holds its task with the reason, so it is never competed again", () => {
    const pr = { number: 7, url: "http://github.test/o/r/pull/7" }
    const after = settle(running, "run-1", settlementFor({ status: "ready", reason: "", landing: { pr } }), 2)
    expect(after).toMatchObject({ status: "held" })
    expect(after.hold_reason).toContain("pull request #7 is open")
  })

  it("never settles a task that moved on: held by the owner meanwhile, or on another run", () => {
    const held = ok(T.hold(running, "stop"))
    expect(settle(held, "run-1", { _tag: "Succeed" }, 2)).toBe(held)
    expect(settle(running, "run-0", { _tag: "Succeed" }, 2)).toBe(running)
  })
})

describe("a running task nothing is working on", () => {
  const running = ok(T.start(base, "run-1"))
  const idle = { turnInFlight: false, waitingOnOwner: false, lastMovedMs: 0, nowMs: 0, loopAlive: true }
  it("is left alone while a turn or a question goes on, or its live loop's run moved within 30 minutes", () => {
    expect(orphanSettlement({ ...idle, nowMs: 29 * 60_000 })).toBeUndefined()
    expect(orphanSettlement({ ...idle, loopAlive: false, turnInFlight: true })).toBeUndefined()
    expect(orphanSettlement({ ...idle, nowMs: 99 * 60_000, waitingOnOwner: true })).toBeUndefined()
    expect(orphanSettlement({ ...idle, loopAlive: false, waitingOnOwner: true })).toBeUndefined()
  })

  it("is stalled with its attempt refunded when its live loop's run sat still for 30 minutes", () => {
    const s = orphanSettlement({ ...idle, nowMs: 30 * 60_000 })
    expect(s).toMatchObject({ _tag: "Stall", why: expect.stringContaining("30 minutes") })
    expect(settle(running, "run-1", s!, 2)).toMatchObject({ status: "failed", attempts: 0 })
  })

  it("spends the attempt when its loop is gone: retried once, then held for the owner if the retry's loop dies too", () => {
    const s = orphanSettlement({ ...idle, loopAlive: false })
    expect(s).toMatchObject({ _tag: "Fail", why: expect.stringContaining("is gone") })
    // The first crash: attempt 1 of 2 spent, runnable again.
    const first = settle(running, "run-1", s!, 2)
    expect(first).toMatchObject({ status: "failed", attempts: 1, last_error: expect.stringContaining("is gone") })
    expect(T.runnable(first)).toBe(true)
    // Its retry's host dies as well: the attempts are spent, so the owner decides.
    const retried = ok(T.start(first, "run-2"))
    const second = settle(retried, "run-2", s!, 2)
    expect(second).toMatchObject({ status: "held", hold_source: "machine", attempts: 2 })
    expect(second.hold_reason).toContain("failed 2 of 2 attempts; last: the magi loop that ran it is gone")
  })
})

describe("when an agent may run again after a usage limit", () => {
  const now = new Date("2026-09-02T10:00:00Z")
  it.each([
    [null, "2026-09-02T10:15:00.000Z"],
    ["", "2026-09-02T10:15:00.000Z"],
    ["soon", "2026-09-02T10:15:00.000Z"],
    ["3pm (UTC)", "2026-09-02T15:00:00.000Z"],
    ["9am UTC", "2026-09-03T09:00:00.000Z"],
    ["12am (UTC)", "2026-09-03T00:00:00.000Z"],
    ["14:30 UTC", "2026-09-02T14:30:00.000Z"],
    ["2026-09-02T12:00:00Z", "2026-09-02T12:00:00.000Z"],
    ["2026-09-01T12:00:00Z", "2026-09-02T10:15:00.000Z"],
    ["1788350400", "2026-09-02T12:00:00.000Z"],
    ["25:99", "2026-09-02T10:15:00.000Z"]
  ])("%j → %s", (quota, at) => {
    expect(new Date(resetAt(quota, now)).toISOString()).toBe(at)
  })
})

describe("a wait that would close a circle", () => {
  const t = (id: string, blocked_by: string[]) => ({ ...base, id, blocked_by })
  const tasks = [t("a", ["b"]), t("b", ["c"]), t("c", []), t("d", ["q1"])]
  it("is found through the chain of waits, and only then", () => {
    expect(T.circleThrough(tasks, "c", ["a"])).toEqual(["c", "a", "b", "c"])
    expect(T.circleThrough(tasks, "a", ["a"])).toEqual(["a", "a"])
    expect(T.circleThrough(tasks, "c", ["d", "q1"])).toBeUndefined()
    expect(T.circleThrough(tasks, "new", ["a", "d"])).toBeUndefined()
  })
})

describe("a task's next start picks up its parked competition", () => {
  const run = (status: string, step: string | undefined, host = "here") => ({
    status: status as never,
    host,
    ...(step === undefined ? {} : { competition: { step } })
  })
  it.each(
    [
      ["a competition parked mid-judging", run("stalled", "judge"), true],
      ["one parked before implementing", run("stalled", "implement"), true],
      ["a failed competition starts afresh", run("failed", "implement"), false],
      ["a stalled one that had ended", run("stalled", "elected"), false],
      ["one still running elsewhere in time", run("running", "judge"), false],
      ["one on another host", run("stalled", "judge", "there"), false],
      ["a stalled single seat starts afresh", run("stalled", undefined), false],
      ["no run at all", undefined, false]
    ] as const
  )("%s: %s", (_, r, resumes) => {
    expect(parkedCompetition(r, "here")).toBe(resumes)
  })
})
