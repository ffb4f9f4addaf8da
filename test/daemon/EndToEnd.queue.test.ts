/**
 * The queue with real processes, end to end: three `magi task add` with
 * different priorities, and `magi serve` with a `command` agent drains the
 * queue in priority order; the agent inside one run files a follow-up with
 * `magi task add`, which the loop runs last.
 */
import { describe, expect, it } from "@effect/vitest"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { magi, repoWithAgent, serveDaemon, tasksOnDisk } from "../runSupport.js"
import { tempDirSync, until as waitUntil } from "../support.js"

const QUEUE_AGENT = NodePath.resolve("test/fixtures/queue-agent.mjs")

const until = (what: string, ok: () => boolean, ms = 90_000) => waitUntil(what, ok, ms)

describe("magi serve working the queue, end to end", () => {
  it("drains three filed tasks in priority order, and runs the follow-up an agent filed from inside its run", async () => {
    const dir = tempDirSync()
    const home = NodePath.join(dir, "home")
    const log = NodePath.join(dir, "agent.jsonl")
    const repo = repoWithAgent(dir, ["node", QUEUE_AGENT])
    const env = { MAGI_HOME: home, FAKE_AGENT_LOG: log, MAGI_RUN: "", MAGI_NODE: "" }
    const short = (args: string[]) => {
      const r = magi(repo, env, "task", "add", ...args)
      expect(r.status).toBe(0)
      return /^filed (\w+) \[human\]/.exec(r.stdout)![1]!
    }
    short(["--priority", "0", "Low task"])
    short(["--priority", "5", "High task"])
    short(["--priority", "2", "Mid task: FILE A FOLLOW-UP"])
    const queue = NodePath.join(home, "queue")
    const tasks = () => tasksOnDisk(home)

    const daemon = serveDaemon(repo, home, env, dir)
    let record: { current: unknown[]; completed: number } | undefined
    try {
      await until("four tasks to be done", () => tasks().length === 4 && tasks().every((t) => t.status === "done"))
      await until("daemon.json to count them", () => {
        record = JSON.parse(NodeFs.readFileSync(NodePath.join(home, "daemon.json"), "utf8"))
        return record!.completed === 4
      })
    } finally {
      await daemon.stop()
    }
    expect(record).toMatchObject({ current: [], completed: 4 })

    const calls = NodeFs.readFileSync(log, "utf8").trim().split("\n").map((l) => JSON.parse(l))
    expect(calls.map((c) => c.task)).toEqual(["High task", "Mid task: FILE A FOLLOW-UP", "Low task", "Follow-up the agent found"])
    // Each in a run of its own, in its own worktree.
    expect(new Set(calls.map((c) => c.cwd)).size).toBe(4)
    const all = tasks()
    const followUp = all.find((t) => t.title === "Follow-up the agent found")
    const mid = all.find((t) => t.title.startsWith("Mid task"))
    expect(followUp.source).toEqual({ kind: "agent", run: mid.runs[0], node: "impl" })
    // Filed from inside the run's worktree, it works on the owner's repository.
    expect(followUp.repo).toBe(NodeFs.realpathSync(repo))
    expect(all.every((t) => t.attempts === 1 && t.runs.length === 1)).toBe(true)
    for (const t of all) {
      const run = JSON.parse(NodeFs.readFileSync(NodePath.join(home, "runs", t.runs[0], "run.json"), "utf8"))
      expect(run).toMatchObject({ status: "done", instruction: t.instruction })
    }
    // One line per started and per settled task.
    const lines = daemon.stderr().split("\n").filter((l) => /^magi serve: (started|done) /.test(l))
    expect(lines).toHaveLength(8)
    expect(lines[0]).toMatch(/^magi serve: started \w+ High task \(priority 5, attempt 1 of 2\) as run \w+ with fake on magi\/\w+$/)
    expect(lines[1]).toMatch(/^magi serve: done \w+ High task \(run \w+\)$/)
    expect(NodeFs.readdirSync(queue).filter((f) => f.endsWith(".lock"))).toEqual([])
  }, 150_000)
})
