import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Exit, Scope, TestClock } from "effect"
import * as NodeFs from "node:fs"
import * as Daemon from "../src/Daemon.js"
import { advance, tempDirSync } from "./support.js"

const ownIn = (home: string) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const exit = yield* Daemon.own(home).pipe(Scope.extend(scope), Effect.exit)
    return { scope, exit }
  })

describe("one loop per home", () => {
  it.effect("a second loop is refused with the first one's pid while its heartbeat is fresh", () =>
    Effect.gen(function* () {
      const home = tempDirSync()
      const first = yield* ownIn(home)
      expect(Exit.isSuccess(first.exit)).toBe(true)
      // Minutes pass; the heartbeat keeps the record fresh all along.
      yield* advance(Duration.minutes(5), Duration.seconds(5))
      const second = yield* ownIn(home)
      expect(second.exit).toMatchObject({ _tag: "Failure" })
      expect(JSON.stringify(second.exit)).toContain(`pid ${process.pid}`)
      yield* Scope.close(first.scope, Exit.void)
      expect(NodeFs.existsSync(Daemon.daemonFile(home))).toBe(false)
      const third = yield* ownIn(home)
      expect(Exit.isSuccess(third.exit)).toBe(true)
      yield* Scope.close(third.scope, Exit.void)
    }).pipe(Effect.provide(NodeContext.layer))
  )

  it.effect("a loop that stopped beating over thirty seconds ago is taken over", () =>
    Effect.gen(function* () {
      const home = tempDirSync()
      yield* TestClock.setTime(Date.parse("2026-01-01T00:01:00Z"))
      NodeFs.writeFileSync(
        Daemon.daemonFile(home),
        JSON.stringify({ pid: 99999, token: "old", started_at: "2026-01-01T00:00:00Z", beat_at: "2026-01-01T00:00:29Z" })
      )
      const taken = yield* ownIn(home)
      expect(Exit.isSuccess(taken.exit)).toBe(true)
      expect(JSON.parse(NodeFs.readFileSync(Daemon.daemonFile(home), "utf8")).pid).toBe(process.pid)
      yield* Scope.close(taken.scope, Exit.void)
    }).pipe(Effect.provide(NodeContext.layer))
  )

  it.effect("exactly thirty seconds without a beat is still alive", () =>
    Effect.gen(function* () {
      const home = tempDirSync()
      yield* TestClock.setTime(Date.parse("2026-01-01T00:01:00Z"))
      NodeFs.writeFileSync(
        Daemon.daemonFile(home),
        JSON.stringify({ pid: 4242, token: "old", started_at: "2026-01-01T00:00:00Z", beat_at: "2026-01-01T00:00:30Z" })
      )
      const refused = yield* ownIn(home)
      expect(JSON.stringify(refused.exit)).toContain("pid 4242")
    }).pipe(Effect.provide(NodeContext.layer))
  )
})
