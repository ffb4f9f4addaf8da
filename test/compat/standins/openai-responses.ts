/**
 * A small local stand-in for the OpenAI Responses API, as the real `codex`
 * CLI uses it: `POST <base_url>/responses` with `stream: true`, answered as
 * server-sent events (`response.created`, `response.output_item.done`,
 * `response.completed`, or `response.failed`), or an HTTP error with an
 * OpenAI error body. codex reaches it through a custom model provider in a
 * temp `CODEX_HOME/config.toml` (`codexConfig` below writes one).
 *
 * A test scripts the conversation with a function from the request (and all
 * before it) to the next step: a tool call, a final message, an HTTP error.
 * Every request is recorded, so a test can assert what codex sent, e.g. that
 * a resumed session's request carries the earlier conversation.
 *
 * It doubles as the HTTP proxy codex is given (`HTTP_PROXY`, `HTTPS_PROXY`,
 * `ALL_PROXY`, with `NO_PROXY` for loopback): anything codex tries to reach
 * past 127.0.0.1 arrives here as a proxy request, is refused and recorded in
 * `escaped`, so a test can assert that nothing left the machine.
 */
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { type Meter, newMeter } from "./meter.js"

/** One request codex made, with its JSON body parsed. */
export interface RecordedRequest {
  readonly method: string
  readonly path: string
  readonly headers: Http.IncomingHttpHeaders
  // The Responses request body, loosely: tests read `input` and `tools`.
  readonly body: ResponsesBody
  /** Milliseconds since the stand-in started. */
  readonly at: number
}

export interface ResponsesBody {
  readonly model?: string
  readonly input?: ReadonlyArray<InputItem>
  readonly tools?: ReadonlyArray<{ readonly name?: string; readonly type?: string; readonly tools?: ReadonlyArray<{ readonly name?: string }> }>
  readonly [key: string]: unknown
}

export interface InputItem {
  readonly type?: string
  readonly role?: string
  readonly content?: ReadonlyArray<{ readonly type?: string; readonly text?: string }>
  readonly name?: string
  readonly arguments?: string
  readonly call_id?: string
  readonly output?: unknown
}

/** What the stand-in answers one request with. */
export type Step =
  /** A function call; `namespace` for a tool codex groups under one (an MCP server's: `mcp__magi`). */
  | { readonly kind: "call"; readonly name: string; readonly args: Record<string, unknown>; readonly namespace?: string }
  | { readonly kind: "message"; readonly text: string }
  /** An HTTP error with an OpenAI-style body, e.g. a 429 usage limit. */
  | { readonly kind: "http"; readonly status: number; readonly body: unknown }
  /** A stream that starts and then fails (`response.failed`). */
  | { readonly kind: "failed"; readonly code: string; readonly message: string }

export type Script = (request: RecordedRequest, earlier: ReadonlyArray<RecordedRequest>) => Step

export interface StandIn extends Meter {
  /** The provider's `base_url`. */
  readonly baseUrl: string
  readonly port: number
  /** Every `/responses` request, in order. */
  readonly requests: ReadonlyArray<RecordedRequest>
  /** Everything else that arrived: other paths, and proxy requests for other hosts. */
  readonly escaped: ReadonlyArray<string>
  /** The environment that routes codex's traffic for other hosts here. */
  readonly proxyEnv: Readonly<Record<string, string>>
  readonly close: () => Promise<void>
}

// ---------------------------------------------------------------------------
// Reading a request

/** The text of every message item from `role`, in order. */
export const messages = (body: ResponsesBody, role: string): string[] =>
  (body.input ?? [])
    .filter((i) => i.type === "message" && i.role === role)
    .map((i) => (i.content ?? []).map((c) => c.text ?? "").join(""))

/** The outputs of the tool calls the request carries back, in order, as text. */
export const toolOutputs = (body: ResponsesBody): string[] =>
  (body.input ?? [])
    .filter((i) => i.type === "function_call_output")
    .map((i) => (typeof i.output === "string" ? i.output : JSON.stringify(i.output)))

/** The tool calls the request carries (the model's earlier turns). */
export const toolCalls = (body: ResponsesBody): Array<{ name: string; args: Record<string, unknown> }> =>
  (body.input ?? [])
    .filter((i) => i.type === "function_call")
    .map((i) => ({ name: i.name ?? "", args: JSON.parse(i.arguments ?? "{}") as Record<string, unknown> }))

/** codex's exec tool handed back a process still running: its session id, to poll with `write_stdin`. */
export const runningSession = (output: string): number | undefined => {
  const m = /Process running with session ID (\d+)/.exec(output)
  return m === null ? undefined : Number(m[1])
}

// ---------------------------------------------------------------------------
// The server

const sse = (events: ReadonlyArray<Record<string, unknown>>) => events.map((e) => `event: ${String(e.type)}\ndata: ${JSON.stringify(e)}\n\n`).join("")

const usage = { input_tokens: 10, input_tokens_details: null, output_tokens: 5, output_tokens_details: null, total_tokens: 15 }

const answer = (res: Http.ServerResponse, step: Step, n: number) => {
  const id = `resp_${n}`
  switch (step.kind) {
    case "http":
      res.writeHead(step.status, { "content-type": "application/json" })
      return res.end(JSON.stringify(step.body))
    case "failed":
      res.writeHead(200, { "content-type": "text/event-stream" })
      return res.end(
        sse([
          { type: "response.created", response: { id } },
          { type: "response.failed", response: { id, error: { code: step.code, message: step.message } } }
        ])
      )
    case "call":
    case "message": {
      const item = step.kind === "call"
        ? {
          type: "function_call",
          id: `fc_${n}`,
          call_id: `call_${n}`,
          name: step.name,
          ...(step.namespace === undefined ? {} : { namespace: step.namespace }),
          arguments: JSON.stringify(step.args)
        }
        : { type: "message", role: "assistant", id: `msg_${n}`, content: [{ type: "output_text", text: step.text, annotations: [] }] }
      res.writeHead(200, { "content-type": "text/event-stream" })
      return res.end(
        sse([
          { type: "response.created", response: { id } },
          { type: "response.output_item.done", output_index: 0, item },
          { type: "response.completed", response: { id, usage } }
        ])
      )
    }
  }
}

/** Start a stand-in on 127.0.0.1 (a free port) answering with `script`. */
export const startResponsesStandIn = (script: Script): Promise<StandIn> =>
  new Promise((resolve, reject) => {
    const started = Date.now()
    const requests: RecordedRequest[] = []
    const escaped: string[] = []
    const meter = newMeter()
    const server = Http.createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on("data", (c: Buffer) => chunks.push(c))
      req.on("end", () => {
        const url = req.url ?? ""
        // A proxy request names a whole URL; codex's own calls name a path.
        if (!url.startsWith("/") || !url.endsWith("/responses") || req.method !== "POST") {
          escaped.push(`${req.method} ${url}`)
          res.writeHead(url.startsWith("/") ? 404 : 403, { "content-type": "application/json" })
          return res.end(JSON.stringify({ error: { message: "not served by the stand-in" } }))
        }
        let body: ResponsesBody = {}
        const raw = Buffer.concat(chunks)
        // Every /responses request is the agent's own: codex sends no side requests.
        meter.note(raw.length, true)
        try {
          body = JSON.parse(raw.toString("utf8")) as ResponsesBody
        } catch {
          // Recorded as empty; the script sees it and the test fails there.
        }
        const request: RecordedRequest = { method: req.method, path: url, headers: req.headers, body, at: Date.now() - started }
        const earlier = [...requests]
        requests.push(request)
        let step: Step
        try {
          step = script(request, earlier)
        } catch (e) {
          step = { kind: "http", status: 500, body: { error: { message: `the stand-in's script threw: ${String(e)}` } } }
        }
        answer(res, step, requests.length)
      })
    })
    // HTTPS through a proxy starts with CONNECT: refuse it, and remember.
    server.on("connect", (req: Http.IncomingMessage, socket: import("node:net").Socket) => {
      escaped.push(`CONNECT ${req.url ?? ""}`)
      socket.end("HTTP/1.1 403 Forbidden\r\n\r\n")
    })
    server.on("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as AddressInfo).port
      const proxy = `http://127.0.0.1:${port}`
      resolve({
        baseUrl: `http://127.0.0.1:${port}/v1`,
        port,
        requests,
        metered: meter.metered,
        escaped,
        proxyEnv: {
          HTTP_PROXY: proxy,
          HTTPS_PROXY: proxy,
          ALL_PROXY: proxy,
          http_proxy: proxy,
          https_proxy: proxy,
          all_proxy: proxy,
          NO_PROXY: "127.0.0.1,localhost",
          no_proxy: "127.0.0.1,localhost"
        },
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections()
            server.close(() => done())
          })
      })
    })
  })

// ---------------------------------------------------------------------------
// codex's side

/** The model name the stand-in serves; codex warns it has no metadata for it, harmlessly. */
export const STANDIN_MODEL = "gpt-standin"

/**
 * A `CODEX_HOME/config.toml` that sends codex's model traffic to the
 * stand-in and switches off everything else codex would reach for: usage
 * analytics, feedback, OpenTelemetry export, update checks, web search, and
 * plugins (whose marketplace sync calls github.com and chatgpt.com at every
 * start, measured through the proxy above). No retries, so an error reply is
 * codex's answer at once.
 */
export const codexConfig = (standIn: Pick<StandIn, "baseUrl">): string =>
  `model = "${STANDIN_MODEL}"
model_provider = "standin"
check_for_update_on_startup = false
web_search = "disabled"

[features]
plugins = false
remote_plugin = false
apps = false

[analytics]
enabled = false

[feedback]
enabled = false

[otel]
exporter = "none"
trace_exporter = "none"
metrics_exporter = "none"

[model_providers.standin]
name = "magi test stand-in"
base_url = "${standIn.baseUrl}"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
`
