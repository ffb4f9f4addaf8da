/**
 * `magi service install [--web] | status | uninstall`: run `magi serve` (or
 * `magi web`) as the owner's own service, from boot and again after a
 * failure, so an answer given while the machine was off is delivered once
 * it is back (the loop resumes what its start finds owed). The unit text is
 * `platform/ServiceUnit.ts`; the service manager's commands are
 * `platform/ServiceManager.ts`.
 */
import { Command, Options } from "@effect/cli"
import { Effect, Option } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as Manager from "../platform/ServiceManager.js"
import type * as Unit from "../platform/ServiceUnit.js"
import { CliFailure } from "./CliFailure.js"
import { writeOut } from "./io.js"

const web = Options.boolean("web").pipe(Options.withDescription("run `magi web` (the page, with the waiter in it) rather than `magi serve`"))
const home = Options.directory("home").pipe(
  Options.withDescription("the home the service serves (default: MAGI_HOME, else the platform's data dir)"),
  Options.optional
)

const uid = () => process.getuid?.() ?? 0
const whatOf = (isWeb: boolean): Unit.What => (isWeb ? "web" : "serve")

const refused = (e: Manager.ServiceError) => CliFailure.refused(e.message)

/** The running bundle's real path: a global install's `magi` is a link to it. */
const bundlePath = () => {
  const script = process.argv[1] ?? ""
  try {
    return NodeFs.realpathSync(script)
  } catch {
    return NodePath.resolve(script)
  }
}

const install = Command.make("install", { web, home }, (o) =>
  Effect.gen(function* () {
    const manager = yield* Manager.managerFor(process.platform).pipe(Effect.mapError(refused))
    const given = Option.map(o.home, (h) => NodePath.resolve(h))
    const done = yield* Manager.install(
      manager,
      {
        what: whatOf(o.web),
        node: process.execPath,
        magi: bundlePath(),
        path: process.env.PATH ?? "",
        home: Option.getOrElse(given, () => process.env.MAGI_HOME),
        cwd: process.cwd()
      },
      process.env,
      uid()
    ).pipe(Effect.mapError(refused))
    yield* writeOut(`installed ${done.path}\n${done.notes.map((n) => `${n}\n`).join("")}`)
  }).pipe(Effect.provide(Manager.ServiceRunner.layer))).pipe(
    Command.withDescription("Run magi serve (or magi web with --web) as your own service: at boot, and again after a failure")
  )

const status = Command.make("status", { web }, (o) =>
  Effect.gen(function* () {
    const manager = yield* Manager.managerFor(process.platform).pipe(Effect.mapError(refused))
    const s = yield* Manager.status(manager, whatOf(o.web), process.env, uid())
    yield* writeOut(s.installed ? `${s.state}: ${s.path}\n` : `not installed (${s.path}); \`magi service install${o.web ? " --web" : ""}\` installs it\n`)
    if (!s.running) return yield* CliFailure.refused(`the magi ${whatOf(o.web)} service is not running`)
  }).pipe(Effect.provide(Manager.ServiceRunner.layer))).pipe(
    Command.withDescription("Say whether the service is installed and running; exit 1 when it is not running")
  )

const uninstall = Command.make("uninstall", { web }, (o) =>
  Effect.gen(function* () {
    const manager = yield* Manager.managerFor(process.platform).pipe(Effect.mapError(refused))
    const removed = yield* Manager.uninstall(manager, whatOf(o.web), process.env, uid()).pipe(Effect.mapError(refused))
    yield* writeOut(removed ? `stopped and removed the magi ${whatOf(o.web)} service\n` : `no magi ${whatOf(o.web)} service was installed\n`)
  }).pipe(Effect.provide(Manager.ServiceRunner.layer))).pipe(Command.withDescription("Stop the service and remove its unit"))

export const service = Command.make("service").pipe(
  Command.withDescription("Run magi serve (or magi web) as a service that survives a reboot"),
  Command.withSubcommands([install, status, uninstall])
)
