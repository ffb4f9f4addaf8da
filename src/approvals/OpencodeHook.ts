/**
 * opencode's route to the owner's approval: a plugin magi writes and names
 * in the seat's `OPENCODE_CONFIG_CONTENT`, whose `tool.execute.before` hook
 * sees every tool call and refuses one by throwing (opencode refuses an
 * `"ask"` permission by itself and asks no plugin first). Pure: the
 * plugin's source, and what `magi approvals hook opencode` reads and prints.
 * Which calls ask (claude's route mirrored: reads free, edits inside the
 * worktree free, the rest to the rules and the owner) and what was measured
 * are in docs/approvals.md ("opencode: magi's plugin").
 */
import { createHash } from "node:crypto"
import type { ToolCall } from "./Rules.js"

/** opencode's tools that read, search or plan: never asked about. */
export const FREE_TOOLS: ReadonlyArray<string> = [
  "read",
  "glob",
  "grep",
  "list",
  "lsp",
  "todoread",
  "todowrite",
  "skill",
  // A subagent's own tool calls pass through the same hook.
  "task",
  "question",
  "list_mcp_resources",
  "list_mcp_resource_templates",
  "read_mcp_resource"
]

/**
 * opencode names an MCP server's tools `<server>_<tool>`: magi's own (ask,
 * reply, wait) change nothing. The server's name is the adapters'
 * (`MCP_SERVER_NAME`), handed to `pluginSource`: approvals sit below agents.
 */
const freePrefix = (mcpServerName: string) => `${mcpServerName}_`

/** The edit tools: accepted without asking when every path they touch is in the seat's folder. */
export const EDIT_TOOLS: ReadonlyArray<string> = ["edit", "write", "apply_patch"]

/**
 * opencode's tool names as magi's rules spell them (claude's names), so one
 * `[approvals]` rule (`Bash(rm -rf:*)`) holds for every agent. A tool not
 * listed keeps opencode's name (another MCP server's `github_create_issue`).
 */
export const TOOL_NAMES: Readonly<Record<string, string>> = {
  bash: "Bash",
  edit: "Edit",
  write: "Write",
  apply_patch: "ApplyPatch",
  read: "Read",
  glob: "Glob",
  grep: "Grep",
  list: "LS",
  webfetch: "WebFetch",
  websearch: "WebSearch",
  codesearch: "CodeSearch",
  task: "Task",
  todowrite: "TodoWrite"
}

/** `filePath` → `file_path`: opencode's argument names as claude's, which the rules read a call's subject from. */
const snake = (key: string): string => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)

/** One opencode tool call as magi's rules and questions see it. */
export const toolCall = (tool: string, args: Readonly<Record<string, unknown>>): ToolCall => ({
  tool: TOOL_NAMES[tool] ?? tool,
  input: Object.fromEntries(Object.entries(args).map(([k, v]) => [snake(k), v]))
})

/** What the plugin hands `magi approvals hook opencode` on stdin. */
export interface HookCall {
  readonly tool: string
  readonly args: Readonly<Record<string, unknown>>
  /** The folder opencode runs in (`--dir`, the seat's worktree). */
  readonly directory?: string
}

/** What `magi approvals hook opencode` prints: the plugin throws `message` on a denial. */
export type HookDecision = { readonly decision: "allow" } | { readonly decision: "deny"; readonly message: string }

/** The hook's input, or why it is none. */
export const readHookCall = (text: string): HookCall | string => {
  let v: unknown
  try {
    v = JSON.parse(text)
  } catch {
    return 'the hook\'s input is not JSON: expected {"tool": "bash", "args": {...}, "directory": "/path"} on stdin'
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) return "the hook's input must be a JSON object with tool and args"
  const o = v as Record<string, unknown>
  if (typeof o.tool !== "string" || o.tool === "") return 'the hook\'s input has no tool name ("tool": "bash")'
  if (typeof o.args !== "object" || o.args === null || Array.isArray(o.args)) return 'the hook\'s input has no args object ("args": {...})'
  if (o.directory !== undefined && typeof o.directory !== "string") return "the hook's directory must be a path"
  return { tool: o.tool, args: o.args as Record<string, unknown>, ...(typeof o.directory === "string" ? { directory: o.directory } : {}) }
}

// ---------------------------------------------------------------------------
// The plugin

/**
 * The plugin's source: an ES module opencode loads in its own process (Bun),
 * using node's modules alone. For a call that is not free it runs `magi
 * approvals hook opencode` (`MAGI_BIN`, which magi sets for every seat) with
 * the call on stdin and `--slice` from the options its config entry gives
 * it (`[url, {"slice": seconds}]`), and throws the denial's message; a magi that fails or
 * prints no decision refuses the call too, saying why. `magi` inherits the
 * seat's environment (`MAGI_RUN`, `MAGI_SEAT`, …) from opencode.
 */
export const pluginSource = (mcpServerName: string): string =>
  `// magi's tool approvals for opencode: written by magi for its seats; do not edit.
// Each tool call that needs permission goes to \`magi approvals hook opencode\`,
// which decides by [approvals] rules or asks the owner (docs/approvals.md).
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

const FREE = new Set(${JSON.stringify(FREE_TOOLS)})
const FREE_PREFIX = ${JSON.stringify(freePrefix(mcpServerName))}
const EDITS = new Set(${JSON.stringify(EDIT_TOOLS)})
// Shell syntax that chains, substitutes or redirects: \`magi ask\` alone is free.
const CHAINING = /[;&|\`<>\\n]|\\$\\(/
const MAGI_ASK = /^\\s*(?:\\S*\\/)?magi\\s+ask(?:\\s|$)/

/** Every path an edit touches; none when it names none (then it asks). */
const editPaths = (tool, args) => {
  if (tool !== "apply_patch") return typeof args.filePath === "string" ? [args.filePath] : []
  const text = typeof args.patchText === "string" ? args.patchText : ""
  return [...text.matchAll(/^\\*\\*\\* (?:Add File|Update File|Delete File|Move to): (.+)$/gm)].map((m) => m[1].trim())
}

// A path with its symlinks resolved as far as it exists (the rest appended), or undefined when it cannot be read:
// a link inside the worktree that leads out of it is not inside.
const real = (p) => {
  const tail = []
  for (let at = p; ; ) {
    try {
      return path.join(fs.realpathSync(at), ...tail.reverse())
    } catch (e) {
      const up = path.dirname(at)
      if ((e.code !== "ENOENT" && e.code !== "ENOTDIR") || up === at) return undefined
      tail.push(path.basename(at))
      at = up
    }
  }
}

const inside = (dir, p) => {
  const root = real(path.resolve(dir))
  const target = real(path.resolve(dir, p))
  if (root === undefined || target === undefined) return false
  const rel = path.relative(root, target)
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel))
}

const free = (tool, args, dir) => {
  if (FREE.has(tool) || tool.startsWith(FREE_PREFIX)) return true
  if (EDITS.has(tool)) {
    const paths = editPaths(tool, args)
    return paths.length > 0 && paths.every((p) => inside(dir, p))
  }
  if (tool === "bash" && typeof args.command === "string") return MAGI_ASK.test(args.command) && !CHAINING.test(args.command)
  return false
}

const decide = (call, slice) =>
  new Promise((resolve) => {
    const magi = process.env.MAGI_BIN || "magi"
    const argv = ["approvals", "hook", "opencode", ...(Number.isInteger(slice) && slice > 0 ? ["--slice", String(slice)] : [])]
    let out = ""
    let err = ""
    const refuse = (why) => resolve({ decision: "deny", message: "magi could not decide on this tool call, so it is refused: " + why })
    let child
    try {
      child = spawn(magi, argv, { stdio: ["pipe", "pipe", "pipe"], env: process.env })
    } catch (e) {
      return refuse(String(e && e.message ? e.message : e))
    }
    child.stdout.on("data", (d) => (out += d))
    child.stderr.on("data", (d) => (err += d))
    child.on("error", (e) => refuse(magi + ": " + e.message))
    child.on("close", (code) => {
      if (code !== 0) return refuse((err.trim() || "magi exited " + code).slice(0, 2000))
      try {
        const d = JSON.parse(out)
        if (d.decision === "allow") return resolve(d)
        if (d.decision === "deny" && typeof d.message === "string") return resolve(d)
      } catch {}
      refuse("magi printed no decision")
    })
    child.stdin.on("error", () => {})
    child.stdin.end(JSON.stringify(call))
  })

export default {
  id: "magi-approvals",
  // options: what the config's entry gives it, [url, {"slice": seconds}]: how long one call waits for the owner.
  server: async (ctx, options) => ({
    "tool.execute.before": async (input, output) => {
      const args = output && typeof output.args === "object" && output.args !== null ? output.args : {}
      if (free(input.tool, args, ctx.directory)) return
      const d = await decide({ tool: input.tool, args, directory: ctx.directory }, options && options.slice)
      if (d.decision !== "allow") throw new Error(d.message)
    }
  })
}
`

/** The plugin's file name: named by its content, so a new magi writes a new file and a running seat keeps its own. */
export const pluginFileName = (source: string): string => `magi-approvals-${createHash("sha256").update(source).digest("hex").slice(0, 12)}.js`
