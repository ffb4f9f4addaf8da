/**
 * `magi mcp` with each real, pinned agent CLI (claude, codex, opencode),
 * each on its local model stand-in: `magi run` registers the server with the
 * CLI by that CLI's own means, the stand-in model calls magi's `ask` tool by
 * whatever name the CLI gives it, the owner answers with `magi answer`, and
 * the tool's result carries the answer back: the stand-in reads it in the
 * next request. Nothing leaves 127.0.0.1 (each CLI's proxy is its stand-in).
 *
 * Deadlines are generous (a loaded 2-core machine): they bound a hang, they
 * time nothing.
 */
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { describe, expect, it } from "vitest"
import { until } from "../support.js"
import { claudeEnv, conversationText, type MessagesBody, type Reply as ClaudeReply, startAnthropic } from "./standins/anthropic.js"
import { codexConfig, type RecordedRequest, startResponsesStandIn, toolOutputs } from "./standins/openai-responses.js"
import { type ChatRequest, startOpenAiChat, toolResults } from "./standins/openai-chat.js"
import { opencodeEnv } from "./opencodeWorld.js"
import { afterTest, need, type Ran, runMagi, scratchDir } from "./processes.js"

const DEADLINE_MS = 240_000

/** A git repo on `trunk` with `toml` as its magi.toml. */
const repoWith = (dir: string, toml: string) => {
  const repo = NodePath.join(dir, "repo")
  NodeFs.mkdirSync(repo)
  const git = (...args: string[]) => execFileSync("git", args, { cwd: repo, stdio: "pipe" })
  git("init", "-q", "-b", "trunk")
  NodeFs.writeFileSync(NodePath.join(repo, "README.md"), "hello\n")
  NodeFs.writeFileSync(NodePath.join(repo, "magi.toml"), `${toml}\n[notify]\ncommand = ["true"]\n`)
  git("add", ".")
  git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "-m", "init")
  return repo
}

/** The built magi, with no IS_SANDBOX but the one magi.toml gives an agent (the machine running the suite may set one). */
const magi = (cwd: string, env: Record<string, string>, ...args: string[]): Promise<Ran> =>
  runMagi(args, { cwd, env: { IS_SANDBOX: undefined, ...env }, deadline: DEADLINE_MS })

/** The questions filed in `home`. */
const questions = (home: string): Array<Record<string, unknown>> => {
  const dir = NodePath.join(home, "questions")
  if (!NodeFs.existsSync(dir)) return []
  return NodeFs.readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .flatMap((f) => {
      try {
        return [JSON.parse(NodeFs.readFileSync(NodePath.join(dir, f), "utf8")) as Record<string, unknown>]
      } catch {
        return []
      }
    })
}

const onlyRun = (home: string) => {
  const [id] = NodeFs.readdirSync(NodePath.join(home, "runs"))
  return JSON.parse(NodeFs.readFileSync(NodePath.join(home, "runs", id!, "run.json"), "utf8"))
}

/** magi's ask tool as this CLI names it, among the tools a request offers the model. */
const askToolIn = (names: ReadonlyArray<string>): string | undefined => names.find((n) => /magi.*ask$/.test(n))

const ASK = { summary: "Which database?", detail: "Both fit the schema.", choices: ["SQLite", "Postgres"] }

/**
 * The owner's part, the same for every CLI: the question the tool filed is
 * there with the seat's run, seat and working folder; the owner answers it.
 */
const ownerAnswers = async (home: string, repoEnv: Record<string, string>, cwd: string, running: Promise<Ran>, seen: () => string) => {
  let ended: Ran | undefined
  void running.then((r) => (ended = r))
  await until("the ask tool to file its question", () => {
    if (ended !== undefined && questions(home).length === 0)
      throw new Error(`magi run ended (${ended.code}) with no question filed:\n${ended.stderr}\nthe model saw: ${seen()}`)
    return questions(home).length === 1
  }, DEADLINE_MS)
  const q = questions(home)[0]!
  const run = onlyRun(home)
  expect(q.summary).toBe("Which database?")
  expect(q.choices).toEqual(["SQLite", "Postgres"])
  // Who asked, from the environment magi gave the agent: the waiter could
  // resume this very seat if the agent were gone.
  expect(q.run).toBe(run.id)
  expect(q.seat).toBe(run.seats[0].key)
  expect(q.cwd).toBe(run.worktree)
  const answered = await magi(cwd, repoEnv, "answer", String(q.id), "--reply", "SQLite")
  expect(answered.code, answered.stderr).toBe(0)
  return q
}

describe("magi mcp with the real agent CLIs", () => {
  it(
    "claude: magi run registers the server (--mcp-config), the model calls mcp__magi__ask, and the owner's answer comes back as the tool's result",
    async () => {
      const claude = need("claude")
      const dir = scratchDir("mcp-claude-")
      let toolName: string | undefined
      const api = await startAnthropic((body: MessagesBody): ClaudeReply => {
        const convo = conversationText(body)
        if (convo.includes("SQLite") && body.messages.length > 1) return { text: "Done: went with SQLite." }
        toolName = askToolIn((body.tools ?? []).map((t) => t.name))
        if (toolName === undefined) return { text: "no magi ask tool offered" }
        return { tool: toolName, input: ASK }
      })
      afterTest(() => api.close())
      const claudeHome = NodePath.join(dir, "claude-home")
      NodeFs.mkdirSync(claudeHome)
      const { HOME: _h, CLAUDE_CONFIG_DIR: _c, ...network } = claudeEnv(api.url, claudeHome)
      const agentEnv = Object.entries({ ...network, IS_SANDBOX: "1" })
        .map(([k, v]) => `${k} = ${JSON.stringify(v)}`)
        .join(", ")
      const repo = repoWith(dir, `[agents.claude]\nkind = "claude"\ncommand = ${JSON.stringify(claude)}\nenv = { ${agentEnv} }\n`)
      const home = NodePath.join(dir, "magi-home")
      const env = {
        MAGI_HOME: home,
        XDG_CONFIG_HOME: NodePath.join(dir, "no-config"),
        HOME: claudeHome,
        CLAUDE_CONFIG_DIR: NodePath.join(claudeHome, ".claude")
      }
      const running = magi(repo, env, "run", "Pick a database for the cache.")
      await ownerAnswers(home, env, repo, running, () => JSON.stringify(api.turns().map((t) => conversationText(t.body))))
      const ran = await running
      expect(ran.code, ran.stderr).toBe(0)
      expect(toolName).toBe("mcp__magi__ask")
      const turns = api.turns()
      const last = conversationText(turns.at(-1)!.body)
      // The tool's result, in the very next request: the answer, nothing to run.
      expect(last).toContain("SQLite")
      expect(last).not.toContain("No answer yet")
      expect(onlyRun(home).summary).toBe("Done: went with SQLite.")
      // The ask and the answered tool result: two model requests, not one per slice.
      expect(turns).toHaveLength(2)
    },
    DEADLINE_MS * 2
  )

  it(
    "codex: magi run registers the server (-c mcp_servers.magi.*), the model calls magi's ask tool, and the owner's answer comes back as the tool's output",
    async () => {
      const codex = need("codex")
      const dir = scratchDir("mcp-codex-")
      let toolName: string | undefined
      const standIn = await startResponsesStandIn((request: RecordedRequest) => {
        const outputs = toolOutputs(request.body)
        if (outputs.some((o) => o.includes("SQLite") && !o.includes("Which database"))) return { kind: "message", text: "Done: went with SQLite." }
        if (outputs.length > 0) return { kind: "message", text: `unexpected tool output: ${outputs.join(" | ")}` }
        // codex offers an MCP server's tools as one namespace, `mcp__magi`, holding `ask`, `reply` and `wait`.
        const namespace = (request.body.tools ?? []).find((t) => t.type === "namespace" && t.name === "mcp__magi")
        toolName = namespace?.tools?.map((t) => t.name).find((n) => n === "ask")
        if (toolName === undefined)
          return {
            kind: "message",
            text: `no magi ask tool offered: ${JSON.stringify(request.body.tools?.map((t) => t.name ?? t.type))}`
          }
        return { kind: "call", namespace: "mcp__magi", name: toolName, args: ASK }
      })
      afterTest(() => standIn.close())
      const codexHome = NodePath.join(dir, "codex-home")
      const userHome = NodePath.join(dir, "user-home")
      for (const d of [codexHome, userHome]) NodeFs.mkdirSync(d)
      NodeFs.writeFileSync(NodePath.join(codexHome, "config.toml"), codexConfig(standIn))
      const repo = repoWith(dir, `[agents.codex]\nkind = "codex"\ncommand = ${JSON.stringify([codex])}\n`)
      const home = NodePath.join(dir, "magi-home")
      const env = { ...standIn.proxyEnv, MAGI_HOME: home, HOME: userHome, CODEX_HOME: codexHome, XDG_CONFIG_HOME: NodePath.join(dir, "no-config") }
      const running = magi(repo, env, "run", "Pick a database for the cache.")
      await ownerAnswers(
        home,
        env,
        repo,
        running,
        () => JSON.stringify(standIn.requests.map((r) => [r.path, toolOutputs(r.body), (r.body.input ?? []).filter((i) => i.type === "function_call")]))
      )
      const ran = await running
      expect(ran.code, `${ran.stderr}\n${JSON.stringify(standIn.requests.map((r) => toolOutputs(r.body)))}`).toBe(0)
      expect(toolName).toBe("ask")
      const last = standIn.requests.filter((r) => r.path.endsWith("/responses")).at(-1)!
      const output = toolOutputs(last.body).join("\n")
      expect(output).toContain("SQLite")
      expect(output).not.toContain("No answer yet")
      expect(onlyRun(home).summary).toBe("Done: went with SQLite.")
    },
    DEADLINE_MS * 2
  )

  it(
    "opencode: magi run registers the server (OPENCODE_CONFIG_CONTENT), the model calls magi_ask, and the owner's answer comes back as the tool's result",
    async () => {
      const opencode = need("opencode")
      const dir = scratchDir("mcp-opencode-")
      let toolName: string | undefined
      const api = await startOpenAiChat((request: ChatRequest) => {
        const tools = (request.tools ?? []).map((t) => t.function.name)
        if (tools.length === 0) return { text: "A title" }
        const results = toolResults(request)
        if (results.some((r) => r.includes("SQLite"))) return { text: "Done: went with SQLite." }
        if (results.length > 0) return { text: `unexpected tool result: ${results.join(" | ")}` }
        toolName = askToolIn(tools)
        if (toolName === undefined) return { text: `no magi ask tool offered: ${tools.join(", ")}` }
        return { tool: toolName, args: ASK }
      })
      afterTest(() => api.close())
      const ocEnv = opencodeEnv(dir, "agent", api.baseUrl)
      const repo = repoWith(dir, `[agents.oc]\nkind = "opencode"\ncommand = ${JSON.stringify([opencode])}\nmodel = "standin/scripted"\n`)
      const home = NodePath.join(dir, "magi-home")
      const env = { ...ocEnv, MAGI_HOME: home }
      const running = magi(repo, env, "run", "Pick a database for the cache.")
      await ownerAnswers(home, env, repo, running, () => JSON.stringify(api.requests.map((r) => toolResults(r))))
      const ran = await running
      expect(ran.code, ran.stderr).toBe(0)
      expect(toolName).toBe("magi_ask")
      const agentTurns = api.requests.filter((r) => (r.tools?.length ?? 0) > 0)
      expect(toolResults(agentTurns.at(-1)!).join("\n")).toContain("SQLite")
      expect(onlyRun(home).summary).toBe("Done: went with SQLite.")
    },
    DEADLINE_MS * 2
  )
})
