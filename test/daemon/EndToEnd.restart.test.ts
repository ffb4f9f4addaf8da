/**
 * `magi serve` killed with -9 and started again at once, as real processes:
 * its home's claim names a dead pid, so the restart is let in straight
 * away rather than refused for the half minute its last beat stays fresh.
 */
import { describe, expect, it } from "vitest"
import { spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { MAGI } from "../cli/cliSupport.js"
import { tempDirSync } from "../support.js"

const serve = (home: string, dir: string) => {
  const child = spawn(process.execPath, [MAGI, "serve", "--home", home], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? "", HOME: dir, MAGI_HOME: home, XDG_CONFIG_HOME: NodePath.join(dir, "no-config") },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stderr = ""
  child.stderr.on("data", (d) => (stderr += d))
  const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)))
  return { child, stderr: () => stderr, exited }
}

const until = async (cond: () => boolean, what: string) => {
  for (const end = Date.now() + 60_000; Date.now() < end; ) {
    if (cond()) return
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error(`timed out waiting for ${what}`)
}

const ownerPid = (home: string) => {
  try {
    return JSON.parse(NodeFs.readFileSync(NodePath.join(home, "daemon.json"), "utf8")).pid as number
  } catch {
    return undefined
  }
}

describe("magi serve after a crash", { timeout: 120_000 }, () => {
  it("lets a restart in at once when the loop before it was killed with -9, and still refuses a second live one", async () => {
    const dir = tempDirSync()
    const home = NodePath.join(dir, "home")
    const first = serve(home, dir)
    await until(() => ownerPid(home) === first.child.pid, "the first magi serve to own the home")
    first.child.kill("SIGKILL")
    await first.exited
    // Its record is still there and its last beat fresh: only its pid says it is gone.
    expect(ownerPid(home)).toBe(first.child.pid)
    const second = serve(home, dir)
    await until(() => ownerPid(home) === second.child.pid, "the restart to own the home")
    // A third, while the second lives, is refused naming it.
    const third = serve(home, dir)
    expect(await third.exited).not.toBe(0)
    expect(third.stderr()).toContain(`another magi loop (pid ${second.child.pid}`)
    second.child.kill("SIGTERM")
    await second.exited
  })
})
