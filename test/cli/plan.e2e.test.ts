/**
 * `magi plan` at a real pseudo-terminal with a fake interactive agent: the
 * agent gets the terminal and the briefing, writes the task file where magi
 * says, and magi reviews it with the same review as the chat and files it
 * on the owner's yes. Without a terminal it refuses and points to the chat.
 */
import { describe, expect, it } from "vitest"
import { execFileSync, spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { MAGI } from "../runSupport.js"
import { tempDirSync } from "../support.js"

const AGENT = new URL("../fixtures/plan-agent.mjs", import.meta.url).pathname
const PTY = new URL("../fixtures/pty-run.py", import.meta.url).pathname

const world = () => {
  const dir = tempDirSync()
  const repo = NodePath.join(dir, "repo")
  NodeFs.mkdirSync(repo)
  execFileSync("git", ["init", "-q", "-b", "trunk"], { cwd: repo })
  NodeFs.writeFileSync(
    NodePath.join(repo, "magi.toml"),
    `[agents.planner]\nkind = "command"\ncommand = [${JSON.stringify(process.execPath)}, ${JSON.stringify(AGENT)}, "{prompt_file}"]\n`
  )
  const home = NodePath.join(dir, "home")
  const log = NodePath.join(dir, "agent.jsonl")
  const env = { ...process.env, MAGI_HOME: home, XDG_CONFIG_HOME: NodePath.join(dir, "nc"), PLAN_AGENT_LOG: log }
  const queued = () =>
    NodeFs.existsSync(NodePath.join(home, "queue"))
      ? NodeFs.readdirSync(NodePath.join(home, "queue")).filter((f) => f.endsWith(".json")).map((f) =>
        JSON.parse(NodeFs.readFileSync(NodePath.join(home, "queue", f), "utf8"))
      )
      : []
  const seen = () => NodeFs.readFileSync(log, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l))
  /** `magi plan args…` under a pseudo-terminal, typing each answer when its prompt appears. */
  const plan = (args: ReadonlyArray<string>, answers: ReadonlyArray<[string, string]>) => {
    const r = spawnSync("python3", [PTY, JSON.stringify([process.execPath, MAGI, "plan", ...args]), JSON.stringify(answers)], {
      cwd: repo,
      env,
      encoding: "utf8",
      timeout: 90_000
    })
    return JSON.parse(r.stdout) as { code: number; output: string }
  }
  return { dir, repo, home, env, queued, seen, plan }
}

describe("magi plan", () => {
  it("hands the agent the terminal with the briefing, then reviews its task file and files it on yes", () => {
    const w = world()
    const r = w.plan(["retry", "the", "fetcher"], [
      ["what should the task be? ", "good\r"],
      ["File it in the queue? [y/N] ", "y\r"]
    ])
    expect(r.output).toContain("planner: terminal=yes")
    expect(r.output).toContain("the task file passes review: Retry failed GETs in the fetcher")
    expect(r.output).toMatch(/filed \w+ \[human\] Retry failed GETs in the fetcher/)
    expect(r.code).toBe(0)
    const [call] = w.seen()
    expect(call.tty).toBe(true)
    expect(call.cwd).toBe(NodeFs.realpathSync(w.repo))
    expect(call.prompt).toContain("You are the planning lead")
    expect(call.prompt).toContain("retry the fetcher")
    expect(call.prompt).toContain(`write the whole task file to ${call.taskFile}`)
    expect(call.taskFile.startsWith(NodePath.join(w.home, "plans"))).toBe(true)
    const [task] = w.queued()
    expect(task).toMatchObject({ title: "Retry failed GETs in the fetcher", source: { kind: "human" }, repo: NodeFs.realpathSync(w.repo), status: "queued" })
    expect(task.instruction).toBe(NodeFs.readFileSync(call.taskFile, "utf8"))
  }, 120_000)

  it("files nothing when the owner says no, and keeps the file", () => {
    const w = world()
    const r = w.plan([], [
      ["what should the task be? ", "good\r"],
      ["File it in the queue? [y/N] ", "n\r"]
    ])
    expect(r.code).toBe(0)
    expect(r.output).toContain("not filed; it stays at")
    expect(w.queued()).toEqual([])
    expect(w.seen()[0].prompt).toContain("none given yet")
  }, 120_000)

  it("refuses a task file that fails review, listing every problem, and files nothing", () => {
    const w = world()
    const r = w.plan(["speed"], [["what should the task be? ", "bad\r"]])
    expect(r.code).toBe(1)
    expect(r.output).toContain("does not pass the task-file review")
    expect(r.output).toContain("no completion criteria")
    expect(r.output).toContain("magi task add --file")
    expect(w.queued()).toEqual([])
  }, 120_000)

  it("says so when the agent wrote no task file", () => {
    const w = world()
    const r = w.plan(["speed"], [["what should the task be? ", "none\r"]])
    expect(r.code).toBe(1)
    expect(r.output).toContain("without writing")
  }, 120_000)

  it("refuses without a terminal and points to the chat", () => {
    const w = world()
    const r = spawnSync(process.execPath, [MAGI, "plan", "retry the fetcher"], { cwd: w.repo, env: w.env, encoding: "utf8", input: "" })
    expect(r.status).toBe(1)
    expect(r.stderr).toContain("there is none here")
    expect(r.stderr).toContain("#/chats")
    expect(NodeFs.existsSync(NodePath.join(w.dir, "agent.jsonl"))).toBe(false)
  })
})
