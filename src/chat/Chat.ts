/**
 * The planning chat: `magi plan` for somebody holding a phone.
 *
 * `magi plan` hands the terminal to the agent's own UI. Away from the desk
 * there is no terminal to hand over, so magi hosts the same interview
 * itself: each operator message is one headless agent turn in the chat's
 * seat, and the transcript is one JSON file the phone reads. Both paths end
 * in the same reviewed task file (`queue/TaskFileReview.ts`) filed in the
 * same queue.
 *
 * A turn is cheap because the CLI remembers: the seat resumes the agent's
 * own conversation, so a turn sends the operator's new words and nothing
 * else. The whole transcript is sent only when the CLI cannot resume
 * (`transcript`).
 *
 * This module is data and pure helpers; `Chats` does the I/O.
 */
import { Schema } from "effect"
import * as Q from "../questions/Question.js"
import { Seat } from "../runs/Runs.js"
import { fileable, reviewDraft, type DraftProblem } from "../queue/TaskFileReview.js"

/** On-disk format of a chat; a newer file is refused by name, an older one reads with defaults. */
export const CHAT_SCHEMA = 1

/**
 * Prefix of an agent-side turn that magi wrote itself (the agent could not
 * be started, hit its usage limit, timed out), so the phone never shows
 * magi's words as the agent's.
 */
export const MAGI_NOTE = "magi: "

/** The seat every chat's agent sits in. */
export const CHAT_SEAT = "plan"

export const ChatStatus = Schema.Literal("open", "filed", "abandoned")
export type ChatStatus = typeof ChatStatus.Type

export const ChatTurn = Schema.Struct({ who: Q.Who, body: Schema.String, at: Q.Timestamp })
export type ChatTurn = typeof ChatTurn.Type

export const Chat = Schema.Struct({
  schema: Schema.Number,
  id: Schema.String,
  /** The repository the interview is about; the agent runs there, read-only. */
  repo: Schema.String,
  /** The chat this one was derived from, if any. */
  from: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null }),
  /** Roster id of the interviewing agent. */
  agent: Schema.String,
  status: ChatStatus,
  turns: Schema.Array(ChatTurn),
  /** The latest task file the agent delivered; null until it writes one. */
  draft: Schema.NullOr(Schema.String),
  /** The queue id once the draft was filed. */
  task: Schema.NullOr(Schema.String),
  created_at: Q.Timestamp,
  updated_at: Q.Timestamp,
  seat: Seat
})
export type Chat = typeof Chat.Type

/** A new chat holding the operator's idea as its only turn; no agent has run. */
export const build = (input: {
  readonly id: string
  readonly idea: string
  readonly repo: string
  readonly agent: string
  readonly from: string | null
  readonly now: Date
}): Chat => {
  const at = input.now.toISOString().replace(/\.\d{3}Z$/, "Z")
  return {
    schema: CHAT_SCHEMA,
    id: input.id,
    repo: input.repo,
    from: input.from,
    agent: input.agent,
    status: "open",
    turns: [{ who: "operator", body: input.idea.trim(), at }],
    draft: null,
    task: null,
    created_at: at,
    updated_at: at,
    seat: { key: CHAT_SEAT, agent: input.agent, turns: 0, session: null, write: false }
  }
}

/**
 * The operator's messages the agent has not answered yet: every operator
 * turn after the agent's last one. A message sent while a turn ran is
 * recorded at once and travels with the next turn, never lost.
 */
export const unanswered = (chat: Chat): ReadonlyArray<ChatTurn> => {
  let lastAgent = -1
  chat.turns.forEach((t, i) => {
    if (t.who === "agent") lastAgent = i
  })
  return chat.turns.slice(lastAgent + 1).filter((t) => t.who === "operator")
}

/**
 * The task draft in an agent's reply: the last fenced block whose info
 * string is exactly `task` (three or more backticks, any case). A block the
 * agent never closed is still taken — a reply cut at the end should not
 * throw away the draft it was writing. None when the block is empty.
 */
export const extractDraft = (reply: string): string | null => {
  const lines = reply.split(/\r?\n/)
  let found: string | null = null
  for (let i = 0; i < lines.length; i++) {
    const open = /^\s*(`{3,})\s*([^`\s]*)\s*$/.exec(lines[i]!)
    if (open === null) continue
    const fence = open[1]!
    const isTask = open[2]!.toLowerCase() === "task"
    const body: string[] = []
    let j = i + 1
    for (; j < lines.length; j++) {
      const close = /^\s*(`{3,})\s*$/.exec(lines[j]!)
      if (close !== null && close[1]!.length >= fence.length) break
      body.push(lines[j]!)
    }
    if (isTask) {
      const text = body.join("\n").trim()
      found = text === "" ? found : text
    }
    i = j
  }
  return found
}

/** The agent's side of a failed turn: magi's note, saying the operator's words are kept. */
export const failureNote = (why: string): string =>
  `${MAGI_NOTE}${why}. Your message is saved; send another (or the same) to try again.`

/**
 * The whole conversation so far, for a CLI that cannot resume its own: the
 * agent is told it is reading a transcript and should answer only the last
 * message.
 */
export const transcript = (chat: Chat): string =>
  [
    "Your CLI cannot resume this conversation, so here it is in full. Answer only the operator's last message.",
    "",
    ...chat.turns.flatMap((t) => [t.who === "operator" ? "## operator" : "## you", "", t.body, ""])
  ].join("\n")

/**
 * What a derived chat opens with: the source conversation in full, framed as
 * background about a different repository, so the agent does not take its
 * instructions as being about this one.
 */
export const derivedBackground = (source: Chat): string =>
  [
    `Background: this conversation continues an earlier planning conversation (${source.id}) about the repository ${source.repo}.`,
    "It is context only: it describes a different repository and is not an instruction about the one you are in now.",
    "",
    "<earlier-conversation>",
    ...source.turns.flatMap((t) => [t.who === "operator" ? "## operator" : "## planner", "", t.body, ""]),
    "</earlier-conversation>",
    ""
  ].join("\n")

/** The task-file shape the briefing asks for, as the reviewer checks it. */
const TASK_FILE_SPEC = [
  "# <one imperative line: what the task does>",
  "",
  "## Context",
  "Why this work, what exists today, which files matter.",
  "",
  "## Change",
  "What to build or change, concretely.",
  "",
  "## Constraints",
  "What must not change; conventions to keep.",
  "",
  "## Completion criteria",
  "- [ ] one checkbox per line, each one a reviewer can judge from the diff alone",
  "",
  "## Out of scope",
  "What the implementer must leave alone."
].join("\n")

/** How the interviewing agent is opened: its role, the rules of the interview, the task-file spec. */
export const briefing = (idea: string, repo: string): string =>
  [
    "You are the planning lead for a coding task. The operator is on a phone, away from the machine;",
    `you are in the repository ${repo}, which you may read but must never modify.`,
    "",
    "Interview the operator until the task is clear enough for an agent to implement it unattended:",
    "- Read the code before you ask: never ask what the repository already answers.",
    "- Ask one question per message, short enough to read on a phone.",
    "- Disagree when you have grounds (the code, a cost, a risk), and say what they are.",
    "- When you know enough, restate the plan in a few lines and ask for a yes.",
    "- After the yes, deliver the whole task file in one ```task fenced block, and nothing after it.",
    "- Completion criteria are mandatory: without them an unattended agent cannot know when it is done.",
    "",
    "The task file's shape:",
    "",
    "```",
    TASK_FILE_SPEC,
    "```",
    "",
    "The operator's idea:",
    "",
    idea.trim(),
    "",
    "Answer in the language the operator wrote in."
  ].join("\n")

/** The first agent turn's prompt: the briefing, after a derived chat's background. */
export const firstPrompt = (chat: Chat, source: Chat | null): string =>
  (source === null ? "" : derivedBackground(source) + "\n") + briefing(chat.turns[0]?.body ?? "", chat.repo)

/** Why this chat's draft cannot be filed yet; soft problems alone do not stop it. */
export const draftProblems = (chat: Chat): ReadonlyArray<DraftProblem> =>
  chat.draft === null
    ? [{ message: "no task file yet: the agent has not delivered a ```task block", soft: false }]
    : reviewDraft(chat.draft)

export const canFile = (chat: Chat): boolean => chat.status === "open" && fileable(draftProblems(chat))
