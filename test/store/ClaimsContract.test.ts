/**
 * The claims contract, held against every backend: files over memory, files
 * in a real folder, and rows in a real PostgreSQL. Each store is opened
 * twice, as two processes (or hosts) would open the same claims.
 */
import { describe, expect, it } from "@effect/vitest"
import { FileSystem } from "@effect/platform"
import { Effect, Either, Layer, Option, Redacted, Scope } from "effect"
import { spawnSync } from "node:child_process"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { Claims, type ClaimsShape } from "../../src/store/Claims.js"
import * as PgConnection from "../../src/store/postgres/PgConnection.js"
import { freshDatabase, query } from "../pgSupport.js"
import { contractFolders, openFolder } from "../support.js"

interface Harness {
  readonly name: string
  readonly open: Effect.Effect<
    {
      readonly open: Effect.Effect<ClaimsShape, unknown, Scope.Scope>
      /** A claim as another holder left it: `host`, `pid`, renewed `agoMs` ago. */
      readonly plant: (key: string, holder: { readonly host: string; readonly pid: number; readonly agoMs: number }) => Effect.Effect<void>
    },
    unknown,
    Scope.Scope
  >
}

const fileHarness = (folder: (typeof contractFolders)[number]): Harness => ({
  name: folder.name,
  open: Effect.gen(function* () {
    const { dir, fs, write } = yield* openFolder(folder)
    const pathOf = (key: string) => NodePath.join(dir, "claims", `${key}.claim`)
    return {
      open: Effect.provide(Claims, Claims.files(pathOf).pipe(Layer.provide(Layer.succeed(FileSystem.FileSystem, fs)))),
      plant: (key, h) => write(pathOf(key), JSON.stringify({ host: h.host, pid: h.pid, token: "planted", renewed_at: Date.now() - h.agoMs }))
    }
  })
})

const pgHarness: Harness = {
  name: "PostgreSQL",
  open: Effect.gen(function* () {
    const db = yield* freshDatabase
    return {
      open: Effect.flatMap(Layer.build(Claims.postgres.pipe(Layer.provide(PgConnection.layer(Redacted.make(db.url))))), (ctx) => Effect.provide(Claims, ctx)),
      plant: (key, h) =>
        // The schema is made by the first store that opens the database.
        Effect.asVoid(
          query(
            db.url,
            "INSERT INTO magi_claims (key, host, pid, token, renewed_at) VALUES ($1, $2, $3, 'planted', now() - ($4 * interval '1 millisecond'))",
            [key, h.host, h.pid, h.agoMs]
          )
        )
    }
  })
}

const harnesses: ReadonlyArray<Harness> = [...contractFolders.map(fileHarness), pgHarness]

/** A pid that was just alive on this machine and is not any more. */
const deadPid = () => spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" }).stdout
const sleep = (ms: number) => Effect.promise(() => new Promise((r) => setTimeout(r, ms)))

const LONG = { ttl: "1 hour" } as const

for (const harness of harnesses) {
  describe(`the claims contract, on ${harness.name}`, () => {
    it.scopedLive("gives a free claim to one taker, shows it held to the others, and frees it on release", () =>
      Effect.gen(function* () {
        const h = yield* harness.open
        const [a, b] = [yield* h.open, yield* h.open]
        const mine = yield* a.acquire("task/t1", LONG)
        expect(Either.isRight(mine)).toBe(true)
        const theirs = yield* b.acquire("task/t1", LONG)
        expect(Either.isLeft(theirs) && theirs.left.owner).toEqual({ host: NodeOs.hostname(), pid: process.pid })
        expect(Option.map(yield* b.holder("task/t1", LONG), (x) => x.owner.pid)).toEqual(Option.some(process.pid))
        expect(yield* a.renew(Either.getOrThrow(mine))).toBe(true)
        yield* a.release(Either.getOrThrow(mine))
        expect(yield* b.holder("task/t1", LONG)).toEqual(Option.none())
        expect(Either.isRight(yield* b.acquire("task/t1", LONG))).toBe(true)
      }))

    it.scopedLive("lets exactly one of twenty racing takers have it", () =>
      Effect.gen(function* () {
        const h = yield* harness.open
        const [a, b] = [yield* h.open, yield* h.open]
        const got = yield* Effect.forEach(
          Array.from({ length: 20 }, (_, i) => i),
          (i) => (i % 2 === 0 ? a : b).acquire("delivery/q1", LONG),
          { concurrency: "unbounded" }
        )
        expect(got.filter(Either.isRight)).toHaveLength(1)
      }))

    it.scopedLive("never lets a holder release or renew a claim that is not its own", () =>
      Effect.gen(function* () {
        const h = yield* harness.open
        const [a, b] = [yield* h.open, yield* h.open]
        const mine = Either.getOrThrow(yield* a.acquire("daemon", LONG))
        yield* b.release({ key: "daemon", token: "someone-else" })
        expect(yield* b.renew({ key: "daemon", token: "someone-else" })).toBe(false)
        expect(Option.isSome(yield* b.holder("daemon", LONG))).toBe(true)
        expect(yield* a.renew(mine)).toBe(true)
      }))

    it.scopedLive("takes over a claim not renewed within its ttl, and its old holder learns it at its next renewal", () =>
      Effect.gen(function* () {
        const h = yield* harness.open
        const [a, b] = [yield* h.open, yield* h.open]
        const rule = { ttl: "400 millis" } as const
        const old = Either.getOrThrow(yield* a.acquire("task/t2", rule))
        expect(Either.isLeft(yield* b.acquire("task/t2", rule))).toBe(true)
        yield* sleep(900)
        expect(yield* b.holder("task/t2", rule)).toEqual(Option.none())
        const taken = yield* b.acquire("task/t2", rule)
        expect(Either.isRight(taken)).toBe(true)
        expect(yield* a.renew(old)).toBe(false)
        // The old holder's release leaves the new holder's claim alone.
        yield* a.release(old)
        expect(Option.isSome(yield* b.holder("task/t2", rule))).toBe(true)
      }))

    it.scopedLive("takes over at once a claim whose holder's process is gone on this machine, but not one from another host", () =>
      Effect.gen(function* () {
        const h = yield* harness.open
        const a = yield* h.open
        const pid = Number(deadPid())
        yield* h.plant("task/crashed", { host: NodeOs.hostname(), pid, agoMs: 1000 })
        expect(yield* a.holder("task/crashed", LONG)).toEqual(Option.none())
        expect(Either.isRight(yield* a.acquire("task/crashed", LONG))).toBe(true)
        // Elsewhere, a pid says nothing: only the ttl frees it.
        yield* h.plant("task/remote", { host: "another-host.invalid", pid, agoMs: 1000 })
        const remote = yield* a.acquire("task/remote", LONG)
        expect(Either.isLeft(remote) && remote.left.owner).toEqual({ host: "another-host.invalid", pid })
      }))
  })
}
