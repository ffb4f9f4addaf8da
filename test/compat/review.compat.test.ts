/**
 * Reviewers and the fixer on the pinned real CLIs (issue 30): a solo run on
 * opencode with two reviewers, claude and codex, each CLI against its own
 * stand-in acting as a model would (standins/acting.ts). Round 1: claude
 * raises a blocker as json; codex answers prose, is sent back once, answers
 * prose again and is counted unanswered. The fixer, the implementer's own
 * opencode seat, continues its session, edits, commits and answers the
 * finding; round 2 approves and the run ends `ready`. The built magi drives
 * it all (`npm run build` first).
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { describe, expect, it } from "vitest"
import { BLOCKER_TITLE, FIXED_TEXT, REVIEW_NUDGE, seenChat, seenResponses } from "./standins/acting.js"
import { mixedWorld } from "./mixedWorld.js"

/** A bound for the whole run: five real turns and two rounds of review on a loaded 2-core machine. */
const RUN_MS = 300_000

describe("review and fix on real CLIs", () => {
  it("a blocker from claude goes to the opencode fixer in its own session, codex's prose is retried once then unanswered, and round 2 ends ready", async () => {
    const w = await mixedWorld({
      acting: { claude: { reviews: ["blocker", "approve"] }, codex: { reviews: ["prose", "approve"] } },
      toml: `[graph]\nreviewers = 2\n`
    })
    const ran = await w.magi(RUN_MS, "run", "--solo", "--agent", "opencode", "Add feature.txt saying what the feature is.")
    expect(ran.code, ran.stderr).toBe(0)
    const run = w.record()
    expect(run.status, `${run.reason}\n${ran.stderr}`).toBe("ready")
    const v = run.verification
    expect(v.rounds).toHaveLength(2)
    const [r1, r2] = v.rounds
    const seatOf = (agent: string) => run.seats.find((s: { key: string; agent: string }) => s.key.startsWith("review-") && s.agent === agent).key
    const by = (r: { reviews: ReadonlyArray<{ seat: string }> }, agent: string) => r.reviews.find((x) => x.seat === seatOf(agent)) as any

    // Round 1: claude's blocker, as json; codex's prose sent back once, then counted unanswered.
    expect(by(r1, "claude")).toMatchObject({ status: "answered", verdict: "reject" })
    expect(by(r1, "claude").findings).toMatchObject([{ severity: "blocker", file: "feature.txt", title: BLOCKER_TITLE }])
    expect(by(r1, "codex")).toMatchObject({ status: "unanswered", retries: 1 })
    const codexReviews = w.codex.requests.filter((r) => seenResponses(r).seen.prompt.includes(REVIEW_NUDGE))
    expect(codexReviews.length).toBeGreaterThan(0)
    // The nudge went to codex's own session: the same session-id header as its first review.
    const sessions = new Set(w.codex.requests.map((r) => r.headers["session-id"]))
    expect(sessions.size).toBe(1)
    expect(run.seats.find((s: { agent: string; key: string }) => s.agent === "codex").session).toBe([...sessions][0])

    // The fixer answered the finding with its commit; round 2 approved the fixed head.
    const finding = by(r1, "claude").findings[0]
    expect(finding.reply).toMatchObject({ kind: "fixed" })
    expect(r2.head).not.toBe(r1.head)
    expect(by(r2, "claude")).toMatchObject({ status: "answered", verdict: "approve" })
    expect(by(r2, "codex")).toMatchObject({ status: "answered", verdict: "approve" })
    expect(w.git("show", `${run.branch}:feature.txt`)).toBe(FIXED_TEXT)
    expect(w.git("log", "--format=%s", `trunk..${run.branch}`).split("\n")).toEqual(["Say what the feature is", "Add feature.txt"])

    // The fixer is the implementer's own opencode seat, in the same session: its
    // fix request carries the whole first turn, and opencode reports the same session id.
    const impl = run.seats.find((s: { key: string }) => s.key === "impl")
    expect(impl).toMatchObject({ agent: "opencode", turns: 2 })
    expect(impl.session).toMatch(/^ses_/)
    const fixAsk = w.opencode.requests.find((r) => /^# Fix$/m.test(seenChat(r).seen.prompt))!
    expect(fixAsk).toBeDefined()
    expect(seenChat(fixAsk).prompts[0]).toContain("Add feature.txt saying what the feature is.")
    const artifacts = NodePath.join(w.runDir(), "artifacts")
    const outs = NodeFs.readdirSync(artifacts).filter((f) => f.startsWith("impl-") && f.endsWith(".out")).sort()
    expect(outs).toHaveLength(2)
    for (const f of outs) expect(NodeFs.readFileSync(NodePath.join(artifacts, f), "utf8")).toContain(`"sessionID":"${impl.session}"`)
  }, RUN_MS + 60_000)
})
