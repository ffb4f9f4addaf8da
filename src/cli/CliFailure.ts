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

/**
 * The one line a defect (a failure nothing expected) is said in. A stack
 * trace tells the owner nothing they can act on; `MAGI_DEBUG=1` shows it
 * for whoever debugs magi. A database error that escaped as a defect (a
 * driver's rollback on a dropped connection) is said as the store failure
 * it is, with what to do.
 */
export const defectLine = (defect: unknown, debug: boolean, pretty: () => string): string => {
  if (debug) return `unexpected failure: ${pretty()}`
  const d = defect as { readonly _tag?: unknown; readonly message?: unknown; readonly cause?: unknown } | null
  const message = typeof d?.message === "string" && d.message !== "" ? d.message : String(defect)
  if (d?._tag === "SqlError") {
    const driver = d.cause instanceof Error && d.cause.message !== "" ? ` (${d.cause.message})` : ""
    return `the store stopped answering: ${message}${driver}. Check the server and try again.`
  }
  return `unexpected failure: ${message} (MAGI_DEBUG=1 shows where)`
}
