/**
 * What the reviewers, the fixer and the rebase-fixer are told: pure prompt
 * assembly. A reviewer sees the instruction, the patch off the base (cut at
 * `PATCH_MAX_CHARS`, it can read the rest with git in its worktree), its
 * focus, and every earlier round's findings with the fixer's replies, so a
 * rejected finding's argument is read before it is raised again.
 */
import { fence, PATCH_MAX_CHARS } from "../graph/JudgePrompt.js"
import type { Check } from "../runs/Competition.js"
import type { Finding, Review, Round } from "../runs/Verification.js"

const findingLine = (f: Finding) =>
  `- ${f.id} [${f.severity}] ${f.file}${f.line === null ? "" : `:${f.line}`} ${f.title}${
    f.reply === undefined ? "" : f.reply.kind === "fixed" ? ` — fixed in ${f.reply.commit ?? "?"}` : ` — rejected: ${f.reply.argument}`
  }`

export const FORMAT = `Answer with one fenced \`\`\`json block, and nothing after it:

\`\`\`json
{"verdict": "approve | approve_with_findings | reject", "findings": [{"severity": "nit | minor | major | blocker", "file": "path/in/the/branch", "line": 12, "title": "one line", "body": "what is wrong and why"}]}
\`\`\`

Major and blocker findings hold the change back until they are fixed; nits and minors do not.`

export const reviewPrompt = (input: {
  readonly instruction: string
  readonly branch: string
  readonly head: string
  readonly onto: string
  readonly patch: string
  readonly focus: string | null
  readonly earlier: ReadonlyArray<Round>
}): string =>
  [
    "# Review",
    "",
    `You review a change made for this instruction, at commit ${input.head} of branch ${input.branch}, off base ${input.onto}. Your worktree is detached at that commit and read-only: read the code with git and the files, change nothing.`,
    "",
    "## The instruction",
    "",
    fence(input.instruction),
    ...(input.focus === null ? [] : ["", `## Your focus: ${input.focus}`]),
    "",
    "## The patch",
    "",
    fence(
      input.patch.length > PATCH_MAX_CHARS
        ? `${input.patch.slice(0, PATCH_MAX_CHARS)}\n[… cut; read the rest with git diff ${input.onto}...${input.head}]`
        : input.patch
    ),
    ...(input.earlier.length === 0
      ? []
      : [
        "",
        "## Earlier rounds: the findings and the fixer's replies",
        "",
        ...input.earlier.flatMap((r) => [`Round ${r.n}:`, ...r.reviews.flatMap((v) => v.findings.map(findingLine))])
      ]),
    "",
    FORMAT
  ].join("\n")

export const revotePrompt = (others: ReadonlyArray<Review>): string =>
  [
    "# Re-vote",
    "",
    "The reviewers disagreed. Here is what the others said; read it, then give your verdict again (your findings may change too).",
    "",
    ...others.flatMap((v) => [`## ${v.seat}: ${v.verdict ?? "no answer"}`, ...v.findings.map(findingLine), ""]),
    FORMAT
  ].join("\n")

const checkLines = (checks: ReadonlyArray<Check>) =>
  checks.flatMap((c) => [`## \`${c.command}\`: ${c.timed_out ? "timed out" : `exit ${c.exit ?? "none"}`}`, "", fence(c.tail || "(no output)"), ""])

export const fixPrompt = (input: {
  readonly findings: ReadonlyArray<Finding>
  readonly e2e: ReadonlyArray<Check>
  readonly unanswered: ReadonlyArray<string>
  /** `magi fix --reason`: the owner's words on why these are to be fixed. */
  readonly reason?: string
}): string =>
  [
    "# Fix",
    "",
    "Review found what follows. Answer every finding: fix it (edit and commit in this worktree) or reject it with your argument, which the next reviewers read.",
    "",
    ...(input.reason === undefined ? [] : ["The owner asks for these findings to be fixed, and says:", "", fence(input.reason), ""]),
    ...input.findings.map((f) => `${findingLine(f)}\n  ${f.body.replace(/\n/g, "\n  ")}`),
    ...(input.e2e.length === 0 ? [] : ["", "# End-to-end commands that failed", "", ...checkLines(input.e2e)]),
    ...(input.unanswered.length === 0 ? [] : ["", `Reviewers that did not answer: ${input.unanswered.join(", ")}.`]),
    "",
    "Commit your fixes, then end with one fenced ```json block answering each finding by id:",
    "",
    '```json\n{"replies": [{"id": "R1-1-1", "fixed": true, "commit": "abc1234"}, {"id": "R1-2-1", "fixed": false, "argument": "why not"}]}\n```'
  ].join("\n")

export const gateFixPrompt = (failing: ReadonlyArray<Check>): string =>
  ["# The gate failed", "", "These commands must all exit 0 before the change is ready. Fix what they report and commit.", "", ...checkLines(failing)].join(
    "\n"
  )

export const rebaseFixPrompt = (onto: string, words: string, paths: ReadonlyArray<string>): string =>
  [
    "# Rebase conflict",
    "",
    `Your branch is being rebased onto ${onto} and git stopped on a conflict in: ${paths.join(", ")}.`,
    "",
    fence(words),
    "",
    "Resolve the conflicts in this worktree, `git add` the files and run `GIT_EDITOR=true git rebase --continue` until the rebase is done. Do not abort it."
  ].join("\n")

/** The fixer's replies by finding id, from its last json block; a finding it did not answer has none. */
export const repliesOf = (
  text: string,
  parse: (t: string) => { readonly _tag: "ok"; readonly o: Record<string, unknown> } | { readonly _tag: "refused" }
): ReadonlyMap<string, { readonly fixed: boolean; readonly commit: string | null; readonly argument: string }> => {
  const got = parse(text)
  const out = new Map<string, { readonly fixed: boolean; readonly commit: string | null; readonly argument: string }>()
  if (got._tag !== "ok" || !Array.isArray(got.o.replies)) return out
  for (const r of got.o.replies as ReadonlyArray<unknown>) {
    if (typeof r !== "object" || r === null) continue
    const x = r as Record<string, unknown>
    if (typeof x.id !== "string") continue
    out.set(x.id.trim(), {
      fixed: x.fixed === true,
      commit: typeof x.commit === "string" ? x.commit.slice(0, 40) : null,
      argument: typeof x.argument === "string" ? x.argument.slice(0, 4000) : ""
    })
  }
  return out
}
