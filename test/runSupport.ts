/** Helpers for tests that drive `magi run` and `magi serve` as real processes. */
import { execFileSync, spawn, spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as Q from "../src/questions/Question.js"
import { RUN_SCHEMA, type Run } from "../src/runs/Runs.js"

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

/** `magi task add ARGS…` in `repo`, which must succeed; the filed task's short id. */
export const fileTask = (repo: string, env: Record<string, string>, args: ReadonlyArray<string>): string => {
  const r = magi(repo, env, "task", "add", ...args)
  if (r.status !== 0) throw new Error(`magi task add failed (${r.status}): ${r.stderr}`)
  return /^filed (\w+) /.exec(r.stdout)![1]!
}

/** Every task record in `home`'s queue, as stored (parsed, in no particular order). */
export const tasksOnDisk = (home: string) => {
  const queue = NodePath.join(home, "queue")
  return NodeFs.readdirSync(queue)
    .filter((f) => f.endsWith(".json"))
    .map((f) => JSON.parse(NodeFs.readFileSync(NodePath.join(queue, f), "utf8")))
}

/**
 * `magi serve` on `home`, started in `repo` with `env` and no user config
 * (none under `dir`): its pid, what it has written to stderr so far, and
 * `stop`, which resolves once it has exited.
 */
export const serveDaemon = (repo: string, home: string, env: Record<string, string>, dir: string) => {
  const daemon = spawn(process.execPath, [MAGI, "serve", "--home", home], {
    cwd: repo,
    env: { ...process.env, ...env, XDG_CONFIG_HOME: NodePath.join(dir, "no-config") },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stderr = ""
  daemon.stderr.on("data", (d) => (stderr += d))
  const exited = new Promise((done) => daemon.once("exit", done))
  return {
    pid: daemon.pid,
    stderr: () => stderr,
    stop: () => {
      daemon.kill("SIGTERM")
      return exited
    }
  }
}

/** A run record as `magi run` writes one, with `over` on top. */
export const sampleRun = (id: string, over: Partial<Run> = {}): Run => ({
  schema: RUN_SCHEMA,
  id,
  status: "running",
  instruction: "Add a cache",
  repo: "/r",
  base: "main",
  base_commit: "0".repeat(40),
  worktree: "/w",
  branch: `magi/${Q.shortId(id)}`,
  seats: [{ key: "impl", agent: "fake", turns: 0, session: null, write: true }],
  created_at: "2026-09-02T20:12:56Z",
  updated_at: "2026-09-02T20:12:56Z",
  summary: "",
  reason: "",
  ...over
})

/** A run whose implementing seat has taken one turn and holds a session. */
export const runWithSession = (id: string, over: Partial<Run> = {}): Run =>
  sampleRun(id, {
    seats: [{ key: "impl", agent: "fake", turns: 1, session: "thread-1", write: true }],
    created_at: "1970-01-01T00:00:00Z",
    updated_at: "1970-01-01T00:00:00Z",
    ...over
  })
