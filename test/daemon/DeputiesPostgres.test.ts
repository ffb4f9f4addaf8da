/**
 * The deputies' counts on PostgreSQL, on the real server of the test run:
 * two `magi serve`s on two machines sharing the database (each its own home
 * and pool) keep to one count per conductor question: no restart within
 * 30 s of the other's start, three starts in all, then one notice, and
 * never a `deputy.json` in either home.
 */
import { describe, expect, it } from "@effect/vitest"
import { FileSystem } from "@effect/platform"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { Effect, Layer, Redacted, Ref, TestClock } from "effect"
import * as NodePath from "node:path"
import { Rosters, type AgentSpec } from "../../src/agents/AgentRoster.js"
import { Agents, type CallInput, type CallResult } from "../../src/agents/Agents.js"
import { Deputies, deputiesDir } from "../../src/daemon/Deputies.js"
import { Notices } from "../../src/daemon/Notices.js"
import { MagiConfig } from "../../src/platform/MagiConfig.js"
import { MagiHome } from "../../src/platform/MagiHome.js"
import { StoreBackend } from "../../src/store/StoreBackend.js"
import { Notifier } from "../../src/questions/Notifier.js"
import { QuestionStore } from "../../src/questions/QuestionStore.js"
import { TaskStore } from "../../src/queue/TaskStore.js"
import { freshDatabase, query } from "../pgSupport.js"
import { ASKED, choiceQuestion, tempDir } from "../support.js"

const boss: AgentSpec = { id: "boss", kind: "codex", command: ["codex"], model: null, args: [], env: {} }

describe("the deputies on PostgreSQL", () => {
  it.scoped("two serves sharing the database keep one count per question: 30 s apart, 3 starts, then one notice", () =>
    Effect.gen(function* () {
      const db = yield* freshDatabase
      const base = yield* tempDir
      const calls = yield* Ref.make<ReadonlyArray<CallInput>>([])
      const agents = Layer.succeed(Agents, {
        call: (input) =>
          Effect.as(
            Ref.update(calls, (all) => [...all, input]),
            {
              text: "kept the owner company",
              session: "thread",
              usable: true,
              quota: null,
              exitCode: 0,
              timedOut: false,
              seat: { ...input.seat, turns: input.seat.turns + 1, session: "thread" },
              stdoutFile: "",
              stderrFile: ""
            } satisfies CallResult
          )
      })
      /** One machine's `magi serve`: its own home, the shared database. */
      const serve = (name: string) =>
        Effect.gen(function* () {
          const home = NodePath.join(base, name)
          const context = yield* Layer.build(
            Deputies.layer.pipe(
              Layer.provideMerge(Layer.mergeAll(QuestionStore.layer, Notices.layer, TaskStore.at(NodePath.join(home, "queue")))),
              Layer.provide(Layer.mergeAll(agents, Rosters.fixed([boss]), MagiConfig.fixed({ conductor: "boss" }), Notifier.off)),
              Layer.provideMerge(Layer.mergeAll(StoreBackend.postgres(Redacted.make(db.url)), MagiHome.at(home))),
              Layer.provideMerge(NodeFileSystem.layer)
            )
          )
          return yield* Effect.provide(
            Effect.map(Effect.all([Deputies, QuestionStore, Notices, FileSystem.FileSystem]), ([deputies, questions, notices, fs]) => ({
              home,
              questions,
              notices,
              fs,
              beat: Effect.zipRight(deputies.tick, deputies.settle)
            })),
            context
          )
        })
      const laptop = yield* serve("laptop")
      const server = yield* serve("server")
      yield* TestClock.setTime(ASKED.getTime() + 60_000)
      const q = { ...choiceQuestion(), node: "conduct" }
      yield* laptop.questions.put(q)
      const starts = Effect.map(Ref.get(calls), (all) => all.filter((c) => c.node === "deputy").length)
      const stored = Effect.map(
        query(db.url, "SELECT body FROM magi_records WHERE kind = 'conduct/deputies' AND id = $1", [q.id]),
        (rows) => JSON.parse(String(rows[0]!.body))
      )

      yield* laptop.beat // t=0: deputy 1, on the laptop
      expect(yield* starts).toBe(1)
      expect(yield* stored).toMatchObject({ question: q.id, starts: 1 })
      yield* server.beat // the server knows that start: nothing within 30 s of it
      yield* TestClock.adjust("20 seconds")
      yield* server.beat
      expect(yield* starts).toBe(1)
      yield* TestClock.adjust("11 seconds")
      yield* server.beat // t=31: deputy 2, on the server
      expect(yield* starts).toBe(2)
      yield* laptop.beat
      expect(yield* starts).toBe(2)
      yield* TestClock.adjust("31 seconds")
      yield* laptop.beat // t=62: deputy 3
      expect(yield* stored).toMatchObject({ starts: 3, noticed: false })
      yield* TestClock.adjust("31 seconds")
      yield* server.beat // no fourth: the owner is told, once
      yield* laptop.beat
      expect(yield* starts).toBe(3)
      expect(yield* stored).toMatchObject({ starts: 3, noticed: true })
      const told = (yield* laptop.notices.list).filter((n) => n.input === "deputies")
      expect(told).toHaveLength(1)
      expect(told[0]!.question).toBe(q.id)
      // The artifacts' folders are each machine's; the records are the database's.
      for (const side of [laptop, server])
        expect(yield* side.fs.exists(NodePath.join(deputiesDir({ dir: side.home }), q.id, "deputy.json"))).toBe(false)
    }))
})
