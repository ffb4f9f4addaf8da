/**
 * The conductor's decisions log behind its one interface: one record per
 * decision on PostgreSQL (the real server of the test run), read newest
 * first by another process sharing the database, in the order they were
 * made even within one millisecond; and `decisions.jsonl` on the home-folder
 * backend, as before.
 */
import { describe, expect, it } from "@effect/vitest"
import { FileSystem } from "@effect/platform"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { Effect, Layer, Redacted, TestClock } from "effect"
import * as NodePath from "node:path"
import { ConductorLog, type DecisionRecord, decisionsPath, latestFor, readDecisions } from "../../src/daemon/ConductorLog.js"
import { MagiHome } from "../../src/platform/MagiHome.js"
import { StoreBackend } from "../../src/store/StoreBackend.js"
import * as ConfiguredStore from "../../src/platform/ConfiguredStore.js"
import { freshDatabase, query } from "../pgSupport.js"
import { tempDir } from "../support.js"

const decision = (turn: number, task: string, outcome: DecisionRecord["outcome"], why: string): DecisionRecord => ({
  at: "2026-09-02T23:15:01Z",
  turn,
  task,
  decision: { id: task, blocked_by: ["t0"] },
  outcome,
  why
})

/** The log on `backend` for a home of its own under `base`, as one process opens it. */
const openLog = <E>(backend: Layer.Layer<StoreBackend, E>, home: string) =>
  Effect.flatMap(
    Layer.build(ConductorLog.layer.pipe(Layer.provide(Layer.mergeAll(backend, MagiHome.at(home))), Layer.provideMerge(NodeFileSystem.layer))),
    (context) => Effect.provide(Effect.all([ConductorLog, FileSystem.FileSystem]), context)
  )

describe("the conductor's decisions log", () => {
  it.scoped("on PostgreSQL: one record per decision, read newest first by another process, in order within one millisecond, a foreign row skipped", () =>
    Effect.gen(function* () {
      const db = yield* freshDatabase
      const base = yield* tempDir
      const postgres = StoreBackend.postgres(Redacted.make(db.url))
      const [conductor, fs] = yield* openLog(postgres, NodePath.join(base, "server"))
      const [reader] = yield* openLog(postgres, NodePath.join(base, "laptop"))
      expect(yield* reader.read).toEqual([])
      expect(conductor.where).toMatch(/^postgres:\/\/.* \(conductor-log\)$/)
      // One turn's decisions, all in the same millisecond (the clock stands still).
      yield* TestClock.setTime(Date.UTC(2026, 8, 2, 23, 15, 1))
      const made = [
        decision(1, "t1", "applied", "blocked on t0"),
        decision(1, "t2", "refused", "task t2 cannot wait on itself"),
        decision(1, "t1", "applied", "requeued for a fresh start")
      ]
      for (const d of made) yield* conductor.append(d)
      yield* TestClock.adjust("1 second")
      const later = decision(2, "t2", "applied", "blocked on t1")
      yield* conductor.append(later)
      // A row no magi wrote is skipped, as a torn line is in the file.
      yield* query(db.url, "INSERT INTO magi_records (kind, id, body) VALUES ('conductor-log', '00000000-000000000-zzzzzz', '{\"torn')")
      const read = yield* reader.read
      expect(read).toEqual([later, ...[...made].reverse()])
      expect(latestFor(read, "t1")?.why).toBe("requeued for a fresh start")
      expect(latestFor(read, "t2")).toEqual(later)
      const rows = yield* query(db.url, "SELECT id FROM magi_records WHERE kind = 'conductor-log' ORDER BY id")
      expect(rows.map((r) => String(r.id))).toEqual([
        "00000000-000000000-zzzzzz",
        expect.stringMatching(/^20260902-231501000-[0-9a-f]{6}$/),
        expect.stringMatching(/^20260902-231501001-[0-9a-f]{6}$/),
        expect.stringMatching(/^20260902-231501002-[0-9a-f]{6}$/),
        expect.stringMatching(/^20260902-231502000-[0-9a-f]{6}$/)
      ])
      // No file of the log in either home.
      for (const home of ["server", "laptop"]) expect(yield* fs.exists(decisionsPath(NodePath.join(base, home, "conduct")))).toBe(false)
    }))

  it.scoped("on the home folder: the same interface appends to conduct/decisions.jsonl, one line each, read back newest first", () =>
    Effect.gen(function* () {
      const base = yield* tempDir
      const home = NodePath.join(base, "home")
      const [log, fs] = yield* openLog(ConfiguredStore.files.pipe(Layer.provide(MagiHome.at(home))), home)
      const first = decision(1, "t1", "applied", "blocked on t0")
      const second = decision(2, "t1", "refused", "t0 is done")
      yield* log.append(first)
      yield* log.append(second)
      expect(log.where).toBe(decisionsPath(NodePath.join(home, "conduct")))
      const lines = (yield* fs.readFileString(log.where)).trim().split("\n")
      expect(lines.map((l) => JSON.parse(l))).toEqual([first, second])
      expect(yield* log.read).toEqual([second, first])
      expect(yield* readDecisions(NodePath.join(home, "conduct")).pipe(Effect.provideService(FileSystem.FileSystem, fs))).toEqual([second, first])
    }))
})
