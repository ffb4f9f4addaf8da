/**
 * A host's turn capacity (`[host] max_turns`) with real processes: 24
 * questions answered at once, their askers gone, and one `magi serve` with
 * room for 3 agent turns. Every answer is delivered, each by one resumed
 * turn, and never more than 3 agent processes run at once.
 */
import { describe, expect, it } from "vitest"
import { Either } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as Q from "../../src/questions/Question.js"
import { encode as encodeRun } from "../../src/runs/Runs.js"
import { repoWithAgent, runWithSession, serveDaemon } from "../runSupport.js"
import { tempDirSync, until } from "../support.js"

const ANSWERS = 24
const MAX_TURNS = 3

/** Each turn says when it started and ended; it lasts long enough for turns to overlap when they can. */
const SLOW_AGENT = `
import { appendFileSync } from "node:fs"
const log = (event) => appendFileSync(process.env.TURN_LOG, JSON.stringify({ event, run: process.env.MAGI_RUN, at: Date.now() }) + "\\n")
log("start")
setTimeout(() => { log("end"); process.stdout.write("Read the owner's answer.\\n") }, 400)
`

describe("a host's turn capacity", { timeout: 240_000 }, () => {
  it("resumes 24 answered questions whose askers are gone with never more than max_turns agents at once, delivering all 24", async () => {
    const dir = tempDirSync()
    const agent = NodePath.join(dir, "slow-agent.mjs")
    NodeFs.writeFileSync(agent, SLOW_AGENT)
    const repo = repoWithAgent(dir, ["node", agent])
    NodeFs.appendFileSync(NodePath.join(repo, "magi.toml"), `[host]\nmax_turns = ${MAX_TURNS}\n`)
    const home = NodePath.join(dir, "home")
    const log = NodePath.join(dir, "turns.jsonl")
    const now = new Date()
    const ids: string[] = []
    for (let i = 0; i < ANSWERS; i++) {
      const runId = Q.makeId(now, 0x1000 + i)
      const run = runWithSession(runId, { status: "waiting", repo, worktree: repo })
      NodeFs.mkdirSync(NodePath.join(home, "runs", runId), { recursive: true })
      NodeFs.writeFileSync(NodePath.join(home, "runs", runId, "run.json"), encodeRun(run))
      const qid = Q.makeId(now, 0x2000 + i)
      const asked = {
        ...Q.make({ id: qid, run: runId, node: "", seat: "impl", summary: `Question ${i}?`, detail: "", choices: [], now, cwd: repo }),
        answer_timeout: 86_400
      }
      const answered = Either.getOrThrow(Q.answer(asked, { text: `answer ${i}` }, now))
      NodeFs.mkdirSync(NodePath.join(home, "questions"), { recursive: true })
      NodeFs.writeFileSync(NodePath.join(home, "questions", `${qid}.json`), Q.encode(answered))
      ids.push(qid)
    }
    const delivered = () =>
      ids.filter((id) => JSON.parse(NodeFs.readFileSync(NodePath.join(home, "questions", `${id}.json`), "utf8")).answer_delivered === true).length

    const daemon = serveDaemon(repo, home, { MAGI_HOME: home, TURN_LOG: log }, dir)
    try {
      await until("all 24 answers to be delivered", () => delivered() === ANSWERS, 180_000)
    } finally {
      await daemon.stop()
    }
    const events = NodeFs.readFileSync(log, "utf8").trim().split("\n").map((l) => JSON.parse(l) as { event: "start" | "end"; run: string; at: number })
    // Each run resumed exactly once.
    const starts = events.filter((e) => e.event === "start")
    expect(starts.length).toBe(ANSWERS)
    expect(new Set(starts.map((e) => e.run)).size).toBe(ANSWERS)
    // Never more than MAX_TURNS alive at once (an end before a start at the same millisecond).
    let alive = 0
    let most = 0
    for (const e of [...events].sort((a, b) => a.at - b.at || (a.event === "end" ? -1 : 1))) {
      alive += e.event === "start" ? 1 : -1
      most = Math.max(most, alive)
    }
    expect(most).toBeLessThanOrEqual(MAX_TURNS)
    // And the room was used: turns did overlap.
    expect(most).toBeGreaterThan(1)
  })
})
