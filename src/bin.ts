import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { exitCodeOf, main } from "./cli/main.js"
import { noteSignals } from "./cli/Signals.js"

noteSignals()

NodeRuntime.runMain(main(process.argv), {
  disableErrorReporting: true,
  disablePrettyLogger: true,
  teardown: (exit, onExit) => onExit(exitCodeOf(exit))
})
