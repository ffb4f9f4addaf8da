/**
 * `magi hosts`: the machines sharing this store, as their loops registered
 * them (`platform/Hosts.ts`): online or when last seen, their magi version,
 * the repositories they can run and their turns.
 */
import { Command, Options } from "@effect/cli"
import { Effect } from "effect"
import { Hosts } from "../platform/Hosts.js"
import { forTerminalLine } from "../platform/TerminalText.js"
import { CliFailure } from "./CliFailure.js"
import { runsLayer } from "../app/Layers.js"
import { writeOut } from "./io.js"

export const hosts = Command.make(
  "hosts",
  { json: Options.boolean("json").pipe(Options.withDescription("print one JSON array of the hosts")) },
  ({ json }) =>
    Effect.gen(function* () {
      const all = yield* Effect.flatMap(Hosts, (h) => h.list).pipe(Effect.mapError((e) => CliFailure.refused(e.message)))
      if (json) return yield* writeOut(JSON.stringify(all, null, 2) + "\n")
      if (all.length === 0) return yield* writeOut("no hosts yet: each `magi serve` and `magi web` registers its host\n")
      for (const h of all) {
        const state = h.online ? `online, last seen ${h.last_seen}` : `offline since ${h.last_seen}`
        const repos = h.repos.length === 0 ? "no [repos]" : `repos ${h.repos.join(", ")}`
        const load = h.loop
          ? `${h.turns}/${h.max_turns} turns${h.queued > 0 ? `, ${h.queued} queued` : ""}`
          : `its page only, no loop${h.loop_seen_at === undefined ? "" : ` (loop last seen ${h.loop_seen_at})`}`
        yield* writeOut(forTerminalLine(`${h.name}  ${state}  magi ${h.version}  ${load}  ${repos}  (pid ${h.pid} on ${h.machine})`) + "\n")
      }
    }).pipe(Effect.provide(runsLayer()))
).pipe(Command.withDescription("List the hosts sharing this store: online or when last seen, version, repositories, turns"))
