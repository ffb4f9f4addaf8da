/**
 * Several hosts on one PostgreSQL store, as real processes: what the
 * multi-host end-to-end tests (EndToEnd.hosts, EndToEnd.livehosts,
 * EndToEnd.queueHosts) share, so that a host means the same thing in each.
 *
 * A host is a home folder and a config folder of its own, whose config.toml
 * names it (`[host] name`), as on a machine of its own; every process of
 * every host reaches the one database by `MAGI_STORE_URL`, as the machines of
 * one installation do.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { afterAll, beforeAll } from "vitest"
import { freshDatabaseSync } from "../pgSupport.js"
import { MAGI } from "../runSupport.js"
import { until } from "../support.js"

/** A new repository at `dir` (made if missing) on branch trunk, with one empty commit: what the hosts clone or run their tasks in. */
export const gitRepo = (dir: string): string => {
  NodeFs.mkdirSync(dir, { recursive: true })
  const git = (...args: string[]) => execFileSync("git", args, { cwd: dir, stdio: "pipe" })
  git("init", "-q", "-b", "trunk")
  git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "init")
  return dir
}

/** The one database of a test file's hosts: made fresh before its tests, dropped after them. */
export const databaseForFile = (): { readonly url: () => string } => {
  let db: { readonly url: string; readonly drop: () => Promise<void> } | undefined
  beforeAll(async () => {
    db = await freshDatabaseSync()
  })
  afterAll(async () => {
    await db?.drop()
  })
  return { url: () => db!.url }
}

export interface Host {
  readonly name: string
  /** Its folder: home, config and anything else of this host's (a clone) lie under it. */
  readonly top: string
  readonly home: string
  /** What each of its magi processes runs with, over this process's environment. */
  readonly env: Record<string, string>
}

export interface HostOptions {
  /** The rest of its config.toml, after `[host] name`. */
  readonly config?: string
  /** Its folder under `dir`, when not its name: two homes that claim one host name need two folders. */
  readonly folder?: string
  /** More environment for every one of its processes. */
  readonly env?: Record<string, string>
}

/** Host `name` on the store at `storeUrl`, in `dir/<folder or name>`. */
export const makeHost = (storeUrl: string, dir: string, name: string, options: HostOptions = {}): Host => {
  const top = NodePath.join(dir, options.folder ?? name)
  const home = NodePath.join(top, "home")
  const config = NodePath.join(top, "config")
  NodeFs.mkdirSync(NodePath.join(config, "magi"), { recursive: true })
  NodeFs.writeFileSync(NodePath.join(config, "magi", "config.toml"), `[host]\nname = "${name}"\n${options.config ?? ""}`)
  return { name, top, home, env: { MAGI_HOME: home, XDG_CONFIG_HOME: config, MAGI_STORE_URL: storeUrl, ...options.env } }
}

/**
 * `magi ARGS…` on `host`, run to its end in `cwd` (with `extraEnv` on top,
 * an agent's log say). Generous: the suite runs on a busy 2-core box.
 */
export const run = (host: Host, cwd: string, extraEnv: Record<string, string>, ...args: string[]) =>
  spawnSync(process.execPath, [MAGI, ...args], { cwd, env: { ...process.env, ...host.env, ...extraEnv }, encoding: "utf8", timeout: 60_000 })

/** A magi process left running: what it has printed so far, and its end. */
export interface Started {
  readonly child: ChildProcess
  readonly stdout: () => string
  readonly stderr: () => string
  /**
   * Its exit code; null when a signal ended it rather than its own exit, so
   * a test can tell a loop that stopped in order on SIGTERM from one killed.
   */
  readonly exited: Promise<number | null>
  /** SIGTERM unless it has ended already (a test may kill a host itself, or stop it twice); its exit code. */
  readonly stop: () => Promise<number | null>
}

/** `magi ARGS…` on `host`, started in `cwd` and left running (`magi serve`, `magi web`, a waiting `magi ask`). */
export const start = (host: Host, cwd: string, extraEnv: Record<string, string>, ...args: string[]): Started =>
  startArgv(host, cwd, extraEnv, [process.execPath, MAGI, ...args])

/** `argv` with `host`'s environment, started in `cwd` and left running: magi behind a wrapper (`unshare`, say). */
export const startArgv = (host: Host, cwd: string, extraEnv: Record<string, string>, argv: ReadonlyArray<string>): Started => {
  const child = spawn(argv[0]!, argv.slice(1), { cwd, env: { ...process.env, ...host.env, ...extraEnv }, stdio: ["ignore", "pipe", "pipe"] })
  let stdout = ""
  let stderr = ""
  child.stdout!.on("data", (d) => (stdout += d))
  child.stderr!.on("data", (d) => (stderr += d))
  const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)))
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    stop: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM")
      return exited
    }
  }
}

/** The page's address, once the started `magi web` prints it (it listens then). */
export const pageUrl = async (web: Started, what: string, ms: number): Promise<string> => {
  await until(what, () => /^http:\/\/\S+/m.test(web.stdout()), ms)
  return /^(http:\/\/\S+)/m.exec(web.stdout())![1]!
}
