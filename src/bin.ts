import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Effect } from "effect"
import { exitCodeOf, main } from "./cli/main.js"
import { untilStdoutCloses } from "./cli/io.js"
import { noteSignals } from "./cli/Signals.js"

noteSignals()

/**
 * The build's warm-up (scripts/build.mjs): the command lines in
 * `MAGI_CODE_CACHE_WARMUP` (a JSON array of argument arrays), run one after
 * another in this one process, whose code cache the launcher then writes.
 * V8 caches only the code a process has compiled, and code missing from the
 * cache is compiled again at every start: one run of `--help` left out what
 * `magi answer` and `magi runs` run, about 15 ms of each of their starts.
 */
const warmup = process.env.MAGI_CODE_CACHE_WARMUP
const program = warmup === undefined
  ? main(process.argv)
  : Effect.forEach(JSON.parse(warmup) as ReadonlyArray<ReadonlyArray<string>>, (args) => main([process.argv[0]!, process.argv[1]!, ...args]), {
    discard: true
  })

NodeRuntime.runMain(Effect.raceFirst(program, untilStdoutCloses), {
  disableErrorReporting: true,
  disablePrettyLogger: true,
  teardown: (exit, onExit) => onExit(exitCodeOf(exit))
})
