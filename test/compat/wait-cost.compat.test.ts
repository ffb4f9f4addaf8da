/**
 * The cost of waiting, against the real, pinned CLIs on their model
 * stand-ins (waitCost.ts runs each case): with `wait = "end-turn"` an agent
 * that asks and gets `pending` ends its turn, costing no model request
 * while the owner is away; the owner answers, and the waiter in
 * `magi serve` resumes the *same* session with the answer. With
 * `wait = "poll"` every slice costs a request. The bench
 * (scripts/bench/wait-cost.ts) runs here small, so it does not rot.
 *
 * Deadlines are generous (a loaded 2-core machine): they bound a hang, they
 * time nothing; the figures are printed, never asserted on beyond counts.
 */
import { describe, expect, it } from "vitest"
import { MAGI } from "../runSupport.js"
import { need, runToEnd } from "./processes.js"
import { ANSWER, type Cli, type Form, measureWaitCost } from "./waitCost.js"

const DEADLINE_MS = 300_000

const endTurn = (cli: Cli, form: Form, sliceSecs?: number) => async () => {
  const r = await measureWaitCost({
    cli,
    bin: need(cli),
    form,
    mode: "end-turn",
    windowMs: 25_000,
    magi: MAGI,
    deadlineMs: DEADLINE_MS,
    ...(sliceSecs === undefined ? {} : { sliceSecs })
  })
  console.log(
    `${cli} ${form} end-turn: ${r.requests} requests in ${r.windowMs / 1000} s of waiting; the answer reached the model ${
      (r.answerToModelMs / 1000).toFixed(1)
    } s after magi answer`
  )
  // The slice ran out and the agent was told to end its turn, not to wait again.
  expect(r.pendingText).toContain("End your turn now")
  expect(r.pendingText).not.toMatch(/^\s+\S.* ask --wait \S+\s*$|wait \{"id"/m)
  // One request, the one that ended the turn; none after it while the owner was away.
  expect(r.requests).toBe(1)
  // The waiter resumed the same session, once, with the owner's answer.
  expect(r.status).toBe("done")
  expect(r.turns).toBe(2)
  expect(r.sessionAsked).not.toBeNull()
  expect(r.sessionAfter).toBe(r.sessionAsked)
  expect(r.answerRequest).toContain("The owner's answer")
  expect(r.answerRequest).toContain(ANSWER)
  // ...carrying the earlier conversation: the question it asked, and its own words on ending the turn.
  expect(r.answerRequest).toContain("Which database should the cache use?")
  expect(r.answerRequest).toContain("Waiting on the owner about the database.")
  expect(r.summary).toBe(`Done: went with ${ANSWER}.`)
}

describe("the cost of waiting, with the real agent CLIs", () => {
  it(
    "codex, shell form, wait = end-turn: asks, gets pending, ends its turn; the owner answers and the waiter resumes the same codex session with the answer",
    endTurn("codex", "shell"),
    2 * DEADLINE_MS
  )

  it(
    "codex, MCP form, wait = end-turn: the wait tool's pending ends the turn, and the same session is resumed with the answer",
    endTurn("codex", "mcp", 5),
    2 * DEADLINE_MS
  )

  it(
    "claude, shell form, wait = end-turn: the same session is resumed with the answer",
    endTurn("claude", "shell", 5),
    2 * DEADLINE_MS
  )

  it(
    "opencode, MCP form, wait = end-turn: the same session is resumed with the answer",
    endTurn("opencode", "mcp", 5),
    2 * DEADLINE_MS
  )

  it(
    "the bench, small: polling codex's shell costs a request per slice, ending the turn none (scripts/bench/wait-cost.ts)",
    async () => {
      const out = await runToEnd([process.execPath, "scripts/bench/run-all.mjs", "wait-cost"], {
        cwd: process.cwd(),
        env: { MAGI_BENCH_CLIS: "codex", MAGI_BENCH_FORMS: "shell", MAGI_BENCH_WINDOW_S: "20" },
        deadline: 4 * DEADLINE_MS
      })
      console.log(out.stdout)
      expect(out.code, out.stderr).toBe(0)
      expect(out.stdout).toMatch(/codex\s+shell\s+poll\s+.*\d+ requests\/h/)
      expect(out.stdout).toMatch(/codex\s+shell\s+end-turn\s+.*\b0 requests\/h/)
    },
    4 * DEADLINE_MS
  )
})
