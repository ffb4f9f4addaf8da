/**
 * `magi approve --hook opencode`: one tool call of an agent, decided. The
 * plugin magi gives a writing opencode seat under `[approvals] ask` runs it
 * with the call as JSON on stdin and reads the decision as JSON on stdout
 * (approvals/OpencodeHook.ts); the deciding is the one every route shares
 * (`Approvals.decideForAgent`): the rules, else a question to the owner
 * waited on for one slice.
 */
import { Command, Options } from "@effect/cli"
import { Duration, Effect, Layer, Option } from "effect"
import * as Approvals from "../approvals/Approvals.js"
import { AuditLog } from "../approvals/AuditLog.js"
import * as OpencodeHook from "../approvals/OpencodeHook.js"
import { SavedRules } from "../approvals/SavedRules.js"
import { MAX_SLICE } from "../mcp/Slices.js"
import { questionsLayer } from "./AppLayer.js"
import { CliFailure } from "./CliFailure.js"
import { readStdinUpTo, writeOut } from "./io.js"

/** The agent CLIs whose hook this command serves. */
const HOOKS = ["opencode"] as const

/** More than any tool call's input a hook hands over; a larger one is refused, not read whole. */
const INPUT_MAX_BYTES = 16 * 1024 * 1024

const options = {
  hook: Options.choice("hook", HOOKS).pipe(Options.withDescription("the agent CLI whose hook runs this: how the call is read and the decision printed")),
  slice: Options.integer("slice").pipe(
    Options.withDescription(
      `seconds this call may wait for the owner before it refuses the tool call, telling the agent to make it again (default ${
        Duration.toSeconds(MAX_SLICE)
      }: opencode sets its plugin hooks no limit)`
    ),
    Options.optional
  )
}

export const approve = Command.make("approve", options, (o) =>
  Effect.gen(function* () {
    if (Option.isSome(o.slice) && o.slice.value <= 0)
      return yield* CliFailure.usage(`--slice must be a number of seconds above 0, not ${o.slice.value}`)
    const slice = Option.match(o.slice, { onSome: (secs) => Duration.seconds(secs), onNone: () => MAX_SLICE })
    const text = yield* readStdinUpTo(INPUT_MAX_BYTES)
    if (text === undefined) return yield* CliFailure.refused(`the hook's input is over ${INPUT_MAX_BYTES} bytes`)
    const call = OpencodeHook.readHookCall(text)
    if (typeof call === "string") return yield* CliFailure.refused(call)
    const { decision } = yield* Approvals.decideForAgent(OpencodeHook.toolCall(call.tool, call.args), call.directory ?? process.cwd(), slice).pipe(
      Effect.mapError((e) => CliFailure.refused(e.message)),
      Effect.provide(Layer.mergeAll(SavedRules.layer, AuditLog.layer).pipe(Layer.provideMerge(questionsLayer())))
    )
    const printed: OpencodeHook.HookDecision = decision._tag === "allow" ? { decision: "allow" } : { decision: "deny", message: decision.message }
    yield* writeOut(`${JSON.stringify(printed)}\n`)
  })).pipe(Command.withDescription("Decide one tool call an agent CLI's hook hands over (opencode's plugin): by the approval rules, or by asking the owner"))
