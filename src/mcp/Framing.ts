/**
 * What `magi mcp` makes of each line a client writes on its stdin, before
 * `@effect/ai`'s McpServer sees it. The library's stdio transport parses
 * the whole stream with one JSON decoder: one malformed line (`{not json`,
 * `42`, a request without a method) made it stop answering while it went on
 * reading, an unknown method or bad params came back under a made-up id,
 * and a line had no size limit. So lines are framed here, in bounded memory,
 * and judged one by one: a well-formed request goes on to the library, the
 * rest is answered here with JSON-RPC's own error codes under the request's
 * own id (or null when it has none), and the next line is served as usual.
 *
 * Pure: `LineFramer` splits bytes into lines, `judge` decides about one.
 */
import { McpSchema } from "@effect/ai"
import { Either, ParseResult, Schema } from "effect"

/** The longest line read; a longer one is dropped as it arrives, never held whole. */
export const MAX_LINE_BYTES = 16 * 1024 * 1024

/** One line read from the client: its bytes, or how long it was when it was too long to keep. */
export type Framed =
  | { readonly _tag: "Line"; readonly bytes: Uint8Array }
  | { readonly _tag: "TooLong"; readonly bytes: number }

const NEWLINE = 10

/**
 * Newline-delimited framing that never holds more than `max` bytes of one
 * line: past that, the line's bytes are counted and dropped until its newline.
 */
export class LineFramer {
  private parts: Array<Uint8Array> = []
  private held = 0
  private dropped = 0
  constructor(private readonly max: number = MAX_LINE_BYTES) {}

  push(chunk: Uint8Array): Array<Framed> {
    const out: Array<Framed> = []
    let start = 0
    for (;;) {
      const nl = chunk.indexOf(NEWLINE, start)
      const end = nl < 0 ? chunk.length : nl
      this.take(chunk.subarray(start, end))
      if (nl < 0) return out
      out.push(this.finish())
      start = nl + 1
    }
  }

  /** What was left without a newline when the input ended. */
  end(): Array<Framed> {
    return this.held === 0 && this.dropped === 0 ? [] : [this.finish()]
  }

  private take(piece: Uint8Array) {
    if (piece.length === 0) return
    if (this.dropped > 0 || this.held + piece.length > this.max) {
      this.dropped += this.held + piece.length
      this.parts = []
      this.held = 0
      return
    }
    // Copied: the reader may reuse the chunk's memory.
    this.parts.push(piece.slice())
    this.held += piece.length
  }

  private finish(): Framed {
    const framed: Framed = this.dropped > 0
      ? { _tag: "TooLong", bytes: this.dropped }
      : { _tag: "Line", bytes: concat(this.parts, this.held) }
    this.parts = []
    this.held = 0
    this.dropped = 0
    return framed
  }
}

const concat = (parts: ReadonlyArray<Uint8Array>, length: number) => {
  if (parts.length === 1) return parts[0]!
  const all = new Uint8Array(length)
  let at = 0
  for (const p of parts) {
    all.set(p, at)
    at += p.length
  }
  return all
}

export type JsonRpcId = string | number

/** What to do with one line. */
export type Verdict =
  /** Hand it to the MCP library; `id` is set for a request, which gets exactly one response. */
  | { readonly _tag: "Forward"; readonly line: string; readonly id?: JsonRpcId; readonly cancels?: JsonRpcId }
  /** Answer it here, with this error. */
  | { readonly _tag: "Refuse"; readonly id: JsonRpcId | null; readonly code: number; readonly message: string }
  /** Nothing to do: a blank line, or a notification nobody handles (JSON-RPC never answers one). */
  | { readonly _tag: "Skip" }

export const PARSE_ERROR = -32700
export const INVALID_REQUEST = -32600
export const METHOD_NOT_FOUND = -32601
export const INVALID_PARAMS = -32602

/** The requests and notifications the library serves, each with its params' schema. */
const REQUESTS: ReadonlyMap<string, Schema.Schema.Any> = new Map(
  [...McpSchema.ClientRequestRpcs.requests].map(([tag, rpc]) => [tag, rpc.payloadSchema as Schema.Schema.Any])
)
const NOTIFICATIONS: ReadonlySet<string> = new Set(McpSchema.ClientNotificationRpcs.requests.keys())

const utf8 = new TextDecoder("utf-8", { fatal: true })

const isId = (u: unknown): u is JsonRpcId => typeof u === "string" || (typeof u === "number" && Number.isFinite(u))
const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const refuse = (id: JsonRpcId | null, code: number, message: string): Verdict => ({ _tag: "Refuse", id, code, message })

/** Decide about one framed line. */
export const judge = (framed: Framed): Verdict => {
  if (framed._tag === "TooLong")
    return refuse(null, PARSE_ERROR, `Parse error: a line of ${framed.bytes} bytes is over the ${MAX_LINE_BYTES}-byte limit, so it was dropped`)
  let text: string
  try {
    text = utf8.decode(framed.bytes)
  } catch {
    return refuse(null, PARSE_ERROR, "Parse error: the line is not UTF-8")
  }
  if (text.trim() === "") return { _tag: "Skip" }
  let message: unknown
  try {
    message = JSON.parse(text)
  } catch (e) {
    return refuse(null, PARSE_ERROR, `Parse error: ${e instanceof Error ? e.message : String(e)}`)
  }
  if (!isObject(message)) return refuse(null, INVALID_REQUEST, "Invalid Request: a message is a JSON object")
  const id = isId(message.id) ? message.id : null
  if (message.jsonrpc !== "2.0") return refuse(id, INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"')
  if ("id" in message && message.id !== null && id === null)
    return refuse(null, INVALID_REQUEST, "Invalid Request: an id is a string or a number")
  if (!("method" in message)) {
    // The client's answer to a request of the server's own (roots, sampling).
    if (id !== null && ("result" in message || "error" in message)) return { _tag: "Forward", line: text }
    return refuse(id, INVALID_REQUEST, 'Invalid Request: no "method"')
  }
  if (typeof message.method !== "string") return refuse(id, INVALID_REQUEST, 'Invalid Request: "method" must be a string')
  if (id === null) {
    if (!NOTIFICATIONS.has(message.method)) return { _tag: "Skip" }
    const cancelled = isObject(message.params) ? message.params.requestId : undefined
    return isId(cancelled) ? { _tag: "Forward", line: text, cancels: cancelled } : { _tag: "Forward", line: text }
  }
  const params = REQUESTS.get(message.method)
  if (params === undefined) return refuse(id, METHOD_NOT_FOUND, `Method not found: ${message.method}`)
  if ("params" in message && !isObject(message.params)) return refuse(id, INVALID_PARAMS, "Invalid params: params must be an object")
  const checked = Schema.decodeUnknownEither(params as Schema.Schema<unknown>)(message.params ?? {})
  if (Either.isLeft(checked)) {
    const issues = ParseResult.ArrayFormatter.formatErrorSync(checked.left).map((i) => `${i.path.length === 0 ? "params" : i.path.join(".")}: ${i.message}`)
    return refuse(id, INVALID_PARAMS, `Invalid params for ${message.method}: ${issues.join("; ")}`)
  }
  return { _tag: "Forward", line: text, id }
}

/** The error response, one line. */
export const errorLine = (v: Extract<Verdict, { _tag: "Refuse" }>) =>
  JSON.stringify({ jsonrpc: "2.0", id: v.id, error: { code: v.code, message: v.message } }) + "\n"

/** The key an id is tracked under while its request is answered: 1 and "1" are two requests. */
export const idKey = (id: JsonRpcId) => JSON.stringify(id)
