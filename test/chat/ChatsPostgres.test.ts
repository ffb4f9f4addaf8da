/**
 * The planning chats on PostgreSQL, on the real server of the test run: a
 * chat opened and answered in one process is read, changed and heard by
 * another sharing the database, its revision moves with each write, and
 * no chat file is left in either home (the turn's artifacts stay local).
 */
import { describe, expect, it } from "@effect/vitest"
import { FileSystem } from "@effect/platform"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Effect, Either, Fiber, Layer, Option, Redacted, Stream } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { Rosters, type AgentSpec } from "../../src/agents/AgentRoster.js"
import { Agents, type CallResult } from "../../src/agents/Agents.js"
import { Chats, chatsDir } from "../../src/chat/Chats.js"
import { MagiHome } from "../../src/platform/MagiHome.js"
import { StoreBackend } from "../../src/store/StoreBackend.js"
import { TaskStore } from "../../src/queue/TaskStore.js"
import { freshDatabase, query } from "../pgSupport.js"
import { tempDir } from "../support.js"

const interviewer: AgentSpec = { id: "interviewer", kind: "claude", command: ["claude"], model: null, args: [], env: {} }

/** An interviewer that always asks the same thing back. */
const asksBack = Layer.succeed(Agents, {
  call: (input) =>
    Effect.succeed(
      {
        text: "Which fetcher do you mean?",
        session: "session-1",
        usable: true,
        quota: null,
        exitCode: 0,
        timedOut: false,
        seat: { ...input.seat, turns: input.seat.turns + 1, session: "session-1" },
        stdoutFile: "",
        stderrFile: ""
      } satisfies CallResult
    )
})

/** Chats on a fresh database, and a way to open them again as another process (its own home, its own pool) would. */
const onPostgres = Effect.gen(function* () {
  const db = yield* freshDatabase
  const base = yield* tempDir
  const repo = NodePath.join(base, "repo")
  NodeFs.mkdirSync(NodePath.join(repo, ".git"), { recursive: true })
  let homes = 0
  const open = Effect.gen(function* () {
    const home = NodePath.join(base, `home-${homes++}`)
    const context = yield* Layer.build(
      Chats.layer.pipe(
        Layer.provide(
          Layer.mergeAll(
            StoreBackend.postgres(Redacted.make(db.url)),
            asksBack,
            Rosters.fixed([interviewer]),
            TaskStore.at(NodePath.join(home, "queue")),
            MagiHome.at(home)
          )
        ),
        Layer.provideMerge(NodeContext.layer)
      )
    )
    return yield* Effect.provide(
      Effect.map(Effect.all([Chats, FileSystem.FileSystem]), ([chats, fs]) => ({ chats, fs, home })),
      context
    )
  })
  return { db, repo, first: yield* open, other: open }
})

describe("the chats on PostgreSQL", () => {
  it.scopedLive("a chat opened and answered in one process is read and changed by another, and is no file in either home", () =>
    Effect.gen(function* () {
      const { db, repo, first, other } = yield* onPostgres
      const second = yield* other
      expect(first.chats.where).toMatch(/^postgres:\/\/.* \(chats\)$/)
      expect(first.chats.root).toBe(chatsDir({ dir: first.home }))
      const before = yield* second.chats.revision
      const started = yield* first.chats.start({ idea: "retry the fetcher", repo })
      expect(started.turns.map((t) => `${t.who}: ${t.body}`)).toEqual(["operator: retry the fetcher", "agent: Which fetcher do you mean?"])
      expect(yield* second.chats.revision).toBeGreaterThan(before)
      // The other process finds it by its short id, and lists it open.
      const seen = yield* second.chats.get(started.id.slice(-4))
      expect(seen).toEqual(started)
      expect((yield* second.chats.list).map((c) => c.id)).toEqual([started.id])
      expect(yield* second.chats.countOpen).toBe(1)
      // Words recorded there are read here, and a settled chat refuses more from either side.
      yield* second.chats.record(started.id, "the HTTP one")
      expect((yield* first.chats.get(started.id)).turns.at(-1)).toMatchObject({ who: "operator", body: "the HTTP one" })
      yield* first.chats.abandon(started.id)
      const refused = yield* Effect.either(second.chats.record(started.id, "one more thing"))
      expect(Either.isLeft(refused) && refused.left._tag === "ChatRefused" && refused.left.settled).toBe(true)
      const [row] = yield* query(db.url, "SELECT body FROM magi_records WHERE kind = 'chats' AND id = $1", [started.id])
      expect(JSON.parse(String(row!.body))).toMatchObject({ id: started.id, status: "abandoned" })
      for (const side of [first, second]) {
        const names = yield* side.fs.readDirectory(side.chats.root).pipe(Effect.orElseSucceed((): string[] => []))
        expect(names.filter((n) => n.endsWith(".json"))).toEqual([])
      }
    }))

  it.scopedLive("tells another process's web of a change to a chat, by its name", () =>
    Effect.gen(function* () {
      const { repo, first, other } = yield* onPostgres
      const second = yield* other
      const chat = yield* first.chats.open({ idea: "retry the fetcher", repo })
      const heard = yield* Effect.fork(second.chats.changes.pipe(Stream.filter((name) => name === `${chat.id}.json`), Stream.runHead))
      // The listener connects on its own connection: written until it has heard one.
      for (let i = 0; i < 100 && Option.isNone(yield* Fiber.poll(heard)); i++) {
        yield* first.chats.record(chat.id, `try ${i}`)
        yield* Effect.sleep("50 millis")
      }
      expect(yield* Fiber.join(heard)).toEqual(Option.some(`${chat.id}.json`))
    }))
})
