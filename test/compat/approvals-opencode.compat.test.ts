/**
 * Tool approvals against the real, pinned `opencode` on the local
 * OpenAI-compatible stand-in: with `[approvals] ask = true`, a writing
 * seat's shell commands reach the owner as approval questions through the
 * plugin magi writes for it (its `tool.execute.before` runs `magi approve
 * --hook opencode`); Deny is obeyed and the model told, Allow runs the
 * command, "Always allow" saves a rule that lets the next matching command
 * through with no question, a config deny rule refuses without asking, and
 * an edit in the worktree runs unasked. Nothing leaves 127.0.0.1 (see
 * opencode.compat.test.ts for the isolation).
 */
import { execFileSync, spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { MAGI } from "../runSupport.js"
import { tempDirSync } from "../support.js"
import { MODEL, opencodeEnv, VERSION } from "./opencodeWorld.js"
import { type OpenAiChatStandIn, type Reply, startOpenAiChat, toolResults, userTexts } from "./standins/openai-chat.js"

const BIN = process.env.MAGI_COMPAT_OPENCODE ?? ""

/** A process deadline: long enough for a loaded machine, short enough to end a hang. */
const DEADLINE_MS = 300_000

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

/** The calls the scripted model makes, in order; each command names what becomes of it. */
const CALLS: ReadonlyArray<Reply> = [
  { tool: "bash", args: { command: "git tag denied-by-owner", description: "Mark the repository" } },
  { tool: "bash", args: { command: "git tag allowed-by-owner", description: "Mark the repository" } },
  { tool: "bash", args: { command: "git branch always-by-owner", description: "Mark the repository" } },
  { tool: "bash", args: { command: "git branch through-by-rule", description: "Mark the repository" } },
  { tool: "bash", args: { command: "git tag denied-by-rule", description: "Mark the repository" } },
  { tool: "write", args: { filePath: "notes.txt", content: "written unasked\n" } }
]

/** A git repo on branch `trunk` whose only agent is the real opencode, with `[approvals] ask` and `extra` config. */
const repoWithOpencode = (dir: string, agentExtra: string, extra: string) => {
  const repo = NodePath.join(dir, "repo")
  NodeFs.mkdirSync(repo)
  const git = (...args: string[]) => execFileSync("git", args, { cwd: repo, encoding: "utf8" })
  git("init", "-q", "-b", "trunk")
  NodeFs.writeFileSync(NodePath.join(repo, "README.md"), "hello\n")
  NodeFs.writeFileSync(
    NodePath.join(repo, "magi.toml"),
    `[agents.oc]\nkind = "opencode"\ncommand = ${JSON.stringify([BIN])}\nmodel = "${MODEL}"\n${agentExtra}\n` +
      `[notify]\ncommand = ["true"]\n\n[approvals]\nask = true\n${extra}`
  )
  git("add", ".")
  git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "-m", "init")
  return { repo, git }
}

/** This process's environment with `over` on top, for the magi processes a test starts. */
const envWith = (over: Record<string, string>): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v
  return Object.assign(env, over)
}

/**
 * The built magi, run to completion without blocking this process: the
 * stand-in answers opencode from this same event loop.
 */
const runToEnd = (cwd: string, env: Record<string, string>, ...args: string[]) =>
  new Promise<{ status: number | null; stderr: string }>((resolve) => {
    const p = spawn(process.execPath, [MAGI, ...args], { cwd, env, stdio: ["ignore", "ignore", "pipe"] })
    let stderr = ""
    p.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
    const timer = setTimeout(() => p.kill("SIGKILL"), DEADLINE_MS)
    p.on("close", (status) => {
      clearTimeout(timer)
      resolve({ status, stderr })
    })
  })

const requireBin = () => {
  if (BIN === "") throw new Error(process.env.MAGI_COMPAT_OPENCODE_ERROR ?? "MAGI_COMPAT_OPENCODE is not set (run through vitest's globalSetup)")
}

describe(`tool approvals with the real opencode ${VERSION}`, () => {
  it(
    "puts each command that needs permission to the owner; Deny is obeyed and told, Allow runs it, Always allow lets the next one through unasked, a deny rule never asks, and an edit in the worktree runs",
    async () => {
      requireBin()
      const dir = tempDirSync()
      const standIn: OpenAiChatStandIn = await startOpenAiChat((req) => CALLS[toolResults(req).length] ?? { text: "Done." })
      cleanups.push(() => standIn.close())
      const { repo, git } = repoWithOpencode(dir, "", 'deny = ["Bash(git tag denied-by-rule)"]\n')
      const home = NodePath.join(dir, "magi-home")
      const env = envWith({ ...opencodeEnv(dir, "seat", standIn.baseUrl), MAGI_HOME: home })
      const magi = (...args: string[]) => execFileSync(process.execPath, [MAGI, ...args], { cwd: repo, env, encoding: "utf8" })

      const run = spawn(process.execPath, [MAGI, "run", "Mark the repository with tags and branches."], { cwd: repo, env })
      let stderr = ""
      run.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
      const done = new Promise<number | null>((resolve) => run.on("close", resolve))
      const killer = setTimeout(() => run.kill("SIGKILL"), DEADLINE_MS)
      cleanups.push(() => {
        clearTimeout(killer)
        if (run.exitCode === null && run.signalCode === null) run.kill("SIGKILL")
      })

      // The owner, at the terminal: each approval as it arrives.
      const questionsDir = NodePath.join(home, "questions")
      const answered = new Map<string, { summary: string; choices: string[] }>()
      let exited = false
      void done.then(() => (exited = true))
      while (!exited) {
        const files = NodeFs.existsSync(questionsDir) ? NodeFs.readdirSync(questionsDir).filter((f) => f.endsWith(".json")) : []
        for (const f of files) {
          const q = JSON.parse(NodeFs.readFileSync(NodePath.join(questionsDir, f), "utf8"))
          if (q.status !== "open" || answered.has(q.id)) continue
          answered.set(q.id, { summary: q.summary, choices: q.choices })
          const choice = q.summary.includes("denied") ? "Deny" : q.summary.includes("allowed") ? "Allow" : q.choices[2]
          magi("answer", q.id, "--reply", choice)
        }
        await new Promise((r) => setTimeout(r, 250))
      }
      expect(await done, stderr).toBe(0)

      // Three questions: the saved rule let the fourth command through, the deny rule stopped the fifth, the edit needed none.
      expect([...answered.values()].map((q) => q.summary)).toEqual([
        "Bash: `git tag denied-by-owner`",
        "Bash: `git tag allowed-by-owner`",
        "Bash: `git branch always-by-owner`"
      ])
      expect([...answered.values()][2]!.choices).toEqual(["Allow", "Deny", "Always allow Bash(git branch:*)"])
      // Deny and the deny rule obeyed; Allow and the saved rule ran their commands.
      expect(git("tag", "--list").split("\n").filter((l) => l !== "")).toEqual(["allowed-by-owner"])
      expect(git("branch", "--list", "always-by-owner")).toContain("always-by-owner")
      expect(git("branch", "--list", "through-by-rule")).toContain("through-by-rule")
      // The model was told of each denial, in magi's words, and the edit ran.
      const last = toolResults(standIn.requests.at(-1)!)
      expect(last).toHaveLength(CALLS.length)
      expect(last[0]).toContain("The owner denied this tool call")
      expect(last[4]).toContain("magi's approval rule Bash(git tag denied-by-rule) denies this tool call.")
      expect(last[5]).toContain("Wrote file successfully")
      // Every decision is in the audit log, by the owner or by a rule; the edit in the worktree is not one.
      const log = NodeFs.readFileSync(NodePath.join(home, "approvals.jsonl"), "utf8")
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => JSON.parse(l))
      expect(log.map((e) => [e.tool, e.decision, e.by, e.rule ?? null])).toEqual([
        ["Bash", "deny", "owner", null],
        ["Bash", "allow", "owner", null],
        ["Bash", "allow", "owner", "Bash(git branch:*)"],
        ["Bash", "allow", "rule", "Bash(git branch:*)"],
        ["Bash", "deny", "rule", "Bash(git tag denied-by-rule)"]
      ])
      expect(magi("approvals", "list")).toContain("allow Bash(git branch:*)")
      expect(standIn.escapes).toEqual([])
    },
    DEADLINE_MS + 60_000
  )

  it(
    "a call the owner has not decided within the slice is refused with how to get the decision; the seat ends its turn, and once the owner allows it the waiter resumes the seat, whose same call runs",
    async () => {
      requireBin()
      const dir = tempDirSync()
      const TAG = { tool: "bash", args: { command: "git tag after-resume", description: "Mark the repository" } } as const
      const standIn = await startOpenAiChat((req) => {
        const resumed = userTexts(req).length > 1
        const last = req.messages.at(-1)!
        if (last.role !== "tool") return TAG
        return { text: resumed ? "Tagged, as the owner allowed." : "The owner has not decided yet; ending my turn." }
      })
      cleanups.push(() => standIn.close())
      // A slice of 3 s, so the call is refused as pending well inside the test.
      const { repo, git } = repoWithOpencode(dir, "wait_slice = 3\n", "")
      const home = NodePath.join(dir, "magi-home")
      const env = envWith({ ...opencodeEnv(dir, "seat", standIn.baseUrl), MAGI_HOME: home })
      const magi = (...args: string[]) => execFileSync(process.execPath, [MAGI, ...args], { cwd: repo, env, encoding: "utf8", timeout: DEADLINE_MS })

      // 1. The run: the call waits one slice, is refused as pending, and the seat ends its turn.
      const started = await runToEnd(repo, env, "run", "Tag the repository.")
      expect(started.status, started.stderr).toBe(0)
      expect(started.stderr).toContain("is waiting on the owner")
      const [id] = NodeFs.readdirSync(NodePath.join(home, "runs"))
      const record = () => JSON.parse(NodeFs.readFileSync(NodePath.join(home, "runs", id!, "run.json"), "utf8"))
      expect(record()).toMatchObject({ status: "waiting", seats: [{ key: "impl", turns: 1 }] })
      const pending = toolResults(standIn.requests.at(-1)!)
      expect(pending).toHaveLength(1)
      expect(pending[0]).toContain("Make exactly the same tool call again to keep waiting for the decision, or end your turn")
      expect(git("tag", "--list")).toBe("")
      const [qfile] = NodeFs.readdirSync(NodePath.join(home, "questions")).filter((f) => f.endsWith(".json"))
      const qid = qfile!.slice(0, -5)
      expect(JSON.parse(NodeFs.readFileSync(NodePath.join(home, "questions", qfile!), "utf8"))).toMatchObject({
        status: "open",
        summary: "Bash: `git tag after-resume`",
        run: id,
        seat: "impl"
      })

      // 2. The owner allows it; nobody is waiting on the question any more.
      magi("answer", qid, "--reply", "Allow")
      const lease = NodePath.join(home, "questions", "leases", `${qid}.lease`)
      if (NodeFs.existsSync(lease))
        NodeFs.writeFileSync(lease, JSON.stringify({ ...JSON.parse(NodeFs.readFileSync(lease, "utf8")), beat_at: "2000-01-01T00:00:00Z" }))

      // 3. The waiter resumes the seat; its same call finds the owner's decision and runs.
      const daemon = spawn(process.execPath, [MAGI, "serve", "--home", home], { cwd: repo, env, stdio: ["ignore", "pipe", "pipe"] })
      let daemonErr = ""
      daemon.stderr.on("data", (d: Buffer) => (daemonErr += d.toString()))
      cleanups.push(async () => {
        if (daemon.exitCode === null && daemon.signalCode === null) {
          daemon.kill("SIGTERM")
          await new Promise((r) => daemon.once("close", r))
        }
      })
      for (const end = Date.now() + DEADLINE_MS; !["done", "failed", "stalled"].includes(record().status);) {
        if (Date.now() > end) throw new Error(`the run never finished; magi serve said:\n${daemonErr}`)
        await new Promise((r) => setTimeout(r, 250))
      }
      expect(record(), daemonErr).toMatchObject({ status: "done", summary: "Tagged, as the owner allowed.", seats: [{ key: "impl", turns: 2 }] })
      expect(git("tag", "--list").trim()).toBe("after-resume")
      // One question, decided once, by the owner.
      expect(NodeFs.readdirSync(NodePath.join(home, "questions")).filter((f) => f.endsWith(".json"))).toEqual([qfile])
      const log = NodeFs.readFileSync(NodePath.join(home, "approvals.jsonl"), "utf8").split("\n").filter((l) => l !== "").map((l) => JSON.parse(l))
      expect(log.map((e) => [e.tool, e.decision, e.by, e.question])).toEqual([["Bash", "allow", "owner", qid]])
      expect(standIn.escapes).toEqual([])
    },
    3 * DEADLINE_MS
  )
})
