/**
 * `magi serve` killed with -9 and started again at once, as real processes:
 * its home's claim names a dead pid, so the restart is let in straight
 * away rather than refused for the half minute its last beat stays fresh.
 * And an answer given while it was down is delivered when it is back, once.
 */
import { describe, expect, it } from "vitest"
import { spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { MAGI } from "../cli/cliSupport.js"
import { tempDirSync } from "../support.js"
import { magi, repoWithAgent, serveDaemon } from "../runSupport.js"

const serve = (home: string, dir: string) => {
  const child = spawn(process.execPath, [MAGI, "serve", "--home", home], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? "", HOME: dir, MAGI_HOME: home, XDG_CONFIG_HOME: NodePath.join(dir, "no-config") },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stderr = ""
  child.stderr.on("data", (d) => (stderr += d))
  const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)))
  return { child, stderr: () => stderr, exited }
}

const until = async (cond: () => boolean, what: string) => {
  for (const end = Date.now() + 60_000; Date.now() < end;) {
    if (cond()) return
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error(`timed out waiting for ${what}`)
}

const ownerPid = (home: string) => {
  try {
    return JSON.parse(NodeFs.readFileSync(NodePath.join(home, "daemon.json"), "utf8")).pid as number
  } catch {
    return undefined
  }
}

describe("magi serve after a crash", { timeout: 120_000 }, () => {
  it("lets a restart in at once when the loop before it was killed with -9, and still refuses a second live one", async () => {
    const dir = tempDirSync()
    const home = NodePath.join(dir, "home")
    const first = serve(home, dir)
    await until(() => ownerPid(home) === first.child.pid, "the first magi serve to own the home")
    first.child.kill("SIGKILL")
    await first.exited
    // Its record is still there and its last beat fresh: only its pid says it is gone.
    expect(ownerPid(home)).toBe(first.child.pid)
    const second = serve(home, dir)
    await until(() => ownerPid(home) === second.child.pid, "the restart to own the home")
    // A third, while the second lives, is refused naming it.
    const third = serve(home, dir)
    expect(await third.exited).not.toBe(0)
    expect(third.stderr()).toContain(`another magi loop (pid ${second.child.pid}`)
    second.child.kill("SIGTERM")
    await second.exited
  })
})

const ASK_AGENT = NodePath.resolve("test/fixtures/ask-agent.mjs")
const readJson = (file: string) => JSON.parse(NodeFs.readFileSync(file, "utf8"))

describe("an answer given while magi serve was down (issue 18, point 7)", { timeout: 180_000 }, () => {
  it("is delivered once magi serve is back, exactly once, however often it restarts after", async () => {
    const dir = tempDirSync()
    const home = NodePath.join(dir, "home")
    const log = NodePath.join(dir, "agent.jsonl")
    const repo = repoWithAgent(dir, ["node", ASK_AGENT])
    const env = { MAGI_HOME: home, FAKE_AGENT_LOG: log }

    // The machine is up: the loop runs, and an agent asks and is killed mid-wait.
    const before = serveDaemon(repo, home, env, dir)
    await until(() => ownerPid(home) === before.pid, "magi serve to own the home")
    expect(magi(repo, env, "run", "Pick a storage backend").status).toBe(0)
    const qdir = NodePath.join(home, "questions")
    const qfile = NodeFs.readdirSync(qdir).find((f) => f.endsWith(".json"))!
    const runFile = NodePath.join(home, "runs", NodeFs.readdirSync(NodePath.join(home, "runs"))[0]!, "run.json")

    // The machine goes down: the loop stops. The owner answers from the phone meanwhile.
    await before.stop()
    expect(magi(repo, env, "answer", qfile.slice(0, -5), "--reply", "SQLite").status).toBe(0)
    // The killed asker's lease would hold the waiter off for its 90 s ttl; a reboot outlasts it.
    const lease = NodePath.join(qdir, "leases", qfile.replace(/\.json$/, ".lease"))
    if (NodeFs.existsSync(lease)) NodeFs.writeFileSync(lease, JSON.stringify({ ...readJson(lease), beat_at: "2000-01-01T00:00:00Z" }))
    expect(readJson(NodePath.join(qdir, qfile)).answer_delivered).not.toBe(true)

    // The machine is back: the service starts magi serve, which delivers.
    const after = serveDaemon(repo, home, env, dir)
    try {
      await until(() => readJson(NodePath.join(qdir, qfile)).answer_delivered === true, "the answer to be delivered")
      await until(() => readJson(runFile).status === "done", "the run to finish")
    } finally {
      await after.stop()
    }
    // Another restart delivers nothing again.
    const again = serveDaemon(repo, home, env, dir)
    await until(() => ownerPid(home) === again.pid, "the next magi serve to own the home")
    // Its start-up tick has looked at the answered question by now (a tick runs at once); a few seconds more would show a second delivery.
    await new Promise((r) => setTimeout(r, 3_000))
    await again.stop()

    const turns = NodeFs.readFileSync(log, "utf8").trim().split("\n").map((l) => JSON.parse(l).turn)
    expect(turns).toEqual([1, 2])
    expect(after.stderr().match(/delivered the owner's answer/g)).toHaveLength(1)
    expect(again.stderr()).not.toContain("delivered the owner's answer")
    expect(readJson(runFile)).toMatchObject({ status: "done", seats: [{ key: "impl", turns: 2 }] })
  })
})
