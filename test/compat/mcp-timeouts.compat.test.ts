/**
 * How long each pinned CLI lets an MCP tool call run when nothing sets a
 * timeout: the figure `magi mcp --client <cli>` slices under
 * (src/agents/Slices.ts), measured rather than read from documentation. Each
 * CLI is given `magi mcp` with a slice longer than any default, its
 * stand-in model calls `ask`, and the test reads when and how the CLI gave
 * up: the time between the call and the model's next request, and the
 * error the model was shown.
 */
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { describe, expect, it } from "vitest"
import { MAGI } from "../runSupport.js"
import { codexConfig, type RecordedRequest, startResponsesStandIn, toolOutputs } from "./standins/openai-responses.js"
import { type ChatRequest, startOpenAiChat, toolResults } from "./standins/openai-chat.js"
import { MODEL, opencodeEnv } from "./opencodeWorld.js"
import { afterTest, need, runToEnd, scratchDir } from "./processes.js"

/** Longer than any default timeout we expect, so the CLI gives up first. */
const LONG_SLICE = 500
const DEADLINE_MS = 600_000

/** A test's folder, with an empty repository in it and a place for magi's home. */
const scratch = (prefix: string) => {
  const dir = scratchDir(prefix)
  const repo = NodePath.join(dir, "repo")
  NodeFs.mkdirSync(repo)
  execFileSync("git", ["init", "-q", "-b", "trunk"], { cwd: repo })
  return { dir, repo, home: NodePath.join(dir, "magi-home") }
}

const ASK = { summary: "Which database?", choices: ["SQLite", "Postgres"] }
const serverArgs = ["mcp", "--slice", String(LONG_SLICE)]

describe("each CLI's MCP tool-call timeout with nothing set", () => {
  it(
    "codex gives up on a tool call after its default tool_timeout_sec",
    async () => {
      const codex = need("codex")
      const w = scratch("mcp-timeout-codex-")
      const standIn = await startResponsesStandIn((request: RecordedRequest) => {
        if (toolOutputs(request.body).length > 0) return { kind: "message", text: "gave up" }
        const offered = (request.body.tools ?? []).some((t) => t.type === "namespace" && t.name === "mcp__magi")
        if (!offered) return { kind: "message", text: "magi's tools were not offered" }
        return { kind: "call", namespace: "mcp__magi", name: "ask", args: ASK }
      })
      afterTest(() => standIn.close())
      const codexHome = NodePath.join(w.dir, "codex-home")
      NodeFs.mkdirSync(codexHome)
      NodeFs.writeFileSync(NodePath.join(codexHome, "config.toml"), codexConfig(standIn))
      const t = JSON.stringify
      const ran = await runToEnd(
        [
          codex,
          "exec",
          "--json",
          "--skip-git-repo-check",
          "-C",
          w.repo,
          "-c",
          'approval_policy="never"',
          "-c",
          `mcp_servers.magi.command=${t(process.execPath)}`,
          "-c",
          `mcp_servers.magi.args=[${[MAGI, ...serverArgs].map((a) => t(a)).join(",")}]`,
          "-c",
          `mcp_servers.magi.env={MAGI_HOME=${t(w.home)},XDG_CONFIG_HOME=${t(NodePath.join(w.dir, "no-config"))}}`,
          "-c",
          'mcp_servers.magi.default_tools_approval_mode="approve"',
          "-"
        ],
        { cwd: w.repo, env: { ...standIn.proxyEnv, HOME: w.dir, CODEX_HOME: codexHome }, stdin: "Ask the owner.", deadline: DEADLINE_MS }
      )
      const [call, after] = standIn.requests.filter((r) => r.path.endsWith("/responses"))
      expect(after, `${ran.stderr.slice(-3000)}`).toBeDefined()
      const secs = (after!.at - call!.at) / 1000
      const output = toolOutputs(after!.body).join("\n")
      console.log(`codex: the tool call was given up after ${secs.toFixed(1)} s: ${output}`)
      expect(output).toContain("timed out awaiting tools/call after 300s")
      expect(secs).toBeGreaterThanOrEqual(300)
      expect(secs).toBeLessThan(LONG_SLICE)
    },
    DEADLINE_MS
  )

  it(
    "opencode gives up on a tool call after the MCP SDK's default request timeout",
    async () => {
      const opencode = need("opencode")
      const w = scratch("mcp-timeout-opencode-")
      const times: number[] = []
      const api = await startOpenAiChat((request: ChatRequest) => {
        if ((request.tools ?? []).length === 0) return { text: "A title" }
        times.push(Date.now())
        if (toolResults(request).length > 0) return { text: "gave up" }
        return { tool: "magi_ask", args: ASK }
      })
      afterTest(() => api.close())
      const env = {
        ...opencodeEnv(w.dir, "agent", api.baseUrl),
        OPENCODE_CONFIG_CONTENT: JSON.stringify({
          mcp: {
            magi: {
              type: "local",
              command: [process.execPath, MAGI, ...serverArgs],
              environment: { MAGI_HOME: w.home, XDG_CONFIG_HOME: NodePath.join(w.dir, "no-config") },
              enabled: true
            }
          }
        })
      }
      const ran = await runToEnd([opencode, "run", "--format", "json", "--dir", w.repo, "--auto", "-m", MODEL], {
        cwd: w.repo,
        env,
        stdin: "Ask the owner.",
        deadline: DEADLINE_MS
      })
      const agentTurns = api.requests.filter((r) => (r.tools?.length ?? 0) > 0)
      expect(agentTurns.length, ran.stderr).toBeGreaterThanOrEqual(2)
      const secs = (times[1]! - times[0]!) / 1000
      const result = toolResults(agentTurns[1]!).join("\n")
      console.log(`opencode: the tool call was given up after ${secs.toFixed(1)} s: ${result}`)
      expect(result).toContain("Request timed out")
      expect(secs).toBeGreaterThanOrEqual(60)
      expect(secs).toBeLessThan(LONG_SLICE)
    },
    DEADLINE_MS
  )
})
