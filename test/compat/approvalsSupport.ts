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
import { expect } from "vitest"
import { runMagi, startMagi } from "./processes.js"

/** A process deadline: long enough for a loaded machine, short enough to end a hang. */
export const DEADLINE_MS = 300_000

/** The commands every approvals test's model starts with, in order; each names what the owner does with it. */
export const OWNER_COMMANDS = ["git tag denied-by-owner", "git tag allowed-by-owner", "git branch always-by-owner", "git branch through-by-rule"] as const

/** The built magi in `repo`, run to its end: what it printed, or an error when it failed. */
export const magiIn = (repo: string, env: Record<string, string | undefined>) => async (...args: string[]): Promise<string> => {
  const r = await runMagi(args, { cwd: repo, env, deadline: DEADLINE_MS })
  if (r.code !== 0) throw new Error(`magi ${args.join(" ")} exited ${r.code}: ${r.stderr}`)
  return r.stdout
}

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
 * `magi run` of the approvals task in `repo`, the owner answering each
 * question as it arrives (see `answerAsOwner`) until the run ends, which it
 * must do well. The questions answered, in the order they came.
 */
export const runAnsweredByOwner = async (repo: string, env: Record<string, string | undefined>, home: string): Promise<Map<string, Asked>> => {
  const magi = magiIn(repo, env)
  const run = startMagi(["run", "Mark the repository with tags and branches."], { cwd: repo, env, deadline: DEADLINE_MS })
  const answered = await answerAsOwner(home, run.done, (id, choice) => magi("answer", id, "--reply", choice))
  const ended = await run.done
  expect(ended.code, ended.stderr).toBe(0)
  return answered
}

/**
 * The owner, at the terminal, until `ended` settles: each open question in
 * `home` answered as it arrives, by `answer(id, choice)`: Deny when its
 * summary says `denied`, Allow when `allowed`, else its third choice
 * ("Always allow …"). The questions answered, in the order they came.
 */
const answerAsOwner = async (
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

/**
 * The owner was asked about the first three of `OWNER_COMMANDS` (the third
 * offering its rule), and each decision held: Deny obeyed, Allow and "Always
 * allow" ran their commands, and the saved rule let the fourth through.
 */
export const expectOwnerDecisionsObeyed = (answered: Map<string, Asked>, git: (...args: string[]) => string): void => {
  expect([...answered.values()].map((q) => q.summary)).toEqual([
    "Bash: `git tag denied-by-owner`",
    "Bash: `git tag allowed-by-owner`",
    "Bash: `git branch always-by-owner`"
  ])
  expect([...answered.values()][2]!.choices).toEqual(["Allow", "Deny", "Always allow Bash(git branch:*)"])
  expect(git("tag", "--list").split("\n").filter((l) => l !== "")).toEqual(["allowed-by-owner"])
  expect(git("branch", "--list", "always-by-owner")).toContain("always-by-owner")
  expect(git("branch", "--list", "through-by-rule")).toContain("through-by-rule")
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
