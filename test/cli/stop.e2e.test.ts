/**
 * Stopping things (issue 27, items 2 and 3): `magi run stop` ends a turn
 * whichever process runs it, a task's run stopped is held rather than
 * retried, `magi answer --withdraw` tells the asker no answer will come, and
 * a verb typed wrong starts no agent.
 */
import { describe, expect, it } from "vitest"
import { spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { tempDirSync, until } from "../support.js"
import { MAGI, magi, repoWithAgent, serveDaemon, tasksOnDisk } from "../runSupport.js"

/**
 * An agent that records its pid, then works "forever" while `slow` exists
 * (else it finishes at once): the same agent is stopped and then resumed.
 */
const setup = () => {
  const dir = tempDirSync()
  const slow = NodePath.join(dir, "slow")
  const pidFile = NodePath.join(dir, "agent.pid")
  NodeFs.writeFileSync(slow, "")
  const script = `echo $$ > ${pidFile}; echo working > work.txt; if [ -f ${slow} ]; then sleep 600; fi; echo finished`
  const repo = repoWithAgent(dir, ["sh", "-c", script])
  const home = NodePath.join(dir, "home")
  const env = { MAGI_HOME: home }
  const runsDir = NodePath.join(home, "runs")
  const runIds = () => (NodeFs.existsSync(runsDir) ? NodeFs.readdirSync(runsDir).filter((f) => /^\d{8}-/.test(f)) : [])
  const record = (id: string) => JSON.parse(NodeFs.readFileSync(NodePath.join(runsDir, id, "run.json"), "utf8"))
  const agentPid = () => (NodeFs.existsSync(pidFile) ? Number(NodeFs.readFileSync(pidFile, "utf8").trim()) : undefined)
  return { dir, slow, repo, home, env, runIds, record, agentPid, magi: (...args: string[]) => magi(repo, env, ...args) }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** `magi run ARGS…` in the background: resolves with its exit code and stderr. */
const runInBackground = (t: ReturnType<typeof setup>, ...args: string[]) => {
  const child = spawn(process.execPath, [MAGI, "run", ...args], {
    cwd: t.repo,
    env: { ...process.env, ...t.env, XDG_CONFIG_HOME: NodePath.join(t.dir, "no-config") },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stderr = ""
  child.stderr.on("data", (d) => (stderr += d))
  const exited = new Promise<{ code: number | null; stderr: string }>((done) => child.once("exit", (code) => done({ code, stderr })))
  return { exited, kill: () => child.kill("SIGKILL") }
}

describe("magi run stop", () => {
  it("ends the turn another `magi run` is running, leaves the run stopped, and --resume continues it", { timeout: 120_000 }, async () => {
    const t = setup()
    const running = runInBackground(t, "keep working")
    try {
      await until("the agent is working", () => t.agentPid() !== undefined && t.runIds().length === 1, 60_000)
      const [id] = t.runIds()
      const short = id!.split("-").at(-1)!
      const pid = t.agentPid()!

      const stopped = t.magi("run", "stop", short)
      expect(stopped.status, stopped.stderr).toBe(0)
      expect(stopped.stdout).toBe(`run ${short} stopped; continue it with magi run --resume ${short}: its agent's process was ended\n`)
      const ended = await running.exited
      expect(ended.code).toBe(1)
      expect(ended.stderr).toContain(`run ${short} stopped: stopped by the owner; continue it with magi run --resume ${short}`)
      await until("the agent's process is gone", () => !alive(pid), 10_000)
      expect(t.record(id!)).toMatchObject({ status: "stopped" })
      expect(t.record(id!).stop_requested_at).toBeUndefined()
      // What it had done is kept on the branch.
      expect(t.magi("show", short).stdout).toContain(`run ${id}  stopped (stopped by the owner; continue it with magi run --resume ${short})`)
      expect(t.magi("runs").stdout).toContain(`${short}  stopped`)

      // Stopping it again says it is stopped already.
      const again = t.magi("run", "stop", short)
      expect(again.status).toBe(1)
      expect(again.stderr).toBe(`magi: run ${short} is already stopped; magi run --resume ${short} continues it\n`)

      NodeFs.rmSync(t.slow)
      const resumed = t.magi("run", "--resume", short, "go on")
      expect(resumed.status, resumed.stderr).toBe(0)
      expect(t.record(id!)).toMatchObject({ status: "done", reason: "" })
    } finally {
      running.kill()
    }
  })

  it("refuses a run with no turn running, saying what to do instead", { timeout: 120_000 }, () => {
    const t = setup()
    NodeFs.rmSync(t.slow)
    expect(t.magi("run", "finish quickly").status).toBe(0)
    const [id] = t.runIds()
    const short = id!.split("-").at(-1)!
    const refused = t.magi("run", "stop", short)
    expect(refused.status).toBe(1)
    expect(refused.stderr).toBe(`magi: run ${short} is done; there is no turn of it to stop\n`)
    expect(t.record(id!)).toMatchObject({ status: "done" })
  })

  it("stops a task's run in `magi serve`'s loop, and the task is held, not retried", { timeout: 180_000 }, async () => {
    const t = setup()
    expect(t.magi("task", "add", "--title", "Work a while", "keep working").status).toBe(0)
    const daemon = serveDaemon(t.repo, t.home, t.env, t.dir)
    try {
      await until("the task's agent is working", () => t.agentPid() !== undefined && t.runIds().length === 1, 60_000)
      const [id] = t.runIds()
      const short = id!.split("-").at(-1)!
      const pid = t.agentPid()!
      const stopped = t.magi("run", "stop", short)
      expect(stopped.status, stopped.stderr).toBe(0)
      expect(stopped.stdout).toContain(`run ${short} stopped`)
      await until("the agent's process is gone", () => !alive(pid), 10_000)
      await until("the task is held", () => tasksOnDisk(t.home)[0].status === "held", 30_000)
      const [task] = tasksOnDisk(t.home)
      expect(task.hold_reason).toContain("stopped by the owner")
      // Well past a tick of the loop: no second run was started for it.
      await new Promise((done) => setTimeout(done, 3000))
      expect(t.runIds()).toEqual([id])
      expect(t.record(id!).status).toBe("stopped")
    } finally {
      await daemon.stop()
    }
  })
})

describe("magi run's verbs typed wrong", () => {
  it.each([
    [["stpo", "x"], "`stpo` looks like magi run stop mistyped"],
    [["sotp", "ab12"], "`sotp` looks like magi run stop mistyped"],
    [["rn", "ab12"], "`rn` looks like magi run rm mistyped"],
    [["rm", "the", "old", "file"], "magi run rm takes one run's id, not 3 words"],
    [["stop", "the", "server"], "magi run stop takes one run's id, not 2 words"]
  ])("magi run %j starts no agent and says how to mean it as an instruction", (words, said) => {
    const t = setup()
    const ran = t.magi("run", ...words)
    expect(ran.status).toBe(1)
    expect(ran.stderr).toBe(
      `magi: ${said}${
        said.includes("mistyped") ? ", so no agent was started" : ""
      }; to have an agent work an instruction that starts with it, put -- before the text: magi run -- ${words.join(" ")}\n`
    )
    expect(t.runIds()).toEqual([])
    expect(t.agentPid()).toBeUndefined()
  })

  it("takes the words after -- as an instruction", { timeout: 60_000 }, () => {
    const t = setup()
    NodeFs.rmSync(t.slow)
    const ran = t.magi("run", "--", "stop", "the", "flaky", "retries")
    expect(ran.status, ran.stderr).toBe(0)
    const [id] = t.runIds()
    expect(t.record(id!).instruction).toBe("stop the flaky retries")
  })

  it("says what stop needs", () => {
    const t = setup()
    const bare = t.magi("run", "stop")
    expect(bare.status).toBe(2)
    expect(bare.stderr).toBe("magi: magi run stop needs the run's id: magi run stop ID (magi runs lists them)\n")
  })
})
