/** `magi stats` (issue 29): the figures per implementer, judge and reviewer, from the run records alone. */
import { describe, expect, it } from "vitest"
import type * as C from "../../src/runs/Competition.js"
import type * as V from "../../src/runs/Verification.js"
import { describeStats, statsOf } from "../../src/graph/Stats.js"
import { sampleRun } from "../runSupport.js"

const cand = (label: string, agent: string, status: C.CandidateStatus = "viable", implement_ms = 60_000): C.Candidate => ({
  label,
  seat: `impl-${label}`,
  agent,
  branch: `magi/ab12/${label}`,
  worktree: `/w/${label}`,
  status,
  commits: status === "viable" ? ["abc Add it"] : [],
  numstat: "",
  summary: "",
  dropped: "",
  checks: [],
  leaks: [],
  redacted: false,
  implement_ms,
  fallback_from: []
})
const judge = (seat: string, agent: string, ranking: ReadonlyArray<string>, status: C.Judge["status"] = "answered"): C.Judge => ({
  seat,
  agent,
  worktree: "/j",
  order: ranking,
  status,
  ranking,
  reasons: {},
  confidence: null,
  retries: 0,
  failure: ""
})
const competition = (candidates: ReadonlyArray<C.Candidate>, judges: ReadonlyArray<C.Judge>, winner: string | null): C.Competition => ({
  seed: 1,
  step: winner === null ? "judge" : "elected",
  candidates,
  judges,
  deliberation: [],
  votes: [],
  tally: null,
  winner,
  keep_losers: false
})
const usage = (cost: number | null, tokens = 1000) => ({ input_tokens: tokens, output_tokens: 0, cost_usd: cost, turns: [] })

// Two elected competitions and one still judging (not counted).
const one = sampleRun("20260101-000000-aaaa", {
  seats: [
    { key: "impl-A", agent: "claude", turns: 1, session: null, write: true, usage: usage(0.5) },
    { key: "impl-B", agent: "codex", turns: 1, session: null, write: true, usage: usage(null, 3000) }
  ],
  competition: competition([cand("A", "claude"), cand("B", "codex", "viable", 120_000)], [
    judge("judge-1", "codex", ["A", "B"]),
    judge("judge-2", "claude", ["B", "A"]),
    judge("judge-3", "opencode", ["A", "B"], "failed")
  ], "A")
})
const two = sampleRun("20260102-000000-bbbb", {
  seats: [{ key: "impl-B", agent: "claude", turns: 1, session: null, write: true, usage: usage(1.5) }],
  competition: competition([cand("A", "codex", "dropped", 0), cand("B", "claude")], [], "B")
})
const open = sampleRun("20260103-000000-cccc", { competition: competition([cand("A", "claude"), cand("B", "codex")], [], null) })

describe("the implementers and judges", () => {
  const s = statsOf([one, two, open])
  it.each(
    [
      ["claude", { candidacies: 2, wins: 2, win_rate: 1, mean_rank: 1.5, cost_per_candidacy_usd: 1, time_per_candidacy_ms: 60_000 }],
      ["codex", {
        candidacies: 2,
        wins: 0,
        win_rate: 0,
        mean_rank: 1.5,
        cost_per_candidacy_usd: null,
        tokens_per_candidacy: 1500,
        time_per_candidacy_ms: 120_000
      }]
    ] as const
  )("%s", (agent, want) => {
    expect(s.implementers.find((a) => a.agent === agent)).toMatchObject(want)
  })
  it("counts only competitions that elected a winner, and a judge's first choice against the winner", () => {
    expect(s.competitions).toBe(2)
    expect(s.judges).toEqual([
      { agent: "claude", rankings: 1, agreed: 0, agreement_rate: 0 },
      { agent: "codex", rankings: 1, agreed: 1, agreement_rate: 1 }
    ])
  })
  it("says so when there is nothing yet", () => {
    expect(describeStats(statsOf([open]))[0]).toContain("no competition has elected a winner yet")
    expect(describeStats(s).join("\n")).toContain("claude: 2 candidacies, 2 wins (100%), mean rank 1.50, $1.00 and 60 s per candidacy")
  })
})

const finding = (id: string, severity: V.Severity, reply?: "fixed" | "rejected"): V.Finding => ({
  id,
  seat: "review-1",
  severity,
  file: "a.ts",
  line: null,
  title: "t",
  body: "b",
  ...(reply === undefined ? {} : { reply: { kind: reply, commit: null, argument: "" } })
})
const review = (agent: string, verdict: V.Verdict, findings: ReadonlyArray<V.Finding>): V.Review => ({
  seat: "review-1",
  agent,
  status: "answered",
  verdict,
  findings,
  retries: 0,
  failure: ""
} as V.Review)
const check = (exit: number) => ({ command: "npm test", exit, duration_ms: 1, timed_out: false, tail: "" })
const round = (n: number, reviews: ReadonlyArray<V.Review>, e2e: ReadonlyArray<ReturnType<typeof check>> | null): V.Round => ({
  n,
  head: "h",
  tree: "t",
  reviews,
  revoted: false,
  e2e
})
const verified = (rounds: ReadonlyArray<V.Round>, gates: ReadonlyArray<ReadonlyArray<ReturnType<typeof check>>>) =>
  sampleRun(`20260104-00000${rounds.length}-dddd`, {
    verification: {
      step: "ready",
      fixer: "claude",
      rounds,
      gates: gates.map((results, i) => ({ n: i + 1, head: "h", at: "2026-01-04T00:00:00Z", results })),
      gate_fix_rounds: 0,
      stopped: ""
    } as unknown as V.Verification
  })

describe("the reviewers and what end to end and the gate caught", () => {
  it.each(
    [
      [
        "a reviewer whose findings were fixed and rejected",
        [verified([
          round(1, [review("codex", "reject", [finding("1", "major", "fixed"), finding("2", "minor", "rejected"), finding("3", "nit", "fixed")])], [check(0)])
        ], [])],
        { reviewers: [{ agent: "codex", findings: 3, fixed: 2, rejected: 1 }], catches: { passed_rounds: 0, e2e_caught: 0, gated: 0, gate_caught: 0 } }
      ],
      [
        "a passed round whose e2e failed, then a gate that failed on a passed head",
        [verified([round(1, [review("claude", "approve", [])], [check(1)]), round(2, [review("claude", "approve", [])], [check(0)])], [[check(2)], [
          check(0)
        ]])],
        { catches: { passed_rounds: 2, e2e_caught: 1, gated: 2, gate_caught: 1 } }
      ],
      [
        "a round with a blocking finding is not a pass",
        [verified([round(1, [review("claude", "approve_with_findings", [finding("1", "blocker")])], [check(1)])], [[check(1)]])],
        { catches: { passed_rounds: 0, e2e_caught: 0, gated: 0, gate_caught: 0 } }
      ]
    ] as const
  )("%s", (_, runs, want) => {
    expect(statsOf(runs)).toMatchObject(want)
  })
  it("a reviewer's precision is fixed over answered, none before any answer", () => {
    const s = statsOf([
      verified([
        round(1, [
          review("codex", "reject", [finding("1", "major", "fixed"), finding("2", "minor", "rejected")]),
          review("gemini", "approve", [finding("3", "nit")])
        ], null)
      ], [])
    ])
    expect(s.reviewers.map((r) => [r.agent, r.precision])).toEqual([["codex", 0.5], ["gemini", null]])
  })
})
