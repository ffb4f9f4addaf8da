/**
 * The codex adapter, as measured against the real CLI (the compatibility
 * suite, test/compat/codex.compat.test.ts, proves the same end to end): what
 * it passes for each sandbox, how it reads codex's JSON events, its wait
 * slice and where its sessions live.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { tempDirSync } from "../support.js"
import { magi, repoWithAgent } from "../runSupport.js"
import type { AgentSpec } from "../../src/agents/AgentRoster.js"
import { parse, plan, sessionEnvOf, waitSliceSecs } from "../../src/agents/Agents.js"
import { codex } from "../../src/agents/adapters/codex.js"

const agent = (over: Partial<AgentSpec> = {}): AgentSpec => ({
  id: "codex",
  kind: "codex",
  command: ["codex"],
  model: null,
  args: [],
  env: {},
  ...over
})

const input = {
  cwd: "/home/me/.local/share/magi/worktrees/r1",
  promptFile: "/a/impl-1.prompt.md",
  prompt: "do it",
  label: "impl",
  resume: null,
  newSession: null,
  allowWrite: true,
  timeout: Duration.minutes(15),
  questionsDir: "/home/me/.local/share/magi/questions"
}

/** The value of every `-c key=value` override in an argv, by key. */
const overrides = (argv: ReadonlyArray<string>): Record<string, string> => {
  const out: Record<string, string> = {}
  argv.forEach((a, i) => {
    if (a !== "-c") return
    const kv = argv[i + 1]!
    const eq = kv.indexOf("=")
    out[kv.slice(0, eq)] = kv.slice(eq + 1)
  })
  return out
}

const lines = (...events: ReadonlyArray<Record<string, unknown>>) => events.map((e) => JSON.stringify(e)).join("\n") + "\n"

describe("codex is called so its agent can ask whatever its sandbox", () => {
  it("an implementing seat writes its worktree and, of magi's home, only the questions folder", () => {
    const p = plan(agent({ model: "gpt-5" }), input)
    expect(p.argv).toEqual([
      "codex",
      "exec",
      "--json",
      "--skip-git-repo-check",
      "-C",
      input.cwd,
      "--sandbox",
      "workspace-write",
      "--add-dir",
      input.questionsDir,
      "-c",
      'approval_policy="never"',
      "-m",
      "gpt-5",
      "-"
    ])
    // Not the whole home: it holds every run's worktree and record.
    expect(p.argv).not.toContain("/home/me/.local/share/magi")
    expect(p.stdin).toBe("do it")
  })

  it("a read-only seat gets codex's read-only profile with the questions folder writable, never `--sandbox read-only`, which cannot ask", () => {
    const p = plan(agent(), { ...input, allowWrite: false })
    expect(p.argv).not.toContain("--sandbox")
    expect(p.argv).not.toContain("--add-dir")
    expect(overrides(p.argv)).toEqual({
      default_permissions: '"magi-read-only"',
      "permissions.magi-read-only.extends": '":read-only"',
      "permissions.magi-read-only.filesystem": '{"/home/me/.local/share/magi/questions"="write"}',
      approval_policy: '"never"'
    })
  })

  it("a writing seat whose calls the owner approves runs with --approve-for-me and magi's PermissionRequest hook, called by magi's path", () => {
    const magiBin = "/opt/it's magi/bin/magi"
    const p = plan(agent(), { ...input, magi: magiBin, approve: true })
    // codex exec pins approval_policy to "never" unless --approve-for-me, which brings its own workspace-write sandbox.
    expect(p.argv).toContain("--approve-for-me")
    expect(p.argv).not.toContain("--sandbox")
    expect(p.argv.join(" ")).toContain(`--add-dir ${input.questionsDir}`)
    expect(p.argv).toContain("--dangerously-bypass-hook-trust")
    const c = overrides(p.argv)
    expect(c.approval_policy).toBeUndefined()
    // One hook, every PermissionRequest, as a shell command (the quote in the path kept), with a slice under its timeout.
    expect(c["hooks.PermissionRequest"]).toBe(
      `[{hooks=[{type="command",command=${JSON.stringify(`'/opt/it'\\''s magi/bin/magi' 'approvals' 'hook' 'codex' '--slice' '600'`)},timeout=720}]}]`
    )
    // `[agents.<id>] wait_slice` shortens the hook's wait as it does every other.
    expect(overrides(plan(agent({ waitSliceSecs: 5 }), { ...input, magi: magiBin, approve: true }).argv)["hooks.PermissionRequest"]).toContain(`'--slice' '5'`)
    // A read-only seat changes nothing, so it has nothing to approve.
    expect(plan(agent(), { ...input, allowWrite: false, magi: magiBin, approve: true }).argv).not.toContain("--approve-for-me")
  })

  it("a path with quotes or backslashes stays one TOML key", () => {
    const p = plan(agent(), { ...input, allowWrite: false, questionsDir: '/tmp/we"ird\\home/questions' })
    expect(overrides(p.argv)["permissions.magi-read-only.filesystem"]).toBe('{"/tmp/we\\"ird\\\\home/questions"="write"}')
  })

  it("a resumed turn keeps the same sandbox and names the session last, before the stdin marker", () => {
    for (const allowWrite of [true, false]) {
      const fresh = plan(agent(), { ...input, allowWrite })
      const resumed = plan(agent(), { ...input, allowWrite, resume: "01a22b25-4b0c-7e90-994c-04c963654d77" })
      expect(resumed.argv).toEqual([...fresh.argv.slice(0, -1), "resume", "01a22b25-4b0c-7e90-994c-04c963654d77", "-"])
    }
  })
})

describe("codex's output is read as the owner should see it", () => {
  const started = { type: "thread.started", thread_id: "01a22b26-3bfa-78f2-bf58-cb1e1705f304" }
  // codex's own warning about a model it has no metadata for: an item, not the turn's failure.
  const warning = { type: "item.completed", item: { id: "item_0", type: "error", message: "Model metadata for `x` not found." } }

  it("a finished turn gives the last agent message and the thread id", () => {
    const out = lines(
      started,
      warning,
      { type: "turn.started" },
      { type: "item.completed", item: { id: "item_1", type: "agent_message", text: "first" } },
      { type: "item.completed", item: { id: "item_2", type: "agent_message", text: "Done: picked A." } },
      { type: "turn.completed", usage: {} }
    )
    expect(parse("codex", out, "", 0, false)).toEqual({ text: "Done: picked A.", session: started.thread_id, usable: true, quota: null })
  })

  it("an API error is shown as codex's message, not the JSON event it came in", () => {
    const msg = "The model `gpt-standin` does not exist or you do not have access to it."
    const out = lines(started, warning, { type: "turn.started" }, { type: "error", message: msg }, { type: "turn.failed", error: { message: msg } })
    const reply = parse("codex", out, "", 1, false)
    expect(reply).toMatchObject({ text: msg, session: started.thread_id, usable: false, quota: null })
    expect(reply.problem).toContain(msg)
    expect(reply.problem).not.toContain("{")
  })

  it("a turn that completes after a transient error (a reconnect) is no failure", () => {
    const out = lines(
      started,
      { type: "error", message: "Reconnecting... 1/5" },
      { type: "item.completed", item: { id: "item_1", type: "agent_message", text: "ok" } },
      { type: "turn.completed", usage: {} }
    )
    expect(parse("codex", out, "", 0, false)).toMatchObject({ text: "ok", usable: true, quota: null })
  })

  it("codex's usage limit is a stall with its reset time, in each of codex's wordings", () => {
    const cases: ReadonlyArray<[string, string]> = [
      [
        "You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/settings/usage to purchase more credits or try again at 8:30 AM.",
        "at 8:30 AM"
      ],
      [
        "You've hit your usage limit. To get more access now, send a request to your admin or try again in 3 days 6 hours 57 minutes.",
        "in 3 days 6 hours 57 minutes"
      ],
      ["You've hit your usage limit. Try again Aug 18.", "Aug 18"]
    ]
    for (const [message, resets] of cases) {
      const out = lines(started, { type: "error", message }, { type: "turn.failed", error: { message } })
      expect(parse("codex", out, "", 1, false)).toMatchObject({ text: message, usable: false, quota: resets })
    }
  })

  it("a usage limit that names no time is still a stall", () => {
    const message = "You've hit your usage limit."
    const out = lines(started, { type: "turn.failed", error: { message } })
    expect(parse("codex", out, "", 1, false).quota).toBe("")
  })
})

describe("codex's wait slice and sessions", () => {
  it("one `magi ask` hands back before codex's exec tool yields (10 s), with room for magi to start", () => {
    const secs = waitSliceSecs(agent())
    expect(secs).toBeGreaterThan(0)
    expect(secs).toBeLessThanOrEqual(7)
    // `[agents.<id>] wait_slice` still wins.
    expect(waitSliceSecs(agent({ waitSliceSecs: 30 }))).toBe(30)
  })

  it("the environment that locates codex's sessions is recorded: CODEX_HOME, HOME, CODEX_SQLITE_HOME", () => {
    expect([...codex.sessionEnv].sort()).toEqual(["CODEX_HOME", "CODEX_SQLITE_HOME", "HOME"])
    expect(sessionEnvOf(agent({ env: { CODEX_HOME: "/seat/codex" } }), { HOME: "/home/me", CODEX_HOME: "/daemon/codex", PATH: "/bin" })).toEqual({
      HOME: "/home/me",
      CODEX_HOME: "/seat/codex"
    })
  })
})

describe("codex is told magi by its absolute path", () => {
  const MAGI_BIN = NodePath.resolve("dist/bin/magi")
  /** The first prompt a `magi run` gives an agent of `kind` (the fake CLI in test/fixtures/bin). */
  const firstPrompt = (kind: "codex" | "claude", mcp = false, wait = "poll") => {
    const dir = tempDirSync()
    const repo = repoWithAgent(dir, ["unused"])
    NodeFs.writeFileSync(
      NodePath.join(repo, "magi.toml"),
      `[agents.a]\nkind = "${kind}"\ncommand = "${NodePath.resolve("test/fixtures/bin", kind)}"\nmcp = ${mcp}\nwait = "${wait}"\n`
    )
    const home = NodePath.join(dir, "home")
    const ran = magi(repo, { MAGI_HOME: home }, "run", "Do it.")
    expect(ran.status, ran.stderr).toBe(0)
    const [id] = NodeFs.readdirSync(NodePath.join(home, "runs"))
    return NodeFs.readFileSync(NodePath.join(home, "runs", id!, "artifacts", "impl-1.prompt.md"), "utf8")
  }

  it("in every command of its first prompt, since its login shell loses the PATH plain `magi` is on; claude's keep plain `magi`", { timeout: 60_000 }, () => {
    const codexPrompt = firstPrompt("codex")
    expect(codexPrompt).toContain(`\n    ${MAGI_BIN} ask --summary "one-line question"`)
    expect(codexPrompt).toContain(`\`${MAGI_BIN} ask --wait <id>\``)
    expect(codexPrompt).toContain(`\`${MAGI_BIN} ask --thread <id> --summary "..."\``)
    expect(codexPrompt).not.toContain("\n    magi ask")
    const claudePrompt = firstPrompt("claude")
    expect(claudePrompt).toContain('\n    magi ask --summary "one-line question"')
    expect(claudePrompt).toContain(`\`magi\` is ${MAGI_BIN}`)
  })

  it("with magi's MCP tools (the default), the prompt teaches the ask, wait and reply tools, and keeps the shell form by path as the fallback", {
    timeout: 60_000
  }, () => {
    const prompt = firstPrompt("codex", true)
    expect(prompt).toContain("with the `ask` tool of the `magi` MCP server")
    expect(prompt).toContain("Call magi's\n  `wait` tool with the id it gives")
    // By default codex ends its turn on pending: the same prompt, told so.
    const ending = firstPrompt("codex", true, "end-turn")
    expect(ending).toContain("End your turn then")
    expect(ending).toContain("Do not call `wait` to keep waiting")
    expect(prompt).toContain("magi's `reply` tool")
    expect(prompt).toContain(`\`${MAGI_BIN} ask --summary "..." --choice "A" --choice "B"\``)
    expect(prompt).not.toContain("ask --wait <id>")
  })
})
