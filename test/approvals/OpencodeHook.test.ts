/**
 * magi's approval plugin for opencode, loaded as opencode loads it (an ES
 * module whose default export is `{ id, server }`) and its hook called as
 * opencode calls it, with a stand-in `magi` (`MAGI_BIN`) that records what
 * it was handed and prints the decision it is told to. What the real
 * opencode does with it: test/compat/approvals-opencode.compat.test.ts.
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { pathToFileURL } from "node:url"
import { afterEach, beforeAll, describe, expect, it } from "vitest"
import { MCP_SERVER_NAME } from "../../src/agents/adapters/Adapter.js"
import { pluginFileName, pluginSource, readHookCall, toolCall } from "../../src/approvals/OpencodeHook.js"
import { tempDirSync } from "../support.js"

type Hook = (input: { tool: string; sessionID: string; callID: string }, output: { args: Record<string, unknown> }) => Promise<void>

const dir = tempDirSync()
const work = NodePath.join(dir, "work")
const asked = NodePath.join(dir, "asked.jsonl")
let hook: Hook

beforeAll(async () => {
  NodeFs.mkdirSync(work)
  // A link inside the worktree that leads out of it.
  NodeFs.mkdirSync(NodePath.join(dir, "outside"))
  NodeFs.symlinkSync(NodePath.join(dir, "outside"), NodePath.join(work, "link"))
  // Node reads a `.js` file as an ES module only under `"type": "module"`; Bun (opencode) reads it either way.
  NodeFs.writeFileSync(NodePath.join(dir, "package.json"), JSON.stringify({ type: "module" }))
  const file = NodePath.join(dir, pluginFileName(pluginSource(MCP_SERVER_NAME)))
  NodeFs.writeFileSync(file, pluginSource(MCP_SERVER_NAME))
  // A magi that notes the call and its arguments, then says what FAKE_REPLY says (or fails as FAKE_FAIL says).
  const fake = NodePath.join(dir, "magi")
  NodeFs.writeFileSync(
    fake,
    `#!/bin/sh\nprintf '{"argv":"%s","call":%s}\\n' "$*" "$(cat)" >> ${JSON.stringify(asked)}\n` +
      `if [ -n "$FAKE_FAIL" ]; then echo "$FAKE_FAIL" >&2; exit 1; fi\nprintf '%s\\n' "$FAKE_REPLY"\n`,
    { mode: 0o755 }
  )
  process.env.MAGI_BIN = fake
  const mod = await import(pathToFileURL(file).href)
  expect(mod.default.id).toBe("magi-approvals")
  const hooks = await mod.default.server({ directory: work, worktree: work }, { slice: 7 })
  hook = hooks["tool.execute.before"]
})

afterEach(() => {
  NodeFs.rmSync(asked, { force: true })
  delete process.env.FAKE_FAIL
  delete process.env.FAKE_REPLY
})

const call = (tool: string, args: Record<string, unknown>) => hook({ tool, sessionID: "ses_1", callID: "call_1" }, { args })
const handed = (): Array<{ argv: string; call: unknown }> =>
  NodeFs.existsSync(asked) ? NodeFs.readFileSync(asked, "utf8").split("\n").filter((l) => l !== "").map((l) => JSON.parse(l)) : []

describe("magi's opencode plugin", () => {
  it("lets reads, searches, magi's own tools, `magi ask` and edits inside the worktree run without asking magi", async () => {
    process.env.FAKE_REPLY = JSON.stringify({ decision: "deny", message: "never asked" })
    await call("read", { filePath: "/etc/passwd" })
    await call("grep", { pattern: "x" })
    await call("magi_ask", { summary: "Which?" })
    await call("bash", { command: "magi ask --summary 'Which?' --choice A --choice B" })
    await call("bash", { command: "/opt/magi/bin/magi ask --wait 20261202-010000-ab12" })
    await call("edit", { filePath: NodePath.join(work, "src", "a.ts"), oldString: "a", newString: "b" })
    await call("write", { filePath: "notes/today.md", content: "hi" })
    await call("apply_patch", { patchText: "*** Begin Patch\n*** Update File: src/a.ts\n@@\n-a\n+b\n*** Add File: b.ts\n+x\n*** End Patch" })
    expect(handed()).toEqual([])
  })

  it("hands every other call to `magi approvals hook opencode` with the folder it runs in and its config's slice, and a denial is thrown as the tool's error", async () => {
    process.env.FAKE_REPLY = JSON.stringify({ decision: "deny", message: "The owner denied this tool call." })
    await expect(call("bash", { command: "git push" })).rejects.toThrow("The owner denied this tool call.")
    await expect(call("webfetch", { url: "https://example.com" })).rejects.toThrow("The owner denied this tool call.")
    // An edit outside the worktree, or a patch that reaches out of it, and a chained `magi ask`.
    await expect(call("write", { filePath: "/etc/hosts", content: "" })).rejects.toThrow()
    await expect(call("write", { filePath: "../outside.txt", content: "" })).rejects.toThrow()
    await expect(call("write", { filePath: "link/escaped.txt", content: "" })).rejects.toThrow()
    await expect(call("apply_patch", { patchText: "*** Begin Patch\n*** Update File: a.ts\n*** Move to: ../../b.ts\n*** End Patch" })).rejects.toThrow()
    await expect(call("bash", { command: "magi ask --summary x; rm -rf ~" })).rejects.toThrow()
    // Another MCP server's tool, and a tool magi does not know.
    await expect(call("github_create_issue", { title: "x" })).rejects.toThrow()
    await expect(call("mystery", {})).rejects.toThrow()
    const calls = handed()
    expect(calls.map((c) => c.argv)).toEqual(Array(9).fill("approvals hook opencode --slice 7"))
    expect(calls[0]!.call).toEqual({ tool: "bash", args: { command: "git push" }, directory: work })
  })

  it("an allow lets the call run", async () => {
    process.env.FAKE_REPLY = JSON.stringify({ decision: "allow" })
    await call("bash", { command: "git push" })
    expect(handed()).toHaveLength(1)
  })

  it("refuses the call, saying why, when magi fails or prints no decision", async () => {
    process.env.FAKE_FAIL = "magi: the store is unreachable"
    await expect(call("bash", { command: "git push" })).rejects.toThrow(
      "magi could not decide on this tool call, so it is refused: magi: the store is unreachable"
    )
    delete process.env.FAKE_FAIL
    process.env.FAKE_REPLY = "yes"
    await expect(call("bash", { command: "git push" })).rejects.toThrow("magi printed no decision")
  })
})

describe("an opencode call as magi's rules read it", () => {
  it("takes claude's tool names and argument names, so one rule holds for every agent", () => {
    expect(toolCall("bash", { command: "ls", description: "List" })).toEqual({ tool: "Bash", input: { command: "ls", description: "List" } })
    expect(toolCall("edit", { filePath: "/a", oldString: "x", newString: "y", replaceAll: true })).toEqual({
      tool: "Edit",
      input: { file_path: "/a", old_string: "x", new_string: "y", replace_all: true }
    })
    expect(toolCall("webfetch", { url: "https://x" }).tool).toBe("WebFetch")
    expect(toolCall("github_create_issue", { title: "t" })).toEqual({ tool: "github_create_issue", input: { title: "t" } })
  })

  it("reads the hook's input, or says what is wrong with it", () => {
    expect(readHookCall(JSON.stringify({ tool: "bash", args: { command: "ls" }, directory: "/w" }))).toEqual({
      tool: "bash",
      args: { command: "ls" },
      directory: "/w"
    })
    expect(readHookCall("[1]")).toBe("the hook's input must be a JSON object with tool and args")
    expect(readHookCall(JSON.stringify({ tool: "bash", args: {}, directory: 3 }))).toBe("the hook's directory must be a path")
  })

  it("names the plugin file by its content", () => {
    expect(pluginFileName(pluginSource(MCP_SERVER_NAME))).toMatch(/^magi-approvals-[0-9a-f]{12}\.js$/)
    expect(pluginFileName(`${pluginSource(MCP_SERVER_NAME)}\n`)).not.toBe(pluginFileName(pluginSource(MCP_SERVER_NAME)))
  })
})
