/**
 * `magi web --no-loop` registers its host too (issue 21, point 3: every
 * `magi serve` and `magi web` registers its host), as real processes on one
 * PostgreSQL database: listed by `magi hosts` and `/api/health` as a page
 * with no loop, without keeping a `magi serve` of the same host out.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { spawn, spawnSync, type ChildProcess } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { MAGI } from "../runSupport.js"
import { freshDatabaseSync } from "../pgSupport.js"
import { tempDirSync, until } from "../support.js"

/** Generous: processes start slowly on a busy 2-core box. */
const PROCESS_DEADLINE = 60_000

let db: { readonly url: string; readonly drop: () => Promise<void> }
beforeAll(async () => {
  db = await freshDatabaseSync()
})
afterAll(async () => {
  await db.drop()
})

interface Host {
  readonly dir: string
  readonly env: Record<string, string>
}

const makeHost = (dir: string, name: string): Host => {
  const top = NodePath.join(dir, name)
  const config = NodePath.join(top, "config")
  NodeFs.mkdirSync(NodePath.join(config, "magi"), { recursive: true })
  NodeFs.writeFileSync(NodePath.join(config, "magi", "config.toml"), `[host]\nname = "${name}"\nmax_turns = 3\n`)
  return { dir: top, env: { MAGI_HOME: NodePath.join(top, "home"), XDG_CONFIG_HOME: config, MAGI_STORE_URL: db.url, MAGI_RUN: "", MAGI_NODE: "" } }
}

interface Started {
  readonly child: ChildProcess
  readonly stdout: () => string
  readonly stderr: () => string
  readonly stop: () => Promise<unknown>
}

const start = (host: Host, ...args: string[]): Started => {
  const child = spawn(process.execPath, [MAGI, ...args], { cwd: host.dir, env: { ...process.env, ...host.env }, stdio: ["ignore", "pipe", "pipe"] })
  let stdout = ""
  let stderr = ""
  child.stdout!.on("data", (d) => (stdout += d))
  child.stderr!.on("data", (d) => (stderr += d))
  const exited = new Promise((done) => child.once("exit", done))
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    stop: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM")
      return exited
    }
  }
}

interface HostSeen {
  readonly name: string
  readonly online: boolean
  readonly pid: number
  readonly loop: boolean
  readonly max_turns: number
  readonly repos: ReadonlyArray<string>
  readonly loop_seen_at?: string
  readonly stopped_at?: string
}

const hosts = (host: Host): ReadonlyArray<HostSeen> => {
  const r = spawnSync(process.execPath, [MAGI, "hosts", "--json"], { cwd: host.dir, env: { ...process.env, ...host.env }, encoding: "utf8" })
  if (r.status !== 0) throw new Error(`magi hosts failed: ${r.stderr}`)
  return JSON.parse(r.stdout) as ReadonlyArray<HostSeen>
}
const seen = (host: Host, name: string) => hosts(host).find((h) => h.name === name)

describe("a page-only magi web", { timeout: 5 * PROCESS_DEADLINE }, () => {
  it("lists its host as up with no loop, gives way to a magi serve of that host, and speaks for the host again once it stops", async () => {
    const dir = tempDirSync()
    const gamma = makeHost(dir, "gamma")
    const page = start(gamma, "web", "--no-loop", "--bind", "127.0.0.1", "--port", "0")
    let loop: Started | undefined
    try {
      await until("gamma's page", () => /^http:\/\/\S+/m.test(page.stdout()), PROCESS_DEADLINE)
      const url = /^(http:\/\/\S+)/m.exec(page.stdout())![1]!
      await until("gamma to be listed", () => seen(gamma, "gamma")?.online === true, PROCESS_DEADLINE)
      // Up, as a page: no loop, so no turns and no repositories to offer.
      expect(seen(gamma, "gamma")).toMatchObject({ online: true, loop: false, pid: page.child.pid, max_turns: 0, repos: [] })
      const health = (await (await fetch(`${url}/api/health`)).json()) as { hosts: ReadonlyArray<HostSeen> }
      expect(health.hosts.map((h) => [h.name, h.online, h.loop])).toEqual([["gamma", true, false]])
      const text = spawnSync(process.execPath, [MAGI, "hosts"], { cwd: gamma.dir, env: { ...process.env, ...gamma.env }, encoding: "utf8" }).stdout
      expect(text).toMatch(/^gamma {2}online, last seen .* {2}its page only, no loop {2}/m)

      // A magi serve on the same host is let in (the page claims nothing) and speaks for it.
      loop = start(gamma, "serve")
      await until("gamma's loop to register", () => seen(gamma, "gamma")?.pid === loop!.child.pid, PROCESS_DEADLINE)
      expect(loop.stderr()).not.toContain("taken")
      // Beats later, the loop's record stands: the page does not write over a live loop's.
      await new Promise((r) => setTimeout(r, 12_000))
      expect(seen(gamma, "gamma")).toMatchObject({ online: true, loop: true, pid: loop.child.pid, max_turns: 3 })

      // The loop stops: the page says the host is still up, with no loop since then.
      const beating = seen(gamma, "gamma")!
      await loop.stop()
      const stoppedBy = new Date().toISOString()
      await until("the page to speak for gamma again", () => seen(gamma, "gamma")?.pid === page.child.pid, PROCESS_DEADLINE)
      const after = seen(gamma, "gamma")!
      expect(after).toMatchObject({ online: true, loop: false })
      // When the loop was last heard from: its orderly stop, after its last beat.
      expect(after.loop_seen_at! >= (beating as HostSeen & { seen_at: string }).seen_at).toBe(true)
      expect(after.loop_seen_at! <= stoppedBy).toBe(true)
    } finally {
      await loop?.stop()
      await page.stop()
    }
    // The page stopped in order: offline since then.
    expect(seen(gamma, "gamma")).toMatchObject({ online: false, loop: false, pid: page.child.pid, stopped_at: expect.any(String) })
  })
})
