/**
 * Ctrl-C of `magi run` while its agent waits in `magi ask` (issue 27, item
 * 4), as real processes: it says what happens next (the run resumes with
 * the exact command, the question stays answerable), the turn's `.out` and
 * `.err` are kept though the turn was cut short, and the asker's lease is
 * gone at once with its process, so `magi answer --list` no longer says the
 * agent is waiting.
 */
import { spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { describe, expect, it } from "vitest"
import { MAGI, magi, repoWithAgent } from "../runSupport.js"
import { tempDirSync, until } from "../support.js"

/** Generous: processes start slowly on a busy 2-core box. */
const PROCESS_DEADLINE = 60_000

/** The agent: says something on each stream, then asks and waits in the foreground. */
const AGENT = ["sh", "-c", "echo said-on-stdout; echo said-on-stderr >&2; magi ask --summary 'Which backend?' --choice SQLite --choice Redis"]

describe("Ctrl-C of magi run while its agent waits in magi ask", { timeout: 3 * PROCESS_DEADLINE }, () => {
  it("says how to resume, keeps the turn's output, and no longer says the agent is waiting", async () => {
    const dir = tempDirSync()
    const home = NodePath.join(dir, "home")
    const repo = repoWithAgent(dir, AGENT)
    const env = { MAGI_HOME: home }
    const child = spawn(process.execPath, [MAGI, "run", "Pick a storage backend"], {
      cwd: repo,
      env: { ...process.env, XDG_CONFIG_HOME: NodePath.join(repo, ".no-config"), ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stderr = ""
    child.stderr.on("data", (d) => (stderr += d))
    const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)))
    try {
      const listed = () => magi(repo, env, "answer", "--list").stdout
      await until("the agent to wait on its question", () => listed().includes("the agent is waiting"), PROCESS_DEADLINE)
      const runId = /run (\d{8}-\d{6}-\w+)/.exec(listed())![1]!
      child.kill("SIGINT")
      expect(await exited).toBe(130)
      expect(stderr).toContain(`run ${runId.slice(-4)} interrupted; continue it with magi run --resume ${runId}`)
      expect(stderr).toContain("its open question stays answerable (magi answer --list)")
      // At once: no beat has aged, only the asker's process is gone.
      const after = listed()
      expect(after).toContain("Which backend?")
      expect(after).not.toContain("the agent is waiting")
      expect(after).toContain("no agent is waiting")
      const artifacts = NodePath.join(home, "runs", runId, "artifacts")
      expect(NodeFs.readFileSync(NodePath.join(artifacts, "impl-1.out"), "utf8")).toContain("said-on-stdout")
      expect(NodeFs.readFileSync(NodePath.join(artifacts, "impl-1.err"), "utf8")).toContain("said-on-stderr")
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
    }
  })
})
