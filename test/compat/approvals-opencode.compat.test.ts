/**
 * Tool approvals against the real, pinned `opencode` on the local
 * OpenAI-compatible stand-in: with `[approvals] ask = true`, a writing
 * seat's shell commands reach the owner as approval questions through the
 * plugin magi writes for it (its `tool.execute.before` runs `magi approve
 * --hook opencode`); Deny is obeyed and the model told, Allow runs the
 * command, "Always allow" saves a rule that lets the next matching command
 * through with no question, a config deny rule refuses without asking, and
 * an edit in the worktree runs unasked. Nothing leaves 127.0.0.1 (see
 * opencode.compat.test.ts for the isolation).
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { describe, expect, it } from "vitest"
import { tempDirSync } from "../support.js"
import { ageLease, audited, DEADLINE_MS, expectOwnerDecisionsObeyed, magiIn, OWNER_COMMANDS, repoOnTrunk, runAnsweredByOwner } from "./approvalsSupport.js"
import { MODEL, opencodeEnv, VERSION } from "./opencodeWorld.js"
import { afterTest, need, runMagi, startMagi } from "./processes.js"
import { type OpenAiChatStandIn, type Reply, startOpenAiChat, toolResults, userTexts } from "./standins/openai-chat.js"

/** The calls the scripted model makes, in order; each command names what becomes of it. */
const CALLS: ReadonlyArray<Reply> = [
  ...OWNER_COMMANDS.map((command) => ({ tool: "bash", args: { command, description: "Mark the repository" } })),
  { tool: "bash", args: { command: "git tag denied-by-rule", description: "Mark the repository" } },
  { tool: "write", args: { filePath: "notes.txt", content: "written unasked\n" } }
]

/** A git repo on branch `trunk` whose only agent is the real opencode, with `[approvals] ask` and `extra` config. */
const repoWithOpencode = (dir: string, agentExtra: string, extra: string) => {
  const repo = NodePath.join(dir, "repo")
  const git = repoOnTrunk(repo, {
    "README.md": "hello\n",
    "magi.toml": `[agents.oc]\nkind = "opencode"\ncommand = ${JSON.stringify([need("opencode")])}\nmodel = "${MODEL}"\n${agentExtra}\n` +
      `[notify]\ncommand = ["true"]\n\n[approvals]\nask = true\n${extra}`
  })
  return { repo, git }
}

describe(`tool approvals with the real opencode ${VERSION}`, () => {
  it(
    "puts each command that needs permission to the owner; Deny is obeyed and told, Allow runs it, Always allow lets the next one through unasked, a deny rule never asks, and an edit in the worktree runs",
    async () => {
      const dir = tempDirSync()
      const standIn: OpenAiChatStandIn = await startOpenAiChat((req) => CALLS[toolResults(req).length] ?? { text: "Done." })
      afterTest(() => standIn.close())
      const { repo, git } = repoWithOpencode(dir, "", 'deny = ["Bash(git tag denied-by-rule)"]\n')
      const home = NodePath.join(dir, "magi-home")
      const env = { ...opencodeEnv(dir, "seat", standIn.baseUrl), MAGI_HOME: home }
      const magi = magiIn(repo, env)

      // The owner, at the terminal: each approval as it arrives.
      const answered = await runAnsweredByOwner(repo, env, home)

      // Three questions: the saved rule let the fourth command through, the deny rule stopped the fifth
      // (no tag of it), the edit needed none; Deny obeyed, Allow and the saved rule ran their commands.
      expectOwnerDecisionsObeyed(answered, git)
      // The model was told of each denial, in magi's words, and the edit ran.
      const last = toolResults(standIn.requests.at(-1)!)
      expect(last).toHaveLength(CALLS.length)
      expect(last[0]).toContain("The owner denied this tool call")
      expect(last[4]).toContain("magi's approval rule Bash(git tag denied-by-rule) denies this tool call.")
      expect(last[5]).toContain("Wrote file successfully")
      // Every decision is in the audit log, by the owner or by a rule; the edit in the worktree is not one.
      expect(audited(home).map((e) => [e.tool, e.decision, e.by, e.rule ?? null])).toEqual([
        ["Bash", "deny", "owner", null],
        ["Bash", "allow", "owner", null],
        ["Bash", "allow", "owner", "Bash(git branch:*)"],
        ["Bash", "allow", "rule", "Bash(git branch:*)"],
        ["Bash", "deny", "rule", "Bash(git tag denied-by-rule)"]
      ])
      expect(await magi("approvals", "list")).toContain("allow Bash(git branch:*)")
      expect(standIn.escapes).toEqual([])
    },
    DEADLINE_MS + 60_000
  )

  it(
    "a call the owner has not decided within the slice is refused with how to get the decision; the seat ends its turn, and once the owner allows it the waiter resumes the seat, whose same call runs",
    async () => {
      const dir = tempDirSync()
      const TAG = { tool: "bash", args: { command: "git tag after-resume", description: "Mark the repository" } } as const
      const standIn = await startOpenAiChat((req) => {
        const resumed = userTexts(req).length > 1
        const last = req.messages.at(-1)!
        if (last.role !== "tool") return TAG
        return { text: resumed ? "Tagged, as the owner allowed." : "The owner has not decided yet; ending my turn." }
      })
      afterTest(() => standIn.close())
      // A slice of 3 s, so the call is refused as pending well inside the test.
      const { repo, git } = repoWithOpencode(dir, "wait_slice = 3\n", "")
      const home = NodePath.join(dir, "magi-home")
      const env = { ...opencodeEnv(dir, "seat", standIn.baseUrl), MAGI_HOME: home }
      const magi = magiIn(repo, env)

      // 1. The run: the call waits one slice, is refused as pending, and the seat ends its turn.
      const started = await runMagi(["run", "Tag the repository."], { cwd: repo, env, deadline: DEADLINE_MS })
      expect(started.code, started.stderr).toBe(0)
      expect(started.stderr).toContain("is waiting on the owner")
      const [id] = NodeFs.readdirSync(NodePath.join(home, "runs"))
      const record = () => JSON.parse(NodeFs.readFileSync(NodePath.join(home, "runs", id!, "run.json"), "utf8"))
      expect(record()).toMatchObject({ status: "waiting", seats: [{ key: "impl", turns: 1 }] })
      const pending = toolResults(standIn.requests.at(-1)!)
      expect(pending).toHaveLength(1)
      expect(pending[0]).toContain("Make exactly the same tool call again to keep waiting for the decision, or end your turn")
      expect(git("tag", "--list")).toBe("")
      const [qfile] = NodeFs.readdirSync(NodePath.join(home, "questions")).filter((f) => f.endsWith(".json"))
      const qid = qfile!.slice(0, -5)
      expect(JSON.parse(NodeFs.readFileSync(NodePath.join(home, "questions", qfile!), "utf8"))).toMatchObject({
        status: "open",
        summary: "Bash: `git tag after-resume`",
        run: id,
        seat: "impl"
      })

      // 2. The owner allows it; nobody is waiting on the question any more.
      await magi("answer", qid, "--reply", "Allow")
      ageLease(home, qid)

      // 3. The waiter resumes the seat; its same call finds the owner's decision and runs.
      const daemon = startMagi(["serve", "--home", home], { cwd: repo, env, deadline: 2 * DEADLINE_MS })
      afterTest(async () => {
        daemon.child.kill("SIGTERM")
        await daemon.done
      })
      for (const end = Date.now() + DEADLINE_MS; !["done", "failed", "stalled"].includes(record().status);) {
        if (Date.now() > end) throw new Error(`the run never finished; magi serve said:\n${daemon.stderr()}`)
        await new Promise((r) => setTimeout(r, 250))
      }
      expect(record(), daemon.stderr()).toMatchObject({ status: "done", summary: "Tagged, as the owner allowed.", seats: [{ key: "impl", turns: 2 }] })
      expect(git("tag", "--list").trim()).toBe("after-resume")
      // One question, decided once, by the owner.
      expect(NodeFs.readdirSync(NodePath.join(home, "questions")).filter((f) => f.endsWith(".json"))).toEqual([qfile])
      expect(audited(home).map((e) => [e.tool, e.decision, e.by, e.question])).toEqual([["Bash", "allow", "owner", qid]])
      expect(standIn.escapes).toEqual([])
    },
    3 * DEADLINE_MS
  )
})
