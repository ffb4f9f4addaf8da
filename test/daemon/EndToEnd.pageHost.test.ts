/**
 * `magi web --no-loop` registers its host too (issue 21, point 3: every
 * `magi serve` and `magi web` registers its host), as real processes on one
 * PostgreSQL database: listed by `magi hosts` and `/api/health` as a page
 * with no loop, without keeping a `magi serve` of the same host out.
 */
import { describe, expect, it } from "vitest"
import { tempDirSync, until } from "../support.js"
import { databaseForFile, type Host, makeHost, pageUrl, run, type Started, start } from "./hostsSupport.js"

/** Generous: processes start slowly on a busy 2-core box. */
const PROCESS_DEADLINE = 60_000

const db = databaseForFile()

interface HostSeen {
  readonly name: string
  readonly online: boolean
  readonly pid: number
  readonly loop: boolean
  readonly max_turns: number
  readonly repos: ReadonlyArray<string>
  readonly loop_seen_at?: string
  readonly stopped_at?: string
}

const hosts = (host: Host): ReadonlyArray<HostSeen> => {
  const r = run(host, host.top, {}, "hosts", "--json")
  if (r.status !== 0) throw new Error(`magi hosts failed: ${r.stderr}`)
  return JSON.parse(r.stdout) as ReadonlyArray<HostSeen>
}
const seen = (host: Host, name: string) => hosts(host).find((h) => h.name === name)

describe("a page-only magi web", { timeout: 5 * PROCESS_DEADLINE }, () => {
  it("lists its host as up with no loop, gives way to a magi serve of that host, and speaks for the host again once it stops", async () => {
    const dir = tempDirSync()
    const gamma = makeHost(db.url(), dir, "gamma", { config: "max_turns = 3\n", env: { MAGI_RUN: "", MAGI_NODE: "" } })
    const page = start(gamma, gamma.top, {}, "web", "--no-loop", "--bind", "127.0.0.1", "--port", "0")
    let loop: Started | undefined
    try {
      const url = await pageUrl(page, "gamma's page", PROCESS_DEADLINE)
      await until("gamma to be listed", () => seen(gamma, "gamma")?.online === true, PROCESS_DEADLINE)
      // Up, as a page: no loop, so no turns and no repositories to offer.
      expect(seen(gamma, "gamma")).toMatchObject({ online: true, loop: false, pid: page.child.pid, max_turns: 0, repos: [] })
      const health = (await (await fetch(`${url}/api/health`)).json()) as { hosts: ReadonlyArray<HostSeen> }
      expect(health.hosts.map((h) => [h.name, h.online, h.loop])).toEqual([["gamma", true, false]])
      const text = run(gamma, gamma.top, {}, "hosts").stdout
      expect(text).toMatch(/^gamma {2}online, last seen .* {2}its page only, no loop {2}/m)

      // A magi serve on the same host is let in (the page claims nothing) and speaks for it.
      loop = start(gamma, gamma.top, {}, "serve")
      await until("gamma's loop to register", () => seen(gamma, "gamma")?.pid === loop!.child.pid, PROCESS_DEADLINE)
      expect(loop.stderr()).not.toContain("taken")
      // Beats later, the loop's record stands: the page does not write over a live loop's.
      await new Promise((r) => setTimeout(r, 12_000))
      expect(seen(gamma, "gamma")).toMatchObject({ online: true, loop: true, pid: loop.child.pid, max_turns: 3 })

      // The loop stops: the page says the host is still up, with no loop since then.
      const beating = seen(gamma, "gamma")!
      await loop.stop()
      const stoppedBy = new Date().toISOString()
      await until("the page to speak for gamma again", () => seen(gamma, "gamma")?.pid === page.child.pid, PROCESS_DEADLINE)
      const after = seen(gamma, "gamma")!
      expect(after).toMatchObject({ online: true, loop: false })
      // When the loop was last heard from: its orderly stop, after its last beat.
      expect(after.loop_seen_at! >= (beating as HostSeen & { seen_at: string }).seen_at).toBe(true)
      expect(after.loop_seen_at! <= stoppedBy).toBe(true)
    } finally {
      await loop?.stop()
      await page.stop()
    }
    // The page stopped in order: offline since then.
    expect(seen(gamma, "gamma")).toMatchObject({ online: false, loop: false, pid: page.child.pid, stopped_at: expect.any(String) })
  })
})
