/**
 * What the implementers and the judges are told: pure prompt assembly. A
 * judge sees, for each candidate in its own order, the label, the branch,
 * the candidate's own summary with author trailers stripped, `--numstat`,
 * the patch (capped per candidate, with a note saying so) and the checks.
 * It never sees which agent wrote which: its conversation holds no
 * implementation and no author.
 */
import type { Check } from "../runs/Competition.js"
import { stripTrailers } from "./CandidateGit.js"

/** Past this, a candidate's patch is cut for the judges (they can `git show` the branch for the rest). */
export const PATCH_MAX_CHARS = 120 * 1024

/** The tail of a check's output shown to a judge. */
export const CHECK_TAIL_BYTES = 4 * 1024

export interface Shown {
  readonly label: string
  readonly branch: string
  readonly summary: string
  readonly numstat: string
  readonly patch: string
  readonly checks: ReadonlyArray<Check>
}

/**
 * A fence longer than any run of backticks in the body: a candidate's patch
 * or summary is untrusted text, and one holding "````" must not close the
 * fence and go on as if magi were speaking to the judge.
 */
export const fence = (body: string, info = ""): string => {
  const ticks = "`".repeat(Math.max(2, ...[...body.matchAll(/`+/g)].map((m) => m[0].length)) + 1)
  return `${ticks}${info}\n${body.replace(/\n?$/, "\n")}${ticks}`
}

export const capped = (patch: string, max: number = PATCH_MAX_CHARS): string =>
  patch.length <= max
    ? patch
    : `${patch.slice(0, max)}\n… (patch cut here: it is ${patch.length} characters, ${max} shown; read the rest with git show or git diff on the branch)`

const checkLine = (c: Check): string =>
  `- \`${c.command}\`: ${c.timed_out ? "timed out" : c.exit === null ? "could not run" : `exit ${c.exit}`} after ${(c.duration_ms / 1000).toFixed(1)} s`

const candidateSection = (c: Shown): string =>
  [
    `## Candidate ${c.label}`,
    "",
    `Branch: \`${c.branch}\``,
    "",
    "Its own summary:",
    "",
    fence(stripTrailers(c.summary) || "(none)"),
    "",
    "Files changed (added, removed, path):",
    "",
    fence(c.numstat || "(none)"),
    "",
    "The patch:",
    "",
    fence(capped(c.patch), "diff"),
    ...(c.checks.length === 0
      ? []
      : ["", "Checks run in its worktree:", "", ...c.checks.flatMap((k) => [checkLine(k), "", fence(k.tail.slice(-CHECK_TAIL_BYTES) || "(no output)")])])
  ].join("\n")

/** The first prompt of a judge seat: the task, every candidate in `order`, and the answer's format. */
export const judgePrompt = (instruction: string, candidates: ReadonlyArray<Shown>, order: ReadonlyArray<string>): string => {
  const byLabel = new Map(candidates.map((c) => [c.label, c]))
  const shown = order.flatMap((l) => (byLabel.has(l) ? [byLabel.get(l)!] : []))
  const labels = shown.map((c) => c.label)
  return `You are one judge of a blind panel. Several candidates implemented the same
task, each on its own branch, without seeing each other. Rank them, best
first: which one should the owner take?

You are in a read-only checkout of the repository at the base the candidates
started from. You may read their branches with git (\`git log\`, \`git show\`,
\`git diff\`), but change nothing.

# The task

${instruction.trim()}

${shown.map(candidateSection).join("\n\n")}

# Your answer

Judge correctness first, then how well the change fits the code around it,
then its size. End your reply with exactly one fenced json block that ranks
every candidate (${labels.join(", ")}) exactly once, best first, with a
reason for each and your confidence from 0 to 1:

\`\`\`json
{"ranking": [${labels.map((l) => JSON.stringify(l)).join(", ")}], "reasons": {${labels.map((l) => `${JSON.stringify(l)}: "…"`).join(", ")}}, "confidence": 0.7}
\`\`\`
`
}

/** An implementer's first prompt: the instruction and where it works; it cannot see the others. */
export const implementNote = (label: string): string =>
  `\n## Competition

You are candidate ${label}: other agents are implementing the same task on
their own branches, and a blind panel will pick one. Work only on your own
branch, in your own worktree; never check out, commit on or move any other
branch. If you find nothing needs changing, make no commit and reply with a
line starting \`NO CHANGE NEEDED:\` followed by your evidence.
`
