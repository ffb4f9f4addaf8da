import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Fiber, TestClock } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { inProcessWaiter } from "../../src/app/WaiterLoop.js"
import { MagiHome } from "../../src/platform/MagiHome.js"
import * as Q from "../../src/questions/Question.js"
import { advance, tempDirSync } from "../support.js"

describe("magi web's waiter", () => {
  it.effect("takes the loop over once the magi that owned the home stops beating", () =>
    Effect.gen(function* () {
      const top = tempDirSync()
      const home = NodePath.join(top, "home")
      NodeFs.mkdirSync(home, { recursive: true })
      const daemonFile = NodePath.join(home, "daemon.json")
      const now = Date.now()
      const owner = {
        // Pid 1 is alive on every machine: a loop still there, until its beats stop.
        pid: 1,
        token: "another-loop",
        started_at: Q.timestamp(new Date(now)),
        beat_at: Q.timestamp(new Date(now))
      }
      NodeFs.writeFileSync(daemonFile, JSON.stringify(owner))
      const ownerOf = () => JSON.parse(NodeFs.readFileSync(daemonFile, "utf8")).pid

      yield* TestClock.setTime(now)
      const waiter = yield* Effect.fork(
        inProcessWaiter(MagiHome.at(home), () => Effect.void).pipe(
          Effect.withConfigProvider(
            ConfigProvider.fromMap(new Map([["HOME", top], ["XDG_CONFIG_HOME", NodePath.join(top, "config")]]))
          )
        )
      )
      // The other loop is alive: its record is left alone.
      yield* advance("20 seconds")
      expect(ownerOf()).toBe(1)
      // It stops beating; 30 s on its record is stale, and within one more
      // look this server owns the home.
      yield* advance("70 seconds")
      expect(ownerOf()).toBe(process.pid)
      yield* Fiber.interrupt(waiter)
      // Let go on the way out, so the next loop need not wait.
      expect(NodeFs.existsSync(daemonFile)).toBe(false)
    }))
})
