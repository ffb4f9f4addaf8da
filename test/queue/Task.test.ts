import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import * as T from "../../src/queue/Task.js"
import { ok, refusal } from "../support.js"

const NOW = new Date("2026-09-02T10:00:00Z")

const task = (over: Partial<T.Task> = {}): T.Task => ({
  ...T.make({ id: "20260902-100000-ab12", instruction: "Add a cache\n\nwith tests", repo: "/r", now: NOW }),
  ...over
})

const at = (id: string, priority: number, created: string, status: T.TaskStatus = "queued"): T.Task =>
  task({ id, priority, status, created_at: created, updated_at: created })

describe("a new task", () => {
  it("is queued, untried, human-filed, titled from its first line, priority 0", () => {
    expect(task()).toMatchObject({
      schema: T.TASK_SCHEMA,
      status: "queued",
      attempts: 0,
      runs: [],
      priority: 0,
      source: { kind: "human" },
      title: "Add a cache",
      created_at: "2026-09-02T10:00:00Z"
    })
  })

  it("takes a given title over the text's first line", () => {
    expect(T.make({ id: "x", instruction: "long text", repo: "/r", now: NOW, title: "  Short  " }).title).toBe("Short")
  })
})

describe("titleFrom", () => {
  it.each([
    ["# Add a cache\nbody", "Add a cache"],
    ["\n\n   \n- * > ## Fix the bug  \nmore", "Fix the bug"],
    ["> quoted line", "quoted line"],
    ["", T.EMPTY_TITLE],
    ["  \n # \n", "(empty task)"],
    ["###", "(empty task)"],
    ["a".repeat(72), "a".repeat(72)],
    ["a".repeat(73), "a".repeat(71) + "…"]
  ])("%j becomes %j", (text, title) => {
    expect(T.titleFrom(text)).toBe(title)
  })

  it("cuts by characters, never inside one", () => {
    const title = T.titleFrom("😀".repeat(80), 10)
    expect(Array.from(title)).toHaveLength(10)
    expect(title).toBe("😀".repeat(9) + "…")
  })
})

describe("runnable and the two orders", () => {
  it.each<[T.TaskStatus, boolean]>([
    ["queued", true],
    ["failed", true],
    ["running", false],
    ["done", false],
    ["held", false],
    ["blocked", false]
  ])("a %s task is runnable: %s", (status, expected) => {
    expect(T.runnable(task({ status }))).toBe(expected)
  })

  const tasks = [
    at("a-old-low", 0, "2026-09-01T00:00:00Z"),
    at("b-new-high", 5, "2026-09-03T00:00:00Z"),
    at("c-old-high", 5, "2026-09-01T00:00:00Z"),
    at("d-new-low", 0, "2026-09-03T00:00:00Z"),
    at("e-held-top", 9, "2026-09-01T00:00:00Z", "held"),
    at("f-failed-mid", 1, "2026-09-02T00:00:00Z", "failed")
  ]

  it("lists higher priority first, then newest first", () => {
    expect([...tasks].sort(T.listOrder).map((t) => t.id)).toEqual([
      "e-held-top",
      "b-new-high",
      "c-old-high",
      "f-failed-mid",
      "d-new-low",
      "a-old-low"
    ])
  })

  it("runs higher priority first, then oldest first, runnable ones only", () => {
    expect(T.runQueue(tasks).map((t) => t.id)).toEqual(["c-old-high", "b-new-high", "f-failed-mid", "a-old-low", "d-new-low"])
    expect(T.nextRunnable(tasks)?.id).toBe("c-old-high")
    expect(T.nextRunnable(tasks.filter((t) => t.priority === 0))?.id).toBe("a-old-low")
    expect(T.nextRunnable([at("x", 0, "2026-09-01T00:00:00Z", "held")])).toBeUndefined()
  })

  it("breaks a tie in the same second by id, the same way each time", () => {
    const same = [at("20260901-000000-bbbb", 0, "2026-09-01T00:00:00Z"), at("20260901-000000-aaaa", 0, "2026-09-01T00:00:00Z")]
    expect(T.nextRunnable(same)?.id).toBe("20260901-000000-aaaa")
    expect([...same].sort(T.listOrder)[0]!.id).toBe("20260901-000000-bbbb")
  })
})

describe("sources", () => {
  it.each<[Record<string, string | undefined>, T.TaskSource, string]>([
    [{}, { kind: "human" }, "human"],
    [{ MAGI_RUN: "" }, { kind: "human" }, "human"],
    [{ MAGI_RUN: "20260902-201256-9fb7", MAGI_NODE: "impl" }, { kind: "agent", run: "20260902-201256-9fb7", node: "impl" }, "impl@9fb7"],
    [{ MAGI_RUN: "20260902-201256-9fb7" }, { kind: "agent", run: "20260902-201256-9fb7", node: "agent" }, "agent@9fb7"]
  ])("the environment %j files as %j, labelled %s", (env, source, label) => {
    expect(T.sourceFromEnv(env)).toEqual(source)
    expect(T.sourceLabel(T.sourceFromEnv(env))).toBe(label)
  })

  it("labels an issue by its repo and number", () => {
    expect(T.sourceLabel({ kind: "issue", number: 12, repo: "me/magi" })).toBe("me/magi#12")
  })
})

// ---------------------------------------------------------------------------
// Every transition, from every status.

const STATUSES: ReadonlyArray<T.TaskStatus> = ["queued", "running", "done", "failed", "held", "blocked"]

/** A task in `status` carrying the leftovers a transition may or may not clear. */
const messy = (status: T.TaskStatus): T.Task =>
  task({
    status,
    attempts: 1,
    runs: ["run-1"],
    last_error: "boom",
    hold_reason: status === "held" ? "wait" : null,
    hold_source: status === "held" ? "manual" : null,
    blocked_by: status === "blocked" ? ["other"] : [],
    block_reason: status === "blocked" ? "needs other" : null,
    blocked_from: status === "blocked" ? "queued" : null,
    review_branch: "magi/old",
    fresh_start: true
  })

const outcome = (r: Either.Either<T.Task, T.TaskRefused>) => (Either.isRight(r) ? r.right.status : `refused:${r.left.reason}`)

describe("the transitions, status by status", () => {
  const table: ReadonlyArray<[string, (t: T.Task) => Either.Either<T.Task, T.TaskRefused>, Record<T.TaskStatus, string>]> = [
    [
      "start",
      (t) => T.start(t, "run-2"),
      { queued: "running", failed: "running", running: "refused:status", done: "refused:status", held: "refused:status", blocked: "refused:status" }
    ],
    [
      "fail (attempts left)",
      (t) => T.fail(t, "tests failed", 2),
      { queued: "refused:status", failed: "refused:status", running: "failed", done: "refused:status", held: "refused:status", blocked: "refused:status" }
    ],
    [
      "stall",
      (t) => T.stall(t, "usage limit"),
      { queued: "refused:status", failed: "refused:status", running: "failed", done: "refused:status", held: "refused:status", blocked: "refused:status" }
    ],
    ["succeed", T.succeed, { queued: "done", failed: "done", running: "done", done: "refused:done", held: "done", blocked: "done" }],
    [
      "hold",
      (t) => T.hold(t, "not now"),
      { queued: "held", failed: "held", running: "held", done: "refused:done", held: "held", blocked: "held" }
    ],
    [
      "block",
      (t) => T.block(t, ["dep"], "after dep"),
      { queued: "blocked", failed: "blocked", running: "blocked", done: "refused:done", held: "refused:held", blocked: "blocked" }
    ],
    ["release", T.release, { queued: "queued", failed: "queued", running: "refused:running", done: "queued", held: "queued", blocked: "queued" }],
    ["requeue", T.requeue, { queued: "queued", failed: "queued", running: "refused:running", done: "queued", held: "queued", blocked: "queued" }],
    [
      "requestReview",
      (t) => T.requestReview(t, "magi/ab12"),
      { queued: "queued", failed: "queued", running: "refused:running", done: "queued", held: "queued", blocked: "queued" }
    ],
    [
      "reprioritize",
      (t) => T.reprioritize(t, 3),
      { queued: "queued", failed: "failed", running: "refused:running", done: "done", held: "held", blocked: "blocked" }
    ],
    [
      "edit",
      (t) => T.edit(t, { instruction: "New words" }),
      { queued: "queued", failed: "failed", running: "refused:running", done: "done", held: "held", blocked: "blocked" }
    ],
    ["removable", T.removable, { queued: "queued", failed: "failed", running: "refused:running", done: "done", held: "held", blocked: "blocked" }]
  ]
  for (const [what, apply, expected] of table)
    it.each(STATUSES)(`${what} from %s`, (status) => {
      expect(outcome(apply(messy(status)))).toBe(expected[status])
    })

  it("every refusal names the task and reads differently from the others", () => {
    const messages = new Set<string>()
    for (const [, apply] of table)
      for (const status of STATUSES) {
        const r = apply(messy(status))
        if (Either.isLeft(r)) {
          expect(r.left.message).toContain("task ab12")
          messages.add(`${r.left.reason}:${r.left.message}`)
        }
      }
    expect(messages.size).toBeGreaterThan(6)
  })
})

describe("what each transition changes", () => {
  it("start runs it on the run, spends an attempt, and forgets the fresh-start flag", () => {
    const t = ok(T.start(messy("failed"), "run-2"))
    expect(t).toMatchObject({ status: "running", attempts: 2, runs: ["run-1", "run-2"], fresh_start: false, last_error: "boom" })
  })

  it("fail leaves it failed with the reason while attempts remain", () => {
    const t = ok(T.fail(task({ status: "running", attempts: 1 }), "exit 3", 2))
    expect(t).toMatchObject({ status: "failed", attempts: 1, last_error: "exit 3", hold_source: null })
  })

  it("fail holds it for the owner once attempts reach the limit, keeping the last error", () => {
    const t = ok(T.fail(task({ status: "running", attempts: 2 }), "exit 3", 2))
    expect(t).toMatchObject({ status: "held", hold_source: "machine", last_error: "exit 3" })
    expect(t.hold_reason).toContain("exit 3")
    expect(ok(T.fail(task({ status: "running", attempts: 3 }), "x", 2)).status).toBe("held")
    expect(ok(T.fail(task({ status: "running", attempts: 1 }), "x", 1)).status).toBe("held")
  })

  it("stall gives the attempt back and never below zero", () => {
    expect(ok(T.stall(task({ status: "running", attempts: 2 }), "usage limit"))).toMatchObject({
      status: "failed",
      attempts: 1,
      last_error: "usage limit"
    })
    expect(ok(T.stall(task({ status: "running", attempts: 0 }), "gone")).attempts).toBe(0)
  })

  it("succeed clears errors, holds, blocks and the review branch", () => {
    expect(ok(T.succeed(messy("held")))).toMatchObject({
      status: "done",
      last_error: null,
      hold_reason: null,
      hold_source: null,
      blocked_by: [],
      block_reason: null,
      blocked_from: null,
      review_branch: null,
      attempts: 1,
      runs: ["run-1"]
    })
  })

  it("hold is the owner's, with the reason trimmed (none when blank)", () => {
    expect(ok(T.hold(messy("queued"), "  not before Monday "))).toMatchObject({ hold_source: "manual", hold_reason: "not before Monday" })
    expect(ok(T.hold(task({ status: "held", hold_source: "machine", hold_reason: "x" }), " ")).hold_reason).toBeNull()
  })

  it("block remembers where it came from, and a second block adds without forgetting", () => {
    const once = ok(T.block(task({ status: "failed" }), ["a", "b", "a"], "after a and b"))
    expect(once).toMatchObject({ status: "blocked", blocked_by: ["a", "b"], blocked_from: "failed", block_reason: "after a and b" })
    const twice = ok(T.block(once, ["b", "c"], ""))
    expect(twice).toMatchObject({ blocked_by: ["a", "b", "c"], blocked_from: "failed", block_reason: "after a and b" })
    expect(refusal(T.block(task(), [], "x"))).toContain("at least one")
  })

  it("unblock removes one blocker and restores the status once none is left", () => {
    const blocked = ok(T.block(task({ status: "failed" }), ["a", "b"], "r"))
    const one = ok(T.unblock(blocked, "a"))
    expect(one).toMatchObject({ status: "blocked", blocked_by: ["b"], blocked_from: "failed" })
    expect(ok(T.unblock(one, "b"))).toMatchObject({ status: "failed", blocked_by: [], blocked_from: null, block_reason: null })
    expect(ok(T.unblock(blocked, "zzz"))).toBe(blocked)
  })

  it("a task blocked while running comes back queued, its run being gone", () => {
    const blocked = ok(T.block(task({ status: "running", attempts: 1 }), ["q"], "asked"))
    expect(ok(T.unblock(blocked, "q"))).toMatchObject({ status: "queued", attempts: 1 })
  })

  it("release starts it over: queued, attempts 0, every leftover cleared", () => {
    expect(ok(T.release(messy("held")))).toMatchObject({
      status: "queued",
      attempts: 0,
      last_error: null,
      hold_reason: null,
      hold_source: null,
      blocked_by: [],
      blocked_from: null,
      review_branch: null,
      fresh_start: false,
      runs: ["run-1"]
    })
  })

  it("requeue is release with a fresh start; requestReview is release with a branch to review", () => {
    expect(ok(T.requeue(messy("failed")))).toMatchObject({ status: "queued", attempts: 0, fresh_start: true, review_branch: null })
    expect(ok(T.requestReview(messy("held"), " magi/ab12 "))).toMatchObject({
      status: "queued",
      attempts: 0,
      review_branch: "magi/ab12",
      fresh_start: false
    })
    expect(refusal(T.requestReview(messy("held"), ""))).toContain("needs a branch")
  })

  it("a running task's priority, words and existence are not the owner's to change", () => {
    const running = task({ status: "running" })
    expect(refusal(T.reprioritize(running, 1))).toContain("change its priority")
    expect(refusal(T.edit(running, { instruction: "x" }))).toContain("edit it")
    expect(refusal(T.removable(running))).toContain("remove it")
    expect(refusal(T.reprioritize(task(), 1.5))).toContain("whole number")
  })

  it("edit refuses an instruction over the cap, which the store could not read back", () => {
    expect(refusal(T.edit(task(), { instruction: "é".repeat(T.INSTRUCTION_MAX_BYTES / 2 + 1) }))).toContain(
      `over magi's cap of ${T.INSTRUCTION_MAX_BYTES} bytes`
    )
    expect(T.encode(ok(T.edit(task(), { instruction: "\u0001".repeat(T.INSTRUCTION_MAX_BYTES) }))).length).toBeLessThan(1024 * 1024)
  })

  it("edit retitles from the new words unless given a title, and refuses none", () => {
    expect(ok(T.edit(task(), { instruction: "# Use Redis\nnot SQLite" }))).toMatchObject({ title: "Use Redis", instruction: "# Use Redis\nnot SQLite" })
    expect(ok(T.edit(task(), { instruction: "text", title: "Mine" })).title).toBe("Mine")
    expect(refusal(T.edit(task(), { instruction: "  " }))).toContain("needs an instruction")
  })

  it("an answer is recorded once per question", () => {
    const once = T.recordAnswer(task(), "q1", "SQLite")
    expect(T.recordAnswer(once, "q1", "Redis").answers).toEqual([{ question: "q1", answer: "SQLite" }])
  })
})

describe("reading a stored task", () => {
  const stored = (over: Record<string, unknown>) => JSON.stringify({ ...task(), ...over })

  it("round-trips", () => {
    const t = ok(T.decode(T.encode(messy("blocked")), "x.json"))
    expect(t).toEqual(messy("blocked"))
  })

  it("reads a file with only the required fields, with defaults for the rest", () => {
    const minimal = {
      schema: 1,
      id: "20260902-100000-ab12",
      title: "t",
      instruction: "i",
      repo: "/r",
      status: "queued",
      created_at: "2026-09-02T10:00:00Z",
      updated_at: "2026-09-02T10:00:00Z"
    }
    expect(ok(T.decode(JSON.stringify(minimal), "x.json"))).toEqual({ ...task(), title: "t", instruction: "i" })
  })

  it("refuses a newer schema by name, before judging its shape", () => {
    expect(refusal(T.decode(stored({ schema: 2, weird: true }), "x.json"))).toBe(
      "task 20260902-100000-ab12 was written by a newer magi (schema 2, this build only speaks up to 1)"
    )
  })

  it("refuses an unknown field, naming it", () => {
    expect(refusal(T.decode(stored({ priorty: 3 }), "x.json"))).toContain("unknown field `priorty`")
  })

  it("reads every status and source exactly as written, whichever way it is decoded", () => {
    for (const status of STATUSES)
      for (const source of [{ kind: "human" }, { kind: "agent", run: "r", node: "n" }, { kind: "issue", number: 3, repo: "o/r" }] as const) {
        const t = { ...messy(status), source, answers: [{ question: "q", answer: "a" }] }
        expect(ok(T.decode(T.encode(t), "x.json"))).toEqual(t)
      }
  })

  it("refuses any field holding a value of the wrong type", () => {
    for (const field of Object.keys(task()))
      for (const bad of [{ nested: true }, 12.5, "text", null, ["x"]]) {
        const value = (task() as Record<string, unknown>)[field]
        if (JSON.stringify(bad) === JSON.stringify(value)) continue
        // Kinds of value the field legitimately takes are not wrong.
        if (typeof bad === typeof value && !Array.isArray(bad) && bad !== null && typeof bad !== "object") continue
        if (bad === null && ["last_error", "hold_reason", "hold_source", "block_reason", "blocked_from", "review_branch"].includes(field)) continue
        if (typeof bad === "string" && ["last_error", "hold_reason", "block_reason", "review_branch", "repo_name"].includes(field)) continue
        if (typeof bad === "number" && ["schema", "priority", "attempts"].includes(field)) continue
        if (Array.isArray(bad) && ["runs", "blocked_by"].includes(field)) continue
        expect(Either.isLeft(T.decode(stored({ [field]: bad }), "x.json")), `${field} = ${JSON.stringify(bad)}`).toBe(true)
      }
  })

  it("refuses a bad status, a bad source and broken JSON", () => {
    expect(refusal(T.decode(stored({ status: "paused" }), "x.json"))).toContain("not a task magi can read")
    expect(refusal(T.decode(stored({ source: { kind: "robot" } }), "x.json"))).toContain("not a task magi can read")
    expect(refusal(T.decode("{", "x.json"))).toContain("not valid JSON")
  })
})

describe("where a task runs, host by host", () => {
  const repos = { app: "/srv/src/app", lib: "/srv/src/lib" }

  it("runs a task named by repository in each host's own clone of that name, and nowhere without one", () => {
    const named = task({ repo: "/home/me/app", repo_name: "app" })
    expect(T.repoHere(named, repos)).toBe("/srv/src/app")
    expect(T.repoHere(named, { lib: "/srv/src/lib" })).toBeUndefined()
    expect(T.repoHere(named, {})).toBeUndefined()
  })

  it("runs a task filed by folder alone at that folder, as before hosts", () => {
    expect(T.repoHere(task({ repo: "/r" }), repos)).toBe("/r")
    expect(T.repoHere(task({ repo: "/r" }), {})).toBe("/r")
  })

  it("does not take a name inherited from Object for a repository", () => {
    expect(T.repoHere(task({ repo: "constructor", repo_name: "constructor" }), repos)).toBeUndefined()
  })

  it("names the clone a folder is, and reads as its name when it has one", () => {
    expect(T.repoNameOf("/srv/src/lib", repos)).toBe("lib")
    expect(T.repoNameOf("/elsewhere", repos)).toBeUndefined()
    expect(T.repoLabel(task({ repo: "/srv/src/app", repo_name: "app" }))).toBe("app")
    expect(T.repoLabel(task({ repo: "/r" }))).toBe("/r")
  })

  it("reads a task stored before repositories had names, with none", () => {
    const { repo_name: _, ...older } = task()
    const read = T.decode(JSON.stringify(older), "older.json")
    expect(Either.getOrThrow(read).repo_name).toBeNull()
    expect(Either.getOrThrow(T.decode(T.encode(task({ repo_name: "app" })), "new.json")).repo_name).toBe("app")
  })
})
