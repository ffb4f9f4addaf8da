/**
 * `magi stats`: what the competitions so far say about each agent, pure
 * over the run records. Per implementing agent: candidacies, wins, win
 * rate, mean rank in the judges' rankings, cost and time per candidacy; per
 * judging agent, how often its first choice was the winner; and from the
 * runs' verification, each reviewer's precision (findings the fixer fixed
 * against those it rejected) and how often the end-to-end commands or the
 * gate caught what the review passed.
 */
import type * as C from "../runs/Competition.js"
import type { Run } from "../runs/Runs.js"
import * as V from "../runs/Verification.js"

export interface AgentStats {
  readonly agent: string
  readonly candidacies: number
  readonly wins: number
  /** wins / candidacies. */
  readonly win_rate: number
  /** 1 is first; null when no judge ranked it. */
  readonly mean_rank: number | null
  /** Dollars per candidacy, over the candidacies whose CLI reported a cost; null when none did. */
  readonly cost_per_candidacy_usd: number | null
  readonly tokens_per_candidacy: number
  /** Milliseconds of implementing per candidacy, over those timed; null when none was. */
  readonly time_per_candidacy_ms: number | null
}

export interface JudgeStats {
  readonly agent: string
  /** Rankings it gave in competitions that elected a winner. */
  readonly rankings: number
  /** Of those, how many put the winner first. */
  readonly agreed: number
  readonly agreement_rate: number
}

export interface ReviewerStats {
  readonly agent: string
  readonly findings: number
  readonly fixed: number
  readonly rejected: number
  /** fixed / (fixed + rejected); null before any finding was answered. */
  readonly precision: number | null
}

export interface Catches {
  /** Review rounds the reviewers passed (no blocking finding) that ran the end-to-end commands. */
  readonly passed_rounds: number
  /** Of those, rounds whose end-to-end commands failed: what the review missed. */
  readonly e2e_caught: number
  /** Gate attempts on a head the last review passed. */
  readonly gated: number
  /** Of those, attempts that failed. */
  readonly gate_caught: number
}

export interface Stats {
  readonly competitions: number
  readonly implementers: ReadonlyArray<AgentStats>
  readonly judges: ReadonlyArray<JudgeStats>
  readonly reviewers: ReadonlyArray<ReviewerStats>
  readonly catches: Catches
}

const ratio = (n: number, d: number): number => (d === 0 ? 0 : n / d)
const mean = (xs: ReadonlyArray<number>): number | null => (xs.length === 0 ? null : xs.reduce((a, b) => a + b, 0) / xs.length)
const failed = (checks: ReadonlyArray<C.Check>): boolean => checks.some((k) => k.exit !== 0)
const byAgent = <A extends { readonly agent: string }>(xs: Iterable<A>): ReadonlyArray<A> => [...xs].sort((a, b) => a.agent.localeCompare(b.agent))

/** A round the reviewers passed: every answered review approves and no finding blocks. */
const passed = (r: V.Round): boolean =>
  r.reviews.some((v) => v.status === "answered") &&
  r.reviews.every((v) => v.status !== "answered" || v.verdict !== "reject") &&
  r.reviews.every((v) => v.findings.every((f) => !V.blocks(f.severity)))

export const statsOf = (runs: ReadonlyArray<Run>): Stats => {
  const impl = new Map<string, { candidacies: number; wins: number; ranks: number[]; costs: number[]; tokens: number; times: number[] }>()
  const judges = new Map<string, { rankings: number; agreed: number }>()
  const reviewers = new Map<string, { findings: number; fixed: number; rejected: number }>()
  let competitions = 0
  const catches = { passed_rounds: 0, e2e_caught: 0, gated: 0, gate_caught: 0 }
  for (const run of runs) {
    const c = run.competition
    if (c !== undefined && c.winner !== null) {
      competitions++
      for (const x of c.candidates) {
        if (x.status === "pending") continue
        const a = impl.get(x.agent) ?? { candidacies: 0, wins: 0, ranks: [], costs: [], tokens: 0, times: [] }
        a.candidacies++
        if (x.label === c.winner) a.wins++
        for (const j of c.judges) {
          const at = j.status === "answered" ? j.ranking.indexOf(x.label) : -1
          if (at >= 0) a.ranks.push(at + 1)
        }
        const usage = run.seats.find((s) => s.key === x.seat)?.usage
        if (usage?.cost_usd !== undefined && usage.cost_usd !== null) a.costs.push(usage.cost_usd)
        a.tokens += (usage?.input_tokens ?? 0) + (usage?.output_tokens ?? 0)
        if (x.implement_ms > 0) a.times.push(x.implement_ms)
        impl.set(x.agent, a)
      }
      for (const j of c.judges) {
        if (j.status !== "answered" || j.ranking.length === 0) continue
        const s = judges.get(j.agent) ?? { rankings: 0, agreed: 0 }
        s.rankings++
        if (j.ranking[0] === c.winner) s.agreed++
        judges.set(j.agent, s)
      }
    }
    const v = run.verification
    if (v === undefined) continue
    for (const r of v.rounds) {
      for (const review of r.reviews) {
        const s = reviewers.get(review.agent) ?? { findings: 0, fixed: 0, rejected: 0 }
        s.findings += review.findings.length
        s.fixed += review.findings.filter((f) => f.reply?.kind === "fixed").length
        s.rejected += review.findings.filter((f) => f.reply?.kind === "rejected").length
        reviewers.set(review.agent, s)
      }
      if (r.e2e !== null && r.e2e.length > 0 && passed(r)) {
        catches.passed_rounds++
        if (failed(r.e2e)) catches.e2e_caught++
      }
    }
    const last = v.rounds.at(-1)
    if (last !== undefined && passed(last)) {
      for (const g of v.gates) {
        catches.gated++
        if (failed(g.results)) catches.gate_caught++
      }
    }
  }
  return {
    competitions,
    implementers: byAgent([...impl].map(([agent, a]) => ({
      agent,
      candidacies: a.candidacies,
      wins: a.wins,
      win_rate: ratio(a.wins, a.candidacies),
      mean_rank: mean(a.ranks),
      cost_per_candidacy_usd: mean(a.costs),
      tokens_per_candidacy: Math.round(ratio(a.tokens, a.candidacies)),
      time_per_candidacy_ms: mean(a.times)
    }))),
    judges: byAgent([...judges].map(([agent, s]) => ({ agent, ...s, agreement_rate: ratio(s.agreed, s.rankings) }))),
    reviewers: byAgent(
      [...reviewers].map(([agent, s]) => ({ agent, ...s, precision: s.fixed + s.rejected === 0 ? null : s.fixed / (s.fixed + s.rejected) }))
    ),
    catches
  }
}

const pct = (r: number) => `${Math.round(r * 100)}%`

/** `magi stats`'s text. */
export const describeStats = (s: Stats): ReadonlyArray<string> => {
  if (s.competitions === 0 && s.reviewers.length === 0) return ["no competition has elected a winner yet; magi run with two or more agents starts one"]
  const out = [`${s.competitions} competition(s) with a winner`, "", "implementers:"]
  for (const a of s.implementers)
    out.push(
      `  ${a.agent}: ${a.candidacies} candidacies, ${a.wins} wins (${pct(a.win_rate)}), mean rank ${a.mean_rank === null ? "-" : a.mean_rank.toFixed(2)}, ${
        a.cost_per_candidacy_usd === null ? `${a.tokens_per_candidacy} tokens` : `$${a.cost_per_candidacy_usd.toFixed(2)}`
      } and ${a.time_per_candidacy_ms === null ? "-" : `${(a.time_per_candidacy_ms / 1000).toFixed(0)} s`} per candidacy`
    )
  out.push("", "judges:")
  for (const j of s.judges) out.push(`  ${j.agent}: first choice was the winner ${j.agreed} of ${j.rankings} (${pct(j.agreement_rate)})`)
  if (s.reviewers.length > 0) {
    out.push("", "reviewers:")
    for (const r of s.reviewers)
      out.push(
        `  ${r.agent}: ${r.findings} findings, ${r.fixed} fixed, ${r.rejected} rejected, precision ${r.precision === null ? "-" : pct(r.precision)}`
      )
    const k = s.catches
    out.push(
      `  end to end caught what review passed in ${k.e2e_caught} of ${k.passed_rounds} round(s); the gate in ${k.gate_caught} of ${k.gated} attempt(s)`
    )
  }
  return out
}
