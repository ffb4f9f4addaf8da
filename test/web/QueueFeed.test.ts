import { describe, expect, it } from "vitest"
import * as Q from "../../src/questions/Question.js"
import * as T from "../../src/queue/Task.js"
import { views } from "../../src/web/QueueFeed.js"
import { retryWords } from "../../src/queue/RetryWords.js"
import { choiceQuestion, ok } from "../support.js"

const at = (minute: number) => new Date(Date.UTC(2026, 8, 3, 10, minute))
const task = (n: number, over: Partial<T.NewTask> = {}) =>
  T.make({ id: `20260903-10${String(n).padStart(2, "0")}00-${(0xa000 + n).toString(16)}`, instruction: `Task ${n}`, repo: "/r", now: at(n), ...over })

describe("the queue as the page shows it", () => {
  it("puts open tasks first in the queue's own order, then finished ones, most recently finished first", () => {
    const low = task(1)
    const high = task(2, { priority: 3 })
    const newerLow = task(3)
    const doneEarly = { ...ok(T.succeed(task(4, { priority: 9 }))), updated_at: "2026-09-03T11:00:00Z" }
    const doneLate = { ...ok(T.succeed(task(5))), updated_at: "2026-09-03T12:00:00Z" }
    const held = ok(T.hold(task(6), "later"))
    const listed = [low, high, newerLow, doneEarly, doneLate, held].sort(T.listOrder)
    expect(views(listed, []).map((v) => v.title)).toEqual(["Task 2", "Task 6", "Task 3", "Task 1", "Task 5", "Task 4"])
  })

  it("names each blocker: a task by title, a question by summary, and one that is gone as missing", () => {
    const first = task(1)
    const question = choiceQuestion("20260903-100500-c0c0")
    const waiting = ok(T.block(task(2), [first.id, question.id, "20990101-000000-dead"], "after them"))
    const view = views([first, waiting], [question]).find((v) => v.id === waiting.id)!
    expect(view.blockers).toEqual([
      { id: first.id, kind: "task", title: "Task 1", status: "queued" },
      { id: question.id, kind: "question", title: question.summary, status: "open" },
      { id: "20990101-000000-dead", kind: "missing", title: "", status: "missing" }
    ])
    expect(view.runnable).toBe(false)
  })

  it("shows a running task what its latest run still waits on: open questions, and answers not yet delivered", () => {
    const run1 = "20260903-110000-aaaa"
    const run2 = "20260903-120000-bbbb"
    const running = ok(T.start({ ...ok(T.start(task(1), run1)), status: "failed" }, run2))
    const old = { ...choiceQuestion("20260903-110001-0001"), run: run1 }
    const mine = { ...choiceQuestion("20260903-120001-0002"), run: run2 }
    const askedBack = ok(Q.say({ ...choiceQuestion("20260903-120002-0003"), run: run2 }, "which one?", at(30)))
    const undelivered = ok(Q.answer({ ...choiceQuestion("20260903-120003-0004"), run: run2 }, { choice: "Redis" }, at(31)))
    const delivered = { ...ok(Q.answer({ ...choiceQuestion("20260903-120004-0005"), run: run2 }, { choice: "Redis" }, at(32))), answer_delivered: true }
    const [view] = views([running], [old, mine, askedBack, undelivered, delivered])
    expect(view!.run_questions).toEqual([
      { id: mine.id, summary: mine.summary, status: "open", waiting_on_agent: false },
      { id: askedBack.id, summary: askedBack.summary, status: "open", waiting_on_agent: true },
      { id: undelivered.id, summary: undelivered.summary, status: "answered", waiting_on_agent: false }
    ])
    // A task that is not running waits on no run.
    expect(views([ok(T.hold(running, "stop"))], [mine])[0]!.run_questions).toEqual([])
  })
})

describe("when a failed task goes again (issue 27.7)", () => {
  const failed = (why: string) => ({ ...ok(T.fail(ok(T.start(task(1), "run-1")), why, 3)), updated_at: "2026-09-03T10:00:00.000Z" })

  it("a failed task with attempts left retries once the loop's pause has run out; after a usage limit, at once; any other, never", () => {
    expect(views([failed("the agent's turn failed (exit 1)")], [])[0]!.retry_at).toBe("2026-09-03T10:05:00.000Z")
    expect(views([failed("the agent hit its usage limit")], [])[0]!.retry_at).toBe("2026-09-03T10:00:00.000Z")
    expect(views([task(2)], [])[0]!.retry_at).toBeNull()
    expect(views([ok(T.hold(task(3), "later"))], [])[0]!.retry_at).toBeNull()
    // Its attempts used up: held by magi, not retried.
    const spent = ok(T.fail(ok(T.start(task(4), "run-4")), "exit 1", 1))
    expect(views([spent], [])[0]!.retry_at).toBeNull()
  })

  it.each([
    [4 * 60_000, "will retry at 10:05 (in 4 min)"],
    [90_000, "will retry at 10:05 (in 2 min)"],
    [60_000, "will retry at 10:05 (in 1 min)"],
    [30_000, "will retry at 10:05 (in 30 s)"],
    [0, "will retry on the loop's next tick"],
    [-5_000, "will retry on the loop's next tick"]
  ])("%i ms before the retry: %s", (left, words) => {
    const at = Date.UTC(2026, 8, 3, 10, 5)
    expect(retryWords(at, at - left, (ms) => new Date(ms).toISOString().slice(11, 16))).toBe(words)
  })
})
