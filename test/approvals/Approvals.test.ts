/**
 * Deciding a tool call, as `magi mcp`'s `approve` tool does: the rules
 * first, else a question the owner answers, waited on in slices on the
 * virtual clock, over the in-memory file system.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Fiber, Layer, Schedule, Clock } from "effect"
import { Approvals, type ApprovalOutcome, type ApprovalRequest } from "../../src/approvals/Approvals.js"
import { AuditLog } from "../../src/approvals/AuditLog.js"
import * as AuditLogModule from "../../src/approvals/AuditLog.js"
import { SavedRules } from "../../src/approvals/SavedRules.js"
import * as SavedRulesModule from "../../src/approvals/SavedRules.js"
import { type ApprovalSettings, MagiConfig, noApprovals } from "../../src/platform/MagiConfig.js"
import { MagiHome } from "../../src/platform/MagiHome.js"
import * as MemoryFileSystem from "../../src/store/MemoryFileSystem.js"
import * as ConfiguredStore from "../../src/platform/ConfiguredStore.js"
import { answerQuestion, sayToQuestion } from "../../src/questions/Answers.js"
import { Notifier } from "../../src/questions/Notifier.js"
import type * as Q from "../../src/questions/Question.js"
import { QuestionStore } from "../../src/questions/QuestionStore.js"
import * as AskerWaitModule from "../../src/questions/AskerWait.js"
import { AskerWait } from "../../src/questions/AskerWait.js"
import { runUntilDone } from "../support.js"

/** One slice of an approval's wait, as short as a client's tool-call timeout allows. */
const SLICE = Duration.seconds(50)

const world = (approvals: Partial<ApprovalSettings> = {}) => {
  const base = Layer.mergeAll(MemoryFileSystem.layer, MagiHome.at("/magi"), MagiConfig.fixed({ approvals: { ...noApprovals, ...approvals } }))
  const stores = Layer.mergeAll(
    QuestionStore.at("/magi/questions"),
    Notifier.off,
    Layer.effect(SavedRules, Effect.map(SavedRulesModule.make, SavedRules.make)).pipe(Layer.provide(ConfiguredStore.files)),
    Layer.effect(AuditLog, Effect.map(AuditLogModule.make, AuditLog.make))
  ).pipe(Layer.provideMerge(base))
  const waits = Layer.scoped(AskerWait, Effect.map(AskerWaitModule.make(SLICE), AskerWait.make)).pipe(Layer.provideMerge(stores))
  return Approvals.layer.pipe(Layer.provideMerge(waits))
}

const request = (command: string, seat = "impl"): ApprovalRequest => ({
  call: { tool: "Bash", input: { command } },
  run: "20261201-120000-ab12",
  node: "impl",
  seat,
  agent: "claude",
  cwd: "/repo"
})

/** The approval questions on file. */
const approvals = Effect.flatMap(QuestionStore, (s) => s.list).pipe(Effect.map((qs) => qs.filter((q) => q.approval !== undefined)))

/** Wait (on the real clock) until `n` approval questions are filed. */
const filed = (n: number) =>
  approvals.pipe(
    Effect.filterOrFail((qs) => qs.length >= n),
    Effect.retry(Schedule.spaced("5 millis").pipe(Schedule.upTo("30 seconds"))),
    Effect.withClock(Clock.make()),
    Effect.orDie
  )

const decide = (r: ApprovalRequest) => Effect.flatMap(Approvals, (a) => a.decide(r))

/** Ask, let the owner answer with `answer`, and return the outcome. */
const answeredWith = (r: ApprovalRequest, answer: (q: Q.Question) => string, already = 0) =>
  Effect.gen(function* () {
    const fiber = yield* Effect.fork(decide(r))
    const qs = yield* filed(already + 1)
    const q = qs.find((x) => x.approval?.digest !== undefined && !qs.slice(0, already).includes(x))!
    yield* answerQuestion(q.id, { choice: answer(q) })
    return { outcome: yield* runUntilDone(fiber), question: q }
  })

const decided = (o: ApprovalOutcome) => {
  if (o._tag !== "Decided") throw new Error(`expected a decision, got ${o._tag}`)
  return o
}

describe("Approvals.decide", () => {
  it.effect("lets a call an allow rule matches through without asking, and logs that a rule decided", () =>
    Effect.gen(function* () {
      const o = decided(yield* decide(request("git status")))
      expect(o).toMatchObject({ decision: { _tag: "allow" }, by: "rule", rule: "Bash(git status:*)" })
      expect(yield* approvals).toEqual([])
      const log = yield* Effect.flatMap(AuditLog, (l) => l.read)
      expect(log).toMatchObject([{ tool: "Bash", decision: "allow", by: "rule", seat: "impl", run: "20261201-120000-ab12", rule: "Bash(git status:*)" }])
      expect(log[0]!.digest).toMatch(/^[0-9a-f]{16}$/)
      expect(JSON.stringify(log)).not.toContain('git status"')
    }).pipe(Effect.provide(world({ allow: ["Bash(git status:*)"] }))))

  it.effect("denies a call a deny rule matches, even when an allow rule matches too", () =>
    Effect.gen(function* () {
      const o = decided(yield* decide(request("rm -rf build")))
      expect(o).toMatchObject({ decision: { _tag: "deny" }, by: "rule", rule: "Bash(rm:*)" })
    }).pipe(Effect.provide(world({ allow: ["Bash"], deny: ["Bash(rm:*)"] }))))

  it.effect("applies an agent's own rules only to that agent", () =>
    Effect.gen(function* () {
      expect(decided(yield* decide(request("make"))).by).toBe("rule")
      const other = yield* Effect.fork(decide({ ...request("make"), agent: "codex" }))
      yield* filed(1)
      yield* Fiber.interrupt(other)
    }).pipe(Effect.provide(world({ agents: { claude: { allow: ["Bash(make)"], deny: [] } } }))))

  it.effect("asks the owner when no rule decides, and obeys Deny", () =>
    Effect.gen(function* () {
      const { outcome, question } = yield* answeredWith(request("rm -rf build/"), () => "Deny")
      expect(question.summary).toBe("Bash: `rm -rf build/`")
      expect(question.choices).toEqual(["Allow", "Deny", "Always allow Bash(rm -rf build/)"])
      expect(decided(outcome)).toMatchObject({ decision: { _tag: "deny" }, by: "owner", question: question.id })
      const log = yield* Effect.flatMap(AuditLog, (l) => l.read)
      expect(log).toMatchObject([{ decision: "deny", by: "owner", question: question.id }])
    }).pipe(Effect.provide(world())))

  it.effect("asks again for the same call after an Allow: Allow is for this call only", () =>
    Effect.gen(function* () {
      const first = yield* answeredWith(request("make deploy"), () => "Allow")
      expect(decided(first.outcome)).toMatchObject({ decision: { _tag: "allow", always: false }, by: "owner" })
      const again = yield* Effect.fork(decide(request("make deploy")))
      expect((yield* filed(2)).length).toBe(2)
      yield* Fiber.interrupt(again)
    }).pipe(Effect.provide(world())))

  it.effect("saves the rule Always allow showed, and lets the next matching call through with no question", () =>
    Effect.gen(function* () {
      const first = yield* answeredWith(request("git push origin main"), (q) => q.choices[2]!)
      expect(decided(first.outcome)).toMatchObject({ decision: { _tag: "allow", always: true }, by: "owner", rule: "Bash(git push:*)" })
      expect(yield* Effect.flatMap(SavedRules, (s) => s.list)).toMatchObject([{ rule: "Bash(git push:*)", repo: "/repo", question: first.question.id }])
      const next = decided(yield* decide(request("git push origin feature")))
      expect(next).toMatchObject({ decision: { _tag: "allow" }, by: "rule", rule: "Bash(git push:*)" })
      expect((yield* approvals).length).toBe(1)
      // Saved for this repository only.
      const elsewhere = yield* Effect.fork(decide({ ...request("git push origin x"), cwd: "/other" }))
      expect((yield* filed(2)).length).toBe(2)
      yield* Fiber.interrupt(elsewhere)
    }).pipe(Effect.provide(world())))

  it.effect("hands back pending when the slice runs out, and the same call again waits on the same question", () =>
    Effect.gen(function* () {
      const fiber = yield* Effect.fork(decide(request("npm publish")))
      const [q] = yield* filed(1)
      const pending = yield* runUntilDone(fiber)
      expect(pending).toMatchObject({ _tag: "Pending", question: { id: q!.id } })
      const retried = yield* Effect.fork(decide(request("npm publish")))
      yield* answerQuestion(q!.id, { choice: "Allow" })
      expect(decided(yield* runUntilDone(retried))).toMatchObject({ decision: { _tag: "allow" }, by: "owner", question: q!.id })
      expect((yield* approvals).length).toBe(1)
    }).pipe(Effect.provide(world())))

  it.effect("finds an answer given while nobody waited, when the agent retries the call", () =>
    Effect.gen(function* () {
      const fiber = yield* Effect.fork(decide(request("npm publish")))
      const [q] = yield* filed(1)
      yield* runUntilDone(fiber)
      yield* answerQuestion(q!.id, { choice: "Deny" })
      expect(decided(yield* decide(request("npm publish")))).toMatchObject({ decision: { _tag: "deny" }, question: q!.id })
      const after = (yield* approvals)[0]!
      expect(after.answer_delivered).toBe(true)
    }).pipe(Effect.provide(world())))

  it.effect("passes the owner's words on as the reason when they speak instead of choosing", () =>
    Effect.gen(function* () {
      const fiber = yield* Effect.fork(decide(request("rm -rf node_modules")))
      const [q] = yield* filed(1)
      yield* sayToQuestion(q!.id, "run npm ci instead")
      expect(decided(yield* runUntilDone(fiber))).toMatchObject({
        decision: { _tag: "deny", message: expect.stringContaining("run npm ci instead") },
        by: "owner"
      })
    }).pipe(Effect.provide(world())))
})
