/**
 * `magi mcp`: the stdio MCP server an agent CLI starts to get magi's `ask`,
 * `reply` and `wait` tools. `magi run` and the queue loop register it with
 * each CLI they start (Mcp registration in agents/); an owner may register
 * it by hand as well.
 */
import { Command, Options } from "@effect/cli"
import { Duration, Effect, Exit, Fiber, Layer, Option } from "effect"
import { MCP_CLIENTS, type McpClient, sliceFor } from "../agents/Slices.js"
import { approvalDecisionLayer } from "../app/Layers.js"
import { CliFailure } from "./CliFailure.js"
import { VERSION } from "../platform/Version.js"

const options = {
  client: Options.choice("client", MCP_CLIENTS).pipe(
    Options.withDescription("the agent CLI that starts this server: its tool calls wait a slice that fits that CLI's tool-call timeout"),
    Options.optional
  ),
  slice: Options.integer("slice").pipe(
    Options.withDescription("seconds one ask/reply/wait call may wait before it returns pending (default: per --client)"),
    Options.optional
  )
}

export const mcp = Command.make("mcp", options, (o) =>
  Effect.gen(function* () {
    if (Option.isSome(o.slice) && o.slice.value <= 0)
      return yield* CliFailure.usage(`--slice must be a number of seconds above 0, not ${o.slice.value}`)
    const slice = Option.match(o.slice, {
      onSome: (secs) => Duration.seconds(secs),
      onNone: () => sliceFor(Option.getOrUndefined(o.client as Option.Option<McpClient>))
    })
    // The server runs in a fiber of its own: the client closing stdin ends
    // it by interrupting that fiber, which is this command's normal end
    // (exit 0), while a signal to magi still interrupts the command itself.
    // The MCP library (and the RPC and MessagePack libraries under it) is
    // evaluated only here: every other command's start is spared it.
    const Server = yield* Effect.promise(() => import("../mcp/McpServer.js"))
    const server = yield* Effect.fork(
      Layer.launch(
        Server.layer(slice, VERSION).pipe(Layer.provide(approvalDecisionLayer()))
      )
    )
    const exit = yield* Fiber.await(server)
    if (Exit.isFailure(exit) && !Exit.isInterrupted(exit)) return yield* Effect.failCause(exit.cause)
  })).pipe(Command.withDescription("Serve magi's ask, reply and wait tools to an agent CLI over MCP (stdio)"))
