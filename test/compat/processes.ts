/**
 * The processes of a compatibility test: the pinned agent CLIs and the built
 * magi, run as real processes from a test whose model stand-in answers in
 * this same process. So nothing here blocks (no spawnSync: the stand-in
 * could not answer), and everything a test started is ended after it,
 * however it ended, with the folders it made.
 *
 * Deadlines are generous (a loaded 2-core machine): they bound a hang, they
 * time nothing.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { afterEach } from "vitest"
import { MAGI } from "../runSupport.js"

const cleanups: Array<() => Promise<void> | void> = []

/**
 * Run `f` once the current test has ended, last registered first. Every
 * clean-up runs even when one throws; the first error then fails the test
 * (a clean-up may check something of the whole test: that a CLI reached
 * nothing but its stand-in).
 */
export const afterTest = (f: () => Promise<void> | void): void => {
  cleanups.push(f)
}

afterEach(async () => {
  const errors: unknown[] = []
  for (const c of cleanups.splice(0).reverse())
    try {
      await c()
    } catch (e) {
      errors.push(e)
    }
  if (errors.length > 0) throw errors[0]
})

/**
 * The pinned `cli`'s executable, which the suite's global setup installed
 * (test/compat/installAgents.ts); else an error saying why it is not there.
 */
export const need = (cli: string): string => {
  const key = `MAGI_COMPAT_${cli.toUpperCase()}`
  const bin = process.env[key]
  if (bin === undefined || bin === "")
    throw new Error(process.env[`${key}_ERROR`] ?? `${key} is not set: run through vitest, whose global setup installs the pinned CLIs`)
  return bin
}

/**
 * A fresh folder for one test, removed after it, in the agents' cache rather
 * than under /tmp: codex's sandbox lets commands write /tmp, which would hide
 * what a test proves. Given by its real path, the one a CLI reports for the
 * folder it runs in.
 */
export const scratchDir = (prefix: string): string => {
  const root = NodePath.join(
    process.env.MAGI_AGENTS_CACHE ?? NodePath.join(process.env.XDG_CACHE_HOME ?? NodePath.join(NodeOs.homedir(), ".cache"), "magi-agents"),
    "compat-tmp"
  )
  NodeFs.mkdirSync(root, { recursive: true })
  const dir = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(root, prefix)))
  afterTest(() => NodeFs.rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** How a process ended, and all it printed. */
export interface Ran {
  /** Its exit code; null when a signal ended it (its deadline's SIGKILL, say). */
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

export interface Started {
  readonly child: ChildProcess
  /** What it has printed so far. */
  readonly stdout: () => string
  readonly stderr: () => string
  /** Once it has ended and its output is all read. */
  readonly done: Promise<Ran>
}

export interface StartOptions {
  readonly cwd: string
  /** Over this process's environment; `undefined` removes a variable (IS_SANDBOX, which only magi.toml may set). */
  readonly env?: Record<string, string | undefined>
  /** Written to its stdin, which is then closed; without it, it reads nothing. */
  readonly stdin?: string
  /** SIGKILL if still running after this many ms. */
  readonly deadline: number
}

/** Start `argv`, ended by SIGKILL at its deadline or when the test ends, whichever comes first. */
export const start = (argv: ReadonlyArray<string>, o: StartOptions): Started => {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries({ ...process.env, ...o.env })) if (v !== undefined) env[k] = v
  const child = spawn(argv[0]!, argv.slice(1), { cwd: o.cwd, env, stdio: [o.stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"] })
  let stdout = ""
  let stderr = ""
  child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()))
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()))
  const kill = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
  }
  const timer = setTimeout(kill, o.deadline)
  afterTest(kill)
  const done = new Promise<Ran>((resolve) =>
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  )
  if (o.stdin !== undefined) child.stdin!.end(o.stdin)
  return { child, stdout: () => stdout, stderr: () => stderr, done }
}

/** Run `argv` to its end (see `start`). */
export const runToEnd = (argv: ReadonlyArray<string>, o: StartOptions): Promise<Ran> => start(argv, o).done

/** The built magi (dist/magi.js, so `npm run build` first), started: `magi ARGS…`. */
export const startMagi = (args: ReadonlyArray<string>, o: StartOptions): Started => start([process.execPath, MAGI, ...args], o)

/** The built magi, run to its end. */
export const runMagi = (args: ReadonlyArray<string>, o: StartOptions): Promise<Ran> => startMagi(args, o).done
