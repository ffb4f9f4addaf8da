/**
 * A stand-in for the Anthropic Messages API, as the real `claude` CLI uses
 * it: `POST /v1/messages` answered with a streaming SSE reply (or plain JSON
 * when the request does not stream), on 127.0.0.1 only. A test scripts the
 * conversation with `reply`, which sees each request's parsed body and
 * returns what "the model" says: text, a tool call, or an API error.
 *
 * Every request is recorded (method, path, headers, body) so a test can
 * assert on what claude sent, e.g. that a resumed session carries the
 * earlier conversation and the owner's answer. Anything else claude asks for
 * at start is answered with an empty success or a 404, and recorded too, so
 * a test can prove nothing needed the network past this server.
 */
import * as NodeHttp from "node:http"
import type { AddressInfo } from "node:net"
import { type Meter, newMeter } from "./meter.js"

export interface Recorded {
  readonly method: string
  readonly path: string
  readonly headers: NodeHttp.IncomingHttpHeaders
  readonly body: MessagesBody | undefined
  readonly raw: string
}

/** The parts of a Messages request a test looks at. */
export interface MessagesBody {
  readonly model?: string
  readonly stream?: boolean
  readonly system?: unknown
  readonly tools?: ReadonlyArray<{ readonly name: string }>
  readonly messages: ReadonlyArray<{ readonly role: string; readonly content: string | ReadonlyArray<Block> }>
}

export type Block =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "tool_use"; readonly id: string; readonly name: string; readonly input: unknown }
  | { readonly type: "tool_result"; readonly tool_use_id: string; readonly content: string | ReadonlyArray<{ type: string; text?: string }> }
  | { readonly type: string; readonly [k: string]: unknown }

export type Reply =
  | { readonly text: string }
  | { readonly tool: string; readonly input: Record<string, unknown> }
  | { readonly status: number; readonly errorType: string; readonly message: string; readonly headers?: Record<string, string> }
  /** Never answer: the request hangs until claude (or the test) gives up, as a turn cut short mid-call. */
  | { readonly hang: true }

export interface AnthropicStandIn extends Meter {
  readonly url: string
  readonly requests: Recorded[]
  /** The requests that carried claude's tools: the conversation's own turns, not side calls. */
  readonly turns: () => Recorded[]
  readonly close: () => Promise<void>
}

/** All text in a message's content, tool results included, for matching. */
export const textOf = (content: string | ReadonlyArray<Block>): string =>
  typeof content === "string"
    ? content
    : content
      .map((b) => {
        if (b.type === "text") return String((b as { text: string }).text)
        if (b.type === "tool_result") {
          const c = (b as { content: unknown }).content
          return typeof c === "string" ? c : Array.isArray(c) ? c.map((x: { text?: string }) => x.text ?? "").join("\n") : ""
        }
        if (b.type === "tool_use") return JSON.stringify((b as { input: unknown }).input)
        return ""
      })
      .join("\n")

/** The text of the whole conversation a request carries. */
export const conversationText = (body: MessagesBody | undefined): string => (body?.messages ?? []).map((m) => `[${m.role}] ${textOf(m.content)}`).join("\n")

/** The last message's tool results, if it carries any. */
export const lastToolResult = (body: MessagesBody): string | undefined => {
  const last = body.messages.at(-1)
  if (last === undefined || typeof last.content === "string") return undefined
  const results = last.content.filter((b) => b.type === "tool_result")
  return results.length === 0 ? undefined : textOf(results)
}

let ids = 0
const nextId = (prefix: string) => `${prefix}_${Date.now().toString(36)}${(ids++).toString(36)}`

const usage = { input_tokens: 12, output_tokens: 3, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 }

const contentOf = (reply: Exclude<Reply, { status: number } | { hang: true }>): Block =>
  "text" in reply
    ? { type: "text", text: reply.text }
    : { type: "tool_use", id: nextId("toolu"), name: reply.tool, input: reply.input }

const sse = (res: NodeHttp.ServerResponse, model: string, block: Block) => {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", "request-id": nextId("req") })
  const send = (event: string, data: unknown) => res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)
  send("message_start", {
    type: "message_start",
    message: { id: nextId("msg"), type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null, usage }
  })
  if (block.type === "text") {
    send("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } })
    send("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: (block as { text: string }).text } })
  } else {
    const b = block as { id: string; name: string; input: unknown }
    send("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "tool_use", id: b.id, name: b.name, input: {} } })
    send("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: JSON.stringify(b.input) } })
  }
  send("content_block_stop", { type: "content_block_stop", index: 0 })
  send("message_delta", {
    type: "message_delta",
    delta: { stop_reason: block.type === "text" ? "end_turn" : "tool_use", stop_sequence: null },
    usage: { output_tokens: 5 }
  })
  send("message_stop", { type: "message_stop" })
  res.end()
}

/**
 * Start the stand-in. `reply` scripts the conversation's own turns (requests
 * carrying tools); side calls without tools (titles, summaries) get `side`.
 */
export const startAnthropic = async (
  reply: (body: MessagesBody, n: number) => Reply,
  side: (body: MessagesBody) => Reply = () => ({ text: "ok" })
): Promise<AnthropicStandIn> => {
  const requests: Recorded[] = []
  const meter = newMeter()
  let turnCount = 0
  const server = NodeHttp.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8")
      let body: MessagesBody | undefined
      try {
        body = raw === "" ? undefined : (JSON.parse(raw) as MessagesBody)
      } catch {
        body = undefined
      }
      // A proxied plain-http request names its whole URL: kept whole, so a
      // test sees where it was headed.
      const path = (req.url ?? "/").startsWith("/") ? (req.url ?? "/").split("?")[0]! : (req.url ?? "")
      requests.push({ method: req.method ?? "", path, headers: req.headers, body, raw })
      if (req.method === "POST" && path === "/v1/messages/count_tokens") {
        res.writeHead(200, { "content-type": "application/json" })
        return res.end(JSON.stringify({ input_tokens: 42 }))
      }
      if (req.method === "POST" && path === "/v1/messages" && body !== undefined && Array.isArray(body.messages)) {
        const isTurn = (body.tools?.length ?? 0) > 0
        meter.note(Buffer.byteLength(raw), isTurn)
        const r = isTurn ? reply(body, turnCount++) : side(body)
        const model = body.model ?? "claude-standin"
        if ("hang" in r) return
        if ("status" in r) {
          res.writeHead(r.status, { "content-type": "application/json", "request-id": nextId("req"), ...r.headers })
          return res.end(JSON.stringify({ type: "error", error: { type: r.errorType, message: r.message } }))
        }
        const block = contentOf(r)
        if (body.stream === true) return sse(res, model, block)
        res.writeHead(200, { "content-type": "application/json" })
        return res.end(
          JSON.stringify({
            id: nextId("msg"),
            type: "message",
            role: "assistant",
            model,
            content: [block],
            stop_reason: block.type === "text" ? "end_turn" : "tool_use",
            stop_sequence: null,
            usage
          })
        )
      }
      res.writeHead(404, { "content-type": "application/json" })
      res.end(JSON.stringify({ type: "error", error: { type: "not_found_error", message: `the stand-in does not serve ${path}` } }))
    })
  })
  // The stand-in is also every proxy claude is given (see \`claudeEnv\`):
  // anything it tries to reach past 127.0.0.1 arrives here as a CONNECT (or
  // an absolute-URL request), is recorded, and goes nowhere.
  server.on("connect", (req: NodeHttp.IncomingMessage, socket: import("node:net").Socket) => {
    requests.push({ method: "CONNECT", path: req.url ?? "", headers: req.headers, body: undefined, raw: "" })
    // The client may reset it first; that is no failure of the stand-in's.
    socket.on("error", () => {})
    socket.end("HTTP/1.1 403 Forbidden\r\n\r\n")
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    metered: meter.metered,
    turns: () => requests.filter((r) => r.path === "/v1/messages" && (r.body?.tools?.length ?? 0) > 0),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

/**
 * The environment that runs the real claude against `url` and nothing else:
 * a dummy key, its own config dir under `home`, and claude's own switches
 * for everything that would talk past 127.0.0.1.
 */
export const claudeEnv = (url: string, home: string): Record<string, string> => ({
  HOME: home,
  CLAUDE_CONFIG_DIR: `${home}/.claude`,
  ANTHROPIC_BASE_URL: url,
  ANTHROPIC_API_KEY: "sk-ant-standin-dummy",
  // Telemetry, error reporting, the autoupdater and the rest of the
  // "nonessential" traffic (model lists, announcements, feedback surveys).
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
  DISABLE_TELEMETRY: "1",
  DISABLE_ERROR_REPORTING: "1",
  DISABLE_AUTOUPDATER: "1",
  DISABLE_UPDATES: "1",
  DISABLE_GROWTHBOOK: "1",
  CLAUDE_CODE_DISABLE_FEATURE_FLAGS: "1",
  DISABLE_INSTALLATION_CHECKS: "1",
  DISABLE_BUG_COMMAND: "1",
  DISABLE_NON_ESSENTIAL_MODEL_CALLS: "1",
  CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY: "1",
  CLAUDE_CODE_DISABLE_TERMINAL_TITLE: "1",
  // Anything that would still go out is sent to the stand-in as its proxy,
  // where it is recorded (and refused); the API itself is reached directly.
  NO_PROXY: "127.0.0.1,localhost",
  HTTPS_PROXY: url,
  HTTP_PROXY: url
})
