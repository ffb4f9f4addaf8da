/**
 * An agent never outlives the `magi serve` that started it (issue 27, item
 * 1), as real processes, on the file backend and on PostgreSQL: the loop is
 * killed with -9 mid-turn and its agent, a `command` agent working for a long
 * time, is left alive (unlike the crash tests, which kill it with the loop).
 *
 * - the agent's guardian ends it within seconds, with nobody restarting magi;
 * - with the guardian killed too, the restarted loop ends it from the turn's
 *   record before it retries the task.
 *
 * Either way the retry starts only after the first agent noted its end.
 */
import { describe, expect, it } from "vitest"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { tempDirSync, until } from "../support.js"
import { pidAlive } from "../../src/store/Claims.js"
import { databaseForFile, gitRepo, type Host, makeHost, run, type Started, start } from "./hostsSupport.js"

const LONG_AGENT = NodePath.resolve("test/fixtures/long-agent.mjs")

/** Generous: processes start slowly on a busy 2-core box. */
const PROCESS_DEADLINE = 60_000
/** "A few seconds" for an orphaned agent to be gone: its grace (5 s) and some. */
const ORPHAN_DEADLINE = 15_000

const db = databaseForFile()

interface Time {
  readonly event: "start" | "end"
  readonly pid: number
  readonly run: string
  readonly at: number
}

const times = (file: string): ReadonlyArray<Time> =>
  NodeFs.existsSync(file) ? NodeFs.readFileSync(file, "utf8").split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as Time) : []

const killHard = (pid: number) => {
  try {
    process.kill(pid, "SIGKILL")
  } catch {
    // Gone already.
  }
}

/** The guardian magi started beside agent `pid`: a node `-e` whose first argument is the agent's group. */
const guardianOf = (pid: number): number | undefined => {
  for (const entry of NodeFs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const argv = NodeFs.readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0")
      if (argv[1] === "-e" && argv[3] === String(pid)) return Number(entry)
    } catch {
      // Gone meanwhile.
    }
  }
  return undefined
}

const hostOn = (backend: "files" | "postgres", dir: string): Host => {
  if (backend === "postgres") return makeHost(db.url(), dir, "alpha", { env: { MAGI_RUN: "", MAGI_NODE: "" } })
  const top = NodePath.join(dir, "alpha")
  const config = NodePath.join(top, "config")
  NodeFs.mkdirSync(NodePath.join(config, "magi"), { recursive: true })
  NodeFs.writeFileSync(NodePath.join(config, "magi", "config.toml"), `[host]\nname = "alpha"\n`)
  return {
    name: "alpha",
    top,
    home: NodePath.join(top, "home"),
    env: { MAGI_HOME: NodePath.join(top, "home"), XDG_CONFIG_HOME: config, MAGI_RUN: "", MAGI_NODE: "" }
  }
}

describe.each(["files", "postgres"] as const)("an agent whose magi serve is killed with -9 (%s)", (backend) => {
  const setUp = () => {
    const dir = tempDirSync()
    const log = NodePath.join(dir, "times.jsonl")
    const clone = NodePath.join(dir, "app")
    gitRepo(clone)
    NodeFs.writeFileSync(NodePath.join(clone, "magi.toml"), `[agents.long]\nkind = "command"\ncommand = ${JSON.stringify(["node", LONG_AGENT])}\n`)
    const host = hostOn(backend, dir)
    const env = { FAKE_AGENT_TIMES: log }
    const serve = (): Started => start(host, clone, env, "serve")
    const serving = (s: Started) => until("magi serve to be waiting", () => s.stderr().includes("magi serve: waiting"), PROCESS_DEADLINE)
    const fileTask = () => {
      const filed = run(host, clone, env, "task", "add", "Build the API")
      expect(filed.status, filed.stderr).toBe(0)
    }
    return { log, serve, serving, fileTask, host, clone, env }
  }

  /** The retry started after the first agent ended, and ran to done. */
  const expectNoOverlap = async (s: ReturnType<typeof setUp>, last: Started) => {
    await until("the retry to end", () => times(s.log).filter((t) => t.event === "end").length === 2, PROCESS_DEADLINE)
    const [start1, end1, start2] = times(s.log)
    expect(start1!.event).toBe("start")
    expect(end1).toMatchObject({ event: "end", pid: start1!.pid })
    expect(start2!.event).toBe("start")
    expect(start2!.at).toBeGreaterThanOrEqual(end1!.at)
    await until("the task to be done", () => /done \w+ Build the API/.test(last.stderr()), PROCESS_DEADLINE)
  }

  it("is ended by its guardian within seconds, and the restart's retry starts after it ended", { timeout: 4 * PROCESS_DEADLINE }, async () => {
    const s = setUp()
    const first = s.serve()
    let second: Started | undefined
    let agent = 0
    try {
      await s.serving(first)
      s.fileTask()
      await until("the agent to start", () => times(s.log).length === 1, PROCESS_DEADLINE)
      agent = times(s.log)[0]!.pid
      first.child.kill("SIGKILL")
      await first.exited
      await until("the orphaned agent to be gone", () => !pidAlive(agent), ORPHAN_DEADLINE)
      second = s.serve()
      await s.serving(second)
      await expectNoOverlap(s, second)
    } finally {
      if (agent !== 0) killHard(agent)
      if (first.child.exitCode === null && first.child.signalCode === null) first.child.kill("SIGKILL")
      if (second !== undefined) await second.stop()
    }
  })

  it("with its guardian killed too, is ended by the restarted loop before the task is retried", { timeout: 4 * PROCESS_DEADLINE }, async () => {
    const s = setUp()
    const first = s.serve()
    let second: Started | undefined
    let agent = 0
    try {
      await s.serving(first)
      s.fileTask()
      await until("the agent to start", () => times(s.log).length === 1, PROCESS_DEADLINE)
      agent = times(s.log)[0]!.pid
      await until("the agent's guardian to start", () => guardianOf(agent) !== undefined, PROCESS_DEADLINE)
      first.child.kill("SIGKILL")
      killHard(guardianOf(agent)!)
      await first.exited
      // Nothing is left to end it but the loop that takes its turn over.
      expect(pidAlive(agent)).toBe(true)
      second = s.serve()
      await s.serving(second)
      await until("the orphaned agent to be gone", () => !pidAlive(agent), PROCESS_DEADLINE).catch((e) => {
        throw new Error(`${e}; magi serve said:\n${second!.stderr()}`)
      })
      await expectNoOverlap(s, second)
      expect(second.stderr()).toContain("left running by a magi process that is gone")
    } finally {
      if (agent !== 0) killHard(agent)
      if (first.child.exitCode === null && first.child.signalCode === null) first.child.kill("SIGKILL")
      if (second !== undefined) await second.stop()
    }
  })
})
