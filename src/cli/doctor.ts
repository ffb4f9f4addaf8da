/**
 * `magi doctor [--repo DIR] [--json] [--notify]`: check that this machine can
 * run magi's agents, deliver their questions and keep their state, one line
 * per check with what to do when it fails; exit 1 when any check fails.
 */
import { Command, Options } from "@effect/cli"
import { Effect, Option } from "effect"
import * as NodePath from "node:path"
import { MagiHome } from "../platform/MagiHome.js"
import { anyFailed, render } from "../doctor/Check.js"
import { runDoctor } from "../doctor/Doctor.js"
import { CliFailure } from "./CliFailure.js"
import { writeOut } from "./io.js"

const options = {
  repo: Options.directory("repo").pipe(
    Options.withPseudoName("DIR"),
    Options.withDescription("the repository whose config and agents to check (default: the current directory)"),
    Options.optional
  ),
  json: Options.boolean("json").pipe(Options.withDescription("print {ok, checks: [{name, status, detail, fix?}]} instead")),
  notify: Options.boolean("notify").pipe(Options.withDescription("also send a sample notification through the configured command"))
}

/** The doctor's checks for `repo`, on this process's home and environment (`magi doctor`, and the end of `magi init`). */
export const checksFor = (repo: string, notify: boolean) =>
  Effect.gen(function* () {
    const home = yield* MagiHome
    return yield* runDoctor({ repo, home: home.dir, env: process.env, uid: process.getuid?.() ?? -1, notify })
  }).pipe(Effect.provide(MagiHome.locatedFromEnv))

export const doctor = Command.make("doctor", options, (o) =>
  Effect.gen(function* () {
    const checks = yield* checksFor(NodePath.resolve(Option.getOrElse(o.repo, () => process.cwd())), o.notify)
    const failed = checks.filter((c) => c.status === "fail").length
    if (o.json) yield* writeOut(JSON.stringify({ ok: !anyFailed(checks), checks }, null, 2) + "\n")
    else yield* writeOut(render(checks))
    if (failed > 0) return yield* CliFailure.refused(`${failed} check${failed === 1 ? "" : "s"} failed; each FAIL line says what to do`)
  })).pipe(Command.withDescription("Check the agents, the notification command, the home and the config; exit 1 if anything fails"))
