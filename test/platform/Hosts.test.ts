import { describe, expect, it } from "vitest"
import { HOST_SCHEMA, type HostRecord, offlineWords, viewOf } from "../../src/platform/Hosts.js"

const NOW = Date.parse("2026-12-02T10:00:00Z")
const record = (over: Partial<HostRecord>): HostRecord => ({
  schema: HOST_SCHEMA,
  name: "buildbox",
  version: "0.1.0",
  machine: "buildbox",
  pid: 42,
  repos: [],
  max_turns: 4,
  turns: 0,
  queued: 0,
  waiting: [],
  started_at: "2026-12-02T09:00:00.000Z",
  seen_at: "2026-12-02T09:59:58.000Z",
  loop: true,
  ...over
})

describe("what a run says of its host", () => {
  it("nothing while the host's loop beats", () => {
    expect(offlineWords([viewOf(record({}), NOW)], "buildbox")).toBeUndefined()
  })

  it("offline since its last beat once its loop is gone", () => {
    expect(offlineWords([viewOf(record({ seen_at: "2026-12-02T09:50:00.000Z" }), NOW)], "buildbox")).toBe(
      "host buildbox offline since 2026-12-02T09:50:00.000Z"
    )
  })

  it("offline since its loop was last seen when only its page is up: nothing there resumes the run", () => {
    const page = record({ loop: false, max_turns: 0, loop_seen_at: "2026-12-02T08:00:00.000Z" })
    expect(viewOf(page, NOW).online).toBe(true)
    expect(offlineWords([viewOf(page, NOW)], "buildbox")).toBe("host buildbox offline since 2026-12-02T08:00:00.000Z (only its page is up)")
    expect(offlineWords([viewOf(record({ loop: false }), NOW)], "buildbox")).toBe("host buildbox runs no magi serve (only its page is up)")
  })
})
