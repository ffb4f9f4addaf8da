/** How a defect is said: one line, a database failure as the store's, the trace only when debugging. */
import { describe, expect, it } from "vitest"
import { defectLine } from "../../src/cli/CliFailure.js"

const sqlError = Object.assign(new Error("Failed to execute statement"), { _tag: "SqlError", cause: new Error("Connection terminated unexpectedly") })

describe("defectLine", () => {
  it.each([
    { defect: sqlError, is: "the store stopped answering: Failed to execute statement (Connection terminated unexpectedly). Check the server and try again." },
    { defect: new TypeError("x is not a function"), is: "unexpected failure: x is not a function (MAGI_DEBUG=1 shows where)" },
    { defect: "plain words", is: "unexpected failure: plain words (MAGI_DEBUG=1 shows where)" }
  ])("$is", ({ defect, is }) => {
    const line = defectLine(defect, false, () => "TRACE")
    expect(line).toBe(is)
    expect(line).not.toContain("\n")
  })

  it("shows the trace under MAGI_DEBUG", () => {
    expect(defectLine(sqlError, true, () => "TRACE\n    at here")).toBe("unexpected failure: TRACE\n    at here")
  })
})
