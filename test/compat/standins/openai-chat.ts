/**
 * A small local stand-in for an OpenAI-compatible chat completions API
 * (`POST /v1/chat/completions`, streamed as server-sent events), on
 * 127.0.0.1, for driving a real agent CLI (opencode) without any model
 * behind it. The test scripts the conversation: for each request it gets the
 * request and answers with a text, a tool call or an HTTP error. Every
 * request is recorded, so a test can assert what the CLI sent (the earlier
 * conversation on a resumed session, the prompt byte for byte).
 */
import * as NodeHttp from "node:http"
import type { AddressInfo } from "node:net"
import { type Meter, newMeter } from "./meter.js"

/** One message of a chat completions request, as the CLI sent it. */
export interface ChatMessage {
  readonly role: string
  readonly content?: unknown
  readonly tool_calls?: ReadonlyArray<{ readonly id: string; readonly function: { readonly name: string; readonly arguments: string } }>
  readonly tool_call_id?: string
}

export interface ChatRequest {
  readonly model: string
  readonly messages: ReadonlyArray<ChatMessage>
  readonly tools?: ReadonlyArray<{ readonly function: { readonly name: string } }>
  readonly stream?: boolean
}

/** What the stand-in answers one request with. */
export type Reply =
  | { readonly text: string }
  | { readonly tool: string; readonly args: Record<string, unknown> }
  | { readonly status: number; readonly body: unknown; readonly headers?: Record<string, string> }

/** Picks the reply to one request; `index` counts the requests that reach it. */
export type Script = (request: ChatRequest, index: number) => Reply

export interface OpenAiChatStandIn extends Meter {
  /** The base URL an OpenAI-compatible client is configured with (`…/v1`). */
  readonly baseUrl: string
  /** Every request body, in arrival order. */
  readonly requests: ChatRequest[]
  /**
   * Where the CLI tried to go past 127.0.0.1, when given the stand-in as its
   * proxy (`HTTPS_PROXY`): each CONNECT target or absolute URL, refused.
   */
  readonly escapes: string[]
  readonly close: () => Promise<void>
}

/** The text of a message's content, whether a string or a list of parts. */
export const contentText = (m: ChatMessage): string =>
  typeof m.content === "string"
    ? m.content
    : Array.isArray(m.content)
    ? m.content.map((p: { text?: unknown }) => (typeof p?.text === "string" ? p.text : "")).join("")
    : ""

/** The user's messages' texts in a request, oldest first. */
export const userTexts = (r: ChatRequest): string[] => r.messages.filter((m) => m.role === "user").map(contentText)

/** The results of the tool calls a request carries back, oldest first. */
export const toolResults = (r: ChatRequest): string[] => r.messages.filter((m) => m.role === "tool").map(contentText)

/**
 * Is this the agent's own turn (its tools offered), not a side request such
 * as a session title? opencode asks its small model for a title with no
 * tools; the script only sees the agent's requests.
 */
export const isAgentTurn = (r: ChatRequest): boolean => (r.tools?.length ?? 0) > 0

/** A session title for side requests: short, and never part of the script. */
const TITLE = "Scripted session"

const chunk = (id: string, model: string, delta: Record<string, unknown>, finish: string | null, extra: Record<string, unknown> = {}) =>
  `data: ${
    JSON.stringify({
      id,
      object: "chat.completion.chunk",
      created: Math.floor(Date.now() / 1000),
      model,
      choices: [{ index: 0, delta, finish_reason: finish }],
      ...extra
    })
  }\n\n`

const usage = { usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } }

export const startOpenAiChat = (script: Script): Promise<OpenAiChatStandIn> => {
  const requests: ChatRequest[] = []
  const escapes: string[] = []
  const meter = newMeter()
  let turns = 0
  let calls = 0
  const server = NodeHttp.createServer((req, res) => {
    const parts: Buffer[] = []
    req.on("data", (d: Buffer) => parts.push(d))
    req.on("end", () => {
      // A proxied plain-http request names its whole URL.
      if (!(req.url ?? "/").startsWith("/")) {
        escapes.push(`${req.method} ${req.url}`)
        res.writeHead(403).end()
        return
      }
      if (req.method !== "POST" || !(req.url ?? "").endsWith("/chat/completions")) {
        res.writeHead(404, { "content-type": "application/json" })
        res.end(JSON.stringify({ error: { message: `the stand-in serves POST /v1/chat/completions only, not ${req.method} ${req.url}` } }))
        return
      }
      let body: ChatRequest
      const raw = Buffer.concat(parts)
      try {
        body = JSON.parse(raw.toString("utf8")) as ChatRequest
      } catch {
        res.writeHead(400).end()
        return
      }
      requests.push(body)
      meter.note(raw.length, isAgentTurn(body))
      const reply: Reply = isAgentTurn(body) ? script(body, turns++) : { text: TITLE }
      if ("status" in reply) {
        res.writeHead(reply.status, { "content-type": "application/json", ...reply.headers })
        res.end(JSON.stringify(reply.body))
        return
      }
      const id = `chatcmpl-${++calls}`
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" })
      res.write(chunk(id, body.model, { role: "assistant", content: "" }, null))
      if ("text" in reply) {
        res.write(chunk(id, body.model, { content: reply.text }, null))
        res.write(chunk(id, body.model, {}, "stop", usage))
      } else {
        res.write(
          chunk(id, body.model, {
            tool_calls: [{ index: 0, id: `call_${calls}`, type: "function", function: { name: reply.tool, arguments: JSON.stringify(reply.args) } }]
          }, null)
        )
        res.write(chunk(id, body.model, {}, "tool_calls", usage))
      }
      res.end("data: [DONE]\n\n")
    })
  })
  server.on("connect", (req: NodeHttp.IncomingMessage, socket: import("node:net").Socket) => {
    escapes.push(`CONNECT ${req.url}`)
    // The client may reset it first; that is no failure of the stand-in's.
    socket.on("error", () => {})
    socket.end("HTTP/1.1 403 Forbidden\r\n\r\n")
  })
  return new Promise((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      resolve({
        baseUrl: `http://127.0.0.1:${port}/v1`,
        requests,
        metered: meter.metered,
        escapes,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections()
            server.close(() => done())
          })
      })
    })
  })
}
