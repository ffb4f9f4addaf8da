/** Helpers for tests that drive `magi run` and `magi serve` as real processes. */
import { execFileSync, spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"

export const MAGI = NodePath.resolve("dist/magi.js")

/** A git repo on branch `trunk` with one commit, configured to run `command` as its only agent. */
export const repoWithAgent = (dir: string, command: ReadonlyArray<string>) => {
  const repo = NodePath.join(dir, "repo")
  NodeFs.mkdirSync(repo)
  const git = (...args: string[]) => execFileSync("git", args, { cwd: repo, stdio: "pipe" })
  git("init", "-q", "-b", "trunk")
  git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "init")
  NodeFs.writeFileSync(NodePath.join(repo, "magi.toml"), `[agents.fake]\nkind = "command"\ncommand = ${JSON.stringify(command)}\n`)
  return repo
}

/** Run the built CLI to completion, with no user config in the way. */
export const magi = (cwd: string, env: Record<string, string>, ...args: string[]) =>
  spawnSync(process.execPath, [MAGI, ...args], {
    cwd,
    env: { ...process.env, XDG_CONFIG_HOME: NodePath.join(cwd, ".no-config"), ...env },
    encoding: "utf8",
    timeout: 30_000
  })
