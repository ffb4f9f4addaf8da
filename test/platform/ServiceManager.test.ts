/**
 * What `magi service` says when it cannot go on (issue 26, point 2: errors
 * carry data): the ServiceError's fields name what magi was doing, and the
 * words printed are derived from them, the same as before they were fields.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import * as Manager from "../../src/platform/ServiceManager.js"
import * as MemoryFileSystem from "../../src/store/MemoryFileSystem.js"

const facts = { what: "serve", node: "/usr/bin/node", magi: "/opt/magi/magi.js", path: "/usr/bin", home: undefined, cwd: "/work" } as const
const env = { HOME: "/home/me", XDG_CONFIG_HOME: undefined }

/** The service manager answering every command with exit 1 and `said` on stderr. */
const refusing = (said: string) =>
  Layer.succeed(Manager.ServiceRunner, Manager.ServiceRunner.make({ run: () => Effect.succeed({ code: 1, stdout: "", stderr: said }) }))

describe("magi service's errors", () => {
  it.effect("a system with no service manager magi knows is named, with what to do instead", () =>
    Effect.gen(function* () {
      const e = yield* Effect.flip(Manager.managerFor("win32"))
      expect(e).toMatchObject({ _tag: "ServiceError", op: "platform", platform: "win32" })
      expect(e.message).toBe(
        "magi service knows systemd (Linux) and launchd (macOS); on win32, start `magi serve` with the system's own service manager"
      )
    }))

  it.effect("a service manager that refuses names the unit written, the command and its last words", () =>
    Effect.gen(function* () {
      const got = yield* Effect.either(Manager.install("systemd", facts, env, 1000))
      expect(Either.isLeft(got)).toBe(true)
      const e = Either.getLeft(got).pipe((o) => (o._tag === "Some" ? o.value : undefined))!
      expect(e).toMatchObject({ op: "run", path: "/home/me/.config/systemd/user/magi.service", command: "systemctl --user daemon-reload" })
      expect(e.message).toBe("wrote /home/me/.config/systemd/user/magi.service, but `systemctl --user daemon-reload` failed: Failed to connect to bus")
    }).pipe(Effect.provide(Layer.merge(MemoryFileSystem.layer, refusing("warming up\nFailed to connect to bus")))))
})
