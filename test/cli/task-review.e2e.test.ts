/**
 * `magi task add --file` passes the same task-file review as the planning
 * chat and `magi plan`: refused with every problem listed, unless
 * `--no-review`; a soft warning alone files with the warning shown.
 */
import { describe, expect, it } from "vitest"
import { execFileSync, spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { MAGI, magi } from "../runSupport.js"
import { tempDirSync } from "../support.js"
import { DRAFT } from "../web/chat-support.js"

const world = () => {
  const dir = tempDirSync()
  const repo = NodePath.join(dir, "repo")
  NodeFs.mkdirSync(repo)
  execFileSync("git", ["init", "-q", "-b", "trunk"], { cwd: repo })
  // An agent to run the tasks, so filing says nothing of its absence.
  NodeFs.writeFileSync(NodePath.join(repo, "magi.toml"), `[agents.fake]\nkind = "command"\ncommand = ["true"]\n`)
  const home = NodePath.join(dir, "home")
  const queued =
    () => (NodeFs.existsSync(NodePath.join(home, "queue")) ? NodeFs.readdirSync(NodePath.join(home, "queue")).filter((f) => f.endsWith(".json")) : [])
  const file = (name: string, text: string) => {
    const path = NodePath.join(dir, name)
    NodeFs.writeFileSync(path, text)
    return path
  }
  return { dir, repo, env: { MAGI_HOME: home, MAGI_RUN: "", MAGI_NODE: "" }, queued, file }
}

describe("magi task add --file reviews the task file", () => {
  it("refuses a file without a title or criteria, listing every problem, and files nothing", () => {
    const w = world()
    const r = magi(w.repo, w.env, "task", "add", "--file", w.file("idea.md", "- \n\nmake it faster\n"))
    expect(r.status).toBe(1)
    expect(r.stderr).toContain("does not pass the task-file review")
    expect(r.stderr).toContain("  - the draft has no title")
    expect(r.stderr).toContain("  - the draft has no completion criteria")
    expect(r.stderr).toContain("  - warning: the draft is under 200 bytes")
    expect(r.stderr).toContain("--no-review")
    expect(w.queued()).toEqual([])
  })

  it("files the same file with --no-review", () => {
    const w = world()
    const r = magi(w.repo, w.env, "task", "add", "--no-review", "--file", w.file("idea.md", "make it faster\n"))
    expect(r.status).toBe(0)
    expect(w.queued()).toHaveLength(1)
  })

  it("files a task file that passes without a word on stderr, and a short one with the warning", () => {
    const w = world()
    const good = magi(w.repo, w.env, "task", "add", "--file", w.file("task.md", DRAFT))
    expect(good.stderr).toBe("")
    expect(good.stdout).toMatch(/^filed \w+ \[human\] Retry failed GETs in the fetcher\n$/)
    const short = magi(w.repo, w.env, "task", "add", "--file", w.file("short.md", "# Fix it\n- [ ] tests pass\n"))
    expect(short.status).toBe(0)
    expect(short.stderr).toContain("warning: the draft is under 200 bytes")
    expect(w.queued()).toHaveLength(2)
  })

  it("reviews a task file read from stdin too", () => {
    const w = world()
    const r = spawnSync(process.execPath, [MAGI, "task", "add", "--file", "-"], {
      cwd: w.repo,
      env: { ...process.env, ...w.env, XDG_CONFIG_HOME: NodePath.join(w.dir, "nc") },
      input: "just do it\n",
      encoding: "utf8"
    })
    expect(r.status).toBe(1)
    expect(r.stderr).toContain("stdin does not pass the task-file review")
    expect(w.queued()).toEqual([])
  })
})
