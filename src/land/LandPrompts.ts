/**
 * The words of the land loop, pure: the fixer's prompt for a red or
 * reviewed pull request, the comment left when the rounds run out, and a
 * one-line account of an observation for the run record. Logs and review
 * comments are untrusted text: each goes inside a fence longer than any run
 * of backticks in it, so none can close its fence and speak as magi.
 */
import { fence } from "../graph/JudgePrompt.js"
import type { Check, JobLog, Observation, Remark } from "./Forge.js"
import type { LandAction } from "./LandDecide.js"

/** The most failing logs the fixer is shown, and how much of each (the end, where the error is). */
export const MAX_LOGS = 3
export const LOG_TAIL_BYTES = 4096

export const fixPrompt = (input: {
  readonly number: number
  readonly failing: ReadonlyArray<Check>
  readonly logs: ReadonlyArray<JobLog>
  readonly remarks: ReadonlyArray<Remark>
}): string => {
  const checkLines = input.failing.map((c) => {
    const log = input.logs.find((l) => l.name === c.name)
    const head = `- ${c.name}: ${c.conclusion}${c.url === "" ? "" : ` (${c.url})`}`
    return log === undefined ? head : `${head}\n\nThe end of its log:\n\n${fence(log.tail)}`
  })
  const remarkLines = input.remarks.map((r) =>
    `- ${r.kind === "review" ? `a review by ${r.author} (${r.verdict})` : `${r.author} on ${r.path ?? "the pull request"}`}:\n\n${fence(r.body)}`
  )
  return [
    `# Pull request #${input.number} needs a fix`,
    "",
    "The pull request of your branch is not ready to merge. Fix what follows in this worktree and commit; magi pushes your commits.",
    "Do not push, rebase or touch other branches yourself.",
    ...(checkLines.length === 0 ? [] : ["", "## Checks that failed", "", ...checkLines]),
    ...(remarkLines.length === 0 ? [] : ["", "## Review comments still open", "", ...remarkLines])
  ].join("\n")
}

/** The comment magi leaves on a pull request it stops working on. */
export const giveUpComment = (reason: string): string =>
  `magi stopped working on this pull request: ${reason}. It is left open for the owner; magi never force-merges.`

export const summarize = (o: Observation): string => {
  const checks = o.checks._tag === "Unreadable"
    ? "checks unreadable"
    : o.checks.checks.length === 0
    ? "no checks"
    : ["success", "pending", "failure"].map((k) => `${o.checks._tag === "Read" ? o.checks.checks.filter((c) => c.outcome === k).length : 0} ${k}`)
      .join(", ")
  return `#${o.pr.number} ${o.pr.state}, ${o.mergeable}, ${checks}, ${o.remarks.length} remark(s) at ${o.pr.headSha.slice(0, 12)}`
}

/** What the loop did about an observation, as the round's `action`. */
export const describe = (a: LandAction): string => {
  switch (a._tag) {
    case "ended":
      return `ended: ${a.outcome} on the forge`
    case "held":
    case "wait":
    case "never_merge":
    case "give_up":
      return `${a._tag}: ${a.reason}`
    case "fix":
      return `fix: ${[...a.failing.map((c) => c.name), ...(a.remarks.length > 0 ? [`${a.remarks.length} review comment(s)`] : [])].join(", ")}`
    case "rebase":
      return "rebase onto the remote's base"
    case "ask_approval":
      return "asked the owner to approve the merge"
    case "merge":
      return "merge"
  }
}
