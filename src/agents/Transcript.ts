/**
 * A finished turn's output read as a transcript: the agent's messages, its
 * tool calls (the tool's name, the command or file, a one-line result) and
 * its errors, from what each CLI prints (codex's `exec --json` events,
 * opencode's `run --format json` events, claude's `stream-json` events or its result JSON, a command
 * agent's plain lines). The page reads a turn's `.out` artifact with it.
 *
 * Import-free, so the page's script runs the same reading. Every string
 * it returns is plain text for a text node: ANSI escapes and control
 * characters are removed, a result is one line, everything is cut to a
 * bound, and at most `ENTRIES_KEPT` entries (the newest) are kept however
 * much the CLI printed. A line too long to be worth parsing is named, not
 * parsed.
 */

export type Entry =
  | { readonly kind: "message"; readonly text: string }
  | { readonly kind: "tool"; readonly name: string; readonly target: string; readonly result: string; readonly failed: boolean }
  | { readonly kind: "error"; readonly text: string }

export const ENTRIES_KEPT = 500
export const MESSAGE_MAX_CHARS = 4000
export const ONE_LINE_MAX_CHARS = 200
/** A line longer than this is not parsed (a 50 MB line would freeze a phone): it is said to be there. */
export const LINE_PARSE_MAX_CHARS = 1024 * 1024

const ANSI = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[@-Z\\-_]/g
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f\u0080-\u009f]/g

/** Text as a text node should get it: no escapes, no controls, at most `max` characters. */
export const clean = (text: string, max = MESSAGE_MAX_CHARS): string => {
  const plain = text.replace(ANSI, "").replace(CONTROL, "")
  return plain.length <= max ? plain : `${plain.slice(0, max)} [… ${plain.length - max} more characters]`
}

/** The first non-blank line, cleaned and cut: a tool's result in one line. */
export const oneLine = (text: string): string => clean(text.split("\n").find((l) => l.trim() !== "")?.trim() ?? "", ONE_LINE_MAX_CHARS)

const field = (v: unknown, key: string): unknown => (typeof v === "object" && v !== null ? (v as Record<string, unknown>)[key] : undefined)
const text = (v: unknown): string => (typeof v === "string" ? v : "")

const tool = (name: string, target: string, result: string, failed: boolean): Entry => ({
  kind: "tool",
  name: clean(name, ONE_LINE_MAX_CHARS),
  target: oneLine(target),
  result: oneLine(result),
  failed
})

/** codex's item: a message, a command, a file change, an MCP call, an error. */
const ofCodexItem = (item: unknown): Entry | undefined => {
  const type = field(item, "type") ?? field(item, "item_type")
  switch (type) {
    case "agent_message":
    case "assistant_message":
      return { kind: "message", text: clean(text(field(item, "text"))) }
    case "command_execution": {
      const exit = field(item, "exit_code")
      return tool("shell", text(field(item, "command")), text(field(item, "aggregated_output")), typeof exit === "number" && exit !== 0)
    }
    case "file_change": {
      const changes = field(item, "changes")
      const paths = Array.isArray(changes) ? changes.map((c) => `${text(field(c, "kind"))} ${text(field(c, "path"))}`.trim()) : []
      return tool("edit", paths.join(", "), text(field(item, "status")), field(item, "status") === "failed")
    }
    case "mcp_tool_call":
      return tool(`${text(field(item, "server"))}.${text(field(item, "tool"))}`, "", text(field(item, "status")), field(item, "status") === "failed")
    case "web_search":
      return tool("web search", text(field(item, "query")), "", false)
    case "error":
      return { kind: "error", text: clean(text(field(item, "message"))) }
    default:
      return undefined
  }
}

/** opencode's event: a text part, a tool part (its state's input and output), an error. */
const ofOpencode = (e: unknown): Entry | undefined => {
  if (field(e, "type") === "error") {
    const err = field(e, "error")
    return { kind: "error", text: clean(text(field(field(err, "data"), "message")) || text(field(err, "name")) || "error") }
  }
  const part = field(e, "part")
  if (field(part, "type") === "text") return { kind: "message", text: clean(text(field(part, "text"))) }
  if (field(part, "type") === "tool") {
    const state = field(part, "state")
    const input = field(state, "input")
    const target = text(field(input, "command")) || text(field(input, "filePath")) || text(field(input, "path")) || text(field(input, "pattern")) ||
      text(field(state, "title"))
    const failed = field(state, "status") === "error"
    return tool(text(field(part, "tool")), target, failed ? text(field(state, "error")) : text(field(state, "output")), failed)
  }
  return undefined
}

/** claude's `stream-json` events (assistant text and tool uses, tool results) and its one result JSON. */
const ofClaude = (e: unknown): ReadonlyArray<Entry> => {
  const type = field(e, "type")
  if (type === "result") {
    const result = text(field(e, "result"))
    return field(e, "is_error") === true ? [{ kind: "error", text: clean(result) }] : result === "" ? [] : [{ kind: "message", text: clean(result) }]
  }
  const content = field(field(e, "message"), "content")
  if (!Array.isArray(content)) return []
  return content.flatMap((c): ReadonlyArray<Entry> => {
    if (type === "assistant" && field(c, "type") === "text") return [{ kind: "message", text: clean(text(field(c, "text"))) }]
    if (type === "assistant" && field(c, "type") === "tool_use") {
      const input = field(c, "input")
      return [tool(text(field(c, "name")), text(field(input, "command")) || text(field(input, "file_path")) || text(field(input, "pattern")), "", false)]
    }
    if (type === "user" && field(c, "type") === "tool_result") {
      const body = field(c, "content")
      const said = typeof body === "string" ? body : Array.isArray(body) ? body.map((b) => text(field(b, "text"))).join("\n") : ""
      return [tool("result", "", said, field(c, "is_error") === true)]
    }
    return []
  })
}

/** One printed line as entries: JSON events by their shape, anything else a line of the agent's text. */
const ofLine = (line: string): ReadonlyArray<Entry> => {
  if (line.length > LINE_PARSE_MAX_CHARS)
    return [{ kind: "error", text: `a line of ${line.length} characters, not shown (the whole output is in the artifact)` }]
  const trimmed = line.trim()
  if (trimmed === "") return []
  let e: unknown
  try {
    e = trimmed.startsWith("{") ? JSON.parse(trimmed) : undefined
  } catch {
    e = undefined
  }
  if (e === undefined) return [{ kind: "message", text: clean(line) }]
  const type = field(e, "type")
  if (type === "item.completed") return [ofCodexItem(field(e, "item"))].filter((x): x is Entry => x !== undefined)
  if (type === "turn.failed") return [{ kind: "error", text: clean(text(field(field(e, "error"), "message")) || "the turn failed") }]
  if (type === "error" && field(e, "message") !== undefined) return [{ kind: "error", text: clean(text(field(e, "message"))) }]
  if (field(e, "part") !== undefined || (type === "error" && field(e, "error") !== undefined)) {
    const x = ofOpencode(e)
    return x === undefined ? [] : [x]
  }
  if (type === "result" || type === "assistant" || type === "user") return ofClaude(e)
  return []
}

/** A claude result tool result and its call are one entry: the result fills in the call before it. */
const merged = (entries: ReadonlyArray<Entry>): ReadonlyArray<Entry> => {
  const out: Entry[] = []
  for (const e of entries) {
    const last = out.at(-1)
    if (e.kind === "tool" && e.name === "result" && last?.kind === "tool" && last.result === "")
      out[out.length - 1] = { ...last, result: e.result, failed: e.failed }
    else out.push(e)
  }
  return out
}

/** A turn's output as its transcript, the newest `ENTRIES_KEPT` entries; plain lines in a row are one message. */
export const transcriptOf = (output: string): ReadonlyArray<Entry> => {
  const entries: Entry[] = []
  for (const line of output.split("\n")) {
    for (const e of ofLine(line)) {
      const last = entries.at(-1)
      // claude's stream closes with a `result` repeating its last message: one entry, not two.
      if (e.kind === "message" && last?.kind === "message" && last.text === e.text && line.trim().startsWith("{")) continue
      // A command agent's lines make one message, not one entry a line.
      if (e.kind === "message" && last?.kind === "message" && !line.trim().startsWith("{")) {
        entries[entries.length - 1] = { kind: "message", text: clean(`${last.text}\n${e.text}`) }
      } else entries.push(e)
    }
    if (entries.length > 2 * ENTRIES_KEPT) entries.splice(0, entries.length - ENTRIES_KEPT)
  }
  return merged(entries).slice(-ENTRIES_KEPT)
}
