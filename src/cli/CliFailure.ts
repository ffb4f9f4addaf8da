/**
 * How a command ends other than with success: one message for stderr and the
 * exit code it means. Refusals (bad input, a settled question) exit 1; usage
 * mistakes exit 2, like every Unix tool an agent already knows.
 */
import { Data } from "effect"

export class CliFailure extends Data.TaggedError("CliFailure")<{
  readonly message: string
  readonly exitCode: 1 | 2
}> {
  static usage = (message: string) => new CliFailure({ message, exitCode: 2 })
  static refused = (message: string) => new CliFailure({ message, exitCode: 1 })
}
