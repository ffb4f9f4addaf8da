/**
 * The tools `magi mcp` offers an agent, each one definition in `TOOLS`:
 * its name, a description written for the model that reads it, its input
 * schema, and what it does. The server (McpServer.ts) knows nothing of any
 * one tool, so another tool (the owner's approval of a tool call) is one
 * more entry here.
 *
 * `ask`, `reply` and `wait` are `magi ask`, `magi ask --thread` and
 * `magi ask --wait` as tools: the same rules (questions/Asking.ts), the same
 * sliced wait (questions/AskerWait.ts) and the same outcomes, told as structured
 * content for a program and as text for the model.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import { Config, Duration, Effect, JSONSchema, Option, ParseResult, Schema } from "effect"
import * as Asking from "../questions/Asking.js"
import * as Q from "../questions/Question.js"
import type { Question } from "../questions/Question.js"
import { QuestionStore } from "../questions/QuestionStore.js"
import { Notifier } from "../questions/Notifier.js"
import * as Lease from "../questions/Leases.js"
import { make as makeWaits, POLL, type WaitOutcome } from "../questions/AskerWait.js"
import { MagiConfig } from "../platform/MagiConfig.js"
import type { MagiHome } from "../platform/MagiHome.js"
import { endsTurnOnPending, endTurnLines } from "../questions/AgentHints.js"
import * as Approval from "../approvals/Approval.js"
import * as Approvals from "../approvals/Approvals.js"
import type { AuditLog } from "../approvals/AuditLog.js"
import type { SavedRules } from "../approvals/SavedRules.js"

/** What every tool may use: the question store and what waiting needs, and what deciding an approval needs. */
export type ToolEnv = QuestionStore | Notifier | MagiConfig | MagiHome | FileSystem.FileSystem | SavedRules | AuditLog

/** How a tool call ended: what the model reads, what a program reads, and whether it failed. */
export interface ToolReply {
  readonly text: string
  readonly structured: Record<string, unknown>
  readonly isError: boolean
}

/** What a tool's run knows beyond its input: how long one call may wait. */
export interface CallContext {
  readonly slice: Duration.Duration
}

export interface McpTool {
  readonly name: string
  readonly title: string
  readonly description: string
  /** The input schema as JSON Schema, for `tools/list`. */
  readonly inputSchema: unknown
  /** Decode the arguments and run; bad input is a refused reply, never a crash. */
  readonly call: (args: unknown, context: CallContext) => Effect.Effect<ToolReply, never, ToolEnv>
}

/** A refusal the model can act on: what was wrong, and nothing filed or changed. */
export const refused = (message: string): ToolReply => ({
  text: `magi: ${message}`,
  structured: { outcome: "refused", message },
  isError: true
})

/** One tool from its typed parts. */
export const tool = <A, I>(def: {
  readonly name: string
  readonly title: string
  readonly description: string
  readonly input: Schema.Schema<A, I>
  readonly run: (input: A, context: CallContext) => Effect.Effect<ToolReply, Asking.AskRefused, ToolEnv>
}): McpTool => {
  const decode = Schema.decodeUnknown(def.input, { errors: "all", onExcessProperty: "error" })
  return {
    name: def.name,
    title: def.title,
    description: def.description,
    inputSchema: inputJsonSchema(def.input),
    call: (args, context) =>
      decode(args ?? {}).pipe(
        Effect.mapError((e) =>
          refused(`the ${def.name} tool's input is not valid: ${
            ParseResult.ArrayFormatter.formatErrorSync(e).map((i) => `${i.path.length === 0 ? "" : `${i.path.join(".")}: `}${i.message}`).join("; ")
          }`)
        ),
        Effect.flatMap((input) =>
          def.run(input, context).pipe(Effect.mapError((e) => refused(e.message)))
        ),
        Effect.merge
      )
  }
}

/** JSON Schema for a tool's input, without the `$schema` line clients do not need. */
const inputJsonSchema = <A, I>(schema: Schema.Schema<A, I>): unknown => {
  const { $schema: _, ...rest } = JSONSchema.make(schema) as unknown as Record<string, unknown>
  return rest
}

const Id = Schema.String.pipe(Schema.minLength(1)).annotations({
  jsonSchema: {
    type: "string",
    minLength: 1,
    description: "The question's id, exactly as a magi tool returned it (e.g. 20260105-142233-ab12)."
  }
})

const Choices = Schema.Array(Schema.String).pipe(
  Schema.annotations({
    description:
      "The answers the owner may pick, each a short label. Leave out (or empty) for a free-text answer. On a reply, these replace the question's choices: repeat them to keep them."
  })
)

const Panel = Schema.Struct({
  html: Schema.String.annotations({
    description:
      "A whole HTML document shown beside the question as evidence (a comparison, a table, a diff). It is shown in a sandbox: no script runs and nothing loads from the network."
  }),
  assets: Schema.optional(
    Schema.Array(Schema.String).annotations({
      description:
        'Absolute paths of files the panel uses (images, stylesheets); each is copied beside it, and the HTML names it by its bare file name, e.g. <img src="chart.png">.'
    })
  )
}).annotations({ description: "Evidence for the owner beside the question (8 MiB in all)." })

const Detail = Schema.String.annotations({
  description: "The reasoning behind it, as markdown: what you found, what each choice means, what you recommend."
})

/** The owner's words the agent has not read yet, ahead of the decision. */
const answerText = (q: Question, answer: string) => {
  const unread = Q.unreadOwnerTurns(q)
  return unread === undefined ? answer : `The owner said, before deciding:\n\n${unread}\n\nThe owner's answer:\n${answer}`
}

/**
 * What one outcome tells the model, and the same for a program. `endTurn`:
 * this seat ends its turn on `pending` (`MAGI_WAIT=end-turn`) rather than
 * calling `wait` again; magi resumes its session with the answer.
 */
export const outcomeReply = (outcome: WaitOutcome, endTurn = false): ToolReply => {
  const q = outcome.question
  const id = q.id
  switch (outcome._tag) {
    case "Answered": {
      const unread = Q.unreadOwnerTurns(q)
      return {
        text: answerText(q, outcome.answer),
        structured: { outcome: "answered", id, answer: outcome.answer, ...(unread === undefined ? {} : { said: unread }) },
        isError: false
      }
    }
    case "Replied": {
      const next = { tool: "reply", arguments: { id, summary: "...", ...(Q.isFreeText(q) ? {} : { choices: q.choices }) } }
      return {
        text: `The owner replied on question ${Q.shortId(id)} without deciding:\n\n${outcome.said}\n\n` +
          `Answer them on the same question (it stays open) with magi's reply tool, which then keeps waiting:\n` +
          `  reply ${JSON.stringify(next.arguments)}\n` +
          (Q.isFreeText(q) ? "" : "(The choices repeat the question's current ones: a reply without them turns it into a free-text question.)\n"),
        structured: { outcome: "replied", id, said: outcome.said, next },
        isError: false
      }
    }
    case "Pending": {
      if (endTurn) {
        // The words go in the structured content too: codex shows its model that alone when there is one.
        const text = endTurnLines(q, "call magi's wait tool")
        return { text, structured: { outcome: "pending", id, next: "end-turn", message: text }, isError: false }
      }
      const next = { tool: "wait", arguments: { id } }
      return {
        text: `No answer yet: this call's wait slice ran out (not the question's deadline); question ${Q.shortId(id)} is still open.\n` +
          `Keep waiting by calling magi's wait tool now:\n  wait ${JSON.stringify(next.arguments)}\n`,
        structured: { outcome: "pending", id, next },
        isError: false
      }
    }
    case "Abandoned": {
      const message = Asking.abandonedLine(q)
      return { text: `magi: ${message}`, structured: { outcome: "abandoned", id, message }, isError: true }
    }
  }
}

/**
 * Wait one slice on `q`, as `magi ask` does in its own process: the lease
 * this call beats is let go when the call ends however it ends (the slice
 * ran out, the client went away), and the question stays open for the
 * waiter to deliver the owner's answer by resuming the seat.
 */
const waitOnce = (
  q: Question,
  budgetMs: number,
  context: CallContext,
  how: "announce" | "resume"
) =>
  Effect.scoped(
    Effect.gen(function* () {
      // fallback: an unset or unreadable variable is empty, as the shell sees it
      const node = yield* Config.string("MAGI_NODE").pipe(Config.withDefault(""), Effect.orElseSucceed(() => ""))
      const waits = yield* makeWaits(context.slice, POLL, Lease.kindForNode(node))
      const budget = Duration.millis(budgetMs)
      const outcome = yield* (how === "announce" ? waits.announceAndWait(q, budget) : waits.resumeWait(q, budget))
      // Returned to the client now: the waiter must not deliver these words again.
      yield* waits.markDelivered(outcome)
      return outcomeReply(outcome, yield* endsTurnOnPending)
    })
  )

/**
 * Where the agent works: `MAGI_CWD`, which magi sets when it registers this
 * server (a CLI may start it in another folder), else this process's own.
 */
const cwd = Config.string("MAGI_CWD").pipe(
  Config.withDefault(""),
  // fallback: no asker named is an empty name
  Effect.orElseSucceed(() => ""),
  Effect.map((dir) => (dir === "" ? process.cwd() : dir))
)

export const ask = tool({
  name: "ask",
  title: "Ask the owner",
  description: "Ask your owner (the person you work for) a question and wait for the answer. Use it when the next decision is theirs: " +
    "a choice between approaches, a risky or irreversible step, missing information. They are notified on their phone and answer there. " +
    "Give a one-line summary, the reasoning in detail, and choices when the answer is one of a few; add a panel (HTML) when evidence helps. " +
    "The call waits a while; the result's outcome is: answered (the answer, act on it), replied (the owner spoke back without " +
    "deciding: answer with the reply tool), pending (no answer yet: do what its text says, either call the wait tool with the id given at once, or end your turn " +
    "and magi resumes you with the answer), " +
    "abandoned (the deadline passed: decide for yourself or stop), refused (bad input: fix it and ask again). " +
    "Ask one question at a time and do not guess instead of waiting.",
  input: Schema.Struct({
    summary: Schema.String.annotations({ description: 'The question in one line, e.g. "Which cache backend?"' }),
    detail: Schema.optional(Detail),
    choices: Schema.optional(Choices),
    timeout: Schema.optional(
      Schema.Int.pipe(Schema.positive()).annotations({
        // Plain JSON Schema: some clients do not follow `$ref`s.
        jsonSchema: {
          type: "integer",
          minimum: 1,
          description: "The question's whole deadline in seconds; leave out for the owner's default (a day)."
        }
      })
    ),
    panel: Schema.optional(Panel)
  }),
  run: (input, context) =>
    Effect.gen(function* () {
      const { question, budgetMs } = yield* Asking.fileQuestion({
        summary: input.summary,
        detail: input.detail ?? "",
        choices: input.choices ?? [],
        timeoutSecs: Option.fromNullable(input.timeout),
        panel: Option.map(Option.fromNullable(input.panel), (p) => ({ _tag: "Html", html: p.html, assets: p.assets ?? [] }) as const),
        cwd: yield* cwd
      })
      return yield* waitOnce(question, budgetMs, context, "announce")
    })
})

export const wait = tool({
  name: "wait",
  title: "Keep waiting for the owner",
  description: "Keep waiting for the owner's answer to a question you asked, after ask, reply or wait returned pending. " +
    "Call it with the id that result gave; it returns the same outcomes as ask (answered, replied, pending, abandoned, refused). " +
    "Nothing new reaches the owner: they are not notified again.",
  input: Schema.Struct({ id: Id }),
  run: (input, context) => Effect.flatMap(Asking.openForWait(input.id, "wait"), ({ question, budgetMs }) => waitOnce(question, budgetMs, context, "resume"))
})

export const reply = tool({
  name: "reply",
  title: "Reply to the owner",
  description: "Answer the owner on an open question's thread, after ask or wait returned replied (they asked something back without deciding), " +
    "then keep waiting for their decision. The question stays the same one; its deadline is unchanged. " +
    "Give the choices again (the result of replied lists them) unless you mean to change them: a reply without choices turns it into a free-text question. " +
    "Returns the same outcomes as ask.",
  input: Schema.Struct({
    id: Id,
    summary: Schema.String.annotations({ description: "Your reply to the owner, in a line or two." }),
    detail: Schema.optional(Detail),
    choices: Schema.optional(Choices),
    panel: Schema.optional(Panel)
  }),
  run: (input, context) =>
    Effect.gen(function* () {
      const { question, budgetMs } = yield* Asking.replyOn(
        input.id,
        {
          summary: input.summary,
          detail: input.detail ?? "",
          choices: input.choices ?? [],
          panel: Option.map(Option.fromNullable(input.panel), (p) => ({ _tag: "Html", html: p.html, assets: p.assets ?? [] }) as const)
        },
        "reply"
      )
      return yield* waitOnce(question, budgetMs, context, "announce")
    })
})

/**
 * claude's `--permission-prompt-tool`: claude calls it with the tool call
 * that needs permission and reads the decision from the result's text
 * (`Approval.permissionPromptResult`). Not meant for a model to call.
 */
export const approve = tool({
  name: "approve",
  title: "Ask the owner to approve a tool call",
  description:
    "Used by the agent CLI itself (claude's --permission-prompt-tool), not by the model: decides whether a tool call that needs permission may run, " +
    'by magi\'s approval rules or by asking the owner. Returns {"behavior":"allow","updatedInput":{...}} or {"behavior":"deny","message":"..."} as text.',
  input: Schema.Struct({
    tool_name: Schema.String.annotations({ description: "The name of the tool asking for permission, e.g. Bash." }),
    input: Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({ description: "The tool call's input." }),
    tool_use_id: Schema.optional(Schema.String.annotations({ description: "The tool call's id." }))
  }),
  run: (input, context) =>
    Effect.gen(function* () {
      const { decision, byOwner } = yield* Approvals.decideForAgent({ tool: input.tool_name, input: input.input }, yield* cwd, context.slice)
      const text = Approval.permissionPromptResult(decision, input.input, byOwner)
      // Text alone: claude reads the decision from "a single text block" and refuses a result with structured content.
      return { text, structured: {}, isError: false } satisfies ToolReply
    }).pipe(Effect.mapError((e) => Asking.AskRefused.refused(e.message)))
})

/** Every tool `magi mcp` offers, in the order `tools/list` gives them. */
export const TOOLS: ReadonlyArray<McpTool> = [ask, wait, reply, approve]
