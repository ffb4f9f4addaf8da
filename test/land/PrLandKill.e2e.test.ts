/**
 * kill -9 of `magi land` (the built CLI) in pull request mode, against the
 * stand-in forge on 127.0.0.1 named by `[forge] api`: killed while it waits
 * on the owner, a second `magi land` picks up the same question and merges,
 * with one pull request, one push and one merge in all, and the token in
 * no record and no output.
 */
import { execFileSync, spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import * as StandIn from "../support/forge/StandInForge.js"
import { MAGI, magi, sampleRun, serveDaemon } from "../runSupport.js"

const TOKEN = "ghp_killNINEsecret0123456789abcdef"
const ID = "20261204-190000-ef56"
const dirs: Array<string> = []
const forges: Array<StandIn.StandIn> = []
afterEach(async () => {
  for (const f of forges.splice(0)) await f.close()
  for (const d of dirs.splice(0)) NodeFs.rmSync(d, { recursive: true, force: true })
})

const git = (cwd: string, ...args: Array<string>) =>
  execFileSync("git", ["-c", "user.email=t@t", "-c", "user.name=t", ...args], { cwd, encoding: "utf8", stdio: "pipe" }).trim()

const until = async (what: () => boolean, ms = 60_000) => {
  const end = Date.now() + ms
  while (!what()) {
    if (Date.now() > end) throw new Error("timed out")
    await new Promise((r) => setTimeout(r, 200))
  }
}

describe("magi land in pull request mode, killed", () => {
  it("resumes after kill -9 at the same question: one PR, one push, one merge", async () => {
    const top = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "magi-prkill-")))
    dirs.push(top)
    const bare = NodePath.join(top, "remote.git")
    const repo = NodePath.join(top, "repo")
    const home = NodePath.join(top, "home")
    git(top, "init", "-q", "--bare", "-b", "main", bare)
    NodeFs.writeFileSync(NodePath.join(bare, "hooks", "post-receive"), `#!/bin/sh\ncat >> ${JSON.stringify(NodePath.join(top, "pushes"))}\n`, { mode: 0o755 })
    const forge = await StandIn.start({ bare, owner: "octo", name: "app", token: TOKEN })
    forges.push(forge)
    NodeFs.mkdirSync(repo)
    git(repo, "init", "-q", "-b", "main")
    NodeFs.writeFileSync(NodePath.join(repo, "magi.toml"), `[graph]\nmerge = "pr"\n\n[forge]\napi = "${forge.api}"\n`)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "init")
    git(repo, "remote", "add", "origin", "https://github.test/octo/app.git")
    git(repo, "config", `url.${bare}.insteadOf`, "https://github.test/octo/app.git")
    git(repo, "push", "-q", "origin", "main")
    NodeFs.rmSync(NodePath.join(top, "pushes"), { force: true })
    const base = git(repo, "rev-parse", "HEAD")
    const worktree = NodePath.join(top, "wt")
    git(repo, "worktree", "add", "-q", "-b", "magi/ef56", worktree, base)
    NodeFs.writeFileSync(NodePath.join(worktree, "cache.ts"), "export const cache = 1\n")
    git(worktree, "add", ".")
    git(worktree, "commit", "-qm", "Add a cache")
    forge.checkRuns.set(git(worktree, "rev-parse", "HEAD"), [StandIn.actionsRun(1, "test", "completed", "success")])
    NodeFs.mkdirSync(NodePath.join(home, "runs", ID), { recursive: true })
    const runFile = NodePath.join(home, "runs", ID, "run.json")
    NodeFs.writeFileSync(runFile, JSON.stringify(sampleRun(ID, { status: "ready", repo, base: "main", base_commit: base, worktree, branch: "magi/ef56" })))
    const env = { MAGI_HOME: home, HOME: top, XDG_CONFIG_HOME: NodePath.join(top, "config"), GH_TOKEN: TOKEN, PATH: process.env.PATH ?? "" }
    const record = () => JSON.parse(NodeFs.readFileSync(runFile, "utf8"))
    const land = () => {
      const child = spawn(process.execPath, [MAGI, "land", ID], { cwd: repo, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] })
      let out = ""
      child.stdout.on("data", (d) => (out += d))
      child.stderr.on("data", (d) => (out += d))
      const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)))
      return { child, exited, out: () => out }
    }

    const first = land()
    await until(() => record().landing?.loop?.asked_head !== undefined)
    first.child.kill("SIGKILL")
    await first.exited
    const qid = record().landing.question as string

    const second = land()
    await until(() => second.out().includes("waiting for the answer"))
    const answered = magi(repo, env, "answer", qid, "--reply", "merge")
    expect(answered.status, answered.stderr).toBe(0)
    const code = await second.exited
    expect(code, second.out()).toBe(0)
    const run = record()
    expect(run.status).toBe("merged")
    expect(run.landing.question).toBe(qid)
    expect(forge.requests.filter((r) => r === "POST /repos/octo/app/pulls")).toHaveLength(1)
    expect(forge.requests.filter((r) => r.startsWith("PUT "))).toHaveLength(1)
    expect(NodeFs.readFileSync(NodePath.join(top, "pushes"), "utf8").trim().split("\n")).toHaveLength(1)
    expect(git(top, "--git-dir", bare, "log", "-1", "--format=%s", "main")).toBe("Add a cache (magi ef56)")
    expect(NodeFs.readdirSync(NodePath.join(home, "questions")).filter((f) => f.endsWith(".json"))).toHaveLength(1)
    expect(JSON.stringify(run) + first.out() + second.out()).not.toContain(TOKEN)
  }, 120_000)

  it("magi serve picks up the answered approval and merges: the run is merged and its worktree folded", async () => {
    const top = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "magi-prserve-")))
    dirs.push(top)
    const bare = NodePath.join(top, "remote.git")
    const repo = NodePath.join(top, "repo")
    const home = NodePath.join(top, "home")
    git(top, "init", "-q", "--bare", "-b", "main", bare)
    const forge = await StandIn.start({ bare, owner: "octo", name: "app", token: TOKEN })
    forges.push(forge)
    NodeFs.mkdirSync(repo)
    git(repo, "init", "-q", "-b", "main")
    NodeFs.writeFileSync(NodePath.join(repo, "magi.toml"), `[graph]\nmerge = "pr"\n\n[forge]\napi = "${forge.api}"\n`)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "init")
    git(repo, "remote", "add", "origin", "https://github.test/octo/app.git")
    git(repo, "config", `url.${bare}.insteadOf`, "https://github.test/octo/app.git")
    git(repo, "push", "-q", "origin", "main")
    const base = git(repo, "rev-parse", "HEAD")
    const worktree = NodePath.join(top, "wt")
    git(repo, "worktree", "add", "-q", "-b", "magi/ef56", worktree, base)
    NodeFs.writeFileSync(NodePath.join(worktree, "cache.ts"), "export const cache = 1\n")
    git(worktree, "add", ".")
    git(worktree, "commit", "-qm", "Add a cache")
    forge.checkRuns.set(git(worktree, "rev-parse", "HEAD"), [StandIn.actionsRun(1, "test", "completed", "success")])
    NodeFs.mkdirSync(NodePath.join(home, "runs", ID), { recursive: true })
    const runFile = NodePath.join(home, "runs", ID, "run.json")
    NodeFs.writeFileSync(runFile, JSON.stringify(sampleRun(ID, { status: "ready", repo, base: "main", base_commit: base, worktree, branch: "magi/ef56" })))
    const env = { MAGI_HOME: home, HOME: top, XDG_CONFIG_HOME: NodePath.join(top, "config"), GH_TOKEN: TOKEN, PATH: process.env.PATH ?? "" }
    const record = () => JSON.parse(NodeFs.readFileSync(runFile, "utf8"))
    // magi land asks, and is stopped before the answer: the daemon is the one to carry on.
    const asking = spawn(process.execPath, [MAGI, "land", ID], { cwd: repo, env: { ...process.env, ...env }, stdio: "ignore" })
    await until(() => record().landing?.loop?.asked_head !== undefined)
    asking.kill("SIGKILL")
    const daemon = serveDaemon(repo, home, env, top)
    try {
      const answered = magi(repo, env, "answer", record().landing.question, "--reply", "merge")
      expect(answered.status, answered.stderr).toBe(0)
      await until(() => record().status === "merged", 90_000)
    } finally {
      await daemon.stop()
    }
    expect(git(top, "--git-dir", bare, "log", "-1", "--format=%s", "main")).toBe("Add a cache (magi ef56)")
    expect(forge.requests.filter((r) => r.startsWith("PUT "))).toHaveLength(1)
    expect(NodeFs.existsSync(worktree)).toBe(false)
    expect(daemon.stderr()).not.toContain(TOKEN)
  }, 150_000)
})
