/**
 * A resume waiting for room, seen where the owner looks: a host with one
 * turn (`[host] max_turns = 1`) and two answered questions whose askers are
 * gone. While the first resumed agent runs, the other answer's card on the
 * page and `magi answer ID` say "queued behind 1 turn on HOST"; once the
 * first ends, the second is delivered too: nothing lost.
 */
import { describe, expect, it } from "vitest"
import { spawnSync } from "node:child_process"
import { Either } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as Q from "../../src/questions/Question.js"
import { encode as encodeRun } from "../../src/runs/Runs.js"
import { MAGI, repoWithAgent, runWithSession, serveDaemon } from "../runSupport.js"
import { tempDirSync, until } from "../support.js"
import { request, startWeb } from "../web/web-support.js"

/** Each turn says it started, then holds its slot until the test opens the gate. */
const GATED_AGENT = `
import { appendFileSync, existsSync } from "node:fs"
appendFileSync(process.env.TURN_LOG, process.env.MAGI_RUN + "\\n")
const wait = () => existsSync(process.env.GATE) ? process.stdout.write("Read the owner's answer.\\n") : setTimeout(wait, 50)
wait()
`

/** Generous: the suite runs on a busy 2-core box. */
const DEADLINE = 120_000

describe("a resume queued for room on its host", { timeout: 300_000 }, () => {
  it("shows 'queued behind 1 turn' on the question's card and in magi answer ID while the host's only turn is taken, then is delivered", async () => {
    const dir = tempDirSync()
    const agent = NodePath.join(dir, "gated-agent.mjs")
    NodeFs.writeFileSync(agent, GATED_AGENT)
    const repo = repoWithAgent(dir, ["node", agent])
    NodeFs.appendFileSync(NodePath.join(repo, "magi.toml"), `[host]\nmax_turns = 1\nname = "solo"\n`)
    const home = NodePath.join(dir, "home")
    const log = NodePath.join(dir, "turns.log")
    const gate = NodePath.join(dir, "gate")
    const now = new Date()
    const ids: string[] = []
    const runOf = new Map<string, string>()
    for (let i = 0; i < 2; i++) {
      const runId = Q.makeId(now, 0x1000 + i)
      NodeFs.mkdirSync(NodePath.join(home, "runs", runId), { recursive: true })
      NodeFs.writeFileSync(NodePath.join(home, "runs", runId, "run.json"), encodeRun(runWithSession(runId, { status: "waiting", repo, worktree: repo })))
      const qid = Q.makeId(now, 0x2000 + i)
      const asked = {
        ...Q.make({ id: qid, run: runId, node: "", seat: "impl", summary: `Question ${i}?`, detail: "", choices: [], now, cwd: repo }),
        answer_timeout: 86_400
      }
      NodeFs.mkdirSync(NodePath.join(home, "questions"), { recursive: true })
      NodeFs.writeFileSync(NodePath.join(home, "questions", `${qid}.json`), Q.encode(Either.getOrThrow(Q.answer(asked, { text: `answer ${i}` }, now))))
      ids.push(qid)
      runOf.set(qid, runId)
    }
    const delivered = () =>
      ids.filter((id) => JSON.parse(NodeFs.readFileSync(NodePath.join(home, "questions", `${id}.json`), "utf8")).answer_delivered === true).length
    const started = () => (NodeFs.existsSync(log) ? NodeFs.readFileSync(log, "utf8").trim().split("\n").filter((l) => l !== "") : [])

    const daemon = serveDaemon(repo, home, { MAGI_HOME: home, TURN_LOG: log, GATE: gate }, dir)
    const web = await startWeb(home, 0, { cwd: repo })
    try {
      await until("the first resumed agent to start", () => started().length === 1, DEADLINE)
      // The question whose run did not start is the one waiting.
      const waitingId = ids.find((id) => !started().includes(runOf.get(id)!))!
      let card: { id: string; queued: string | null } | undefined
      const deadline = Date.now() + DEADLINE
      while (card?.queued == null) {
        if (Date.now() > deadline) throw new Error(`the card never said it was queued: ${JSON.stringify(card)}`)
        const list = (await request(`${web.url}/api/questions`)).json() as {
          open: Array<{ id: string; queued: string | null }>
          history: Array<{ id: string; queued: string | null }>
        }
        card = [...list.open, ...list.history].find((q) => q.id === waitingId)
        if (card?.queued == null) await new Promise((r) => setTimeout(r, 100))
      }
      expect(card.queued).toBe("queued behind 1 turn on solo")
      const shown = spawnSync(process.execPath, [MAGI, "answer", waitingId], {
        cwd: repo,
        env: { ...process.env, MAGI_HOME: home, XDG_CONFIG_HOME: NodePath.join(dir, "no-config") },
        encoding: "utf8"
      })
      expect(shown.status).toBe(0)
      expect(shown.stdout).toContain("delivery: queued behind 1 turn on solo; magi resumes the agent as soon as one ends")
      // Room again: the queued resume starts, and both answers reach their agents.
      NodeFs.writeFileSync(gate, "")
      await until("both answers to be delivered", () => delivered() === 2, DEADLINE)
      expect(started()).toHaveLength(2)
      const after = spawnSync(process.execPath, [MAGI, "answer", waitingId], {
        cwd: repo,
        env: { ...process.env, MAGI_HOME: home, XDG_CONFIG_HOME: NodePath.join(dir, "no-config") },
        encoding: "utf8"
      })
      expect(after.stdout).not.toContain("queued behind")
    } finally {
      NodeFs.writeFileSync(gate, "")
      await web.stop()
      await daemon.stop()
    }
  })
})
