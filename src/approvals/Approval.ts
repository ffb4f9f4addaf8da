/**
 * A tool approval as a question: what the owner is shown for one tool call
 * that needs permission, and what their answer decides. Pure.
 *
 * The question is an ordinary one (it waits, is sliced, survives the agent's
 * process, is answered from the terminal or the phone) that carries an
 * `approval` mark: the tool, a digest of its input and the rule "Always
 * allow" would save. The mark is what keeps deputies and the conductor off
 * it (`isApproval`), and what lets a re-tried call find the question it
 * already asked instead of asking again.
 */
import { Schema } from "effect"
import { createHash } from "node:crypto"
import type * as Q from "../questions/Question.js"
import { CHOICE_MAX_BYTES, headline } from "../questions/Question.js"
import { subjectOf, type ToolCall } from "./Rules.js"

export const ALLOW = "Allow"
export const DENY = "Deny"
/** The third choice's words before the rule it saves: `Always allow Bash(git push:*)`. */
export const ALWAYS_PREFIX = "Always allow "

/** The mark an approval question carries (stored as the question's `approval` field). */
export interface ApprovalMark {
  readonly tool: string
  /** `inputDigest` of the call: the same call again finds this question. */
  readonly digest: string
  /** The rule "Always allow" saves, shown on the choice before it is picked. */
  readonly rule: string
}

/** Is this question a tool approval? Kept with the question (`Question.isApproval`): questions sit below approvals. */
export { isApproval } from "../questions/Question.js"

/** JSON with object keys sorted, so the same input always digests the same. */
const canonical = (v: unknown): string =>
  Array.isArray(v)
    ? `[${v.map(canonical).join(",")}]`
    : typeof v === "object" && v !== null
    ? `{${
      Object.keys(v)
        .sort()
        .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
        .join(",")
    }}`
    : JSON.stringify(v) ?? "null"

/** sha256 of the tool and its input, 16 hex digits: enough to tell calls apart, short enough for a log line. */
export const inputDigest = (call: ToolCall): string => createHash("sha256").update(`${call.tool}\n${canonical(call.input)}`).digest("hex").slice(0, 16)

/** A fence longer than any run of backquotes in `text`, so the input cannot close its own code block. */
const fenceFor = (text: string): string => {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length))
  return "`".repeat(longest + 1)
}

/** Inline code that the subject's own backquotes cannot break. */
const inlineCode = (text: string): string => {
  const ticks = Math.max(0, ...[...text.matchAll(/`+/g)].map((m) => m[0].length))
  const fence = "`".repeat(ticks + 1)
  return ticks === 0 ? `${fence}${text}${fence}` : `${fence} ${text} ${fence}`
}

export interface Asking {
  readonly call: ToolCall
  readonly run: string
  readonly seat: string
  /** The rule "Always allow" would save. */
  readonly rule: string
  /** Where a saved rule applies: the repository the agent works in. */
  readonly repo: string
}

/** The "Always allow" choice for `rule`, or none when the rule is too long to be a button. */
export const alwaysChoice = (rule: string): string | undefined => {
  const label = `${ALWAYS_PREFIX}${rule}`
  return Buffer.byteLength(label, "utf8") <= CHOICE_MAX_BYTES ? label : undefined
}

/**
 * The most of a call's input the question shows: far under the detail's cap
 * (`DETAIL_MAX_BYTES`) even in four-byte characters, so a tool call of any
 * size files a question the owner can open. Past it, the input is cut, and
 * its size and sha256 say what was cut.
 */
export const INPUT_SHOWN_MAX_CHARS = 16 * 1024

/** A tool name as shown: a hook's input can name a tool with anything. */
export const toolShown = (tool: string): string => headline(tool, 120)

/** The input as the question shows it: whole, or its start with its size and sha256. */
const shownInput = (input: string): { readonly text: string; readonly note: string | undefined } => {
  if (input.length <= INPUT_SHOWN_MAX_CHARS) return { text: input, note: undefined }
  const bytes = Buffer.byteLength(input, "utf8")
  const sha = createHash("sha256").update(input, "utf8").digest("hex")
  return {
    text: `${input.slice(0, INPUT_SHOWN_MAX_CHARS)}\n…`,
    note: `The input is ${bytes} bytes (sha256 ${sha}); only its first ${INPUT_SHOWN_MAX_CHARS} characters are shown. Deny it unless you know what the rest is.`
  }
}

/** The rule an approval's mark keeps: none (`""`) when it is too long to be offered, so it can never be saved. */
export const markedRule = (rule: string): string => (alwaysChoice(rule) === undefined ? "" : rule)

/** The question's summary, detail and choices for one call. */
export const questionFor = (a: Asking): { readonly summary: string; readonly detail: string; readonly choices: ReadonlyArray<string> } => {
  const subject = subjectOf(a.call)
  const shown = shownInput(JSON.stringify(a.call.input, null, 2))
  const fence = fenceFor(shown.text)
  const always = alwaysChoice(a.rule)
  const detail = [
    `The agent in seat \`${a.seat}\`${a.run === "" ? "" : ` of run \`${a.run}\``} wants to use **${toolShown(a.call.tool)}** and needs your permission.`,
    "",
    `${fence}json`,
    shown.text,
    fence,
    "",
    ...(shown.note === undefined ? [] : [shown.note, ""]),
    always === undefined
      ? `This call's rule (\`${
        a.rule.slice(0, 200)
      }…\`) is too long to offer as "Always allow"; allow it once, or add a shorter rule to \`[approvals] allow\` in the config.`
      : `**${always}** saves the rule \`${a.rule}\` for ${a.repo}: later calls it matches run without asking. See or remove it with \`magi approvals list\` / \`magi approvals rm N\`.`
  ].join("\n")
  return {
    summary: `${toolShown(a.call.tool)}: ${inlineCode(headline(subject, 120))}`,
    detail,
    choices: always === undefined ? [ALLOW, DENY] : [ALLOW, DENY, always]
  }
}

/** What the owner decided about one call. */
export type Decision =
  | { readonly _tag: "allow"; readonly always: boolean }
  | { readonly _tag: "deny"; readonly message: string }

/** The decision an answered approval carries; a free-text answer or a reply denies, passing the owner's words on. */
export const decisionOf = (answer: string): Decision => {
  if (answer === ALLOW) return { _tag: "allow", always: false }
  if (answer.startsWith(ALWAYS_PREFIX)) return { _tag: "allow", always: true }
  if (answer === DENY) return { _tag: "deny", message: "The owner denied this tool call. Do not retry it; find another way or ask the owner." }
  return { _tag: "deny", message: `The owner did not allow this tool call, and said: ${answer}` }
}

/** The approval questions of `seat` for the same call, newest first: a re-tried call finds its own. */
export const sameCall = (questions: ReadonlyArray<Q.Question>, seat: string, run: string, digest: string): ReadonlyArray<Q.Question> =>
  questions
    .filter((q) => q.approval !== undefined && q.approval.digest === digest && q.seat === seat && q.run === run)
    .sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))

// ---------------------------------------------------------------------------
// claude's `--permission-prompt-tool` protocol

/**
 * What claude's `--permission-prompt-tool` returns, as the JSON text of the
 * tool's result. Read from the pinned claude's own schema: `{behavior:
 * "allow", updatedInput?: object, decisionClassification?}` or `{behavior:
 * "deny", message: string, interrupt?: boolean}`; `user_permanent` tells
 * claude an "always" was picked (for its telemetry only: magi keeps the rule).
 */
export const permissionPromptResult = (decision: Decision, input: Readonly<Record<string, unknown>>, byOwner = true): string =>
  JSON.stringify(
    decision._tag === "allow"
      ? { behavior: "allow", updatedInput: input, ...(byOwner ? { decisionClassification: decision.always ? "user_permanent" : "user_temporary" } : {}) }
      : { behavior: "deny", message: decision.message, ...(byOwner ? { decisionClassification: "user_reject" } : {}) }
  )

// ---------------------------------------------------------------------------
// codex's `PermissionRequest` hook protocol

/**
 * What codex's `PermissionRequest` hook prints on stdout: read from the
 * pinned 0.169.0's hook schema (`permission-request.command.output`),
 * `{hookSpecificOutput: {hookEventName: "PermissionRequest", decision:
 * {behavior: "allow" | "deny", message?}}}`. A hook that prints nothing
 * leaves the call to codex's own approval flow, so magi's hook always
 * prints one of these.
 */
export const permissionRequestHookOutput = (decision: Decision): string =>
  JSON.stringify({
    hookSpecificOutput: {
      hookEventName: "PermissionRequest",
      decision: decision._tag === "allow" ? { behavior: "allow" } : { behavior: "deny", message: decision.message }
    }
  })

/**
 * What codex sends a `PermissionRequest` hook on stdin (the pinned 0.169.0:
 * `tool_name` "Bash" with `tool_input.command` and the model's
 * justification as `tool_input.description`, or another MCP server's tool as
 * `mcp__<server>__<tool>` with its arguments; `cwd` where the seat works, and
 * session fields magi does not need).
 */
export const CodexPermissionRequest = Schema.parseJson(
  Schema.Struct({
    hook_event_name: Schema.Literal("PermissionRequest"),
    tool_name: Schema.String,
    tool_input: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
    cwd: Schema.String
  })
)
