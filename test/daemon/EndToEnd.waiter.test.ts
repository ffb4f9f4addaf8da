/**
 * The waiter with real processes, end to end: `magi run` starts a `command`
 * agent that asks and is killed mid-wait, the owner answers with
 * `magi answer`, and `magi serve` resumes that same seat with the answer.
 */
import { describe, expect, it } from "@effect/vitest"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { magi, repoWithAgent, serveDaemon } from "../runSupport.js"
import { tempDirSync, until as waitUntil } from "../support.js"

const ASK_AGENT = NodePath.resolve("test/fixtures/ask-agent.mjs")

const readJson = (file: string) => JSON.parse(NodeFs.readFileSync(file, "utf8"))

const until = (what: string, ok: () => boolean, ms = 20_000) => waitUntil(what, ok, ms)

describe("magi serve, end to end", () => {
  it("resumes the killed asker's seat with the owner's answer, which the agent records", async () => {
    const dir = tempDirSync()
    const home = NodePath.join(dir, "home")
    const log = NodePath.join(dir, "agent.jsonl")
    const repo = repoWithAgent(dir, ["node", ASK_AGENT])
    const env = { MAGI_HOME: home, FAKE_AGENT_LOG: log }

    // 1. The run: the agent asks, its `magi ask` is killed, its turn ends.
    const started = magi(repo, env, "run", "Pick a storage backend")
    expect(started.stderr).toContain("is waiting on the owner")
    expect(started.status).toBe(0)
    const [runId] = NodeFs.readdirSync(NodePath.join(home, "runs"))
    const runFile = NodePath.join(home, "runs", runId!, "run.json")
    expect(readJson(runFile).status).toBe("waiting")
    const qdir = NodePath.join(home, "questions")
    const [qfile] = NodeFs.readdirSync(qdir).filter((f) => f.endsWith(".json"))
    const qid = qfile!.slice(0, -5)
    const asked = readJson(NodePath.join(qdir, qfile!))
    expect(asked).toMatchObject({ status: "open", run: runId, seat: "impl", cwd: readJson(runFile).worktree })

    // 2. The owner answers; nobody is reading.
    const answered = magi(repo, env, "answer", qid, "--reply", "SQLite")
    expect(answered.status).toBe(0)
    // The killed asker's lease (if it kept one) would hold the waiter off for
    // its 90 s ttl; age it instead of waiting that out.
    const lease = NodePath.join(qdir, "leases", `${qid}.lease`)
    if (NodeFs.existsSync(lease))
      NodeFs.writeFileSync(lease, JSON.stringify({ ...readJson(lease), beat_at: "2000-01-01T00:00:00Z" }))

    // 3. The daemon carries the answer to the same seat.
    const daemon = serveDaemon(repo, home, env, dir)
    try {
      await until("the answer to be delivered", () => readJson(NodePath.join(qdir, qfile!)).answer_delivered === true)
      await until("the run to finish", () => readJson(runFile).status === "done")
      expect(NodeFs.existsSync(NodePath.join(home, "daemon.json"))).toBe(true)
      // A second loop on the same home is refused, naming the owner's pid.
      const second = magi(repo, env, "serve", "--home", home)
      expect(second.status).toBe(1)
      expect(second.stderr).toContain(`pid ${daemon.pid}`)
    } finally {
      await daemon.stop()
    }
    expect(daemon.stderr()).toContain("delivered the owner's answer")
    expect(NodeFs.existsSync(NodePath.join(home, "daemon.json"))).toBe(false)

    const run = readJson(runFile)
    expect(run).toMatchObject({ status: "done", summary: "Recorded the owner's answer: SQLite", seats: [{ key: "impl", turns: 2 }] })
    expect(NodeFs.readFileSync(NodePath.join(run.worktree, "answer.txt"), "utf8")).toBe("backend: SQLite\n")
    const q = readJson(NodePath.join(qdir, qfile!))
    expect(q).toMatchObject({ status: "answered", answer: { choice: "SQLite" }, answer_delivered: true, waiter: null })
    expect(NodeFs.existsSync(lease)).toBe(false)
    const calls = NodeFs.readFileSync(log, "utf8").trim().split("\n").map((l) => JSON.parse(l))
    expect(calls.map((c) => [c.turn, c.cwd])).toEqual([
      [1, run.worktree],
      [2, run.worktree]
    ])
  }, 60_000)
})
