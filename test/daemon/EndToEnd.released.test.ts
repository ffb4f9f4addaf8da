/**
 * The common real case with real processes: the agent's `magi ask` hands
 * back `pending` and exits, its turn ends, and the owner answers a while
 * later. The asker let go of its lease when it exited, so `magi serve`
 * resumes the seat on the answer itself, not once the lease's 90 s ttl ran
 * out (91.5 s measured before).
 */
import { describe, expect, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { MAGI, magi, repoWithAgent } from "../runSupport.js"
import { tempDirSync, until } from "../support.js"

const PENDING_AGENT = NodePath.resolve("test/fixtures/pending-agent.mjs")

const readJson = (file: string) => JSON.parse(NodeFs.readFileSync(file, "utf8"))

describe("an answer to an agent whose magi ask exited", () => {
  it("resumes the seat well inside the old lease ttl, with the answer", async () => {
    const dir = tempDirSync()
    const home = NodePath.join(dir, "home")
    const log = NodePath.join(dir, "agent.jsonl")
    const repo = repoWithAgent(dir, ["node", PENDING_AGENT])
    const env = { MAGI_HOME: home, FAKE_AGENT_LOG: log }

    const started = magi(repo, env, "run", "Pick a storage backend")
    expect(started.status).toBe(0)
    expect(started.stderr).toContain("is waiting on the owner")
    const qdir = NodePath.join(home, "questions")
    const [qfile] = NodeFs.readdirSync(qdir).filter((f) => f.endsWith(".json"))
    const qid = qfile!.slice(0, -5)
    // The asker exited with `pending`: it holds no lease any more.
    expect(NodeFs.existsSync(NodePath.join(qdir, "leases", `${qid}.lease`))).toBe(false)

    const daemon = spawn(process.execPath, [MAGI, "serve", "--home", home], {
      cwd: repo,
      env: { ...process.env, ...env, XDG_CONFIG_HOME: NodePath.join(dir, "no-config") },
      stdio: ["ignore", "pipe", "pipe"]
    })
    try {
      await until("the daemon to own the home", () => NodeFs.existsSync(NodePath.join(home, "daemon.json")), 20_000)
      const answered = magi(repo, env, "answer", qid, "--reply", "Redis")
      expect(answered.status).toBe(0)
      // Far below the 90 s the lease used to hold it off for; a loaded
      // machine only makes it slower, never wrong.
      await until("the resumed turn", () => NodeFs.readFileSync(log, "utf8").trim().split("\n").length >= 2, 45_000)
      await until("the answer to be recorded as delivered", () => readJson(NodePath.join(qdir, qfile!)).answer_delivered === true, 20_000)
    } finally {
      daemon.kill("SIGTERM")
      await new Promise((r) => daemon.once("exit", r))
    }
    const calls = NodeFs.readFileSync(log, "utf8").trim().split("\n").map((l) => JSON.parse(l))
    expect(calls.map((c) => [c.turn, c.answer])).toEqual([
      [1, null],
      [2, "Redis"]
    ])
  }, 120_000)
})
