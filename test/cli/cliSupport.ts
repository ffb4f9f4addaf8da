/**
 * The built `magi` as real processes, for the end-to-end tests: one isolated
 * owner (a home, an empty config dir, a non-git working dir) and helpers to
 * start commands in it.
 */
import { spawn, spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { onTestFinished } from "vitest"
import { freshDatabaseSync } from "../pgSupport.js"
import { tempDirSync } from "../support.js"

export const MAGI = NodePath.resolve("dist/magi.js")

export interface Done {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

/**
 * Where an owner's records live: the home folder (by default), or a
 * PostgreSQL database (`MAGI_STORE_URL`), whose rows the helpers below read
 * with `psql` so the tests' assertions read the same either way.
 */
export interface OwnerOptions {
  readonly storeUrl?: string
}

/**
 * One query's output, unaligned, through `psql` (synchronous, like the file
 * reads it stands in for); `:'a0'`… in the query are the arguments, quoted
 * by psql (read from stdin, where psql substitutes variables).
 */
const psqlText = (url: string, sql: string, ...args: ReadonlyArray<string>): string => {
  const vars = args.flatMap((a, i) => ["-v", `a${i}=${a}`])
  const r = spawnSync("psql", [url, "-XAtq", "-v", "ON_ERROR_STOP=1", ...vars], { encoding: "utf8", input: sql })
  if (r.status !== 0) throw new Error(`psql failed: ${r.stderr}`)
  return r.stdout.replace(/\n$/, "")
}

export const owner = (options: OwnerOptions = {}) => {
  const top = tempDirSync()
  const home = NodePath.join(top, "home")
  const cwd = NodePath.join(top, "work")
  NodeFs.mkdirSync(cwd, { recursive: true })
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "",
    HOME: top,
    MAGI_HOME: home,
    XDG_CONFIG_HOME: NodePath.join(top, "config"),
    ...(options.storeUrl === undefined ? {} : { MAGI_STORE_URL: options.storeUrl })
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
    const done = new Promise<Done>((resolve) => child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr })))
    return { child, done, stderr: () => stderr }
  }
  const run = (args: ReadonlyArray<string>, extra: Record<string, string> = {}, input?: string) => start(args, extra, input).done
  const questionsDir = NodePath.join(home, "questions")
  /** The ids of the questions filed so far, once there are `count`. */
  const storedIds = (): string[] => {
    if (options.storeUrl !== undefined) {
      try {
        return psqlText(options.storeUrl, "SELECT id FROM magi_records WHERE kind = 'questions' ORDER BY id").split("\n").filter((l) => l !== "")
      } catch {
        return [] // no table yet: nothing filed
      }
    }
    return NodeFs.existsSync(questionsDir) ? NodeFs.readdirSync(questionsDir).filter((n) => n.endsWith(".json")).map((n) => n.slice(0, -5)) : []
  }
  const filedId = async (count = 1): Promise<string[]> => {
    for (let i = 0; i < 800; i++) {
      const ids = storedIds()
      if (ids.length >= count) return ids.sort()
      await new Promise((r) => setTimeout(r, 25))
    }
    throw new Error("magi ask never filed its question")
  }
  /** Resolve once `cond` holds, polling; generous, so a busy machine only makes it slower. */
  const until = async (cond: () => boolean, what: string, ms = 30_000) => {
    for (const end = Date.now() + ms; Date.now() < end;) {
      if (cond()) return
      await new Promise((r) => setTimeout(r, 25))
    }
    throw new Error(`timed out waiting for ${what}`)
  }
  const read = (id: string) =>
    JSON.parse(
      options.storeUrl === undefined
        ? NodeFs.readFileSync(NodePath.join(questionsDir, `${id}.json`), "utf8")
        : psqlText(options.storeUrl, "SELECT body FROM magi_records WHERE kind = 'questions' AND id = :'a0'", id)
    )
  /** The record of what was done to announce question `id` (`Announcements.ts`), undefined before any. */
  const announcement = (id: string): { readonly state: string; readonly by: string } | undefined => {
    if (options.storeUrl === undefined) {
      const path = NodePath.join(questionsDir, "announced", `${id}.json`)
      return NodeFs.existsSync(path) ? JSON.parse(NodeFs.readFileSync(path, "utf8")) : undefined
    }
    const body = psqlText(options.storeUrl, "SELECT body FROM magi_records WHERE kind = 'questions/announced' AND id = :'a0'", id)
    return body === "" ? undefined : JSON.parse(body)
  }
  /**
   * A record as another process (or an older magi) left it, written behind
   * magi's back: `<home>/<folder>/<id>.json` (or `<id>/<file>` for a kind
   * kept a folder per record), or its row.
   */
  const plant = (folder: string, id: string, body: string, file?: string) => {
    if (options.storeUrl !== undefined) {
      psqlText(
        options.storeUrl,
        "INSERT INTO magi_records (kind, id, body) VALUES (:'a0', :'a1', :'a2'); UPDATE magi_revisions SET revision = revision + 1 WHERE kind = :'a0';",
        folder,
        id,
        body
      )
      return
    }
    const path = file === undefined ? NodePath.join(home, folder, `${id}.json`) : NodePath.join(home, folder, id, file)
    NodeFs.mkdirSync(NodePath.dirname(path), { recursive: true })
    NodeFs.writeFileSync(path, body)
  }
  return { start, run, filedId, until, read, announcement, plant, cwd, home, top, env, questionsDir }
}

/**
 * The two places an owner's records can live, for end-to-end tests that run
 * on both: the home folder, and a fresh PostgreSQL database of the test's
 * own on the test run's server (`MAGI_STORE_URL`), dropped when it ends.
 */
export const storeBackends: ReadonlyArray<{ readonly name: string; readonly owner: () => Promise<ReturnType<typeof owner>> }> = [
  { name: "the home folder", owner: () => Promise.resolve(owner()) },
  {
    name: "PostgreSQL",
    owner: async () => {
      const db = await freshDatabaseSync()
      onTestFinished(() => db.drop())
      return owner({ storeUrl: db.url })
    }
  }
]
