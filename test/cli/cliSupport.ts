/**
 * The built `magi` as real processes, for the end-to-end tests: one isolated
 * owner (a home, an empty config dir, a non-git working dir) and helpers to
 * start commands in it.
 */
import { spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { tempDirSync } from "../support.js"

export const MAGI = NodePath.resolve("dist/magi.js")

export interface Done {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

export const owner = () => {
  const top = tempDirSync()
  const home = NodePath.join(top, "home")
  const cwd = NodePath.join(top, "work")
  NodeFs.mkdirSync(cwd, { recursive: true })
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "",
    HOME: top,
    MAGI_HOME: home,
    XDG_CONFIG_HOME: NodePath.join(top, "config")
  }
  const start = (args: ReadonlyArray<string>, extra: Record<string, string> = {}, input?: string) => {
    const child = spawn(process.execPath, [MAGI, ...args], {
      cwd,
      env: { ...env, ...extra },
      stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"]
    })
    if (input !== undefined) child.stdin!.end(input)
    let stdout = ""
    let stderr = ""
    child.stdout!.on("data", (c) => (stdout += c))
    child.stderr!.on("data", (c) => (stderr += c))
    const done = new Promise<Done>((resolve) =>
      child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }))
    )
    return { child, done, stderr: () => stderr }
  }
  const run = (args: ReadonlyArray<string>, extra: Record<string, string> = {}, input?: string) =>
    start(args, extra, input).done
  const questionsDir = NodePath.join(home, "questions")
  /** The ids of the questions filed so far, once there are `count`. */
  const filedId = async (count = 1): Promise<string[]> => {
    for (let i = 0; i < 800; i++) {
      const ids = NodeFs.existsSync(questionsDir)
        ? NodeFs.readdirSync(questionsDir).filter((n) => n.endsWith(".json")).map((n) => n.slice(0, -5))
        : []
      if (ids.length >= count) return ids.sort()
      await new Promise((r) => setTimeout(r, 25))
    }
    throw new Error("magi ask never filed its question")
  }
  /** Resolve once `cond` holds, polling; generous, so a busy machine only makes it slower. */
  const until = async (cond: () => boolean, what: string, ms = 30_000) => {
    for (const end = Date.now() + ms; Date.now() < end; ) {
      if (cond()) return
      await new Promise((r) => setTimeout(r, 25))
    }
    throw new Error(`timed out waiting for ${what}`)
  }
  const read = (id: string) => JSON.parse(NodeFs.readFileSync(NodePath.join(questionsDir, `${id}.json`), "utf8"))
  return { start, run, filedId, until, read, cwd, home, top, env, questionsDir }
}
