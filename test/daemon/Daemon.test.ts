import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Duration, Effect, Exit, Fiber, Option, Scope, TestClock } from "effect"
import { spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { waiterLayer } from "../../src/app/Layers.js"
import { waiterLoop } from "../../src/app/WaiterLoop.js"
import { MagiHome } from "../../src/platform/MagiHome.js"
import * as Daemon from "../../src/daemon/Daemon.js"
import { advance, tempDirSync } from "../support.js"

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
    }).pipe(Effect.provide(NodeContext.layer)))

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
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("a loop killed a moment ago on this machine is taken over at once, its beat still fresh", () =>
    Effect.gen(function* () {
      const home = tempDirSync()
      yield* TestClock.setTime(Date.parse("2026-01-01T00:01:00Z"))
      const dead = spawnSync(process.execPath, ["-e", ""]).pid!
      NodeFs.writeFileSync(
        Daemon.daemonFile(home),
        JSON.stringify({ pid: dead, token: "killed", started_at: "2026-01-01T00:00:00Z", beat_at: "2026-01-01T00:00:59Z" })
      )
      expect(yield* Daemon.liveOwner(home)).toEqual(Option.none())
      const taken = yield* ownIn(home)
      expect(Exit.isSuccess(taken.exit)).toBe(true)
      expect(yield* Daemon.liveOwner(home)).toEqual(Option.some(process.pid))
      yield* Scope.close(taken.scope, Exit.void)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("exactly thirty seconds without a beat is still alive", () =>
    Effect.gen(function* () {
      const home = tempDirSync()
      yield* TestClock.setTime(Date.parse("2026-01-01T00:01:00Z"))
      NodeFs.writeFileSync(
        Daemon.daemonFile(home),
        // Pid 1 is alive on every machine: a loop that is still there.
        JSON.stringify({ pid: 1, token: "old", started_at: "2026-01-01T00:00:00Z", beat_at: "2026-01-01T00:00:30Z" })
      )
      const refused = yield* ownIn(home)
      expect(JSON.stringify(refused.exit)).toContain("pid 1,")
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("a loop that finds another one's record on its next beat stops, and leaves that record alone", () =>
    Effect.gen(function* () {
      const home = tempDirSync()
      yield* TestClock.setTime(Date.parse("2026-01-01T00:00:00Z"))
      const first = yield* ownIn(home)
      expect(Exit.isSuccess(first.exit)).toBe(true)
      // Paused (SIGSTOP) past thirty seconds: another loop took the home over.
      const other = { pid: 4242, token: "other", started_at: "2026-01-01T00:00:40Z", beat_at: "2026-01-01T00:00:40Z" }
      NodeFs.writeFileSync(Daemon.daemonFile(home), JSON.stringify(other))
      const lost = yield* Effect.fork(Exit.isSuccess(first.exit) ? first.exit.value.lost : Effect.never)
      yield* advance(Duration.seconds(10), Duration.seconds(1))
      expect(JSON.parse(NodeFs.readFileSync(Daemon.daemonFile(home), "utf8")).token).toBe("other")
      const why = yield* Fiber.join(lost).pipe(Effect.flip)
      expect(why).toMatchObject({ _tag: "HomeTaken", pid: 4242 })
      expect(why.message).toContain("pid 4242")
      // Letting go does not remove the record of the loop that owns the home now.
      yield* Scope.close(first.scope, Exit.void)
      expect(JSON.parse(NodeFs.readFileSync(Daemon.daemonFile(home), "utf8")).token).toBe("other")
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("the serving loop stops with that reason once another loop has taken its home over", () =>
    Effect.gen(function* () {
      const top = tempDirSync()
      const home = NodePath.join(top, "home")
      NodeFs.mkdirSync(home, { recursive: true })
      yield* TestClock.setTime(Date.parse("2026-01-01T00:00:00Z"))
      const loop = yield* Effect.fork(
        waiterLoop(() => Effect.void).pipe(
          Effect.provide(waiterLayer(MagiHome.at(home))),
          Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["HOME", top], ["XDG_CONFIG_HOME", NodePath.join(top, "config")]])))
        )
      )
      yield* advance(Duration.seconds(10))
      expect(JSON.parse(NodeFs.readFileSync(Daemon.daemonFile(home), "utf8")).pid).toBe(process.pid)
      NodeFs.writeFileSync(
        Daemon.daemonFile(home),
        JSON.stringify({ pid: 1, token: "other", started_at: "2026-01-01T00:00:10Z", beat_at: "2026-01-01T00:00:10Z" })
      )
      yield* advance(Duration.seconds(10))
      const exit = loop.unsafePoll()
      expect(exit).not.toBeNull()
      expect(JSON.stringify(exit)).toContain("took")
      expect(JSON.stringify(exit)).toContain("pid 1,")
      yield* Fiber.interrupt(loop)
    }).pipe(Effect.provide(NodeContext.layer)))
})
