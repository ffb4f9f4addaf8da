/**
 * How long each pinned CLI lets an MCP tool call run when nothing sets a
 * timeout: the figure `magi mcp --client <cli>` slices under
 * (src/mcp/Slices.ts), measured rather than read from documentation. Each
 * CLI is given `magi mcp` with a slice longer than any default, its
 * stand-in model calls `ask`, and the test reads when and how the CLI gave
 * up: the time between the call and the model's next request, and the
 * error the model was shown.
 */
import { execFileSync, spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { MAGI } from "../runSupport.js"
import { codexConfig, type RecordedRequest, startResponsesStandIn, toolOutputs } from "./standins/openai-responses.js"
import { type ChatRequest, startOpenAiChat, toolResults } from "./standins/openai-chat.js"
import { MODEL, opencodeEnv } from "./opencodeWorld.js"

/** Longer than any default timeout we expect, so the CLI gives up first. */
const LONG_SLICE = 500
const DEADLINE_MS = 600_000

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

const need = (name: string): string => {
  const bin = process.env[`MAGI_COMPAT_${name.toUpperCase()}`]
  if (bin === undefined || bin === "") throw new Error(process.env[`MAGI_COMPAT_${name.toUpperCase()}_ERROR`] ?? `MAGI_COMPAT_${name.toUpperCase()} is not set`)
  return bin
}

const scratch = (prefix: string) => {
  const root = NodePath.join(process.env.XDG_CACHE_HOME ?? NodePath.join(NodeOs.homedir(), ".cache"), "magi-agents", "compat-tmp")
  NodeFs.mkdirSync(root, { recursive: true })
  const dir = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(root, prefix)))
  cleanups.push(() => NodeFs.rmSync(dir, { recursive: true, force: true }))
  const repo = NodePath.join(dir, "repo")
  NodeFs.mkdirSync(repo)
  execFileSync("git", ["init", "-q", "-b", "trunk"], { cwd: repo })
  return { dir, repo, home: NodePath.join(dir, "magi-home") }
}

/** Run `argv` to its end with `stdin`, without blocking the stand-in in this process. */
const runToEnd = (argv: ReadonlyArray<string>, cwd: string, env: Record<string, string>, stdin: string) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const p = spawn(argv[0]!, argv.slice(1), { cwd, env: { ...process.env, ...env } })
    let stdout = ""
    let stderr = ""
    p.stdout.on("data", (d) => (stdout += d))
    p.stderr.on("data", (d) => (stderr += d))
    const timer = setTimeout(() => p.kill("SIGKILL"), DEADLINE_MS)
    cleanups.push(() => {
      if (p.exitCode === null && p.signalCode === null) p.kill("SIGKILL")
    })
    p.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
    p.stdin.end(stdin)
  })

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
      cleanups.push(() => standIn.close())
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
        w.repo,
        { ...standIn.proxyEnv, HOME: w.dir, CODEX_HOME: codexHome },
        "Ask the owner."
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
      cleanups.push(() => api.close())
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
      const ran = await runToEnd([opencode, "run", "--format", "json", "--dir", w.repo, "--auto", "-m", MODEL], w.repo, env, "Ask the owner.")
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
