/**
 * How a turn settles its run, against a store that can fail: the run's fate
 * must never be decided on a listing that did not happen.
 */
import { describe, expect, it } from "@effect/vitest"
import * as FileSystem from "@effect/platform/FileSystem"
import { Effect, Either, Fiber, Layer, TestClock } from "effect"
import { spawnSync } from "node:child_process"
import * as NodeOs from "node:os"
import { Rosters } from "../../src/agents/AgentRoster.js"
import { Agents, type CallResult } from "../../src/agents/Agents.js"
import { MagiConfig } from "../../src/platform/MagiConfig.js"
import { MagiHome } from "../../src/platform/MagiHome.js"
import * as MemoryFileSystem from "../../src/store/MemoryFileSystem.js"
import * as Q from "../../src/questions/Question.js"
import { QuestionStore, StoreError } from "../../src/questions/QuestionStore.js"
import { RunDriver } from "../../src/runs/RunDriver.js"
import { RunStore, type Run } from "../../src/runs/Runs.js"
import { makeSeatLocks } from "../../src/runs/RunTurns.js"
import { plainFolders } from "../daemon/loopSupport.js"
import { runWithSession } from "../runSupport.js"

const RUN_ID = "19700101-000000-9fb7"

const run: Run = runWithSession(RUN_ID)

const question = Q.make({
  id: "19700101-000001-ab12",
  run: RUN_ID,
  node: "impl",
  seat: "impl",
  summary: "Which backend?",
  detail: "",
  choices: ["SQLite", "Redis"],
  now: new Date(0),
  cwd: "/w"
})

const turn: CallResult = {
  text: "Asked the owner; waiting.",
  session: "thread-1",
  usable: true,
  quota: null,
  exitCode: 0,
  timedOut: false,
  seat: { key: "impl", agent: "fake", turns: 2, session: "thread-1" },
  stdoutFile: "",
  stderrFile: ""
}

/** The real stores over memory, except that listing the questions fails (a readdir error). */
const unlistable = Layer.effect(
  QuestionStore,
  Effect.map(QuestionStore, (real) => ({ ...real, list: Effect.fail(new StoreError({ message: "readdir /home/questions: EIO" })) }))
).pipe(Layer.provide(QuestionStore.at("/home/questions")))

const stores = RunStore.at("/home/runs").pipe(
  Layer.provideMerge(unlistable),
  Layer.provideMerge(MemoryFileSystem.layer)
)

/** The driver over those stores; settling a turn runs no agent and makes no run. */
const driver = RunDriver.layer.pipe(
  Layer.provide(
    Layer.mergeAll(
      Layer.succeed(Agents, { call: () => Effect.dieMessage("no agent runs when a turn is settled") }),
      Rosters.fixed([]),
      MagiHome.at("/home"),
      MagiConfig.fixed({}),
      plainFolders
    )
  ),
  Layer.provideMerge(stores)
)

describe("finishing a turn", () => {
  it.effect("when the run's questions cannot be listed for longer than the store is waited for, the run is left waiting and its open question is not abandoned", () =>
    Effect.gen(function* () {
      const runs = yield* RunStore
      const questions = yield* QuestionStore
      yield* runs.put(run)
      yield* questions.put(question)
      // A store briefly away is waited for (`StoreWait`); this one never comes back.
      const finishing = yield* Effect.fork((yield* RunDriver).finish(RUN_ID, turn))
      yield* TestClock.adjust("31 minutes")
      const after = yield* Fiber.join(finishing)
      expect(after.status).toBe("waiting")
      expect(after.reason).toContain("EIO")
      expect((yield* questions.get(question.id)).status).toBe("open")
    }).pipe(Effect.provide(driver)))
})

/** A pid that was a process on this machine a moment ago and is no more. */
const deadPid = () => spawnSync(process.execPath, ["-e", "0"]).pid

describe("a seat's lock", () => {
  const lockFile = "/home/runs/r1/leases/seat-impl.lease"
  const lockedBy = (pid: number, host = NodeOs.hostname()) =>
    Effect.flatMap(FileSystem.FileSystem, (fs) =>
      Effect.zipRight(
        fs.makeDirectory("/home/runs/r1/leases", { recursive: true }),
        fs.writeFileString(lockFile, JSON.stringify({ host, pid, token: "theirs", renewed_at: 0, kind: "daemon" }))
      ))

  it.effect("left by a turn whose process died on this machine is free at once, though renewed a moment ago", () =>
    Effect.gen(function* () {
      yield* lockedBy(deadPid())
      const locks = yield* makeSeatLocks
      expect(yield* locks.held("/home/runs/r1", "impl")).toBe(false)
      expect(Either.isRight(yield* Effect.either(locks.take("/home/runs/r1", "impl")))).toBe(true)
    }).pipe(Effect.provide(MemoryFileSystem.layer)))

  it.effect("of a live process keeps the seat busy until it goes unrenewed for 90 s", () =>
    Effect.gen(function* () {
      yield* lockedBy(process.pid)
      const locks = yield* makeSeatLocks
      const busy = yield* Effect.either(locks.take("/home/runs/r1", "impl"))
      expect(Either.isLeft(busy) && busy.left._tag === "SeatBusy").toBe(true)
      yield* TestClock.adjust("91 seconds")
      expect(Either.isRight(yield* Effect.either(locks.take("/home/runs/r1", "impl")))).toBe(true)
    }).pipe(Effect.provide(MemoryFileSystem.layer)))

  it.effect("of a process on another machine is judged by its renewals alone: a pid means nothing there", () =>
    Effect.gen(function* () {
      yield* lockedBy(deadPid(), "another-machine")
      const locks = yield* makeSeatLocks
      expect(yield* locks.held("/home/runs/r1", "impl")).toBe(true)
      yield* TestClock.adjust("91 seconds")
      expect(yield* locks.held("/home/runs/r1", "impl")).toBe(false)
    }).pipe(Effect.provide(MemoryFileSystem.layer)))
})
