/**
 * Installing, asking after and removing magi's service: the unit file
 * (`ServiceUnit.ts` writes its text) and the service manager's commands
 * (`systemctl --user`, `loginctl`, `launchctl`), run through `ServiceRunner`
 * so a test puts its own `systemctl` first on `PATH` and no real service
 * manager is touched.
 */
import * as Command from "@effect/platform/Command"
import * as CommandExecutor from "@effect/platform/CommandExecutor"
import * as FileSystem from "@effect/platform/FileSystem"
import { Duration, Effect, Schema, Stream } from "effect"
import * as NodePath from "node:path"
import * as Unit from "./ServiceUnit.js"

/**
 * The service could not be set up or taken down: `op` says what magi was
 * doing (`platform`: this system has no service manager magi knows;
 * `write`/`remove`: the unit file at `path`; `run`: `command`, after the
 * unit was written), `reason` what was said back.
 */
export class ServiceError extends Schema.TaggedError<ServiceError>()("ServiceError", {
  op: Schema.Literal("platform", "write", "run", "remove"),
  path: Schema.optional(Schema.String),
  command: Schema.optional(Schema.String),
  platform: Schema.optional(Schema.String),
  reason: Schema.optional(Schema.String)
}) {
  override get message(): string {
    switch (this.op) {
      case "platform":
        return `magi service knows systemd (Linux) and launchd (macOS); on ${this.platform}, start \`magi serve\` with the system's own service manager`
      case "write":
        return `cannot write ${this.path}: ${this.reason}`
      case "run":
        return `wrote ${this.path}, but \`${this.command}\` failed: ${this.reason}`
      case "remove":
        return `cannot remove ${this.path}: ${this.reason}`
    }
  }
}

export interface Ran {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** A service manager's command answers at once; a minute covers a stalled D-Bus. */
const CALL_TIMEOUT = Duration.seconds(60)

/** Runs the service manager's commands; never fails: a program that cannot run is exit 127 with why. */
export class ServiceRunner extends Effect.Service<ServiceRunner>()("magi/ServiceRunner", {
  // The real programs, found on `PATH`.
  effect: Effect.map(CommandExecutor.CommandExecutor, (executor) => ({
    run: (argv: ReadonlyArray<string>) =>
      Effect.gen(function* () {
        const proc = yield* Command.make(argv[0]!, ...argv.slice(1)).pipe(Command.feed(""), Command.start)
        const [stdout, stderr, code] = yield* Effect.all(
          [Stream.mkString(Stream.decodeText(proc.stdout)), Stream.mkString(Stream.decodeText(proc.stderr)), proc.exitCode],
          { concurrency: "unbounded" }
        )
        return { code: Number(code), stdout, stderr } satisfies Ran
      }).pipe(
        Effect.scoped,
        Effect.timeoutFail({ duration: CALL_TIMEOUT, onTimeout: () => `did not answer within ${Duration.format(CALL_TIMEOUT)}` }),
        // display: the service manager's failure is reported to the owner
        Effect.catchAll((e) =>
          Effect.succeed(
            {
              code: 127,
              stdout: "",
              stderr: typeof e === "string" ? e : e._tag === "SystemError" && e.reason === "NotFound" ? `${argv[0]}: not found` : e.message
            } satisfies Ran
          )
        ),
        Effect.provideService(CommandExecutor.CommandExecutor, executor)
      )
  }))
}) {
  static layer = ServiceRunner.Default
}

export const managerFor = (platform: NodeJS.Platform): Effect.Effect<Unit.Manager, ServiceError> =>
  platform === "linux"
    ? Effect.succeed("systemd")
    : platform === "darwin"
    ? Effect.succeed("launchd")
    : Effect.fail(new ServiceError({ op: "platform", platform }))

type Env = Readonly<Record<string, string | undefined>>

const lastLine = (r: Ran) => (r.stderr.trim() || r.stdout.trim()).split("\n").at(-1) ?? `exit ${r.code}`

export interface Installed {
  readonly path: string
  /** What the owner should know: that it started, and the linger hint. */
  readonly notes: ReadonlyArray<string>
}

export const install = (manager: Unit.Manager, facts: Unit.UnitFacts, env: Env, uid: number) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const runner = yield* ServiceRunner
    const path = Unit.unitPath(manager, facts.what, env)
    const text = manager === "systemd" ? Unit.systemdUnit(facts) : Unit.launchdPlist(facts, NodePath.join(env.HOME ?? "", "Library", "Logs"))
    // fallback: a unit file that cannot be read is rewritten in full
    const before = yield* fs.readFileString(path).pipe(Effect.orElseSucceed(() => ""))
    const failed = (e: { readonly message: string }) => new ServiceError({ op: "write", path, reason: e.message })
    yield* fs.makeDirectory(NodePath.dirname(path), { recursive: true }).pipe(Effect.mapError(failed))
    if (before !== text) yield* fs.writeFileString(path, text).pipe(Effect.mapError(failed))
    const notes: Array<string> = []
    const must = (argv: ReadonlyArray<string>) =>
      Effect.flatMap(runner.run(argv), (r) =>
        r.code === 0
          ? Effect.succeed(r)
          : Effect.fail(new ServiceError({ op: "run", path, command: argv.join(" "), reason: lastLine(r) })))
    if (manager === "systemd") {
      const name = Unit.systemdName(facts.what)
      yield* must(["systemctl", "--user", "daemon-reload"])
      yield* must(["systemctl", "--user", "enable", "--now", name])
      // A unit that was running with other contents runs the new ones.
      if (before !== "" && before !== text) yield* must(["systemctl", "--user", "restart", name])
      notes.push(`${name} is enabled and started; it starts again after a failure, ${Unit.RESTART_AFTER_SECS} s later`)
      const user = env.USER ?? env.LOGNAME ?? String(uid)
      const linger = yield* runner.run(["loginctl", "show-user", user, "--property=Linger"])
      if (linger.code === 0 && Unit.lingerOff(linger.stdout))
        notes.push(
          `lingering is off for ${user}: the service starts at your first login after a boot, not at the boot itself; \`loginctl enable-linger ${user}\` (as root if asked) makes it start at boot`
        )
    } else {
      const label = Unit.launchdLabel(facts.what)
      // Loaded already (an earlier install): out first, so the new file is the one that runs.
      yield* runner.run(["launchctl", "bootout", `gui/${uid}/${label}`])
      yield* must(["launchctl", "bootstrap", `gui/${uid}`, path])
      notes.push(`${label} is loaded; it runs at login and again after a failure`)
    }
    return { path, notes } satisfies Installed
  })

export interface Status {
  readonly path: string
  readonly installed: boolean
  /** The service manager's own words: `active`, `inactive`, `failed`, `running`, … */
  readonly state: string
  readonly running: boolean
}

export const status = (manager: Unit.Manager, what: Unit.What, env: Env, uid: number) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const runner = yield* ServiceRunner
    const path = Unit.unitPath(manager, what, env)
    // display: whether the unit is installed, as reported
    const installed = yield* fs.exists(path).pipe(Effect.orElseSucceed(() => false))
    if (!installed) return { path, installed, state: "not installed", running: false } satisfies Status
    if (manager === "systemd") {
      const r = yield* runner.run(["systemctl", "--user", "is-active", Unit.systemdName(what)])
      const state = r.stdout.trim() || lastLine(r)
      return { path, installed, state, running: state === "active" } satisfies Status
    }
    const r = yield* runner.run(["launchctl", "print", `gui/${uid}/${Unit.launchdLabel(what)}`])
    const state = r.code === 0 ? (/^\s*state = (\S+)/m.exec(r.stdout)?.[1] ?? "loaded") : "not loaded"
    return { path, installed, state, running: state === "running" } satisfies Status
  })

export const uninstall = (manager: Unit.Manager, what: Unit.What, env: Env, uid: number) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const runner = yield* ServiceRunner
    const path = Unit.unitPath(manager, what, env)
    // fallback: a unit file that cannot be looked at is reported as not installed; nothing is removed
    const there = yield* fs.exists(path).pipe(Effect.orElseSucceed(() => false))
    if (!there) return false
    if (manager === "systemd") yield* runner.run(["systemctl", "--user", "disable", "--now", Unit.systemdName(what)])
    else yield* runner.run(["launchctl", "bootout", `gui/${uid}/${Unit.launchdLabel(what)}`])
    yield* fs.remove(path).pipe(Effect.mapError((e) => new ServiceError({ op: "remove", path, reason: e.message })))
    if (manager === "systemd") yield* runner.run(["systemctl", "--user", "daemon-reload"])
    return true
  })
