/**
 * Several hosts on one PostgreSQL store, as real processes: each host is a
 * home folder of its own with its own config (`[host] name`), and every
 * process reaches the one database by `MAGI_STORE_URL`. The fake `command`
 * agent stands in for a CLI.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { repoWithAgent } from "../runSupport.js"
import { freshDatabaseSync } from "../pgSupport.js"
import { tempDirSync, until } from "../support.js"
import { type Host, makeHost, pageUrl, run, start } from "./hostsSupport.js"

const ASK_AGENT = NodePath.resolve("test/fixtures/ask-agent.mjs")

/** Generous: the suite runs on a busy 2-core box. */
const PROCESS_DEADLINE = 60_000

let db: { readonly url: string; readonly drop: () => Promise<void> }
beforeAll(async () => {
  db = await freshDatabaseSync()
})
afterAll(async () => {
  await db.drop()
})

interface HostSeen {
  readonly name: string
  readonly online: boolean
  readonly last_seen: string
  readonly pid: number
}

const hostsSeenBy = (host: Host, cwd: string): ReadonlyArray<HostSeen> => {
  const r = run(host, cwd, {}, "hosts", "--json")
  if (r.status !== 0) throw new Error(`magi hosts failed: ${r.stderr}`)
  return JSON.parse(r.stdout) as ReadonlyArray<HostSeen>
}

const online = (host: Host, cwd: string, name: string, pid: number | undefined) =>
  hostsSeenBy(host, cwd).some((h) => h.name === name && h.online && h.pid === pid)

describe("several hosts on one PostgreSQL store", { timeout: 240_000 }, () => {
  it("lists each host with its last beat, and refuses a second live loop under a host name already taken", async () => {
    const dir = tempDirSync()
    const alpha = makeHost(db.url, dir, "alpha")
    const beta = makeHost(db.url, dir, "beta")
    const impostor = makeHost(db.url, dir, "alpha", { folder: "impostor" })
    const a = start(alpha, dir, {}, "serve")
    const b = start(beta, dir, {}, "serve")
    try {
      await until("alpha and beta to register", () => online(alpha, dir, "alpha", a.child.pid) && online(alpha, dir, "beta", b.child.pid), PROCESS_DEADLINE)
      // Another home, the same name: refused with the holder named, before it does anything.
      const c = start(impostor, dir, {}, "serve")
      expect(await c.exited).toBe(1)
      expect(c.stderr()).toContain(`host name alpha is taken by another live magi loop (pid ${a.child.pid}`)
      expect(c.stderr()).toContain("[host] name")
      // beta stops in order: the others see it offline since then.
      expect(await b.stop()).not.toBeNull()
      const seen = hostsSeenBy(alpha, dir)
      expect(seen.map((h) => [h.name, h.online])).toEqual([
        ["alpha", true],
        ["beta", false]
      ])
      const text = run(alpha, dir, {}, "hosts")
      expect(text.stdout).toMatch(/^beta {2}offline since \d{4}-/m)
      expect(text.stdout).toMatch(/^alpha {2}online, last seen /m)
      // The doctor reports the hosts it sees.
      const doctor = run(alpha, dir, {}, "doctor", "--json")
      const checks = JSON.parse(doctor.stdout).checks as ReadonlyArray<{ name: string; detail: string }>
      expect(checks.find((c) => c.name === "host")?.detail).toContain("this is alpha")
      expect(checks.find((c) => c.name === "hosts")?.detail).toMatch(/alpha online .*beta offline since/)
    } finally {
      await a.stop()
      await b.stop()
    }
  })

  it("keeps a seat on its own host: answered through another host's page while its host is down, delivered by its host once back, exactly once", async () => {
    const dir = tempDirSync()
    const log = NodePath.join(dir, "agent.jsonl")
    const repo = repoWithAgent(dir, ["node", ASK_AGENT])
    const alpha = makeHost(db.url, dir, "alpha")
    const beta = makeHost(db.url, dir, "beta")
    const agentEnv = { FAKE_AGENT_LOG: log }
    const calls = () => (NodeFs.existsSync(log)
      ? NodeFs.readFileSync(log, "utf8").trim().split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as { turn: number; cwd: string })
      : [])

    // alpha registers, then goes down in order.
    const first = start(alpha, repo, agentEnv, "serve")
    await until("alpha to register", () => online(alpha, repo, "alpha", first.child.pid), PROCESS_DEADLINE)
    await first.stop()

    // A run on alpha: its agent asks, its `magi ask` is killed, its turn ends.
    const started = run(alpha, repo, agentEnv, "run", "Pick a storage backend")
    expect(started.stderr).toContain("is waiting on the owner")
    const shown = JSON.parse(run(alpha, repo, {}, "show", "--json").stdout) as { id: string; host: string; worktree: string }
    expect(shown.host).toBe("alpha")
    // The killed asker's lease (on alpha's disk) would hold the waiter off for its ttl: aged instead.
    // Leases only: an asker killed mid-beat can leave its empty scratch file beside them.
    const leases = NodePath.join(alpha.home, "questions", "leases")
    for (const f of NodeFs.existsSync(leases) ? NodeFs.readdirSync(leases).filter((n) => n.endsWith(".lease")) : []) {
      const file = NodePath.join(leases, f)
      NodeFs.writeFileSync(file, JSON.stringify({ ...JSON.parse(NodeFs.readFileSync(file, "utf8")), beat_at: "2000-01-01T00:00:00Z" }))
    }

    // beta serves the page and runs a loop of its own.
    const web = start(beta, dir, agentEnv, "web", "--bind", "127.0.0.1", "--port", "0")
    try {
      const url = await pageUrl(web, "beta's page", PROCESS_DEADLINE)
      await until("beta to register", () => online(beta, dir, "beta", web.child.pid), PROCESS_DEADLINE)
      // Anywhere, the run says its host is down.
      expect(run(beta, dir, {}, "show", shown.id).stdout).toMatch(/host {6}host alpha offline since \d{4}-/)
      const detail = (await (await fetch(`${url}/api/runs/${shown.id}`)).json()) as { host_offline: string | null }
      expect(detail.host_offline).toMatch(/^host alpha offline since /)
      const health = (await (await fetch(`${url}/api/health`)).json()) as { hosts: ReadonlyArray<HostSeen> }
      expect(health.hosts.map((h) => [h.name, h.online])).toEqual([
        ["alpha", false],
        ["beta", true]
      ])
      // The owner answers on beta's page.
      const questions = (await (await fetch(`${url}/api/questions`)).json()) as { open: ReadonlyArray<{ id: string; run: string }> }
      const q = questions.open.find((x) => x.run === shown.id)!
      const answered = await fetch(`${url}/api/questions/${q.id}/answer`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ choice: "SQLite" })
      })
      expect(answered.status).toBe(200)
      // beta's loop looks at the answer (it wakes on the change) and leaves it
      // alone: a few of its ticks pass with nothing launched.
      await new Promise((r) => setTimeout(r, 12_000))
      expect(calls().length).toBe(1)
      expect(web.stderr()).not.toContain("delivered")
      expect(web.stderr()).not.toContain("could not deliver")

      // alpha comes back: its waiter resumes the seat on start.
      const back = start(alpha, repo, agentEnv, "serve")
      try {
        await until("alpha to deliver the answer", () => calls().length === 2, PROCESS_DEADLINE)
        await until("the run to finish", () => JSON.parse(run(beta, dir, {}, "show", shown.id, "--json").stdout).status === "done", PROCESS_DEADLINE)
        // Another while later, still exactly one delivery.
        await new Promise((r) => setTimeout(r, 6_000))
        expect(calls().map((c) => [c.turn, c.cwd])).toEqual([
          [1, shown.worktree],
          [2, shown.worktree]
        ])
        expect(back.stderr()).toContain("delivered the owner's answer")
        expect(NodeFs.readFileSync(NodePath.join(shown.worktree, "answer.txt"), "utf8")).toBe("backend: SQLite\n")
      } finally {
        await back.stop()
      }
      expect(web.stderr()).not.toContain("delivered the owner's answer")
    } finally {
      await web.stop()
    }
  })
})
