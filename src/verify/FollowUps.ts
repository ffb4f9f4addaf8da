/**
 * Follow-ups (issue 30): findings a `ready` run leaves open but not blocking
 * (nits and minors nobody answered) become tasks titled
 * `[review@<short>] <title>`. Pure: which to file, given the open tasks'
 * titles, the findings already filed (a task's source names the run and the
 * finding, so a second pass after a kill files only what is missing), and
 * how deep the run already is in follow-ups of follow-ups.
 */
import { blocks, type Finding, type Verification } from "../runs/Verification.js"

/** A follow-up of a follow-up is the last: its own open findings are left in its record. */
export const MAX_GENERATIONS = 2

/** The `node` a follow-up task's agent source carries: the finding it came from. */
export const nodeOf = (findingId: string): string => `review:${findingId}`

/** The finding id a task's source node names, if it is a follow-up's. */
export const findingOfNode = (node: string): string | undefined => (node.startsWith("review:") ? node.slice("review:".length) : undefined)

export interface FollowUp {
  readonly finding: string
  readonly title: string
  readonly instruction: string
}

export interface Known {
  /** Titles of tasks not done yet. */
  readonly openTitles: ReadonlyArray<string>
  /** Finding ids of this run already filed as tasks (any status). */
  readonly filed: ReadonlyArray<string>
  /** 0 for a run of the owner's own work, 1 for a follow-up task's run, … */
  readonly generation: number
}

const line = (f: Finding) => `${f.file}${f.line === null ? "" : `:${f.line}`}`

/** The follow-ups to file for a run that ended `ready`, in the order found. */
export const followUps = (run: { readonly short: string; readonly branch: string }, v: Verification, known: Known): ReadonlyArray<FollowUp> => {
  if (v.step !== "ready" || known.generation >= MAX_GENERATIONS) return []
  const titles = new Set(known.openTitles.map((t) => t.trim().toLowerCase()))
  const filed = new Set(known.filed)
  const out: Array<FollowUp> = []
  for (const f of v.rounds.flatMap((r) => r.reviews.flatMap((x) => x.findings))) {
    if (blocks(f.severity) || f.reply !== undefined || filed.has(f.id)) continue
    const title = `[review@${run.short}] ${f.title.replace(/\s+/g, " ").trim()}`.slice(0, 200)
    if (titles.has(title.toLowerCase())) continue
    titles.add(title.toLowerCase())
    filed.add(f.id)
    out.push({
      finding: f.id,
      title,
      instruction: [
        `A reviewer of branch ${run.branch} left this ${f.severity} finding open (${f.id}, at ${line(f)}); the branch was ready without it.`,
        "",
        f.title,
        "",
        f.body
      ].join("\n").trimEnd()
    })
  }
  return out
}
