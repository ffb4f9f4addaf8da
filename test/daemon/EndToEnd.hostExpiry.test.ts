/**
 * A host on another machine killed mid-run (issue 21, "kill -9 of a host
 * mid-run → its task retried once elsewhere after the claim expires"), as
 * real processes on one PostgreSQL database.
 *
 * A claim's holder is judged by the machine it names (`Claims.Owner.host`,
 * the machine's hostname): a dead pid frees a claim at once on its own
 * machine only. So alpha runs as another machine would: `unshare` gives its
 * `magi serve` a hostname of its own (a UTS namespace) and a process table of
 * its own (a PID namespace, so its pids mean nothing here). Killing the
 * namespace kills the whole "machine" at once, its agent with it, as a
 * machine that goes away does. beta, on this machine, can only wait for the
 * task's claim to expire (`[host] claim_ttl`, set to its shortest, 30 s, on
 * both hosts: the default's two minutes would be the same test, longer), then
 * follows the attempts rule: the attempt spent, the task run again, on beta.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { execFileSync, spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { Duration } from "effect"
import Pg from "pg"
import { acrossHosts } from "../../src/store/Claims.js"
import { MIN_CLAIM_TTL_SECS } from "../../src/platform/MagiConfig.js"
import { TASK_CLAIM } from "../../src/queue/TaskStore.js"
import { MAGI } from "../runSupport.js"
import { freshDatabaseSync } from "../pgSupport.js"
import { tempDirSync, until } from "../support.js"
import { gitRepo, type Host, makeHost, run, type Started, startArgv } from "./hostsSupport.js"

const QUEUE_AGENT = NodePath.resolve("test/fixtures/queue-agent.mjs")

/** Generous: processes start slowly on a busy 2-core box. */
const PROCESS_DEADLINE = 60_000
/** The claim lifetime both hosts are configured with (`[host] claim_ttl`), and how often it is renewed. */
const CLAIM = acrossHosts(MIN_CLAIM_TTL_SECS)
/** The claim's ttl, then a tick, on a busy box. */
const EXPIRY_DEADLINE = Duration.toMillis(CLAIM.ttl) + 3 * PROCESS_DEADLINE

/** Can this process make namespaces (root, with util-linux's unshare)? */
const canUnshare = spawnSync("unshare", ["--uts", "--pid", "--fork", "--mount-proc", "true"]).status === 0
if (!canUnshare) console.warn("EndToEnd.hostExpiry: skipped, `unshare --uts --pid` needs root and util-linux")

let db: { readonly url: string; readonly drop: () => Promise<void> }
beforeAll(async () => {
  if (canUnshare) db = await freshDatabaseSync()
})
afterAll(async () => {
  if (canUnshare) await db.drop()
})

/** A host with a clone of `origin` (named `app`) whose magi.toml runs the fake queue agent. */
interface AppHost extends Host {
  readonly clone: string
}

/** A host: its own home, config and clone of `origin` (named `app`), the fake queue agent in the clone's magi.toml. */
const makeAppHost = (dir: string, name: string, origin: string): AppHost => {
  const clone = NodePath.join(dir, name, "src", "app")
  execFileSync("git", ["clone", "-q", origin, clone], { stdio: "pipe" })
  NodeFs.writeFileSync(NodePath.join(clone, "magi.toml"), `[agents.fake]\nkind = "command"\ncommand = ${JSON.stringify(["node", QUEUE_AGENT])}\n`)
  const host = makeHost(db.url, dir, name, {
    config: `\nclaim_ttl = ${MIN_CLAIM_TTL_SECS}\n\n[daemon]\nmax_concurrent_runs = 1\n\n[repos]\napp = ${JSON.stringify(NodeFs.realpathSync(clone))}\n`,
    env: { MAGI_RUN: "", MAGI_NODE: "" }
  })
  return { ...host, top: NodeFs.realpathSync(host.top), clone: NodeFs.realpathSync(clone) }
}

/**
 * `magi serve` for `host`; on a machine of its own (`machine`: its hostname)
 * when given one, else on this one.
 */
const serve = (host: AppHost, agentEnv: Record<string, string>, machine?: string): Started => {
  const argv = [process.execPath, MAGI, "serve"]
  return startArgv(
    host,
    host.clone,
    agentEnv,
    machine === undefined
      ? argv
      // `--kill-child`: the namespace's first process (and so every process in
      // it) dies with unshare, which is what the test kills.
      : ["unshare", "--uts", "--pid", "--fork", "--kill-child", "--mount-proc", "sh", "-c", 'hostname "$0" && exec "$@"', machine, ...argv]
  )
}

/** Rows of one record kind in the database, as stored. */
const stored = async <A>(kind: string): Promise<ReadonlyArray<A>> => {
  const client = new Pg.Client({ connectionString: db.url })
  await client.connect()
  try {
    const rows = (await client.query("SELECT body FROM magi_records WHERE kind = $1", [kind])).rows as ReadonlyArray<{ body: string }>
    return rows.map((r) => JSON.parse(r.body) as A)
  } finally {
    await client.end()
  }
}

interface StoredTask {
  readonly id: string
  readonly status: string
  readonly attempts: number
  readonly runs: ReadonlyArray<string>
}
interface StoredRun {
  readonly id: string
  readonly status: string
  readonly reason: string
  readonly host?: string
}

const lines = <A>(file: string): ReadonlyArray<A> =>
  NodeFs.existsSync(file) ? NodeFs.readFileSync(file, "utf8").split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as A) : []

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms))

/**
 * Is any process still running with `entry` in its environment? The
 * namespace's processes die just after unshare does (the kernel kills them
 * once its first process is gone), not with it.
 */
const anyProcessWith = (entry: string) =>
  NodeFs.readdirSync("/proc").filter((p) => /^\d+$/.test(p)).some((pid) => {
    try {
      return NodeFs.readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").includes(entry)
    } catch {
      return false
    }
  })

describe.skipIf(!canUnshare)("a host on another machine killed mid-run", { timeout: EXPIRY_DEADLINE + 4 * PROCESS_DEADLINE }, () => {
  it("leaves its task to another host once the task's claim expires: retried once there, the attempt spent, never two turns at once", async () => {
    const dir = tempDirSync()
    const starts = NodePath.join(dir, "starts.jsonl")
    const finished = NodePath.join(dir, "finished.jsonl")
    const alphaGate = NodePath.join(dir, "alpha-gate")
    const origin = NodePath.join(dir, "origin")
    gitRepo(origin)
    const alpha = makeAppHost(dir, "alpha", origin)
    const beta = makeAppHost(dir, "beta", origin)
    const agentEnv = { FAKE_AGENT_STARTS: starts, FAKE_AGENT_LOG: finished }

    // alpha, on a machine of its own, the only host: it takes the task, and
    // its agent waits at a gate, so the turn is surely mid-run when alpha dies.
    const a = serve(alpha, { ...agentEnv, FAKE_AGENT_GATE: alphaGate }, "alpha-machine")
    let b: Started | undefined
    try {
      await until("alpha to serve", () => a.stderr().includes("magi serve: waiting"), PROCESS_DEADLINE)
      const filed = run(alpha, alpha.clone, {}, "task", "add", "--json", "Build the API")
      expect(filed.status, filed.stderr).toBe(0)
      const id = JSON.parse(filed.stdout).id as string
      await until("alpha's agent to start", () => lines(starts).length === 1, PROCESS_DEADLINE)
      expect(lines<{ machine: string }>(starts)[0]!.machine).toBe("alpha-machine")

      // beta comes up on this machine and leaves the task alone: alpha's claim is live.
      b = serve(beta, agentEnv)
      await until("beta to serve", () => b!.stderr().includes("magi serve: waiting"), PROCESS_DEADLINE)
      await pause(2 * Duration.toMillis(CLAIM.renewEvery))
      expect(lines(starts)).toHaveLength(1)

      // The machine goes away: alpha's loop and its agent at once.
      a.child.kill("SIGKILL")
      const killedAt = Date.now()
      await a.exited
      await until("every process of alpha's machine to be gone", () => !anyProcessWith(`FAKE_AGENT_GATE=${alphaGate}`), PROCESS_DEADLINE)
      // Were alpha's agent alive, this would let it finish its turn.
      NodeFs.writeFileSync(alphaGate, "")

      await until("beta to run the task", () => lines(finished).length >= 1, EXPIRY_DEADLINE)
      let task: StoredTask | undefined
      for (const end = Date.now() + PROCESS_DEADLINE; Date.now() < end; await pause(500)) {
        task = (await stored<StoredTask>("queue")).find((t) => t.id === id)
        if (task?.status === "done") break
      }
      // A while longer: nothing more starts.
      await pause(6_000)

      const turns = lines<{ task: string; run: string; machine: string; at: number }>(starts)
      expect(turns.map((t) => t.machine)).toEqual(["alpha-machine", NodeOs.hostname()])
      const [first, retry] = turns as [(typeof turns)[0], (typeof turns)[0]]
      // Retried after the claim expired, not at once: beta could not judge a
      // pid on another machine, so it waited for renewals to stop for the
      // configured ttl (alpha renewed at most `renewEvery` before it died);
      // and sooner than the default's two minutes could have let it.
      const ttl = Duration.toMillis(CLAIM.ttl)
      const renew = Duration.toMillis(CLAIM.renewEvery)
      expect(retry.at - killedAt).toBeGreaterThanOrEqual(ttl - renew - 2_000)
      expect(retry.at - killedAt).toBeLessThan(Duration.toMillis(TASK_CLAIM.ttl) - Duration.toMillis(TASK_CLAIM.renewEvery))
      console.log(`alpha's task retried on beta ${Math.round((retry.at - killedAt) / 1000)} s after alpha's machine went away`)
      // Never two turns at once: alpha's turn died with its machine (it never
      // finished, even with its gate open), and beta's began after.
      expect(first.at).toBeLessThan(killedAt)
      expect(retry.at).toBeGreaterThan(killedAt)
      const done = lines<{ task: string; run: string; cwd: string }>(finished)
      expect(done).toHaveLength(1)
      expect(done[0]).toMatchObject({ task: "Build the API", run: retry.run })
      expect(done[0]!.cwd.startsWith(beta.top + NodePath.sep)).toBe(true)

      // The attempts rule: alpha's attempt spent, the task retried once on beta and done.
      expect(task).toMatchObject({ status: "done", attempts: 2, runs: [first.run, retry.run] })
      const runs = new Map((await stored<StoredRun>("runs")).map((r) => [r.id, r]))
      expect(runs.get(first.run)).toMatchObject({ status: "stalled", host: "alpha", reason: expect.stringContaining("the magi loop that ran it is gone") })
      expect(runs.get(retry.run)).toMatchObject({ status: "done", host: "beta" })
      expect(b.stderr()).toMatch(/stalled \w+ Build the API: the magi loop that ran it is gone.*; attempt 1 of 2 spent/)
      expect(b.stderr()).toMatch(/started \w+ Build the API \(priority 0, attempt 2 of 2\)/)
    } finally {
      if (a.child.exitCode === null && a.child.signalCode === null) a.child.kill("SIGKILL")
      await a.exited
      if (b !== undefined) await b.stop()
    }
  })
})
