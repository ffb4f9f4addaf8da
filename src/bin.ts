import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { exitCodeOf, main } from "./cli/main.js"

NodeRuntime.runMain(main(process.argv), {
  disableErrorReporting: true,
  disablePrettyLogger: true,
  teardown: (exit, onExit) => onExit(exitCodeOf(exit))
})
