/**
 * A mixed panel on the pinned real CLIs (issue 29): claude, codex and
 * opencode implement one task as candidates A/B/C and then judge it, each
 * against its own stand-in acting as a model would (standins/acting.ts):
 * an implementer edits a file and commits through its shell tool, a judge
 * reads the branches with `git log` and `git show` through its shell tool
 * and answers the fenced json ranking. The built magi drives it all
 * (`npm run build` first).
 */
import { describe, expect, it } from "vitest"
import { RANKING_NUDGE, seenAnthropic } from "./standins/acting.js"
import { CLIS, mixedWorld } from "./mixedWorld.js"

/** A bound for the whole run: three CLIs at once, three times, on a loaded 2-core machine. */
const RUN_MS = 300_000

describe("a mixed panel, for real", () => {
  it("claude, codex and opencode implement, judge, and elect a winner; a judge's prose is sent back in its own session", async () => {
    const w = await mixedWorld({
      acting: { claude: { proseFirstRanking: true } },
      toml:
        `[graph]\ncandidates = 3\njudges = 3\nreviewers = 0\n\n[roles]\nimplementers = ["claude", "codex", "opencode"]\njudges = ["claude", "codex", "opencode"]\n`
    })
    const trunk = w.git("rev-parse", "trunk")
    const ran = await w.magi(RUN_MS, "run", "--seed", "3", "Add a file saying which candidate you are.")
    expect(ran.code, ran.stderr).toBe(0)
    const run = w.record()
    const c = run.competition
    const short = run.id.split("-").at(-1)
    expect(c.step, ran.stderr).toBe("elected")

    // Three candidates, one per CLI, each with its own commits on its own branch.
    expect(c.candidates.map((x: { label: string }) => x.label)).toEqual(["A", "B", "C"])
    expect(c.candidates.map((x: { agent: string }) => x.agent).sort()).toEqual([...CLIS])
    for (const x of c.candidates) {
      expect(x.status, JSON.stringify(x)).toBe("viable")
      expect(x.commits.length, JSON.stringify(x)).toBeGreaterThan(0)
      expect(x.numstat).toContain(`candidate-${x.label}.txt`)
    }
    // codex's own `git commit` is refused by its sandbox (the worktree's .git
    // is outside it): magi commits what it left, under its summary.
    const byCodex = c.candidates.find((x: { agent: string }) => x.agent === "codex")
    expect(byCodex.commits).toHaveLength(1)
    expect(byCodex.commits[0]).toContain(`Added candidate-${byCodex.label}.txt and committed it.`)
    expect(w.git("rev-parse", "trunk")).toBe(trunk)

    // Three rankings, each judge having read the branches with git first.
    expect(c.judges.map((j: { agent: string }) => j.agent).sort()).toEqual([...CLIS])
    for (const j of c.judges) expect(j, JSON.stringify(j)).toMatchObject({ status: "answered", ranking: ["B", "A", "C"] })
    // Every judge's shell ran git show on B's branch (the stand-in quotes the commit it printed), opencode's read-only one too.
    const tipB = w.git("rev-parse", `magi/${run.id.split("-").at(-1)}/B`)
    for (const j of c.judges) expect(j.reasons.B, j.agent).toBe(`best; git show: ${tipB}`)
    const claudeJudge = c.judges.find((j: { agent: string }) => j.agent === "claude")
    expect(claudeJudge.retries).toBe(1)
    for (const j of c.judges.filter((x: { agent: string }) => x.agent !== "claude")) expect(j.retries).toBe(0)

    // A tally, a winner, the losers folded.
    expect(c.tally).toMatchObject({ winner: "B", answered: 3 })
    expect(c.winner).toBe("B")
    expect(run.branch).toBe(`magi/${short}/B`)
    expect(w.git("for-each-ref", "--format=%(refname:short)", "refs/heads/magi")).toBe(`magi/${short}/B`)
    expect(c.folded_at).toBeDefined()
    expect(w.git("show", `magi/${short}/B:candidate-B.txt`)).toBe("made by candidate B")

    // The retry went to claude's own session: the request after the nudge
    // carries the session id claude sent the first ranking with (its
    // x-claude-code-session-id header), the one magi recorded for the seat,
    // and the whole earlier conversation.
    const turns = w.claude.turns()
    const judged = turns.filter((r) => seenAnthropic(r.body!).prompts.some((p) => p.includes("You are one judge of a blind panel")))
    const retried = judged.filter((r) => seenAnthropic(r.body!).seen.prompt.includes(RANKING_NUDGE))
    expect(retried.length).toBeGreaterThan(0)
    const sessionOf = (r: (typeof turns)[number]) => r.headers["x-claude-code-session-id"]
    const firstAsked = judged.find((r) => !seenAnthropic(r.body!).seen.prompt.includes(RANKING_NUDGE))!
    expect(sessionOf(firstAsked)).toBeDefined()
    expect(sessionOf(retried[0]!)).toBe(sessionOf(firstAsked))
    const seat = run.seats.find((s: { key: string }) => s.key === claudeJudge.seat)
    expect(seat.session).toBe(sessionOf(firstAsked))
    expect(seenAnthropic(retried[0]!.body!).prompts[0]).toContain("You are one judge of a blind panel")
  }, RUN_MS + 60_000)
})
