/**
 * Ask back (issue 27.6): an agent that reads the owner's ask-back, answers
 * it in its printed reply and ends its turn has that reply put on the
 * question's thread, where the card shows it, and the question no longer
 * says the agent owes one.
 */
import { describe, expect, it } from "vitest"
import { spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { tempDirSync, until } from "../support.js"
import { MAGI, magi, repoWithAgent, serveDaemon } from "../runSupport.js"

describe("an agent that replies to an ask-back in its output and ends its turn", () => {
  it("has its reply recorded on the question's thread, and the run waits on the owner", { timeout: 120_000 }, async () => {
    const dir = tempDirSync()
    // The agent asks, reads the owner's ask-back (the `replied` outcome), then answers it in its output instead of with --thread.
    const script = 'magi ask --summary "Which backend?" --choice SQLite --choice Redis > asked.txt; echo "SQLite: it needs no server"'
    const repo = repoWithAgent(dir, ["sh", "-c", script])
    const home = NodePath.join(dir, "home")
    const env = { MAGI_HOME: home }
    const child = spawn(process.execPath, [MAGI, "run", "pick a backend"], {
      cwd: repo,
      env: { ...process.env, ...env, XDG_CONFIG_HOME: NodePath.join(dir, "no-config") },
      stdio: ["ignore", "pipe", "pipe"]
    })
    const exited = new Promise<number | null>((done) => child.once("exit", done))
    try {
      const questions = NodePath.join(home, "questions")
      const ids = () => (NodeFs.existsSync(questions) ? NodeFs.readdirSync(questions).filter((f) => f.endsWith(".json")) : [])
      await until("the agent asks", () => ids().length === 1, 60_000)
      const id = ids()[0]!.slice(0, -5)
      const said = magi(repo, env, "answer", id, "--say", "why that one?")
      expect(said.status, said.stderr).toBe(0)
      expect(await exited).toBe(0)
      const q = JSON.parse(NodeFs.readFileSync(NodePath.join(questions, `${id}.json`), "utf8"))
      expect(q.status).toBe("open")
      expect(q.thread.map((t: { who: string; body: string }) => [t.who, t.body])).toEqual([
        ["operator", "why that one?"],
        ["agent", "SQLite: it needs no server"]
      ])
      const [run] = NodeFs.readdirSync(NodePath.join(home, "runs")).filter((f) => /^\d{8}-/.test(f))
      expect(JSON.parse(NodeFs.readFileSync(NodePath.join(home, "runs", run!, "run.json"), "utf8")).status).toBe("waiting")
    } finally {
      child.kill("SIGKILL")
    }
  })
})

describe("an agent shown the owner's ask-back whose turn is cut short before it replies", () => {
  it("is resumed once by magi serve with the owner's words, and a restarted loop never sends them again", { timeout: 180_000 }, async () => {
    const dir = tempDirSync()
    // Its first turn asks, reads the ask-back (the `replied` outcome) and
    // thinks until Ctrl-C ends the run; a turn that brings the ask-back once
    // more answers it.
    const script = [
      'if grep -q "once more" "$1"; then echo resumed >> turns.log; echo "SQLite: it needs no server"; exit 0; fi',
      'magi ask --summary "Which backend?" --choice SQLite --choice Redis > asked.txt',
      "sleep 120"
    ].join("\n")
    const repo = repoWithAgent(dir, ["sh", "-c", script, "agent", "{prompt_file}"])
    const home = NodePath.join(dir, "home")
    const env = { MAGI_HOME: home }
    const child = spawn(process.execPath, [MAGI, "run", "pick a backend"], {
      cwd: repo,
      env: { ...process.env, ...env, XDG_CONFIG_HOME: NodePath.join(dir, "no-config") },
      stdio: ["ignore", "pipe", "pipe"]
    })
    const exited = new Promise<number | null>((done) => child.once("exit", done))
    const questions = NodePath.join(home, "questions")
    const ids = () => (NodeFs.existsSync(questions) ? NodeFs.readdirSync(questions).filter((f) => f.endsWith(".json")) : [])
    const read = (id: string) => JSON.parse(NodeFs.readFileSync(NodePath.join(questions, `${id}.json`), "utf8"))
    let id = ""
    try {
      await until("the agent asks", () => ids().length === 1, 60_000)
      id = ids()[0]!.slice(0, -5)
      const said = magi(repo, env, "answer", id, "--say", "why that one?")
      expect(said.status, said.stderr).toBe(0)
      await until("the agent is shown the ask-back", () => read(id).delivered_turns === 1, 60_000)
      child.kill("SIGINT")
      await exited
    } finally {
      child.kill("SIGKILL")
    }
    // Shown, unanswered, nobody waiting: the question owes the owner a reply.
    expect(read(id)).toMatchObject({ status: "open", delivered_turns: 1, waiter: null })
    expect(read(id).thread).toHaveLength(1)
    const [run] = NodeFs.readdirSync(NodePath.join(home, "runs")).filter((f) => /^\d{8}-/.test(f))
    const worktree = JSON.parse(NodeFs.readFileSync(NodePath.join(home, "runs", run!, "run.json"), "utf8")).worktree as string

    const first = serveDaemon(repo, home, env, dir)
    try {
      await until("the seat is resumed and its reply recorded", () => read(id).thread.length === 2, 60_000)
    } finally {
      await first.stop()
    }
    const q = read(id)
    expect(q.thread.map((t: { who: string; body: string }) => [t.who, t.body])).toEqual([
      ["operator", "why that one?"],
      ["agent", "SQLite: it needs no server"]
    ])
    expect(q.resent_turns).toBe(1)
    // A second loop finds it re-sent and sends nothing, even were the reply
    // not recorded: make it look owed again but for the mark.
    NodeFs.writeFileSync(NodePath.join(questions, `${id}.json`), JSON.stringify({ ...q, thread: q.thread.slice(0, 1) }))
    const second = serveDaemon(repo, home, env, dir)
    try {
      await new Promise((done) => setTimeout(done, 8_000))
    } finally {
      await second.stop()
    }
    expect(NodeFs.readFileSync(NodePath.join(worktree, "turns.log"), "utf8")).toBe("resumed\n")
  })
})
