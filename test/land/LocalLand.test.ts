/**
 * `magi land ID` on a ready run in local mode, with the built CLI, real git
 * and the real question store: the approval is asked with the case in its
 * panel, `merge` moves the base, anything else leaves it where it was.
 */
import { execFileSync, spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { MAGI, magi, sampleRun } from "../runSupport.js"

const dirs: Array<string> = []
afterEach(() => {
  for (const d of dirs.splice(0)) NodeFs.rmSync(d, { recursive: true, force: true })
})

const ID = "20261203-160000-ab12"

const setup = (graph: string) => {
  const top = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "magi-land-"))
  dirs.push(top)
  const repo = NodePath.join(top, "repo")
  const home = NodePath.join(top, "home")
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
  git(repo, "worktree", "add", "-q", "-b", "magi/ab12", worktree, base)
  NodeFs.writeFileSync(NodePath.join(worktree, "cache.ts"), "export const cache = new Map<string, string>()\n")
  git(worktree, "add", "cache.ts")
  git(worktree, "commit", "-q", "-m", "Add a cache <script>")
  const run = sampleRun(ID, { status: "ready", repo, base: "trunk", base_commit: base, worktree, branch: "magi/ab12" })
  NodeFs.mkdirSync(NodePath.join(home, "runs", ID), { recursive: true })
  NodeFs.writeFileSync(NodePath.join(home, "runs", ID, "run.json"), JSON.stringify(run, null, 2))
  const env = { MAGI_HOME: home, HOME: top, XDG_CONFIG_HOME: NodePath.join(top, "config") }
  return { top, repo, home, env, base, git }
}

/** `magi land` in the background, the question it files answered with `reply` once it appears. */
const landAnswering = async (t: ReturnType<typeof setup>, reply: string) => {
  const child = spawn(process.execPath, [MAGI, "land", ID], { cwd: t.repo, env: { ...process.env, ...t.env }, stdio: ["ignore", "pipe", "pipe"] })
  let out = ""
  child.stdout.on("data", (d) => (out += d))
  child.stderr.on("data", (d) => (out += d))
  const exited = new Promise<number | null>((done) => child.once("exit", done))
  const deadline = Date.now() + 60_000
  let qid: string | undefined
  while (qid === undefined && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 300))
    const run = JSON.parse(NodeFs.readFileSync(NodePath.join(t.home, "runs", ID, "run.json"), "utf8"))
    qid = run.landing?.question
  }
  expect(qid).toBeDefined()
  const listed = magi(t.repo, t.env, "answer", "--list", "--json")
  const answered = magi(t.repo, t.env, "answer", qid!, "--reply", reply)
  expect(answered.status, answered.stderr).toBe(0)
  const code = await exited
  return { code, out, listed: listed.stdout, qid: qid! }
}

describe("magi land, local mode", () => {
  it("asks with the whole case, and the answer merge moves the base branch", async () => {
    const t = setup(`merge = "local"`)
    const r = await landAnswering(t, "merge")
    expect(r.code, r.out).toBe(0)
    expect(t.git(t.repo, "log", "-1", "--format=%s")).toMatch(/^Add a cache \(magi ab12\)$/)
    expect(NodeFs.existsSync(NodePath.join(t.repo, "cache.ts"))).toBe(true)
    const run = JSON.parse(NodeFs.readFileSync(NodePath.join(t.home, "runs", ID, "run.json"), "utf8"))
    expect(run.status).toBe("merged")
    expect(run.landing.answer).toBe("merge")
    expect(run.landing.local.sha).toBe(t.git(t.repo, "rev-parse", "HEAD"))
    const panel = NodeFs.readdirSync(NodePath.join(t.home, "questions")).find((f) => f.startsWith(r.qid) && !f.endsWith(".json"))
    const html = NodeFs.readFileSync(NodePath.join(t.home, "questions", panel!, "index.html"), "utf8")
    expect(html).toContain("<td>1</td><td>0</td><td>cache.ts</td>")
    expect(html).toContain("+export const cache")
    expect(html).toContain("Add a cache &lt;script&gt;")
    expect(html).not.toContain("<script>")
  }, 120_000)

  it("any other answer holds: the base stays where it was and the run stays ready", async () => {
    const t = setup(`merge = "local"`)
    const r = await landAnswering(t, "hold")
    expect(r.code).not.toBe(0)
    expect(r.out).toContain('the owner answered "hold", not merge')
    expect(t.git(t.repo, "rev-parse", "HEAD")).toBe(t.base)
    const run = JSON.parse(NodeFs.readFileSync(NodePath.join(t.home, "runs", ID, "run.json"), "utf8"))
    expect(run.status).toBe("ready")
  }, 120_000)

  it("refuses a dirty base with the reason, and nothing merges", async () => {
    const t = setup(`merge = "local"\nland_approval = false`)
    NodeFs.writeFileSync(NodePath.join(t.repo, "magi.toml"), `[graph]\nmerge = "local"\nland_approval = false\n# edited\n`)
    const r = magi(t.repo, t.env, "land", ID)
    expect(r.status).not.toBe(0)
    expect(r.stderr).toContain("uncommitted changes on trunk")
    expect(t.git(t.repo, "rev-parse", "HEAD")).toBe(t.base)
  }, 120_000)
})
