/**
 * A task whose loop dies mid-turn twice is held for the owner, not run a
 * third time (issue 21's attempts rule), as real processes: `magi serve`
 * on one host, on PostgreSQL, killed with -9 while its agent's turn runs
 * (the agent killed with it, as a machine's crash or the OOM killer would),
 * then started again. Each restart is let in at once (the dead pid is known
 * on its own machine) and reconciles the turn whose driver is gone within a
 * minute (the seat's lock names the dead pid too, so nobody waits the 90 s
 * its renewals take to age out): the first spends an attempt and runs the task again; the second spends the
 * last and holds it, saying why, where `magi task show` shows it.
 */
import { describe, expect, it } from "vitest"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { tempDirSync, until } from "../support.js"
import { pidAlive } from "../../src/store/Claims.js"
import { databaseForFile, gitRepo, type Host, makeHost, run, type Started, start } from "./hostsSupport.js"

const QUEUE_AGENT = NodePath.resolve("test/fixtures/queue-agent.mjs")

/** Generous: processes start slowly on a busy 2-core box. */
const PROCESS_DEADLINE = 60_000
/**
 * The "within a minute" for a restart to settle the dead loop's
 * turn; under the 90 s (`LEASE_TTL`) a seat's lock would take to age out, so
 * a restart that waited for that fails here.
 */
const RECONCILE_DEADLINE = 60_000

const db = databaseForFile()

const lines = <A>(file: string): ReadonlyArray<A> =>
  NodeFs.existsSync(file) ? NodeFs.readFileSync(file, "utf8").split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as A) : []

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Kill -9 `pid` if it still runs. */
const killHard = (pid: number) => {
  try {
    process.kill(pid, "SIGKILL")
  } catch {
    // Gone already.
  }
}

describe("a task whose loop dies mid-turn twice", { timeout: 2 * RECONCILE_DEADLINE + 4 * PROCESS_DEADLINE }, () => {
  it("is held for the owner once the second restart finds it, visibly, and never started a third time", async () => {
    const dir = tempDirSync()
    const starts = NodePath.join(dir, "starts.jsonl")
    const finished = NodePath.join(dir, "finished.jsonl")
    const clone = NodePath.join(dir, "app")
    gitRepo(clone)
    // The agent waits at a gate nobody opens: every turn is surely mid-run when its loop dies.
    NodeFs.writeFileSync(NodePath.join(clone, "magi.toml"), `[agents.fake]\nkind = "command"\ncommand = ${JSON.stringify(["node", QUEUE_AGENT])}\n`)
    const host: Host = makeHost(db.url(), dir, "alpha", { env: { MAGI_RUN: "", MAGI_NODE: "" } })
    const agentEnv = { FAKE_AGENT_STARTS: starts, FAKE_AGENT_LOG: finished, FAKE_AGENT_GATE: NodePath.join(dir, "never") }
    const serve = (): Started => start(host, clone, agentEnv, "serve")
    const serving = (s: Started) => until("magi serve to be waiting", () => s.stderr().includes("magi serve: waiting"), PROCESS_DEADLINE)
    /** The loop and its agent's turn, killed together with -9. */
    const crash = async (s: Started, turn: { readonly pid: number }) => {
      s.child.kill("SIGKILL")
      killHard(turn.pid)
      await s.exited
      await until("the killed agent to be gone", () => !pidAlive(turn.pid), PROCESS_DEADLINE)
    }
    const turns = () => lines<{ task: string; run: string; pid: number }>(starts)

    const first = serve()
    let last: Started | undefined
    try {
      await serving(first)
      const filed = run(host, clone, {}, "task", "add", "--json", "Build the API")
      expect(filed.status, filed.stderr).toBe(0)
      const id = JSON.parse(filed.stdout).id as string
      await until("the first turn to start", () => turns().length === 1, PROCESS_DEADLINE)
      await crash(first, turns()[0]!)

      // The restart is let in at once and runs the task again: one attempt spent.
      const second = serve()
      await serving(second)
      await until("the second turn to start", () => turns().length === 2, RECONCILE_DEADLINE)
      expect(second.stderr()).toMatch(/stalled \w+ Build the API: the magi loop that ran it is gone.*; attempt 1 of 2 spent/)
      await crash(second, turns()[1]!)

      // The second restart spends the last attempt and holds the task.
      last = serve()
      await serving(last)
      await until("the task to be held", () => /held \w+ Build the API/.test(last!.stderr()), RECONCILE_DEADLINE)
      const shown = run(host, clone, {}, "task", "show", id)
      expect(shown.status, shown.stderr).toBe(0)
      expect(shown.stdout).toContain(`task ${id}  held`)
      expect(shown.stdout).toMatch(/held {7}by magi: failed 2 of 2 attempts; last: the magi loop that ran it is gone/)
      expect(shown.stdout).toContain("attempts   2")
      const listed = run(host, clone, {}, "task", "list")
      expect(listed.stdout).toMatch(/held +p0 +2x .*Build the API.*held by magi/)

      // A while longer, past a few of the loop's ticks: no third turn, and no turn ever finished.
      await pause(12_000)
      expect(turns()).toHaveLength(2)
      expect(new Set(turns().map((t) => t.run)).size).toBe(2)
      expect(lines(finished)).toHaveLength(0)
    } finally {
      for (const t of turns()) killHard(t.pid)
      if (first.child.exitCode === null && first.child.signalCode === null) first.child.kill("SIGKILL")
      if (last !== undefined) await last.stop()
    }
  })
})
