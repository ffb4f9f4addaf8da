/**
 * The conductor beside the queue's loop, scenario by scenario, on virtual
 * time: an in-memory filesystem, a fake implementer and a fake conductor
 * agent replying scripted verdicts, the real waiter and loop beating together.
 */
import { FileSystem } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Either, Exit, Layer, Option, Ref, Scope, TestClock } from "effect"
import { Rosters, type AgentSpec } from "../../src/agents/AgentRoster.js"
import { Agents, type CallInput, type CallResult } from "../../src/agents/Agents.js"
import { Conductor, type ConductorOptions } from "../../src/daemon/Conductor.js"
import { Deputies } from "../../src/daemon/Deputies.js"
import * as Deputy from "../../src/daemon/Deputy.js"
import { readDecisions } from "../../src/daemon/ConductorLog.js"
import { Notices, listIn } from "../../src/daemon/Notices.js"
import { QueueLoop, type QueueEvent } from "../../src/daemon/QueueLoop.js"
import { TICK, Waiter } from "../../src/daemon/Waiter.js"
import { MagiConfig, type Settings } from "../../src/platform/MagiConfig.js"
import * as Q from "../../src/questions/Question.js"
import { Notifier } from "../../src/questions/Notifier.js"
import { QuestionStore, StoreError } from "../../src/questions/QuestionStore.js"
import * as Lease from "../../src/questions/Leases.js"
import * as T from "../../src/queue/Task.js"
import { TaskStore, TaskStoreError } from "../../src/queue/TaskStore.js"
import { RunDriver } from "../../src/runs/RunDriver.js"
import { RunStore } from "../../src/runs/Runs.js"
import { sampleRun } from "../runSupport.js"
import { homeInMemory, type Base } from "./loopSupport.js"

const HOME = "/home"
const impl: AgentSpec = { id: "fake", kind: "codex", command: ["codex"], model: null, args: [], env: {} }
const boss: AgentSpec = { id: "boss", kind: "codex", command: ["codex"], model: null, args: [], env: {} }

interface Reply {
  readonly during?: (input: CallInput) => Effect.Effect<void, never, QuestionStore | FileSystem.FileSystem>
  readonly text: string
  readonly usable?: boolean
  readonly timedOut?: boolean
}
type Script = (input: CallInput, n: number) => Reply

interface World {
  readonly calls: Ref.Ref<ReadonlyArray<CallInput>>
  readonly conducts: Ref.Ref<ReadonlyArray<CallInput>>
  readonly verdicts: Ref.Ref<Script>
  readonly events: Ref.Ref<ReadonlyArray<QueueEvent>>
  readonly base: Context.Context<Base>
}

const makeWorld = Effect.gen(function* () {
  const base = yield* Layer.build(homeInMemory(HOME))
  return {
    calls: yield* Ref.make<ReadonlyArray<CallInput>>([]),
    conducts: yield* Ref.make<ReadonlyArray<CallInput>>([]),
    verdicts: yield* Ref.make<Script>(() => ({ text: '```json\n{"decisions":[]}\n```' })),
    events: yield* Ref.make<ReadonlyArray<QueueEvent>>([]),
    base
  } satisfies World
})

/** The implementer always finishes; the conductor replies what `verdicts` says. */
const fakeAgents = (w: World) =>
  Layer.succeed(Agents, {
    call: (input) =>
      Effect.gen(function* () {
        const conducting = input.node === "conduct" || input.node === "deputy"
        const n = (yield* Ref.updateAndGet(conducting ? w.conducts : w.calls, (c) => [...c, input])).length
        const reply: Reply = conducting ? (yield* Ref.get(w.verdicts))(input, n) : { text: "Done." }
        if (reply.during) yield* reply.during(input).pipe(Effect.provide(w.base))
        const usable = (reply.usable ?? true) && reply.timedOut !== true
        const session = input.seat.session ?? `thread-${input.node}`
        return {
          text: reply.text,
          session,
          usable,
          quota: null,
          exitCode: reply.timedOut === true ? null : usable ? 0 : 1,
          timedOut: reply.timedOut ?? false,
          seat: { ...input.seat, turns: input.seat.turns + 1, session },
          stdoutFile: "",
          stderrFile: ""
        } satisfies CallResult
      })
  })

const startServe = (w: World, settings: Partial<Settings> = {}, options: ConductorOptions = {}) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const ctx = yield* Layer.buildWithScope(
      Layer.mergeAll(
        Waiter.layer,
        QueueLoop.layer({ announce: (e) => Ref.update(w.events, (all) => [...all, e]) })
      ).pipe(
        Layer.provideMerge(
          Layer.merge(
            Conductor.layer(options),
            options.disabled === true ? Layer.succeed(Deputies, Deputies.make({ tick: Effect.void, settle: Effect.void })) : Deputies.layer
          )
        ),
        Layer.provideMerge(Notices.at(`${HOME}/notices`)),
        Layer.provideMerge(RunDriver.layer),
        Layer.provide(Layer.mergeAll(fakeAgents(w), Rosters.fixed([impl, boss]), MagiConfig.fixed({ conductor: "boss", ...settings }), Notifier.off)),
        Layer.provideMerge(Layer.succeedContext(w.base))
      ),
      scope
    )
    const waiter = Context.get(ctx, Waiter)
    const queue = Context.get(ctx, QueueLoop)
    const beat = Effect.gen(function* () {
      yield* waiter.tick
      yield* waiter.settle
      yield* queue.tick
      yield* queue.settle
      yield* Context.get(ctx, Deputies).settle
      yield* TestClock.adjust(TICK)
    })
    return { scope, queue, beat, beats: (n: number) => Effect.repeatN(beat, n - 1) }
  })

const stop = (s: { readonly scope: Scope.CloseableScope }) => Scope.close(s.scope, Exit.void)
const store = (w: World) => Context.get(w.base, TaskStore)
const file = (w: World, instruction: string, over: Partial<Omit<T.NewTask, "id" | "now">> = {}) =>
  store(w).add({ instruction, repo: "/repo", ...over }).pipe(Effect.orDie)
const task = (w: World, id: string) => store(w).get(id).pipe(Effect.orDie)
const prompts = (w: World) => Effect.map(Ref.get(w.calls), (c) => c.map((i) => i.prompt.split("\n")[0]!))
const decisions = (w: World) => readDecisions(`${HOME}/conduct`).pipe(Effect.provide(w.base))
const json = (v: unknown) => `I looked at the queue.\n\n\`\`\`json\n${JSON.stringify(v)}\n\`\`\`\n`
/** The conductor says `first` on its first turn and nothing after. */
const once = (w: World, first: Reply) => Ref.set(w.verdicts, (_, n) => (n === 1 ? first : { text: json({ decisions: [] }) }))

describe("the conductor", () => {
  it.scoped("a blocked_by is applied before the loop picks, and released once the blocker is done", () =>
    Effect.gen(function* () {
      const w = yield* makeWorld
      const api = yield* file(w, "Build the API", { priority: 1 })
      const client = yield* file(w, "Use the API", { priority: 5 })
      yield* once(w, { text: json({ decisions: [{ id: client.id, blocked_by: [api.id], reason: "it calls the API" }] }) })
      const s = yield* startServe(w)
      yield* s.beats(1)
      // The higher-priority task waits; the loop went on to the other one.
      expect(yield* prompts(w)).toEqual(["Build the API"])
      expect(yield* task(w, client.id)).toMatchObject({ status: "blocked", blocked_by: [api.id], priority: 5 })
      const first = (yield* Ref.get(w.conducts))[0]!
      expect(first).toMatchObject({ node: "conduct", allowWrite: false, cwd: "/repo", artifactsDir: `${HOME}/conduct/artifacts/turn-1` })
      expect(first.seat.key).toBe("conduct")
      expect(first.prompt).toContain(`### ${client.id}`)
      yield* s.beats(2)
      expect(yield* prompts(w)).toEqual(["Build the API", "Use the API"])
      expect((yield* task(w, client.id)).status).toBe("done")
      const log = yield* decisions(w)
      expect(log.find((r) => r.task === client.id)).toMatchObject({ outcome: "applied", why: `blocked on ${T.shortId(api.id)}` })
      // Its seat is kept for the next turn.
      const seat = JSON.parse(yield* Context.get(w.base, FileSystem.FileSystem).readFileString(`${HOME}/conduct/seat.json`))
      expect(seat).toMatchObject({ key: "conduct", agent: "boss" })
      yield* stop(s)
    }))

  it.scoped("a question is filed and the loop does not wait; the owner's choice unblocks the task with the answer in its next prompt", () =>
    Effect.gen(function* () {
      const w = yield* makeWorld
      const db = yield* file(w, "Add a database", { priority: 5 })
      const other = yield* file(w, "Other work")
      yield* once(w, {
        text: json({ decisions: [{ id: db.id, question: "Which database?", choices: ["Postgres", "SQLite"], reason: "the issue does not say" }] })
      })
      const s = yield* startServe(w)
      yield* s.beats(1)
      const questions = Context.get(w.base, QuestionStore)
      const [q] = (yield* questions.list).filter((x) => x.node === "conduct")
      expect(q).toMatchObject({
        run: db.id,
        seat: "conduct",
        summary: "Which database?",
        detail: "the issue does not say",
        choices: ["Postgres", "SQLite"],
        status: "open"
      })
      expect(yield* task(w, db.id)).toMatchObject({ status: "blocked", blocked_by: [q!.id] })
      // Nobody waited: the other task ran in the same cycle.
      expect(yield* prompts(w)).toEqual(["Other work"])
      expect((yield* task(w, other.id)).status).toBe("done")
      yield* s.beats(3)
      expect(yield* prompts(w)).toEqual(["Other work"])
      yield* questions.update(q!.id, (x) => Q.answer(x, { choice: "SQLite" }, new Date(0)))
      yield* s.beats(2)
      const calls = yield* Ref.get(w.calls)
      expect(calls.map((c) => c.prompt.split("\n")[0])).toEqual(["Other work", "Add a database"])
      expect(calls[1]!.prompt).toContain(`- question ${Q.shortId(q!.id)}: SQLite`)
      expect(yield* task(w, db.id)).toMatchObject({ status: "done", answers: [{ question: q!.id, answer: "SQLite" }] })
      expect((yield* decisions(w))[0]).toMatchObject({ task: db.id, outcome: "applied", question: q!.id })
      yield* stop(s)
    }))

  it.scoped("a stalled task is shown as stalled and requeued for a fresh start", () =>
    Effect.gen(function* () {
      const w = yield* makeWorld
      const runs = Context.get(w.base, RunStore)
      const t = yield* file(w, "Long work")
      yield* runs.put(sampleRun("19700101-000000-aaaa", { status: "stalled", reason: "the magi loop that ran it is gone" }))
      yield* store(w).update(t.id, (x) => T.start(x, "19700101-000000-aaaa"))
      yield* store(w).update(t.id, (x) => T.stall(x, "the magi loop that ran it is gone"))
      yield* once(w, { text: json({ decisions: [{ id: t.id, recovery: "requeue", reason: "nothing was wrong with it" }] }) })
      const s = yield* startServe(w)
      yield* s.beats(1)
      const prompt = (yield* Ref.get(w.conducts))[0]!.prompt
      expect(prompt.slice(prompt.indexOf("## Stalled tasks"), prompt.indexOf("## Finished tasks"))).toContain(`### ${t.id}`)
      expect(prompt).toContain("last run: 19700101-000000-aaaa (stalled)")
      const calls = yield* Ref.get(w.calls)
      expect(calls).toHaveLength(1)
      // A fresh start: the last attempt's error is not carried into its prompt.
      expect(calls[0]!.prompt).not.toContain("## The last attempt")
      expect(yield* task(w, t.id)).toMatchObject({ status: "done", attempts: 1 })
      expect((yield* decisions(w))[0]).toMatchObject({ outcome: "applied", why: "requeued for a fresh start" })
      yield* stop(s)
    }))

  it.scoped("a review recovery starts the next run from the branch the task's own last run left", () =>
    Effect.gen(function* () {
      const w = yield* makeWorld
      const runs = Context.get(w.base, RunStore)
      const t = yield* file(w, "Fix the parser")
      yield* runs.put(sampleRun("19700101-000000-bbbb", { status: "failed", reason: "tests fail", branch: "magi/bbbb" }))
      yield* store(w).update(t.id, (x) => T.start(x, "19700101-000000-bbbb"))
      yield* store(w).update(t.id, (x) => T.fail(x, "tests fail", 1))
      yield* once(w, { text: json({ decisions: [{ id: t.id, recovery: "review", reason: "one test left" }] }) })
      const s = yield* startServe(
        w,
        {},
        { survivingBranch: (run) => Effect.succeed(run.id === "19700101-000000-bbbb" ? Option.some({ branch: run.branch, head: "c0ffee" }) : Option.none()) }
      )
      yield* s.beats(1)
      expect((yield* Ref.get(w.conducts))[0]!.prompt).toContain("surviving branch: magi/bbbb at c0ffee")
      const calls = yield* Ref.get(w.calls)
      expect(calls).toHaveLength(1)
      expect(calls[0]!.prompt).toContain("Earlier work on this task is on branch `magi/bbbb`")
      expect((yield* decisions(w))[0]).toMatchObject({ outcome: "applied", why: "requeued to review magi/bbbb" })
      yield* stop(s)
    }))

  it.scoped("a circular blocked_by, or one naming nothing, is refused, recorded, and changes nothing", () =>
    Effect.gen(function* () {
      const w = yield* makeWorld
      const a = yield* file(w, "Task A")
      const b = yield* store(w).add({ instruction: "Task B", repo: "/repo" }, (x) => T.block(x, [a.id], "after A")).pipe(Effect.orDie)
      yield* once(w, {
        text: json({ decisions: [{ id: a.id, blocked_by: [b.id] }, { id: a.id, blocked_by: ["19990101-000000-dead"] }] })
      })
      const s = yield* startServe(w)
      yield* s.beats(1)
      const log = yield* decisions(w)
      expect(log).toHaveLength(2)
      expect(log[1]).toMatchObject({ task: a.id, outcome: "refused", why: expect.stringContaining("would close a circle") })
      expect(log[0]).toMatchObject({ task: a.id, outcome: "refused", why: expect.stringContaining("no task or question has that id") })
      // A ran anyway, and B after it.
      yield* s.beats(2)
      expect(yield* prompts(w)).toEqual(["Task A", "Task B"])
      yield* stop(s)
    }))

  it.scoped("a timed-out turn changes nothing and the loop goes on to its own next task", () =>
    Effect.gen(function* () {
      const w = yield* makeWorld
      const t = yield* file(w, "Work")
      yield* Ref.set(w.verdicts, () => ({ text: "", timedOut: true }))
      const s = yield* startServe(w)
      yield* s.beats(1)
      expect(yield* Ref.get(w.conducts)).toHaveLength(1)
      expect((yield* Ref.get(w.events)).find((e) => e.kind === "conducted")?.line).toContain("timed out after 300 s; this cycle changes nothing")
      expect(yield* prompts(w)).toEqual(["Work"])
      expect((yield* task(w, t.id)).status).toBe("done")
      expect(yield* decisions(w)).toEqual([])
      yield* stop(s)
    }))

  it.scoped("an unparseable reply changes nothing, and the same snapshot is never shown twice until something changes", () =>
    Effect.gen(function* () {
      const w = yield* makeWorld
      const t = yield* file(w, "Wait for me")
      yield* store(w).update(t.id, (x) => T.hold(x, "mine"))
      yield* Ref.set(w.verdicts, () => ({ text: "I would requeue {it} but I forgot the block." }))
      const s = yield* startServe(w)
      yield* s.beats(5)
      expect(yield* Ref.get(w.conducts)).toHaveLength(1)
      expect((yield* Ref.get(w.events)).find((e) => e.kind === "conducted")?.line).toContain("contained no JSON object")
      expect(yield* task(w, t.id)).toMatchObject({ status: "held", hold_source: "manual", hold_reason: "mine" })
      // Something changes: it looks again.
      yield* TestClock.adjust("1 second")
      yield* Effect.promise(() => new Promise((r) => setTimeout(r, 5)))
      yield* store(w).update(t.id, (x) => T.reprioritize(x, 3))
      yield* s.beats(3)
      expect(yield* Ref.get(w.conducts)).toHaveLength(2)
      expect(yield* Ref.get(w.calls)).toEqual([])
      yield* stop(s)
    }))

  it.scoped("a reply touching the owner's manual hold is refused and recorded; --no-conductor or no [roles] conductor means no turn at all", () =>
    Effect.gen(function* () {
      const w = yield* makeWorld
      const t = yield* file(w, "Mine")
      yield* store(w).update(t.id, (x) => T.hold(x, "mine"))
      yield* once(w, { text: json({ decisions: [{ id: t.id, recovery: "requeue" }] }) })
      const s = yield* startServe(w)
      yield* s.beats(1)
      expect((yield* decisions(w))[0]).toMatchObject({ outcome: "refused", why: expect.stringContaining("manual hold") })
      expect((yield* task(w, t.id)).status).toBe("held")
      yield* stop(s)
      const w2 = yield* makeWorld
      yield* file(w2, "Work")
      const off = yield* startServe(w2, {}, { disabled: true })
      yield* off.beats(2)
      yield* stop(off)
      const unset = yield* startServe(w2, { conductor: null })
      yield* unset.beats(2)
      expect(yield* Ref.get(w2.conducts)).toEqual([])
      expect(yield* prompts(w2)).toEqual(["Work"])
      yield* stop(unset)
    }))

  it.scoped("a deputy keeps the owner company: it replies on the thread to an ask-back, settles with the owner's quoted words, and is started at most 3 times, 30 s apart", () =>
    Effect.gen(function* () {
      const w = yield* makeWorld
      const questions = Context.get(w.base, QuestionStore)
      const db = yield* file(w, "Add a database")
      const asked = json({ decisions: [{ id: db.id, question: "Which database?", choices: ["Postgres", "SQLite"], reason: "unclear" }] })
      const seats: string[] = []
      yield* Ref.set(w.verdicts, (input, n) => {
        if (input.node === "conduct") return { text: n === 1 ? asked : json({ decisions: [] }) }
        seats.push(input.seat.key)
        // The deputy: answers an unread ask-back on the thread; settles once the owner's words pick a choice.
        return {
          text: "kept the owner company",
          during: (i) =>
            Effect.gen(function* () {
              const [q] = (yield* questions.list).filter((x) => x.node === "conduct")
              const said = Q.unreadOwnerTurns(q!) ?? ""
              const now = new Date(0)
              if (said.includes("go with sqlite"))
                yield* questions.update(q!.id, (x) => Deputy.settle(x, { seat: i.seat.key, choice: "SQLite", quote: "go with sqlite" }, now))
              else if (said.includes("faster"))
                yield* questions.update(q!.id, (x) =>
                  Q.reply({ ...x, delivered_turns: x.thread.length }, "SQLite is faster for this size of data.", x.choices, now))
            }).pipe(Effect.orDie)
        }
      })
      const s = yield* startServe(w)
      yield* s.beats(1)
      const [q] = (yield* questions.list).filter((x) => x.node === "conduct")
      expect(seats).toEqual([`deputy-${Q.shortId(q!.id)}`])
      // Not restarted within 30 s.
      yield* s.beats(4)
      expect(seats).toHaveLength(1)
      yield* questions.update(q!.id, (x) => Q.say(x, "which is faster?", new Date(0)))
      yield* s.beats(3)
      expect(seats).toHaveLength(2)
      expect((yield* questions.get(q!.id)).thread.at(-1)).toMatchObject({ who: "agent", body: "SQLite is faster for this size of data." })
      yield* questions.update(q!.id, (x) => Q.say(x, "ok, go with sqlite then", new Date(0)))
      yield* s.beats(8)
      expect(seats).toHaveLength(3)
      expect(yield* questions.get(q!.id)).toMatchObject({ status: "answered", answer: { choice: "SQLite" } })
      expect(yield* task(w, db.id)).toMatchObject({ status: "done", answers: [{ question: q!.id, answer: "SQLite" }] })
      expect((yield* Ref.get(w.calls))[0]!.prompt).toContain(`- question ${Q.shortId(q!.id)}: SQLite`)
      yield* stop(s)
    }))
})

describe("deputies, across restarts of magi serve", () => {
  const leaseKind = (w: World, id: string) => Lease.read(`${HOME}/questions`, id).pipe(Effect.provide(w.base), Effect.map(Option.map((l) => l.kind)))
  /** The deputy turns started so far, by seat. */
  const deputySeats = (w: World) => Effect.map(Ref.get(w.conducts), (c) => c.filter((i) => i.node === "deputy").map((i) => i.seat.key))
  const conductorQuestions = (w: World) => Effect.map(Context.get(w.base, QuestionStore).list, (all) => all.filter((q) => q.node === "conduct"))

  it.scoped("a deputy holds a deputy lease on its question while it runs and lets it go after, and is told the brief the conductor wrote when it filed the question, even after the task changed", () =>
    Effect.gen(function* () {
      const w = yield* makeWorld
      const db = yield* file(w, "Add a database")
      const asked = json({ decisions: [{ id: db.id, question: "Which database?", choices: ["Postgres", "SQLite"], reason: "the instruction names none" }] })
      const heldAs: Array<Option.Option<string>> = []
      yield* Ref.set(w.verdicts, (input, n) =>
        input.node === "conduct"
          ? { text: n === 1 ? asked : json({ decisions: [] }) }
          : {
            text: "kept the owner company",
            during: () =>
              Effect.gen(function* () {
                const [q] = (yield* Context.get(w.base, QuestionStore).list).filter((x) => x.node === "conduct")
                heldAs.push(yield* Effect.map(Lease.read(`${HOME}/questions`, q!.id), Option.map((l) => l.kind)))
              }).pipe(Effect.orDie)
          })
      const s = yield* startServe(w)
      yield* s.beats(1)
      const [q] = yield* conductorQuestions(w)
      expect(heldAs).toEqual([Option.some("deputy")])
      expect(yield* leaseKind(w, q!.id)).toEqual(Option.none())
      // The brief is on the question, as the conductor wrote it.
      expect(q!.deputy_brief).toContain(`Blocked task: ${db.id} (Add a database).`)
      expect(q!.deputy_brief).toContain("Why the conductor asked: the instruction names none")
      // The task changes; a deputy started later is still told what the conductor knew.
      yield* store(w).update(db.id, (t) => Either.right({ ...t, title: "Add a key-value store" })).pipe(Effect.orDie)
      yield* s.beats(7)
      const prompts = (yield* Ref.get(w.conducts)).filter((i) => i.node === "deputy").map((i) => i.prompt)
      expect(prompts).toHaveLength(2)
      expect(prompts[1]).toContain(q!.deputy_brief!)
      expect(prompts[1]).not.toContain("key-value")
      yield* stop(s)
    }))

  it.scoped("keeps the counts through restarts: none restarted within 30 s of the last start, 3 starts in all, then one notice and never a second", () =>
    Effect.gen(function* () {
      const w = yield* makeWorld
      const db = yield* file(w, "Add a database")
      yield* once(w, { text: json({ decisions: [{ id: db.id, question: "Which database?", choices: ["Postgres", "SQLite"], reason: "unclear" }] }) })
      const notices = Effect.map(listIn(`${HOME}/notices`).pipe(Effect.provide(w.base)), (all) => all.filter((n) => n.input === "deputies"))
      /** One `magi serve`, from start to stop, beating `n` times (5 s each). */
      const serveFor = (n: number) =>
        Effect.gen(function* () {
          const s = yield* startServe(w)
          yield* s.beats(n)
          yield* stop(s)
        })
      yield* serveFor(1) // t=0: the question filed, deputy 1 started
      expect(yield* deputySeats(w)).toHaveLength(1)
      yield* serveFor(5) // t=5..25: restarted, and still within 30 s of that start
      expect(yield* deputySeats(w)).toHaveLength(1)
      yield* serveFor(2) // t=30: deputy 2
      expect(yield* deputySeats(w)).toHaveLength(2)
      yield* serveFor(4) // t=40..55: within 30 s of it
      expect(yield* deputySeats(w)).toHaveLength(2)
      expect(yield* notices).toHaveLength(0)
      yield* serveFor(1) // t=60: deputy 3
      expect(yield* deputySeats(w)).toHaveLength(3)
      yield* serveFor(10) // t=65..110: no fourth; once it has ended, the owner is told, once
      yield* serveFor(10)
      expect(yield* deputySeats(w)).toHaveLength(3)
      expect(yield* notices).toHaveLength(1)
      const [q] = yield* conductorQuestions(w)
      const record = JSON.parse(
        yield* Context.get(w.base, FileSystem.FileSystem).readFileString(`${HOME}/conduct/deputies/${q!.id}/deputy.json`).pipe(Effect.orDie)
      )
      expect(record).toMatchObject({ question: q!.id, starts: 3, noticed: true })
    }))

  it.scoped("counts a deputy a stopped magi serve left running (its lease still beaten) against max_deputies, and starts the next once that lease goes stale", () =>
    Effect.gen(function* () {
      const w = yield* makeWorld
      const a = yield* file(w, "Add a database")
      const b = yield* file(w, "Add a cache")
      yield* once(w, {
        text: json({
          decisions: [
            { id: a.id, question: "Which database?", choices: ["Postgres", "SQLite"], reason: "unclear" },
            { id: b.id, question: "Which cache?", choices: ["Redis", "memory"], reason: "unclear" }
          ]
        })
      })
      const first = yield* startServe(w, { maxDeputies: 1 })
      yield* first.beats(2) // t=0 and t=5: one deputy each, one at a time
      yield* stop(first)
      const [qa, qb] = yield* conductorQuestions(w)
      expect(yield* deputySeats(w)).toHaveLength(2)
      // The first serve was killed; one deputy's own `magi ask --wait` lives on, beating its lease.
      const orphan = (at: string) => Lease.beat(`${HOME}/questions`, at, "deputy").pipe(Effect.provide(w.base))
      yield* orphan(qa!.id)
      const second = yield* startServe(w, { maxDeputies: 1 })
      for (let i = 0; i < 12; i++) {
        if (i % 4 === 0) yield* orphan(qa!.id)
        yield* second.beat
      }
      // t=10..65: both are past their 30 s, but the one slot is the orphan's.
      expect(yield* deputySeats(w)).toHaveLength(2)
      // The orphan stops beating: once its lease is stale (90 s), the slot is free again.
      yield* second.beats(20)
      const seats = yield* deputySeats(w)
      expect(seats.length).toBeGreaterThan(2)
      expect(seats.slice(2)).toContain(Deputy.deputySeat(qb!.id))
      yield* stop(second)
    }))
})

describe("the conductor on a store that fails a read", () => {
  it.scoped("a failed read of the questions files no second question for the same task: the decision is refused and logged", () =>
    Effect.gen(function* () {
      const w0 = yield* makeWorld
      const real = Context.get(w0.base, QuestionStore)
      const failNext = yield* Ref.make(false)
      // The store fails the first listing after the conductor's second turn, once.
      const flaky = {
        ...real,
        list: Effect.flatMap(Ref.getAndSet(failNext, false), (fail) => (fail ? Effect.fail(new StoreError({ message: "the disk hiccuped" })) : real.list))
      }
      const w: World = { ...w0, base: Context.add(w0.base, QuestionStore, flaky) }
      const db = yield* file(w, "Add a database", { priority: 5 })
      const asked = json({ decisions: [{ id: db.id, question: "Which database?", choices: ["Postgres", "SQLite"], reason: "the issue does not say" }] })
      let turns = 0
      yield* Ref.set(w.verdicts, (input) => {
        if (input.node !== "conduct") return { text: json({ decisions: [] }) }
        turns += 1
        return turns === 2 ? { text: asked, during: () => Ref.set(failNext, true) } : { text: turns === 1 ? asked : json({ decisions: [] }) }
      })
      const s = yield* startServe(w)
      yield* s.beats(1)
      expect(yield* conductorQuestionsOf(real)).toHaveLength(1)
      // Something changes, so the conductor takes a second turn and asks the same again.
      yield* file(w, "Other work")
      yield* s.beats(1)
      expect(turns).toBe(2)
      const qs = yield* conductorQuestionsOf(real)
      expect(qs).toHaveLength(1)
      expect(yield* task(w, db.id)).toMatchObject({ status: "blocked", blocked_by: [qs[0]!.id] })
      expect((yield* decisions(w)).filter((r) => r.outcome === "refused")).toMatchObject([{
        task: db.id,
        outcome: "refused",
        why: expect.stringContaining("could not be read")
      }])
      yield* stop(s)
    }))
})

describe("the conductor on a queue that fails a read", () => {
  it.scoped("a failed listing of the queue is not an empty queue: a blocked_by that would close a circle is refused, not written", () =>
    Effect.gen(function* () {
      const w0 = yield* makeWorld
      const real = Context.get(w0.base, TaskStore)
      // Armed during the conductor's turn: the next listing of the queue (the circle check's) fails, once.
      const armed = yield* Ref.make(0)
      const flaky = {
        ...real,
        list: Effect.flatMap(
          Ref.getAndUpdate(armed, (n) => (n === 0 ? 0 : n - 1)),
          (n) => (n === 1 ? Effect.fail(new TaskStoreError({ message: "the disk hiccuped" })) : real.list)
        )
      }
      const w: World = { ...w0, base: Context.add(w0.base, TaskStore, flaky) }
      const a = yield* file(w, "Task A")
      const b = yield* real.add({ instruction: "Task B", repo: "/repo" }, (x) => T.block(x, [a.id], "after A")).pipe(Effect.orDie)
      yield* once(w, { text: json({ decisions: [{ id: a.id, blocked_by: [b.id] }] }), during: () => Ref.set(armed, 1) })
      const s = yield* startServe(w)
      yield* s.beat
      expect((yield* task(w, a.id)).blocked_by).toEqual([])
      expect(yield* decisions(w)).toMatchObject([{ task: a.id, outcome: "refused", why: expect.stringContaining("the disk hiccuped") }])
      yield* stop(s)
    }))
})

const conductorQuestionsOf = (questions: Context.Tag.Service<typeof QuestionStore>) =>
  Effect.map(questions.list.pipe(Effect.orDie), (all) => all.filter((q) => q.node === "conduct"))
