/**
 * A listing piped into `head` (issue 27, item 12): once the reader has gone,
 * magi ends quietly with 0, as `ls | head -1` does, with no stack trace.
 */
import { spawn } from "node:child_process"
import * as NodePath from "node:path"
import { describe, expect, it } from "vitest"
import { MAGI, magi, repoWithAgent } from "../runSupport.js"
import { tempDirSync } from "../support.js"

/** `magi ARGS` with its stdout's reader gone before it writes a line. */
const withClosedStdout = (cwd: string, env: Record<string, string>, args: ReadonlyArray<string>) =>
  new Promise<{ code: number | null; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [MAGI, ...args], {
      cwd,
      env: { ...process.env, XDG_CONFIG_HOME: NodePath.join(cwd, ".no-config"), ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    child.stdout.destroy()
    let stderr = ""
    child.stderr.on("data", (c) => (stderr += c))
    child.on("close", (code) => resolve({ code, stderr }))
  })

describe("a listing whose reader has gone", () => {
  it("magi runs, magi show and magi answer --list end quietly with 0", { timeout: 120_000 }, async () => {
    const dir = tempDirSync()
    const repo = repoWithAgent(dir, ["sh", "-c", "echo Looked around"])
    const env = { MAGI_HOME: NodePath.join(dir, "home") }
    const ran = magi(repo, env, "run", "look around")
    expect(ran.status, ran.stderr).toBe(0)
    for (const args of [["runs"], ["show"], ["answer", "--list"]]) {
      // Each does write to stdout when someone reads it.
      expect(magi(repo, env, ...args).stdout, args.join(" ")).not.toBe("")
      const done = await withClosedStdout(repo, env, args)
      expect({ args, ...done }).toEqual({ args, code: 0, stderr: "" })
    }
  })
})
