/**
 * What the approvals compatibility tests (claude's, codex's, opencode's)
 * share: the repository a seat works in, the owner answering approval
 * questions at the terminal, and the audit log of every decision. The
 * scripted model in each names the command's fate in it (`denied`,
 * `allowed`, anything else: "Always allow"), so one owner serves all three.
 */
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"

/**
 * A git repository at `repo` on branch `trunk` whose first commit holds
 * `files` (empty when none); `git` runs in it and returns what git printed.
 */
export const repoOnTrunk = (repo: string, files: Record<string, string>) => {
  NodeFs.mkdirSync(repo, { recursive: true })
  const git = (...args: string[]) => execFileSync("git", args, { cwd: repo, encoding: "utf8" })
  git("init", "-q", "-b", "trunk")
  for (const [name, text] of Object.entries(files)) NodeFs.writeFileSync(NodePath.join(repo, name), text)
  if (Object.keys(files).length > 0) git("add", ".")
  git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "init")
  return git
}

/** An approval question as the owner saw it. */
export interface Asked {
  readonly summary: string
  readonly choices: string[]
}

/**
 * The owner, at the terminal, until `ended` settles: each open question in
 * `home` answered as it arrives, by `answer(id, choice)`: Deny when its
 * summary says `denied`, Allow when `allowed`, else its third choice
 * ("Always allow …"). The questions answered, in the order they came.
 */
export const answerAsOwner = async (
  home: string,
  ended: Promise<unknown>,
  answer: (id: string, choice: string) => Promise<unknown>
): Promise<Map<string, Asked>> => {
  const questionsDir = NodePath.join(home, "questions")
  const answered = new Map<string, Asked>()
  let exited = false
  void ended.then(() => (exited = true))
  while (!exited) {
    const files = NodeFs.existsSync(questionsDir) ? NodeFs.readdirSync(questionsDir).filter((f) => f.endsWith(".json")) : []
    for (const f of files) {
      const q = JSON.parse(NodeFs.readFileSync(NodePath.join(questionsDir, f), "utf8"))
      if (q.status !== "open" || answered.has(q.id)) continue
      answered.set(q.id, { summary: q.summary, choices: q.choices })
      const choice = q.summary.includes("denied") ? "Deny" : q.summary.includes("allowed") ? "Allow" : q.choices[2]
      await answer(q.id, choice)
    }
    await new Promise((r) => setTimeout(r, 250))
  }
  return answered
}

/** One decision in the audit log. */
export interface Audited {
  readonly tool: string
  readonly decision: string
  readonly by: string
  readonly rule?: string
  readonly seat: string
  readonly question?: string
}

/** Every decision in `home`'s audit log, oldest first. */
export const audited = (home: string): Audited[] =>
  NodeFs.readFileSync(NodePath.join(home, "approvals.jsonl"), "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Audited)

/**
 * Age question `qid`'s asker lease, if the hook left one: it would hold the
 * waiter off for its ttl, though nobody is reading any more.
 */
export const ageLease = (home: string, qid: string): void => {
  const lease = NodePath.join(home, "questions", "leases", `${qid}.lease`)
  if (NodeFs.existsSync(lease))
    NodeFs.writeFileSync(lease, JSON.stringify({ ...JSON.parse(NodeFs.readFileSync(lease, "utf8")), beat_at: "2000-01-01T00:00:00Z" }))
}
