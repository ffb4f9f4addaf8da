/**
 * Tool approvals against the real, pinned `codex` on the local Responses
 * stand-in: with `[approvals] ask = true`, a writing codex seat runs with
 * magi's `PermissionRequest` hook (`magi approvals hook codex`), so a shell
 * command that asks to leave codex's sandbox reaches the owner as an
 * approval question. Deny is obeyed, Allow runs the command, "Always allow"
 * saves a rule that lets the next matching command through unasked, and a
 * command a config rule denies never asks. codex's automatic reviewer (a
 * model, which `--approve-for-me` would otherwise consult) is never asked:
 * every request the stand-in sees is the agent's own turn.
 *
 * As in codex.compat.test.ts, everything lives outside /tmp (codex's
 * sandbox may write /tmp), codex's shell is a login shell whose profile
 * resets PATH, and nothing leaves 127.0.0.1.
 */
import { spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { describe, expect, it } from "vitest"
import { MAGI } from "../runSupport.js"
import { ageLease, audited, DEADLINE_MS, expectOwnerDecisionsObeyed, magiIn, OWNER_COMMANDS, repoOnTrunk, runAnsweredByOwner } from "./approvalsSupport.js"
import { afterTest, need, runMagi, scratchDir, startMagi } from "./processes.js"
import { codexConfig, messages, type StandIn, startResponsesStandIn, type Step, toolCalls, toolOutputs } from "./standins/openai-responses.js"

/** The commands the scripted model runs, in order; each names what becomes of it. */
const COMMANDS = [...OWNER_COMMANDS, "git tag refused-by-rule"]

/** Run the built magi to its end without blocking the stand-in, which lives in this process. */
const magiAsync = (cwd: string, env: Record<string, string>, ...args: string[]) => runMagi(args, { cwd, env, deadline: DEADLINE_MS })

/**
 * One test's world under `base`: a repository whose magi.toml names the
 * pinned codex (its shell form: `mcp = false`) with `extra` appended, codex's
 * home sending it to `api`, and a user home whose login profile resets PATH
 * to one without node or magi on it (codex runs commands, and its hooks,
 * through a shell: the hook must still find magi and its node).
 */
const world = (base: string, api: StandIn, extra: string, agentLines = "") => {
  const repo = NodePath.join(base, "repo")
  const home = NodePath.join(base, "magi-home")
  const codexHome = NodePath.join(base, "codex-home")
  const userHome = NodePath.join(base, "user-home")
  for (const d of [repo, codexHome, userHome]) NodeFs.mkdirSync(d, { recursive: true })
  const tools = NodePath.join(userHome, "tools")
  NodeFs.mkdirSync(tools)
  const gitPath = spawnSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).stdout.trim()
  NodeFs.symlinkSync(gitPath, NodePath.join(tools, "git"))
  NodeFs.writeFileSync(NodePath.join(userHome, ".bash_profile"), `PATH=${tools}\nexport PATH\n`)
  NodeFs.writeFileSync(NodePath.join(codexHome, "config.toml"), codexConfig(api))

  const git = repoOnTrunk(repo, {})
  NodeFs.writeFileSync(
    NodePath.join(repo, "magi.toml"),
    `[agents.codex]\nkind = "codex"\ncommand = ${JSON.stringify([need("codex")])}\nmcp = false\n${agentLines}\n[notify]\ncommand = ["true"]\n\n${extra}`
  )
  const env: Record<string, string> = {
    ...api.proxyEnv,
    MAGI_HOME: home,
    XDG_CONFIG_HOME: NodePath.join(base, "no-config"),
    HOME: userHome,
    CODEX_HOME: codexHome
  }
  return { repo, home, env, git, codexHome }
}

/** A shell call the model asks to run outside codex's sandbox, as codex's own model does when the sandbox is in its way. */
const escalated = (cmd: string): Step => ({
  kind: "call",
  name: "exec_command",
  args: { cmd, sandbox_permissions: "require_escalated", justification: "Mark the repository" }
})

describe("tool approvals with the real codex", () => {
  it(
    "puts each command that asks to leave the sandbox to the owner; Deny is obeyed, Allow runs it, Always allow lets the next matching one through, and a denying rule never asks, for a command or another MCP server's tool",
    async () => {
      const base = scratchDir("codex-approvals-")

      // Each command asks to leave the sandbox (.git is read-only in it);
      // then a tool of another MCP server, which codex asks about too.
      const api = await startResponsesStandIn((req) => {
        const done = toolOutputs(req.body).length
        const next = COMMANDS[done]
        if (next !== undefined) return escalated(next)
        return done === COMMANDS.length
          ? { kind: "call", namespace: "mcp__other", name: "wait", args: { id: "20261202-010000-abcd" } }
          : { kind: "message", text: "Done." }
      })
      afterTest(() => api.close())

      const { repo, home, env, git, codexHome } = world(base, api, `[approvals]\nask = true\ndeny = ["Bash(git tag refused-by-rule)", "mcp__other__*"]\n`)
      // Another MCP server in the owner's codex config (magi's own server serves well as one).
      NodeFs.appendFileSync(
        NodePath.join(codexHome, "config.toml"),
        `\n[mcp_servers.other]\ncommand = ${JSON.stringify(process.execPath)}\nargs = [${
          JSON.stringify(MAGI)
        }, "mcp"]\nrequired = true\nstartup_timeout_sec = 60\n`
      )

      // The owner, at the terminal: each approval as it arrives.
      const answered = await runAnsweredByOwner(repo, env, home)

      // Three questions: the fourth command went through by the saved rule, the fifth was refused by the
      // config's (no tag of it); Deny obeyed, Allow and the saved rule ran their commands.
      expectOwnerDecisionsObeyed(answered, git)

      // The model was told why each refused call did not run.
      const last = api.requests.at(-1)!.body
      expect(toolCalls(last).filter((c) => c.name === "exec_command").map((c) => c.args.cmd)).toEqual(COMMANDS)
      const outputs = toolOutputs(last)
      expect(outputs[0]).toContain("The owner denied this tool call")
      expect(outputs[4]).toContain("magi's approval rule Bash(git tag refused-by-rule) denies this tool call")
      expect(outputs[5]).toContain("magi's approval rule mcp__other__* denies this tool call")
      // Only the agent's turns reached the model: codex's automatic reviewer was never consulted.
      expect(api.requests).toHaveLength(COMMANDS.length + 2)
      expect(api.escaped, JSON.stringify(api.escaped)).toEqual([])

      // Every decision is in the audit log, by the owner or by a rule.
      const log = audited(home)
      expect(log.map((e) => [e.decision, e.by, e.rule ?? null])).toEqual([
        ["deny", "owner", null],
        ["allow", "owner", null],
        ["allow", "owner", "Bash(git branch:*)"],
        ["allow", "rule", "Bash(git branch:*)"],
        ["deny", "rule", "Bash(git tag refused-by-rule)"],
        ["deny", "rule", "mcp__other__*"]
      ])
      expect(log.every((e) => e.seat === "impl")).toBe(true)
      const listed = await magiAsync(repo, env, "approvals", "list")
      expect(listed.stdout).toContain("allow Bash(git branch:*)")

      // magi doctor's dry call has the pinned codex parse these very flags, and says where approvals go.
      const doctor = await magiAsync(repo, env, "doctor", "--json")
      const checks = JSON.parse(doctor.stdout).checks as Array<{ name: string; status: string; detail: string }>
      const argv = checks.find((c) => c.name === "agent codex (codex): magi's argv")
      expect(argv, doctor.stdout).toMatchObject({ status: "ok" })
      expect(argv!.detail).toContain("--approve-for-me")
      expect(argv!.detail).toContain("'approvals' 'hook' 'codex'")
      expect(checks.find((c) => c.name === "agent codex (codex): approvals")!.detail).toContain("magi approvals hook codex")
    },
    DEADLINE_MS + 60_000
  )

  it(
    "denies a call the owner has not decided within the slice, telling the agent to end its turn; the owner's later Allow reaches the resumed seat, whose same call then runs",
    async () => {
      const base = scratchDir("codex-approvals-")
      const CMD = "git tag later-by-owner"
      const api = await startResponsesStandIn((req) => {
        const resumed = messages(req.body, "user").some((u) => u.includes("The owner's answer"))
        const outputs = toolOutputs(req.body)
        // Turn 1: the call, then, told there is no decision yet, the end of the turn.
        if (!resumed) return outputs.length === 0 ? escalated(CMD) : { kind: "message", text: "Waiting for the owner's decision." }
        // Turn 2, resumed with the decision: the same call again, then done.
        return outputs.length === 1 ? escalated(CMD) : { kind: "message", text: "Tagged." }
      })
      afterTest(() => api.close())
      // A short slice: the owner is not quick enough.
      const { repo, home, env, git } = world(base, api, "[approvals]\nask = true\n", "wait_slice = 3\n")

      const first = await magiAsync(repo, env, "run", "Tag the repository.")
      expect(first.code, first.stderr).toBe(0)
      const [runId] = NodeFs.readdirSync(NodePath.join(home, "runs"))
      const runFile = NodePath.join(home, "runs", runId!, "run.json")
      const runNow = () => JSON.parse(NodeFs.readFileSync(runFile, "utf8"))
      expect(runNow()).toMatchObject({ status: "waiting" })
      const questionsDir = NodePath.join(home, "questions")
      const [file] = NodeFs.readdirSync(questionsDir).filter((f) => f.endsWith(".json"))
      const q = JSON.parse(NodeFs.readFileSync(NodePath.join(questionsDir, file!), "utf8"))
      expect(q).toMatchObject({ status: "open", summary: "Bash: `git tag later-by-owner`", seat: "impl", run: runId })
      // The agent was told to make the same call again or end its turn; the command did not run.
      expect(toolOutputs(api.requests[1]!.body)[0]).toContain("Make exactly the same tool call again to keep waiting for the decision, or end your turn")
      expect(git("tag", "--list")).toBe("")

      // The owner allows it; nobody is reading. The asker's lease (if the
      // hook left one) would hold the waiter off for its ttl: age it.
      await magiIn(repo, env)("answer", q.id, "--reply", "Allow")
      ageLease(home, q.id)
      const daemon = startMagi(["serve", "--home", home], { cwd: repo, env, deadline: 2 * DEADLINE_MS })
      try {
        const end = Date.now() + DEADLINE_MS
        while (["waiting", "running"].includes(runNow().status) && Date.now() < end) await new Promise((r) => setTimeout(r, 250))
      } finally {
        daemon.child.kill("SIGTERM")
        await daemon.done
      }
      expect(runNow(), daemon.stderr()).toMatchObject({ status: "done", summary: "Tagged." })
      // The same call found the owner's decision: no second question, and the command ran.
      expect(NodeFs.readdirSync(questionsDir).filter((f) => f.endsWith(".json"))).toHaveLength(1)
      expect(git("tag", "--list").trim()).toBe("later-by-owner")
      expect(audited(home).map((e) => [e.decision, e.by])).toEqual([["allow", "owner"]])
      expect(api.escaped, JSON.stringify(api.escaped)).toEqual([])
    },
    2 * DEADLINE_MS + 60_000
  )
})
