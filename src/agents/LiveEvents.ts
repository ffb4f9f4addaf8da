/**
 * A running turn's output read as it arrives: bytes in, events out. What
 * `Transcript.ts` does for a finished turn's `.out`, done incrementally so
 * the page and `magi show --follow` can show a turn while it happens
 * (claude's `stream-json`, codex's `exec --json` events, opencode's `run
 * --format json` events, and a `command` agent's plain lines).
 *
 * Pure and import-free apart from the transcript's text rules: a parser is
 * a value with its own buffer, fed chunks as the CLI prints them. Memory is
 * bounded whatever the CLI prints: a line longer than `LINE_MAX_BYTES` is
 * dropped as it streams (only its length is said), invalid UTF-8 becomes
 * nothing, ANSI escapes and control characters go, and every string is cut
 * to the transcript's bounds.
 */
import { clean, MESSAGE_MAX_CHARS, ONE_LINE_MAX_CHARS, oneLine } from "./Transcript.js"

/** One thing a seat did, as the page and the terminal show it. A tool's result comes as its own event, naming the call by `id`. */
export type LiveEvent =
  | { readonly kind: "message"; readonly text: string }
  | { readonly kind: "tool"; readonly id: string; readonly name: string; readonly target: string }
  | { readonly kind: "result"; readonly id: string; readonly text: string; readonly failed: boolean }
  | { readonly kind: "error"; readonly text: string }
  /** The turn ended: written by the log when the CLI's process is done, whatever it printed. */
  | { readonly kind: "end"; readonly text: string; readonly failed: boolean }

/** A line longer than this is not parsed, nor kept in memory: a 50 MB line costs this much at most. */
export const LINE_MAX_BYTES = 1024 * 1024

const field = (v: unknown, key: string): unknown => (typeof v === "object" && v !== null ? (v as Record<string, unknown>)[key] : undefined)
const text = (v: unknown): string => (typeof v === "string" ? v : "")
const id = (v: unknown): string => clean(typeof v === "string" || typeof v === "number" ? String(v) : "", ONE_LINE_MAX_CHARS)

const tool = (callId: string, name: string, target: string): LiveEvent => ({
  kind: "tool",
  id: callId,
  name: clean(name, ONE_LINE_MAX_CHARS),
  target: oneLine(target)
})
const result = (callId: string, said: string, failed: boolean): LiveEvent => ({ kind: "result", id: callId, text: oneLine(said), failed })
const message = (said: string): ReadonlyArray<LiveEvent> => {
  const t = clean(said, MESSAGE_MAX_CHARS)
  return t.trim() === "" ? [] : [{ kind: "message", text: t }]
}

/** codex: a command is a call when it starts and a result when it completes; messages, file changes and errors when completed. */
const ofCodex = (e: unknown): ReadonlyArray<LiveEvent> => {
  const type = field(e, "type")
  if (type === "turn.failed") return [{ kind: "error", text: clean(text(field(field(e, "error"), "message")) || "the turn failed") }]
  if (type === "error") return [{ kind: "error", text: clean(text(field(e, "message")) || "error") }]
  const item = field(e, "item")
  const itemId = id(field(item, "id"))
  switch (field(item, "type")) {
    case "command_execution": {
      if (type === "item.started") return [tool(itemId, "shell", text(field(item, "command")))]
      if (type !== "item.completed") return []
      const exit = field(item, "exit_code")
      return [result(itemId, text(field(item, "aggregated_output")), typeof exit === "number" && exit !== 0)]
    }
    case "agent_message":
    case "assistant_message":
      return type === "item.completed" ? message(text(field(item, "text"))) : []
    case "file_change": {
      if (type !== "item.completed") return []
      const changes = field(item, "changes")
      const paths = Array.isArray(changes) ? changes.map((c) => `${text(field(c, "kind"))} ${text(field(c, "path"))}`.trim()) : []
      return [tool(itemId, "edit", paths.join(", ")), result(itemId, text(field(item, "status")), field(item, "status") === "failed")]
    }
    case "mcp_tool_call": {
      const name = `${text(field(item, "server"))}.${text(field(item, "tool"))}`
      if (type === "item.started") return [tool(itemId, name, "")]
      return type === "item.completed" ? [result(itemId, text(field(item, "status")), field(item, "status") === "failed")] : []
    }
    case "error":
      return type === "item.completed" ? [{ kind: "error", text: clean(text(field(item, "message"))) }] : []
    default:
      return []
  }
}

/** opencode prints a tool part once it is done: its call and its result together. */
const ofOpencode = (e: unknown): ReadonlyArray<LiveEvent> => {
  if (field(e, "type") === "error") {
    const err = field(e, "error")
    return [{ kind: "error", text: clean(text(field(field(err, "data"), "message")) || text(field(err, "name")) || "error") }]
  }
  const part = field(e, "part")
  if (field(part, "type") === "text") return message(text(field(part, "text")))
  if (field(part, "type") !== "tool") return []
  const state = field(part, "state")
  const status = field(state, "status")
  const input = field(state, "input")
  const target = text(field(input, "command")) || text(field(input, "filePath")) || text(field(input, "path")) ||
    text(field(input, "pattern")) || text(field(state, "title"))
  const callId = id(field(part, "callID") ?? field(part, "id"))
  const call = tool(callId, text(field(part, "tool")), target)
  if (status === "completed") return [call, result(callId, text(field(state, "output")), false)]
  if (status === "error") return [call, result(callId, text(field(state, "error")), true)]
  return [call]
}

/** claude's stream: assistant text and tool uses, the tool results claude sends back, and the closing `result`. */
const ofClaude = (e: unknown): ReadonlyArray<LiveEvent> => {
  const type = field(e, "type")
  if (type === "result") {
    // The result's text repeats the last assistant message: only a failure is news.
    return field(e, "is_error") === true ? [{ kind: "error", text: clean(text(field(e, "result")) || "the turn failed") }] : []
  }
  const content = field(field(e, "message"), "content")
  if (!Array.isArray(content)) return []
  return content.flatMap((c): ReadonlyArray<LiveEvent> => {
    if (type === "assistant" && field(c, "type") === "text") return message(text(field(c, "text")))
    if (type === "assistant" && field(c, "type") === "tool_use") {
      const input = field(c, "input")
      const target = text(field(input, "command")) || text(field(input, "file_path")) || text(field(input, "pattern")) || text(field(input, "path"))
      return [tool(id(field(c, "id")), text(field(c, "name")), target)]
    }
    if (type === "user" && field(c, "type") === "tool_result") {
      const body = field(c, "content")
      const said = typeof body === "string" ? body : Array.isArray(body) ? body.map((b) => text(field(b, "text"))).join("\n") : ""
      return [result(id(field(c, "tool_use_id")), said, field(c, "is_error") === true)]
    }
    return []
  })
}

/** One whole line as events: JSON by its shape, anything else a line of the agent's own text. */
export const eventsOfLine = (line: string): ReadonlyArray<LiveEvent> => {
  const trimmed = line.trim()
  if (trimmed === "") return []
  let e: unknown = undefined
  if (trimmed.startsWith("{")) {
    try {
      e = JSON.parse(trimmed)
    } catch {
      e = undefined
    }
  }
  if (typeof e !== "object" || e === null) return message(line)
  const type = text(field(e, "type"))
  if (type.startsWith("item.") || type.startsWith("turn.") || type.startsWith("thread.") || (type === "error" && field(e, "message") !== undefined))
    return ofCodex(e)
  if (field(e, "part") !== undefined || (type === "error" && field(e, "error") !== undefined)) return ofOpencode(e)
  if (type === "result" || type === "assistant" || type === "user") return ofClaude(e)
  return []
}

/** A parser's state: the bytes of the line not yet ended, or how much of an overlong one was dropped. */
export interface LiveParser {
  readonly feed: (chunk: Uint8Array) => ReadonlyArray<LiveEvent>
  /** The last line, if the output did not end with a newline. */
  readonly flush: () => ReadonlyArray<LiveEvent>
}

const NEWLINE = 0x0a

/** Invalid UTF-8 decodes to U+FFFD, which is then dropped: nothing but the agent's real characters reaches a page. */
const decode = (bytes: Uint8Array): string => new TextDecoder("utf-8", { fatal: false }).decode(bytes).replace(/\uFFFD/g, "")

/** A fresh parser for one turn's stdout. */
export const parser = (maxLine = LINE_MAX_BYTES): LiveParser => {
  let parts: Uint8Array[] = []
  let held = 0
  /** Bytes of the current line thrown away once it passed `maxLine`; 0 while it is kept. */
  let dropped = 0

  const endLine = (): ReadonlyArray<LiveEvent> => {
    if (dropped > 0) {
      const n = dropped
      dropped = 0
      return [{ kind: "error", text: `a line of ${n} bytes, not shown (the whole output is in the turn's .out artifact)` }]
    }
    const line = new Uint8Array(held)
    let at = 0
    for (const p of parts) {
      line.set(p, at)
      at += p.length
    }
    parts = []
    held = 0
    return eventsOfLine(decode(line))
  }

  const keep = (bytes: Uint8Array) => {
    if (bytes.length === 0) return
    if (dropped > 0) dropped += bytes.length
    else if (held + bytes.length > maxLine) {
      dropped = held + bytes.length
      parts = []
      held = 0
    } else {
      parts.push(bytes)
      held += bytes.length
    }
  }

  return {
    feed: (chunk) => {
      const out: LiveEvent[] = []
      let from = 0
      for (let nl = chunk.indexOf(NEWLINE, from); nl >= 0; nl = chunk.indexOf(NEWLINE, from)) {
        keep(chunk.subarray(from, nl))
        out.push(...endLine())
        from = nl + 1
      }
      // Copied: the caller may reuse its buffer.
      keep(chunk.slice(from))
      return out
    },
    flush: () => (held > 0 || dropped > 0 ? endLine() : [])
  }
}
