/**
 * `magi mcp`: magi as an MCP server on stdio, the way every agent CLI magi
 * drives (claude, codex, opencode) adds tools of its own. Built on
 * `@effect/ai`'s McpServer (JSON-RPC over newline-delimited stdio, the
 * protocol's handshake, `tools/list`, `tools/call`, cancellation); each of
 * Tools.ts's definitions becomes one tool.
 *
 * Every line is judged before the library sees it (StdioGate.ts, Framing.ts).
 *
 * Whatever ends the server (the client closes stdin, a signal) interrupts
 * the calls in flight: their leases are let go and their questions stay
 * open, exactly as when an agent's shell kills `magi ask`, so the waiter
 * resumes the seat with the owner's answer.
 */
import { McpSchema, McpServer } from "@effect/ai"
import * as NodeStream from "@effect/platform-node/NodeStream"
import { type Duration, Effect, Layer, Logger } from "effect"
import * as StdioGate from "./StdioGate.js"
import { type McpTool, TOOLS, type ToolEnv } from "./Tools.js"

/** The tool call's result as MCP carries it: text for the model, structured content for a program. */
const result = (reply: { readonly text: string; readonly structured: Record<string, unknown>; readonly isError: boolean }) =>
  new McpSchema.CallToolResult({
    content: [{ type: "text", text: reply.text }],
    // None for a reply with nothing structured: claude reads a permission
    // prompt tool's result only as "a single text block" and refuses it otherwise.
    ...(Object.keys(reply.structured).length === 0 ? {} : { structuredContent: reply.structured }),
    isError: reply.isError
  })

/** Offer `tools` on the server, each call waiting at most `slice`. */
export const register = (tools: ReadonlyArray<McpTool>, slice: Duration.Duration) =>
  Effect.gen(function* () {
    const server = yield* McpServer.McpServer
    const env = yield* Effect.context<ToolEnv>()
    for (const t of tools) {
      yield* server.addTool({
        tool: new McpSchema.Tool({
          name: t.name,
          title: t.title,
          description: t.description,
          inputSchema: t.inputSchema,
          // None of them changes the agent's world; all of them reach a person.
          annotations: new McpSchema.ToolAnnotations({
            title: t.title,
            readOnlyHint: false,
            destructiveHint: false,
            idempotentHint: false,
            openWorldHint: true
          })
        }),
        handle: (payload) => t.call(payload, { slice }).pipe(Effect.map(result), Effect.provide(env))
      })
    }
  })

/**
 * The whole server on this process's stdin and stdout; logs, if any, go to
 * stderr. The library's own stdio transport is fed through StdioGate: it
 * went deaf after one malformed line and read without regard to a client
 * that never read its answers.
 */
export const layer = (slice: Duration.Duration, version: string) =>
  Layer.effectDiscard(register(TOOLS, slice)).pipe(
    Layer.provide(
      Layer.unwrapEffect(
        StdioGate.make({ stdin: NodeStream.stdin, stdout: process.stdout }).pipe(
          Effect.map((gate) => McpServer.layerStdio({ name: "magi", version, stdin: gate.stdin, stdout: gate.stdout }))
        )
      )
    ),
    Layer.provide(Logger.add(Logger.prettyLogger({ stderr: true, colors: false })))
  )
