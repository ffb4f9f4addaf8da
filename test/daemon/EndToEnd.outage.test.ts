/**
 * A short database outage as a turn ends redoes nothing (issue 28, item 1),
 * as real processes on a PostgreSQL server of the test's own (the suite's
 * shared one is never stopped): the agent's turn blocks until the test has
 * stopped the database, then ends; the database comes back 15 s later. The
 * loop waits for the store to settle the turn (saying so once, and once
 * when it is back), the task ran once, the run is done, nothing was called
 * stalled or gone.
 */
import { describe, expect, it } from "vitest"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { tempDirSync, until } from "../support.js"
import { gitRepo, makeHost, run, type Started, start } from "./hostsSupport.js"

const QUEUE_AGENT = NodePath.resolve("test/fixtures/queue-agent.mjs")

/** Generous: processes start slowly on a busy 2-core box. */
const PROCESS_DEADLINE = 60_000
/** How long the database stays down once the turn is ending. */
const OUTAGE_MS = 15_000

const lines = (file: string): ReadonlyArray<unknown> => NodeFs.existsSync(file) ? NodeFs.readFileSync(file, "utf8").split("\n").filter((l) => l !== "") : []

describe("a database outage as a turn ends", { timeout: 6 * PROCESS_DEADLINE }, () => {
  it("is waited out: the task ran once, its run is done, and the loop never called itself gone", async () => {
    // @ts-expect-error: a plain .mjs script without types
    const { startServer } = (await import("../../scripts/pg/server.mjs")) as {
      startServer: () => Promise<{ url: string; stop: () => void; pause: () => void; resume: () => void }>
    }
    const server = await startServer()
    const dir = tempDirSync()
    const starts = NodePath.join(dir, "starts.jsonl")
    const finished = NodePath.join(dir, "finished.jsonl")
    const gate = NodePath.join(dir, "database-stopped")
    const clone = NodePath.join(dir, "app")
    gitRepo(clone)
    NodeFs.writeFileSync(NodePath.join(clone, "magi.toml"), `[agents.fake]\nkind = "command"\ncommand = ${JSON.stringify(["node", QUEUE_AGENT])}\n`)
    const host = makeHost(server.url, dir, "alpha", { env: { MAGI_RUN: "", MAGI_NODE: "" } })
    const env = { FAKE_AGENT_STARTS: starts, FAKE_AGENT_LOG: finished, FAKE_AGENT_GATE: gate }
    let serve: Started | undefined
    let down = false
    try {
      serve = start(host, clone, env, "serve")
      await until("magi serve to be waiting", () => serve!.stderr().includes("magi serve: waiting"), PROCESS_DEADLINE)
      const filed = run(host, clone, {}, "task", "add", "Build the API")
      expect(filed.status, filed.stderr).toBe(0)
      await until("the turn to start", () => lines(starts).length === 1, PROCESS_DEADLINE)
      // The turn ends only once the database is gone.
      server.pause()
      down = true
      NodeFs.writeFileSync(gate, "")
      await until("the turn to end", () => lines(finished).length === 1, PROCESS_DEADLINE)
      await new Promise((r) => setTimeout(r, OUTAGE_MS))
      server.resume()
      down = false
      await until("the task to be done", () => /done \w+ Build the API/.test(serve!.stderr()), 2 * PROCESS_DEADLINE)
      const said = serve.stderr()
      expect(said).toContain("waiting for the store to answer")
      expect(said).toContain("the store answers again")
      expect(said).not.toMatch(/is gone|stalled|could not update task/)
      expect(lines(starts)).toHaveLength(1)
      const shown = run(host, clone, {}, "runs")
      expect(shown.status, shown.stderr).toBe(0)
      expect(shown.stdout).toMatch(/done/)
      expect(shown.stdout).not.toMatch(/stalled|running/)
    } finally {
      if (down) server.resume()
      if (serve !== undefined) await serve.stop()
      server.stop()
    }
  })
})
