/**
 * The opencode adapter: what magi passes opencode 1.18.33 and how it reads
 * what opencode printed. The outputs below are what the real opencode
 * printed against the stand-in model API (test/compat/opencode.compat.test.ts
 * proves the same against the real CLI).
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration } from "effect"
import type { AgentSpec } from "../../src/agents/AgentRoster.js"
import { parse as parseReply, plan, sessionEnvOf, waitSliceSecs } from "../../src/agents/Agents.js"
import { opencode, parse, READ_ONLY_PERMISSION } from "../../src/agents/adapters/opencode.js"
import { MCP_SERVER_NAME } from "../../src/agents/adapters/Adapter.js"
import { pluginFileName, pluginSource } from "../../src/approvals/OpencodeHook.js"

const agent = (over: Partial<AgentSpec> = {}): AgentSpec => ({
  id: "oc",
  kind: "opencode",
  command: ["opencode"],
  model: null,
  args: [],
  env: {},
  ...over
})
const input = {
  cwd: "/w",
  promptFile: "/a/impl-1.prompt.md",
  prompt: "do it",
  label: "impl",
  resume: null,
  newSession: null,
  allowWrite: true,
  timeout: Duration.minutes(15),
  questionsDir: "/h/questions"
}
const SES = "ses_dd4db4abbffeKsRfj7g4zXDHaO"
const line = (e: unknown) => JSON.stringify(e) + "\n"

describe("opencode: the call", () => {
  it("sends the prompt on stdin, byte for byte, and never as an argument", () => {
    const prompt = `He said "don't" — $HOME \`x\` \\n ünï\n` + "x".repeat(200 * 1024)
    const p = plan(agent({ model: "standin/scripted", args: ["--print-logs"] }), { ...input, prompt })
    expect(p.stdin).toBe(prompt)
    expect(p.argv).toEqual(["opencode", "run", "--format", "json", "--dir", "/w", "--auto", "-m", "standin/scripted", "--print-logs"])
    // argv stays small whatever the prompt: no E2BIG past 128 KiB.
    expect(p.argv.join(" ").length).toBeLessThan(200)
  })

  it("resumes the session it is given with -s", () => {
    expect(plan(agent(), { ...input, resume: SES }).argv).toEqual(["opencode", "run", "--format", "json", "--dir", "/w", "--auto", "-s", SES])
  })

  it("a seat that may write runs the default agent with no permission overrides", () => {
    const p = plan(agent(), input)
    expect(p.argv).not.toContain("--agent")
    expect(p.env).toBeUndefined()
  })

  it("a read-only seat runs the plan agent, with edits denied and no command but magi's and git's reading ones", () => {
    const p = plan(agent(), { ...input, allowWrite: false })
    expect(p.argv.slice(7, 9)).toEqual(["--agent", "plan"])
    const permission = JSON.parse(p.env!.OPENCODE_PERMISSION!)
    expect(permission.edit).toBe("deny")
    // opencode's own reading of the rules: a pattern's * is any text, and the last rule that matches decides.
    const rules = Object.entries(permission.bash as Record<string, string>)
    const glob = (pattern: string) => new RegExp("^" + pattern.split("*").map((part) => part.replace(/[.+?^$()|[\]{}\\]/g, "\\$&")).join(".*") + "$", "s")
    const decide = (cmd: string) => rules.filter(([pattern]) => glob(pattern).test(cmd)).at(-1)?.[1]
    const table: Array<[string, string]> = [
      ["git log --oneline magi/ab12/B", "allow"],
      ["git show magi/ab12/B", "allow"],
      ["git diff trunk magi/ab12/B", "allow"],
      ["git status", "allow"],
      ["magi ask --summary x", "allow"],
      ["/opt/magi/dist/bin/magi ask --wait 1", "allow"],
      ["git commit -m x", "deny"],
      ["git push origin HEAD", "deny"],
      ["git checkout magi/ab12/B", "deny"],
      ["git diff --output=out.txt", "deny"],
      ["git log > log.txt", "deny"],
      ["magi ask --summary x > out.txt", "deny"],
      ["touch x", "deny"],
      ["rm -rf .", "deny"]
    ]
    expect(table.map(([cmd]) => [cmd, decide(cmd)])).toEqual(table)
  })

  it("a read-only seat keeps the agent's own permissions and overrides only edit and bash", () => {
    const own = JSON.stringify({ webfetch: "deny", bash: { "git push *": "allow" }, edit: "allow" })
    const p = plan(agent({ env: { OPENCODE_PERMISSION: own } }), { ...input, allowWrite: false })
    expect(JSON.parse(p.env!.OPENCODE_PERMISSION!)).toEqual({ webfetch: "deny", ...READ_ONLY_PERMISSION })
  })

  it("a writing seat under [approvals] ask loads magi's approval plugin, named by its content in magi's home", () => {
    const mcp = { command: "/opt/magi/bin/magi", args: ["mcp"], env: {} }
    const own = JSON.stringify({ plugin: ["owner-plugin"], mcp: { github: { type: "remote" } } })
    const p = plan(agent({ env: { OPENCODE_CONFIG_CONTENT: own } }), { ...input, approve: true, magi: "/opt/magi/bin/magi", home: "/h", mcp })
    const file = p.files![0]!
    expect(file.path).toBe(`/h/opencode/${pluginFileName(pluginSource(MCP_SERVER_NAME))}`)
    expect(file.content).toBe(pluginSource(MCP_SERVER_NAME))
    const config = JSON.parse(p.env!.OPENCODE_CONFIG_CONTENT!)
    // The owner's plugins and servers stay; magi's come after.
    expect(config.plugin).toEqual(["owner-plugin", [`file://${file.path}`, { slice: 600 }]])
    expect(Object.keys(config.mcp)).toEqual(["github", "magi"])
    // Its permissions are untouched: the plugin is the gate, --auto lets the rest run.
    expect(p.env!.OPENCODE_PERMISSION).toBeUndefined()
    expect(p.argv).toContain("--auto")
  })

  it("magi's server is merged over the owner's inherited OPENCODE_CONFIG_CONTENT, so their provider survives; the agent's env wins over it", () => {
    const mcp = { command: "/opt/magi/bin/magi", args: ["mcp"], env: {} }
    const owners = JSON.stringify({ provider: { standin: { options: { baseURL: "http://127.0.0.1:9/v1" } } }, model: "standin/scripted" })
    const config = (over: Partial<AgentSpec>) =>
      JSON.parse(plan(agent(over), { ...input, mcp, inherited: { OPENCODE_CONFIG_CONTENT: owners } }).env!.OPENCODE_CONFIG_CONTENT!)
    expect(config({})).toMatchObject({ ...JSON.parse(owners), mcp: { magi: { command: ["/opt/magi/bin/magi", "mcp"] } } })
    const agents = JSON.stringify({ model: "other/model" })
    expect(config({ env: { OPENCODE_CONFIG_CONTENT: agents } })).toEqual({ model: "other/model", mcp: expect.objectContaining({ magi: expect.anything() }) })
    // A read-only seat's permissions extend the owner's too.
    const read = plan(agent(), { ...input, allowWrite: false, inherited: { OPENCODE_PERMISSION: JSON.stringify({ webfetch: "deny" }) } })
    expect(JSON.parse(read.env!.OPENCODE_PERMISSION!)).toEqual({ webfetch: "deny", ...READ_ONLY_PERMISSION })
  })

  it("each call waits ten minutes for the owner, or the agent's wait_slice when shorter", () => {
    const slice = (over: Partial<AgentSpec>) =>
      JSON.parse(plan(agent(over), { ...input, approve: true, magi: "/opt/magi/bin/magi", home: "/h" }).env!.OPENCODE_CONFIG_CONTENT!).plugin[0][1].slice
    expect(slice({})).toBe(600)
    expect(slice({ waitSliceSecs: 3 })).toBe(3)
    expect(slice({ waitSliceSecs: 3600 })).toBe(600)
  })

  it("no plugin for a read-only seat, nor without [approvals] ask, nor without a magi to run", () => {
    const home = { magi: "/opt/magi/bin/magi", home: "/h" }
    expect(plan(agent(), { ...input, ...home, approve: true, allowWrite: false }).files).toBeUndefined()
    expect(plan(agent(), { ...input, ...home }).files).toBeUndefined()
    expect(plan(agent(), { ...input, approve: true, home: "/h" }).files).toBeUndefined()
    expect(plan(agent(), { ...input, ...home }).env).toBeUndefined()
  })

  it("waits at most 100 s per `magi ask`, inside the 120 s after which its bash tool kills the command", () => {
    expect(Duration.toSeconds(opencode.waitSlice)).toBeLessThan(120)
    expect(Duration.toSeconds(opencode.waitSlice)).toBe(100)
  })

  it("records where its sessions live and what they run on, for a resume from another environment", () => {
    const recorded = sessionEnvOf(agent({ env: { OPENCODE_DB: "/dbs/oc.db", OPENCODE_CONFIG: "/cfg/oc.json" } }), {
      HOME: "/home/me",
      XDG_DATA_HOME: "/data",
      XDG_CONFIG_HOME: "/config",
      PATH: "/usr/bin",
      OPENCODE_DB: "/ignored-by-the-agent-env.db"
    })
    expect(recorded).toEqual({
      HOME: "/home/me",
      XDG_DATA_HOME: "/data",
      OPENCODE_DB: "/dbs/oc.db",
      XDG_CONFIG_HOME: "/config",
      OPENCODE_CONFIG: "/cfg/oc.json"
    })
  })

  it("an agent's wait_slice overrides the opencode slice", () => {
    expect(waitSliceSecs(agent(), {})).toBe(100)
    expect(waitSliceSecs(agent({ waitSliceSecs: 300 }), {})).toBe(300)
  })

  it("the slice follows opencode's bash limit when the owner changes it", () => {
    const limit = "OPENCODE_EXPERIMENTAL_BASH_DEFAULT_TIMEOUT_MS"
    expect(waitSliceSecs(agent({ env: { [limit]: "600000" } }), {})).toBe(500)
    expect(waitSliceSecs(agent(), { [limit]: "30000" })).toBe(10)
    expect(waitSliceSecs(agent({ env: { [limit]: "soon" } }), {})).toBe(100)
  })
})

describe("opencode: reading what it printed", () => {
  const ok = line({ type: "step_start", sessionID: SES, part: { type: "step-start", sessionID: SES } }) +
    line({ type: "tool_use", sessionID: SES, part: { type: "tool", tool: "bash", sessionID: SES, state: { status: "completed", output: "x" } } }) +
    line({ type: "text", sessionID: SES, part: { type: "text", sessionID: SES, text: "All done." } }) +
    line({ type: "step_finish", sessionID: SES, part: { type: "step-finish", sessionID: SES, reason: "stop" } })

  it("takes the text parts and the session id", () => {
    expect(parse(ok)).toEqual({ text: "All done.", session: SES, error: false, quota: null })
  })

  it("an API error reads as the API's message, not as JSON", () => {
    const out = line({
      type: "error",
      sessionID: SES,
      error: {
        name: "APIError",
        data: {
          message: "The model `scripted` does not exist",
          statusCode: 400,
          isRetryable: false,
          responseBody: '{"error":{"message":"The model `scripted` does not exist","type":"invalid_request_error"}}'
        }
      }
    })
    const p = parse(out)
    expect(p).toEqual({ text: "The model `scripted` does not exist", session: SES, error: true, quota: null })
    const reply = parseReply("opencode", out, "", 1, false)
    expect(reply.usable).toBe(false)
    expect(reply.text).toBe("The model `scripted` does not exist")
  })

  it("an error without an API message reads as the error's name", () => {
    expect(parse(line({ type: "error", sessionID: SES, error: { name: "ProviderAuthError", data: {} } })).text).toBe("ProviderAuthError")
  })

  it("a refusal on stderr reads as its message, without colours or the `Error:` label", () => {
    const err = "\u001b[91m\u001b[1mError: \u001b[0mSession not found\n"
    expect(parse("", err)).toEqual({ text: "Session not found", session: null, error: true, quota: null })
  })

  it("a 429 still refused after opencode's retries is a usage limit, with its reset from retry-after", () => {
    const out = line({
      type: "error",
      sessionID: SES,
      error: {
        name: "APIError",
        data: {
          message: "You exceeded your current quota, please check your plan and billing details.",
          statusCode: 429,
          isRetryable: true,
          responseHeaders: { "retry-after": "7500", "retry-after-ms": "10" },
          responseBody: '{"error":{"type":"insufficient_quota"}}'
        }
      }
    })
    expect(parse(out)).toMatchObject({
      error: true,
      quota: "in 2 hours 5 minutes",
      text: "You exceeded your current quota, please check your plan and billing details."
    })
  })

  it("opencode's own Go limit wording is a usage limit with its reset time", () => {
    const out = line({
      type: "error",
      sessionID: SES,
      error: {
        name: "APIError",
        data: {
          message: "Weekly usage limit reached. It will reset in 3 days 4 hours.",
          statusCode: 403,
          responseBody: '{"type":"error","error":{"type":"GoUsageLimitError"}}'
        }
      }
    })
    expect(parse(out).quota).toBe("in 3 days 4 hours")
    const free = line({ type: "error", error: { name: "APIError", data: { message: "Free usage exceeded, subscribe to Go", statusCode: 402 } } })
    expect(parse(free).quota).toBe("")
  })

  it("an HTTP-date retry-after is given as the time it names", () => {
    const out = line({
      type: "error",
      error: { name: "APIError", data: { message: "usage limit", statusCode: 429, responseHeaders: { "retry-after": "Wed, 02 Dec 2026 15:00:00 GMT" } } }
    })
    expect(parse(out).quota).toBe("at Wed, 02 Dec 2026 15:00:00 GMT")
  })

  it("a server error is an error, not a usage limit", () => {
    const out = line({ type: "error", error: { name: "APIError", data: { message: "Internal Server Error", statusCode: 500 } } })
    expect(parse(out)).toMatchObject({ error: true, quota: null, text: "Internal Server Error" })
  })
})
