/**
 * `magi show ID --follow` (issue 32.1): the built magi prints a seat's turn
 * as its live log grows, escaped for the terminal, and exits when the turn
 * ends; a finished seat prints what it did and exits at once.
 */
import { spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { describe, expect, it } from "vitest"
import { MAGI, sampleRun } from "../runSupport.js"
import { tempDirSync, until } from "../support.js"
import { seedRun } from "../web/web-support.js"

const ID = "20261204-100000-f011"
let seq = 0
const line = (turn: number, e: Record<string, unknown>) => `${JSON.stringify({ seq: ++seq, at: Date.now(), turn, ...e })}\n`

const start = (home: string, ...args: string[]) => {
  const child = spawn(process.execPath, [MAGI, ...args], {
    env: { ...process.env, MAGI_HOME: home, XDG_CONFIG_HOME: NodePath.join(home, "config") },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let out = ""
  let err = ""
  child.stdout.on("data", (b: Buffer) => (out += b.toString()))
  child.stderr.on("data", (b: Buffer) => (err += b.toString()))
  const done = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
  // A generous bound on a loaded machine: it ends a hang, it times nothing.
  const kill = setTimeout(() => child.kill("SIGKILL"), 60_000)
  void done.then(() => clearTimeout(kill))
  return { out: () => out, err: () => err, done }
}

describe("magi show --follow", () => {
  it("prints the seat's events as they are appended, escaped, and exits when the turn ends", { timeout: 90_000 }, async () => {
    const home = tempDirSync()
    seq = 0
    seedRun(home, sampleRun(ID, { status: "running", seats: [{ key: "impl", agent: "codex", turns: 0, session: null, write: true }] }), {
      "impl.live.jsonl": line(1, { kind: "message", text: "Reading the store." })
    })
    const log = NodePath.join(home, "runs", ID, "artifacts", "impl.live.jsonl")
    const f = start(home, "show", ID, "--follow")
    await until("the backlog", () => f.out().includes("Reading the store."), 30_000)
    NodeFs.appendFileSync(log, line(1, { kind: "tool", id: "c1", name: "shell", target: "npm test \u001b[2J" }))
    NodeFs.appendFileSync(log, line(1, { kind: "result", id: "c1", text: "3 passed", failed: false }))
    await until("the tool call", () => f.out().includes("3 passed"), 30_000)
    NodeFs.appendFileSync(log, line(1, { kind: "end", text: "", failed: false }))
    expect(await f.done).toBe(0)
    const out = f.out()
    expect(out).toContain(`following impl of ${ID}`)
    expect(out).toContain("  Reading the store.\n▸ shell npm test \\e[2J\n  → 3 passed\n— turn 1 ended\n")
    expect(out).not.toContain("\u001b")
  })

  it("a finished seat prints what it did and exits; a seat the run does not have is refused with its seats", { timeout: 60_000 }, async () => {
    const home = tempDirSync()
    seq = 0
    seedRun(home, sampleRun(ID, { status: "done", seats: [{ key: "impl", agent: "codex", turns: 1, session: "t", write: true }] }), {
      "impl.live.jsonl": line(1, { kind: "error", text: "overloaded" }) + line(1, { kind: "end", text: "the agent's turn failed", failed: true })
    })
    const f = start(home, "show", ID, "--follow", "--seat", "impl")
    expect(await f.done).toBe(0)
    expect(f.out()).toContain("! overloaded\n— turn 1 ended: the agent's turn failed\n(the run is done)\n")
    const g = start(home, "show", ID, "--follow", "--seat", "judge-9")
    expect(await g.done).toBe(1)
    expect(g.err()).toContain("has no seat `judge-9`; its seats: impl")
  })
})
