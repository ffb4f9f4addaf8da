/**
 * The queue across hosts, as real processes: three homes with host names of
 * their own and their own clones of one repository (`[repos] app = …`), one
 * PostgreSQL database, a `magi serve` each. The fake `command` agent of
 * test/fixtures/queue-agent.mjs stands in for a CLI and logs every turn it
 * is given (its worktree says which host ran it).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import Pg from "pg"
import { freshDatabaseSync } from "../pgSupport.js"
import { tempDirSync, until } from "../support.js"
import { gitRepo, type Host, makeHost, pageUrl, run, type Started, start } from "./hostsSupport.js"

const QUEUE_AGENT = NodePath.resolve("test/fixtures/queue-agent.mjs")
const CONDUCTOR_AGENT = NodePath.resolve("test/fixtures/conductor-agent.mjs")

/** Generous: the suite runs on a busy 2-core box, and 200 tasks are 200 worktrees. */
const PROCESS_DEADLINE = 60_000
const DRAIN_DEADLINE = 900_000

let db: { readonly url: string; readonly drop: () => Promise<void> }
beforeAll(async () => {
  db = await freshDatabaseSync()
})
afterAll(async () => {
  await db.drop()
})

/** A repository with one commit: what every host clones. */
const origin = (dir: string, name: string) => gitRepo(NodePath.join(dir, name))

interface QueueHost extends Host {
  /** Its clone of each repository it has, by name. */
  readonly clones: Readonly<Record<string, string>>
}

/**
 * A host with its own clone of each of `repos` (with the fake agents in its
 * magi.toml), and a config naming it and mapping the names to its clones.
 */
const makeQueueHost = (
  dir: string,
  name: string,
  repos: Readonly<Record<string, string>>,
  options: { readonly runs?: number; readonly conductor?: boolean } = {}
): QueueHost => {
  const clones: Record<string, string> = {}
  for (const [repoName, from] of Object.entries(repos)) {
    const clone = NodePath.join(dir, name, "src", repoName)
    execFileSync("git", ["clone", "-q", from, clone], { stdio: "pipe" })
    NodeFs.writeFileSync(
      NodePath.join(clone, "magi.toml"),
      `[agents.fake]\nkind = "command"\ncommand = ${JSON.stringify(["node", QUEUE_AGENT])}\n` +
        (options.conductor === true
          ? `\n[agents.boss]\nkind = "command"\ncommand = ${JSON.stringify(["node", CONDUCTOR_AGENT])}\n\n[roles]\nimplementer = "fake"\nconductor = "boss"\n`
          : "")
    )
    clones[repoName] = NodeFs.realpathSync(clone)
  }
  const host = makeHost(db.url, dir, name, {
    config: `max_turns = 4\n\n[daemon]\nmax_concurrent_runs = ${options.runs ?? 2}\n\n[repos]\n` +
      Object.entries(clones)
        .map(([n, p]) => `${n} = ${JSON.stringify(p)}\n`)
        .join(""),
    // Not an agent's: a suite run from inside a magi run must not file these tasks as that run's.
    env: { MAGI_RUN: "", MAGI_NODE: "" }
  })
  return { ...host, clones }
}

interface StoredTask {
  readonly id: string
  readonly title: string
  readonly status: string
  readonly attempts: number
  readonly runs: ReadonlyArray<string>
  readonly repo: string
  readonly repo_name: string | null
}

/** Every task in the database, as stored. */
const storedTasks = async (): Promise<ReadonlyArray<StoredTask>> => {
  const client = new Pg.Client({ connectionString: db.url })
  await client.connect()
  try {
    const rows = (await client.query("SELECT body FROM magi_records WHERE kind = 'queue'")).rows as ReadonlyArray<{ body: string }>
    return rows.map((r) => JSON.parse(r.body) as StoredTask)
  } finally {
    await client.end()
  }
}

/** The agent's log: one line per turn, with the worktree it ran in. */
const turnsIn = (log: string): ReadonlyArray<{ task: string; run: string; cwd: string; shown: ReadonlyArray<string> }> =>
  NodeFs.existsSync(log)
    ? NodeFs.readFileSync(log, "utf8")
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => JSON.parse(l))
    : []

/** Which host's folder (its home, its clones) a directory is under. */
const hostOf = (hosts: ReadonlyArray<Host>, cwd: string) => hosts.find((h) => cwd.startsWith(NodeFs.realpathSync(h.top) + NodePath.sep))?.name ?? "?"

/** Settle for a while and read again: nothing may change after the end. */
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe("the queue across hosts on one PostgreSQL store", { timeout: DRAIN_DEADLINE + 120_000 }, () => {
  it("drains 200 tasks with three hosts, each task run exactly once; tasks for a repository only one host has run only there", async () => {
    const dir = tempDirSync()
    const log = NodePath.join(dir, "agent.jsonl")
    const app = origin(dir, "app-origin")
    const lib = origin(dir, "lib-origin")
    const alpha = makeQueueHost(dir, "alpha", { app })
    const beta = makeQueueHost(dir, "beta", { app })
    const gamma = makeQueueHost(dir, "gamma", { app, lib })
    const hosts = [alpha, beta, gamma]
    const agentEnv = { FAKE_AGENT_LOG: log }

    // Filed from inside alpha's clone, with no --repo: the task records the name.
    const inside = run(alpha, alpha.clones.app!, agentEnv, "task", "add", "--json", "Task from inside the clone")
    expect(inside.status, inside.stderr).toBe(0)
    expect(JSON.parse(inside.stdout)).toMatchObject({ repo_name: "app", repo: alpha.clones.app })
    // A name nobody has is refused, naming the ones known; nothing is filed.
    const unknown = run(alpha, dir, agentEnv, "task", "add", "--repo", "nope", "Lost work")
    expect(unknown.status).not.toBe(0)
    expect(unknown.stderr).toContain("magi: no host has a repository named `nope` (known: app (here))")

    // gamma registers (its record lists `lib`), so alpha may file work for lib by name.
    const g = start(gamma, gamma.clones.app!, agentEnv, "serve")
    const servers = [g]
    try {
      await until("gamma to register", () => g.stderr().includes("magi serve: waiting"), PROCESS_DEADLINE)
      const forLib = run(alpha, dir, agentEnv, "task", "add", "--json", "--repo", "lib", "Library task 1")
      expect(forLib.status, forLib.stderr).toBe(0)
      expect(JSON.parse(forLib.stdout)).toMatchObject({ repo_name: "lib", repo: "lib" })
      expect(run(alpha, dir, agentEnv, "task", "show", JSON.parse(forLib.stdout).id).stdout).toContain("repo       lib (no clone on this host)")
      await g.stop()
      servers.length = 0

      // The rest through a page (one process; 200 `magi task add` would be minutes of node start-up).
      const filer = start(alpha, alpha.clones.app!, agentEnv, "web", "--no-loop", "--bind", "127.0.0.1", "--port", "0")
      try {
        const url = await pageUrl(filer, "the filing page", PROCESS_DEADLINE)
        const names = (await (await fetch(`${url}/api/repos`)).json()) as {
          names: ReadonlyArray<{ name: string; here: boolean; hosts: ReadonlyArray<string> }>
        }
        // The page's picker offers the names: alpha's own, and lib on gamma.
        expect(names.names).toEqual([
          { name: "app", here: true, hosts: ["gamma"] },
          { name: "lib", here: false, hosts: ["gamma"] }
        ])
        const post = async (instruction: string, repo: string) => {
          const r = await fetch(`${url}/api/queue`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ instruction, repo })
          })
          expect(r.status, await r.clone().text()).toBe(201)
        }
        for (let i = 1; i <= 198; i++) await post(`App task ${i}`, "app")
        for (let i = 2; i <= 6; i++) await post(`Library task ${i}`, "lib")
        const relative = await fetch(`${url}/api/queue`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ instruction: "x", repo: "src" })
        })
        expect(relative.status).toBeGreaterThanOrEqual(400)
      } finally {
        await filer.stop()
      }
      const filed = await storedTasks()
      expect(filed.length).toBe(1 + 1 + 198 + 5)
      expect(filed.filter((t) => t.repo_name === "app").length).toBe(199)

      // Three hosts at once, two runs each.
      for (const h of hosts) servers.push(start(h, h.clones.app!, agentEnv, "serve"))
      await until(
        "every task to be done",
        () => {
          const done = turnsIn(log).length
          return done >= filed.length
        },
        DRAIN_DEADLINE
      )
      let all: ReadonlyArray<StoredTask> = []
      for (const end = Date.now() + PROCESS_DEADLINE; Date.now() < end; await pause(1_000)) {
        all = await storedTasks()
        if (all.every((t) => t.status === "done")) break
      }
      // A while longer: no host starts anything more.
      await pause(5_000)
      all = await storedTasks()
      expect(all.filter((t) => t.status !== "done").map((t) => [t.title, t.status])).toEqual([])
      // Exactly once: one run per task, one turn per run, no attempt spent twice.
      expect(all.every((t) => t.runs.length === 1 && t.attempts === 1)).toBe(true)
      const turns = turnsIn(log)
      expect(turns.length).toBe(all.length)
      expect(new Set(turns.map((t) => t.run)).size).toBe(all.length)
      expect(new Set(turns.map((t) => t.task))).toEqual(new Set(all.map((t) => t.title)))
      // Each host took a share; the library's tasks ran on gamma only, the one with a clone of lib.
      const byHost = new Map<string, number>()
      for (const t of turns) byHost.set(hostOf(hosts, t.cwd), (byHost.get(hostOf(hosts, t.cwd)) ?? 0) + 1)
      expect([...byHost.keys()].sort()).toEqual(["alpha", "beta", "gamma"])
      const libTurns = turns.filter((t) => t.task.startsWith("Library task"))
      expect(libTurns.length).toBe(6)
      expect(new Set(libTurns.map((t) => hostOf(hosts, t.cwd)))).toEqual(new Set(["gamma"]))
      console.log(`200 tasks over three hosts: ${[...byHost].map(([h, n]) => `${h} ${n}`).join(", ")}`)
    } finally {
      for (const s of servers) await s.stop()
    }
  })

  it("retries the task of a host killed mid-run once, on another host; the conductor runs on one host at a time", async () => {
    const dir = tempDirSync()
    const log = NodePath.join(dir, "agent.jsonl")
    const conductorLog = NodePath.join(dir, "conductor.jsonl")
    const gate = NodePath.join(dir, "gate")
    const app = origin(dir, "app-origin")
    const alpha = makeQueueHost(dir, "alpha", { app }, { runs: 1, conductor: true })
    const beta = makeQueueHost(dir, "beta", { app }, { runs: 1, conductor: true })
    const hosts = [alpha, beta]
    // The agent waits for the gate file before it works: a turn that is surely mid-run when its host is killed.
    const agentEnv = { FAKE_AGENT_LOG: log, CONDUCTOR_LOG: conductorLog, FAKE_AGENT_GATE: gate }

    const a = start(alpha, alpha.clones.app!, agentEnv, "serve")
    let b: Started | undefined
    try {
      await until("alpha to register", () => a.stderr().includes("magi serve: waiting"), PROCESS_DEADLINE)
      const filed = run(alpha, alpha.clones.app!, agentEnv, "task", "add", "--json", "Build the API")
      expect(filed.status, filed.stderr).toBe(0)
      const id = JSON.parse(filed.stdout).id as string
      // alpha, the only host, conducts and starts the task; its agent waits at the gate.
      await until("alpha to start the task", () => a.stderr().includes("started "), PROCESS_DEADLINE)
      await until("the conductor to look, on alpha", () => turnsIn(conductorLog).length >= 1, PROCESS_DEADLINE)
      expect(a.stderr()).toContain("conductor: this host (alpha) conducts")

      // beta comes up: the conductor stays alpha's, the task stays alpha's.
      b = start(beta, beta.clones.app!, agentEnv, "serve")
      await until("beta to register", () => b!.stderr().includes("magi serve: waiting"), PROCESS_DEADLINE)
      const second = run(beta, beta.clones.app!, agentEnv, "task", "add", "--json", "Use the API")
      expect(second.status, second.stderr).toBe(0)
      await until("the conductor to look at the second task", () => turnsIn(conductorLog).some((t) => t.shown.includes("Use the API")), PROCESS_DEADLINE)
      expect(new Set(turnsIn(conductorLog).map((t) => hostOf(hosts, t.cwd)))).toEqual(new Set(["alpha"]))
      expect(b.stderr()).not.toContain("conducts")

      // alpha is killed mid-run.
      a.child.kill("SIGKILL")
      await a.exited
      NodeFs.writeFileSync(gate, "")
      // beta sees alpha's claim gone (its pid dead on this machine; from another machine, after the claim's ttl) and
      // follows the attempts rule: the run stalled, the task retried once, on beta.
      await until(
        "the task to be done on beta",
        () => turnsIn(log).filter((t) => t.task === "Build the API").some((t) => hostOf(hosts, t.cwd) === "beta"),
        PROCESS_DEADLINE * 3
      )
      let task: StoredTask | undefined
      for (const end = Date.now() + PROCESS_DEADLINE; Date.now() < end; await pause(1_000)) {
        task = (await storedTasks()).find((t) => t.id === id)
        if (task?.status === "done") break
      }
      expect(task).toMatchObject({ status: "done" })
      expect(task!.runs.length).toBe(2)
      expect(b.stderr()).toMatch(/stalled \w+ Build the API: the magi loop that ran it is gone/)
      // The conductor moved to beta with its host gone.
      await until("beta to conduct", () => b!.stderr().includes("conductor: this host (beta) conducts"), PROCESS_DEADLINE * 3)
    } finally {
      await a.stop()
      if (b !== undefined) await b.stop()
    }
  })
})
