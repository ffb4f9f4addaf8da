import { describe, expect, it } from "vitest"
import { scrub } from "../../src/questions/LastNotification.js"

const secrets = [{ value: "mytopic-s3cret", as: "<the ntfy topic>" }, { value: "tk_abc", as: "<the ntfy token>" }]

describe("the last notification's recorded reason", () => {
  it.each([
    ["names no ntfy topic", "ntfy said 403 for https://ntfy.sh/mytopic-s3cret", "ntfy said 403 for https://ntfy.sh/<the ntfy topic>"],
    ["names no token", "Bearer tk_abc refused", "Bearer <the ntfy token> refused"],
    ["keeps the first line only", "\n  exit 7: nope\nstack trace here", "exit 7: nope"],
    ["says something when there is nothing", "", "no reason given"]
  ])("%s", (_, reason, recorded) => {
    expect(scrub(reason, secrets)).toBe(recorded)
  })

  it("is bounded however long the reason", () => {
    expect(scrub("x".repeat(10_000), secrets).length).toBeLessThanOrEqual(300)
  })
})
