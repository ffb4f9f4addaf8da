/**
 * The built `magi` as real processes on the PostgreSQL backend
 * (`MAGI_STORE_URL`, the real server the test run started), for the kinds
 * beyond questions: the conductor's decisions written by `magi serve` and
 * read back by `magi task show`, a planning chat opened and answered
 * through `magi web`, and the waiter's notice raised by `magi serve` and
 * listed by another home's `magi web`; each a row in the database, no file
 * in the home.
 */
import { describe, expect, it } from "vitest"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { Effect } from "effect"
import { owner } from "./cliSupport.js"
import { fileTask, magi, repoWithAgent, serveDaemon } from "../runSupport.js"
import { tempDirSync } from "../support.js"
import { chatRepo } from "../web/chat-support.js"
import { eventually, postJson, request, startWeb } from "../web/web-support.js"
import { freshDatabaseSync, query } from "../pgSupport.js"

const QUEUE_AGENT = NodePath.resolve("test/fixtures/queue-agent.mjs")
const FAKE_AGENT = NodePath.resolve("test/fixtures/fake-agent.mjs")
const CONDUCTOR_AGENT = NodePath.resolve("test/fixtures/conductor-agent.mjs")

const rows = (url: string, kind: string) =>
  Effect.runPromise(query(url, "SELECT id, body FROM magi_records WHERE kind = $1 ORDER BY id", [kind])).then((all) =>
    all.map((r) => ({ id: String(r.id), body: JSON.parse(String(r.body)) }))
  )

describe("magi on PostgreSQL, the kinds beyond questions, as real processes", () => {
  it("magi run records its run in the database, its artifacts on this machine, and another home's magi runs and magi show read it", async () => {
    const db = await freshDatabaseSync()
    try {
      const dir = tempDirSync()
      const home = NodePath.join(dir, "home")
      const repo = repoWithAgent(dir, ["node", FAKE_AGENT, "{prompt_file}", "{cwd}", "{label}"])
      const ran = magi(repo, { MAGI_HOME: home, MAGI_STORE_URL: db.url, FAKE_AGENT_LOG: NodePath.join(dir, "log.jsonl") }, "run", "Add", "a", "cache")
      expect(ran.status, ran.stderr).toBe(0)
      const [run] = await rows(db.url, "runs")
      expect(run!.body).toMatchObject({ status: "done", instruction: "Add a cache", seats: [{ key: "impl", agent: "fake", turns: 1 }] })
      // The record is a row; the run's folder keeps only what this machine's agent left.
      expect(NodeFs.existsSync(NodePath.join(home, "runs", run!.id, "run.json"))).toBe(false)
      expect(NodeFs.readdirSync(NodePath.join(home, "runs", run!.id, "artifacts")).length).toBeGreaterThan(0)
      const elsewhere = { MAGI_HOME: NodePath.join(dir, "other-home"), MAGI_STORE_URL: db.url }
      const listed = magi(repo, elsewhere, "runs")
      expect(listed.status, listed.stderr).toBe(0)
      expect(listed.stdout).toContain(run!.id.split("-").at(-1))
      const shown = magi(repo, elsewhere, "show", run!.id)
      expect(shown.status, shown.stderr).toBe(0)
      expect(shown.stdout).toContain("Add a cache")
    } finally {
      await db.drop()
    }
  }, 120_000)

  it("magi serve records the conductor's decision in the database, and magi task show reads it from there", async () => {
    const db = await freshDatabaseSync()
    try {
      const dir = tempDirSync()
      const home = NodePath.join(dir, "home")
      const repo = repoWithAgent(dir, ["node", QUEUE_AGENT])
      NodeFs.appendFileSync(
        NodePath.join(repo, "magi.toml"),
        `\n[agents.boss]\nkind = "command"\ncommand = ${JSON.stringify(["node", CONDUCTOR_AGENT])}\n\n[roles]\nimplementer = "fake"\nconductor = "boss"\n`
      )
      const env = {
        MAGI_HOME: home,
        MAGI_STORE_URL: db.url,
        FAKE_AGENT_LOG: NodePath.join(dir, "agent.jsonl"),
        CONDUCTOR_LOG: NodePath.join(dir, "conductor.jsonl"),
        MAGI_RUN: "",
        MAGI_NODE: ""
      }
      const add = (args: string[]) => fileTask(repo, env, args)
      add(["--priority", "1", "Build the API"])
      const client = add(["--priority", "5", "Use the API"])
      // The queue is the database's too: its tasks are rows, not files.
      const tasks = async () => (await rows(db.url, "queue")).map((r) => r.body as { status: string })
      const daemon = serveDaemon(repo, home, env, dir)
      try {
        for (const end = Date.now() + 90_000;;) {
          const now = await tasks()
          if (now.length === 2 && now.every((t) => t.status === "done")) break
          if (Date.now() > end) throw new Error(`timed out waiting for both tasks to be done: ${JSON.stringify(now.map((t) => t.status))}`)
          await new Promise((r) => setTimeout(r, 100))
        }
      } finally {
        await daemon.stop()
      }
      expect(NodeFs.existsSync(NodePath.join(home, "queue")) ? NodeFs.readdirSync(NodePath.join(home, "queue")).filter((n) => n.endsWith(".json")) : [])
        .toEqual([])
      const decisions = await rows(db.url, "conductor-log")
      expect(decisions.map((d) => d.body)).toEqual([
        expect.objectContaining({ task: expect.stringMatching(new RegExp(`-${client}$`)), outcome: "applied", why: expect.stringMatching(/^blocked on \w+$/) })
      ])
      expect(NodeFs.existsSync(NodePath.join(home, "conduct", "decisions.jsonl"))).toBe(false)
      // The conductor's own seat and artifacts stay on this machine.
      expect(NodeFs.existsSync(NodePath.join(home, "conduct", "seat.json"))).toBe(true)
      const shown = magi(repo, env, "task", "show", client)
      expect(shown.status).toBe(0)
      expect(shown.stdout).toMatch(/conductor \(.*, turn 1\): applied: blocked on \w+/)
    } finally {
      await db.drop()
    }
  }, 150_000)

  it("magi web keeps a planning chat in the database: opened, answered by the agent, listed, and no chat file in the home", async () => {
    const db = await freshDatabaseSync()
    const setup = chatRepo([{ reply: "Which fetcher?" }])
    const home = tempDirSync()
    const web = await startWeb(home, 0, { cwd: setup.repo, env: { MAGI_STORE_URL: db.url } })
    try {
      const api = (path: string) => `${web.url}${path}`
      const created = await postJson(api("/api/chats"), { idea: "retry the fetcher" })
      expect(created.status).toBe(202)
      const id = created.json().id as string
      const answered = await eventually(
        "the agent's turn",
        async () => {
          const chat = (await request(api(`/api/chats/${id}`))).json()
          return chat.turns.some((t: { who: string }) => t.who === "agent") && !chat.thinking ? chat : undefined
        },
        30_000
      )
      expect(answered.turns.map((t: { who: string; body: string }) => `${t.who}: ${t.body}`)).toEqual([
        "operator: retry the fetcher",
        "agent: Which fetcher?"
      ])
      const [row] = await rows(db.url, "chats")
      expect(row).toMatchObject({ id, body: { id, turns: [{ body: "retry the fetcher" }, { body: "Which fetcher?" }] } })
      expect((await request(api("/api/chats"))).json().map((c: { id: string }) => c.id)).toEqual([id])
      const chatsDir = NodePath.join(home, "chats")
      const files = NodeFs.existsSync(chatsDir) ? NodeFs.readdirSync(chatsDir).filter((n) => n.endsWith(".json")) : []
      expect(files).toEqual([])
      // What the turn told the agent stays in this machine's chats folder.
      expect(NodeFs.existsSync(NodePath.join(chatsDir, `${id}.artifacts`))).toBe(true)
    } finally {
      await web.stop()
      await db.drop()
    }
  }, 90_000)

  it("magi serve raises the waiter's notice in the database, and another home's magi web lists it", async () => {
    const db = await freshDatabaseSync()
    const laptop = owner()
    const store = { MAGI_STORE_URL: db.url }
    let web: Awaited<ReturnType<typeof startWeb>> | undefined
    let daemon: ReturnType<typeof serveDaemon> | undefined
    try {
      // Asked from a worktree, one slice, then the asker is gone.
      const asked = await laptop.run(["ask", "--summary", "Ship it?", "--choice", "yes", "--choice", "no"], {
        ...store,
        MAGI_RUN: "20260902-201256-9fb7",
        MAGI_NODE: "impl",
        MAGI_SEAT: "impl",
        MAGI_WAIT_SLICE: "1"
      })
      expect(asked.code).toBe(0)
      const answered = await laptop.run(["answer", "--reply", "yes"], store)
      expect(answered.code).toBe(0)
      // The worktree is removed before the waiter can carry the answer back.
      NodeFs.rmSync(laptop.cwd, { recursive: true, force: true })
      const elsewhere = tempDirSync()
      daemon = serveDaemon(elsewhere, laptop.home, { ...store, MAGI_HOME: laptop.home }, elsewhere)
      const notices = await eventually(
        "the waiter's notice in the database",
        async () => {
          const found = await rows(db.url, "notices")
          return found.length > 0 ? found : undefined
        },
        30_000
      )
      expect(notices).toHaveLength(1)
      expect(notices[0]!.body).toMatchObject({ seat: "impl", input: expect.stringMatching(/^Answered@/), reason: expect.stringContaining("is gone") })
      expect(NodeFs.existsSync(NodePath.join(laptop.home, "notices"))).toBe(false)
      // Another machine's page lists it from the database.
      web = await startWeb(tempDirSync(), 0, { env: store })
      const listed = (await request(`${web.url}/api/notices`)).json()
      expect(listed.map((n: { id: string }) => n.id)).toEqual([notices[0]!.id])
    } finally {
      await daemon?.stop()
      await web?.stop()
      await db.drop()
    }
  }, 90_000)
})
