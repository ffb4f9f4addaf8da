/** A ready run over a real repository, for the Land route's and button's tests. */
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import type { Run } from "../../src/runs/Runs.js"
import { sampleRun } from "../runSupport.js"
import { tempDirSync } from "../support.js"
import { seedRun } from "./web-support.js"

export const ID = "20261204-110000-cd01"

/** A repository on trunk with a run's branch one commit ahead, as a ready run leaves it. */
export const readyRun = (graph: string, over: Partial<Run> = {}) => {
  const top = NodeFs.realpathSync(tempDirSync())
  const repo = NodePath.join(top, "repo")
  NodeFs.mkdirSync(repo)
  const git = (cwd: string, ...args: string[]) =>
    execFileSync("git", ["-c", "user.email=t@t", "-c", "user.name=t", ...args], { cwd, stdio: "pipe", encoding: "utf8" }).trim()
  git(repo, "init", "-q", "-b", "trunk")
  git(repo, "config", "user.email", "owner@example.invalid")
  git(repo, "config", "user.name", "owner")
  NodeFs.writeFileSync(NodePath.join(repo, "magi.toml"), `[graph]\n${graph}\n`)
  git(repo, "add", "magi.toml")
  git(repo, "commit", "-q", "-m", "init")
  const base = git(repo, "rev-parse", "HEAD")
  const worktree = NodePath.join(top, "wt")
  git(repo, "worktree", "add", "-q", "-b", "magi/cd01", worktree, base)
  NodeFs.writeFileSync(NodePath.join(worktree, "cache.ts"), "export const cache = new Map<string, string>()\n")
  git(worktree, "add", "cache.ts")
  git(worktree, "commit", "-q", "-m", "Add a cache")
  const home = NodePath.join(top, "home")
  seedRun(home, sampleRun(ID, { status: "ready", repo, base: "trunk", base_commit: base, worktree, branch: "magi/cd01", ...over }))
  const read = (): Run => JSON.parse(NodeFs.readFileSync(NodePath.join(home, "runs", ID, "run.json"), "utf8"))
  return { home, repo, base, git, read }
}
