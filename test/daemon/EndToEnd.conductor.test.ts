/**
 * The conductor with real processes, end to end: `magi serve` with a
 * `command` agent as implementer and another as `[roles] conductor`; the
 * conductor makes the higher-priority task wait on the other, the loop runs
 * them in that order, and `magi task show` tells the owner why.
 */
import { describe, expect, it } from "@effect/vitest"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { fileTask, magi, repoWithAgent, serveDaemon, tasksOnDisk } from "../runSupport.js"
import { tempDirSync, until as waitUntil } from "../support.js"

const QUEUE_AGENT = NodePath.resolve("test/fixtures/queue-agent.mjs")
const CONDUCTOR_AGENT = NodePath.resolve("test/fixtures/conductor-agent.mjs")

const until = (what: string, ok: () => boolean, ms = 90_000) => waitUntil(what, ok, ms)

describe("magi serve with a conductor, end to end", () => {
  it("runs the task the conductor made wait only after its blocker is done, and records why", async () => {
    const dir = tempDirSync()
    const home = NodePath.join(dir, "home")
    const log = NodePath.join(dir, "agent.jsonl")
    const conductorLog = NodePath.join(dir, "conductor.jsonl")
    const repo = repoWithAgent(dir, ["node", QUEUE_AGENT])
    NodeFs.appendFileSync(
      NodePath.join(repo, "magi.toml"),
      `\n[agents.boss]\nkind = "command"\ncommand = ${JSON.stringify(["node", CONDUCTOR_AGENT])}\n\n[roles]\nimplementer = "fake"\nconductor = "boss"\n`
    )
    const env = { MAGI_HOME: home, FAKE_AGENT_LOG: log, CONDUCTOR_LOG: conductorLog, MAGI_RUN: "", MAGI_NODE: "" }
    const add = (args: string[]) => fileTask(repo, env, args)
    add(["--priority", "1", "Build the API"])
    const client = add(["--priority", "5", "Use the API"])
    const tasks = () => tasksOnDisk(home)
    const daemon = serveDaemon(repo, home, env, dir)
    try {
      await until("both tasks to be done", () => tasks().length === 2 && tasks().every((t) => t.status === "done"))
    } finally {
      await daemon.stop()
    }
    const calls = NodeFs.readFileSync(log, "utf8").trim().split("\n").map((l) => JSON.parse(l))
    expect(calls.map((c) => c.task)).toEqual(["Build the API", "Use the API"])
    const turns = NodeFs.readFileSync(conductorLog, "utf8").trim().split("\n").map((l) => JSON.parse(l))
    expect(turns[0]).toMatchObject({ shown: ["Use the API", "Build the API"], node: "conduct", write: "0", cwd: NodeFs.realpathSync(repo) })
    expect(NodeFs.existsSync(NodePath.join(home, "conduct", "artifacts", "turn-1", "conduct.prompt.md"))).toBe(true)
    expect(NodeFs.existsSync(NodePath.join(home, "conduct", "seat.json"))).toBe(true)
    const decisions = NodeFs.readFileSync(NodePath.join(home, "conduct", "decisions.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l))
    expect(decisions[0]).toMatchObject({ outcome: "applied", why: expect.stringMatching(/^blocked on \w+$/) })
    expect(daemon.stderr()).toMatch(/magi serve: conductor: applied for task \w+: blocked on \w+/)
    const shown = magi(repo, env, "task", "show", client)
    expect(shown.stdout).toMatch(/conductor \(.*, turn 1\): applied: blocked on \w+/)
  }, 150_000)
})
