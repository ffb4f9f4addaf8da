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
    if (isAgentReply(t)) lastAgent = i
  })
  return chat.turns.slice(lastAgent + 1).filter((t) => t.who === "operator")
}

/** An agent-side turn magi wrote itself (a failure note), not the agent. */
export const isMagiNote = (t: ChatTurn): boolean => t.who === "agent" && t.body.startsWith(MAGI_NOTE)

/**
 * Something the agent really said. A failure note answers nothing: the
 * operator's words before it are still waiting for the agent.
 */
export const isAgentReply = (t: ChatTurn): boolean => t.who === "agent" && !t.body.startsWith(MAGI_NOTE)

/**
 * Put the agent's side of a turn right after the last turn it was sent
 * (`seen`, the number of turns when the turn began), not at the end: an
 * operator message recorded while the agent was working stays after the
 * reply, unanswered, and goes with the next turn.
 */
export const insertAgentTurn = (chat: Chat, seen: number, body: string, at: string): Chat => ({
  ...chat,
  turns: [...chat.turns.slice(0, seen), { who: "agent", body, at }, ...chat.turns.slice(seen)]
})

export { extractDraft } from "./TaskBlock.js"

/**
 * The most of one message a chat keeps. A chat is one file read whole, so a
 * turn that printed megabytes must not make it unreadable: an operator's
 * message over this is refused, an agent's reply is cut (its draft is taken
 * from the whole reply first, and all of it stays in the turn's artifacts).
 * 64 KiB is pages of questions, far more than an interview turn needs.
 */
export const MAX_TURN_CHARS = 64 * 1024

/** `text` within `MAX_TURN_CHARS`, saying where the rest is when it was cut. */
export const clipReply = (text: string, rest: string): string =>
  text.length <= MAX_TURN_CHARS
    ? text
    : `${text.slice(0, MAX_TURN_CHARS)}\n\n[${text.length - MAX_TURN_CHARS} more characters not kept here; the whole reply is in ${rest}]`

/** How long one agent turn may take before magi gives up on it and says so. */
export const TURN_TIMEOUT_SECONDS = 300

/** What a turn that ran came to, as far as judging it goes. */
export interface TurnOutcome {
  readonly usable: boolean
  readonly timedOut: boolean
  readonly quota: string | null
  readonly exitCode: number | null
  readonly text: string
  /** The adapter's plain account of what went wrong, when it has one. */
  readonly problem?: string | undefined
}

/** Why a turn that ran gave nothing the operator can use, or null when it did. */
export const turnFailure = (agent: string, r: TurnOutcome): string | null => {
  if (r.usable) return null
  // The reset time when the CLI said one; "" when it did not.
  if (r.quota !== null) return `${agent} hit its usage limit${r.quota === "" ? "" : ` (resets: ${r.quota})`}`
  if (r.timedOut) return `${agent} did not answer within ${TURN_TIMEOUT_SECONDS} s and was stopped`
  if (r.problem !== undefined && r.problem !== "") return `${agent} failed: ${r.problem}`
  const said = r.text.trim().split("\n")[0]?.slice(0, 200) ?? ""
  return `${agent} gave no usable answer (exit ${r.exitCode ?? "none"}${said === "" ? "" : `: ${said}`})`
}

/** The agent's side of a failed turn: magi's note, saying the operator's words are kept. */
export const failureNote = (why: string): string => `${MAGI_NOTE}${why}. Your message is saved; send another (or the same) to try again.`

/**
 * The whole conversation so far, for a CLI that cannot resume its own: the
 * agent is told it is reading a transcript and should answer only the last
 * message.
 */
export const transcript = (chat: Chat): string =>
  [
    "Your CLI cannot resume this conversation, so here it is in full. Answer only the operator's last message.",
    "",
    // magi's failure notes were never the agent's words; it should not
    // read them as something it said.
    ...chat.turns.filter((t) => !isMagiNote(t)).flatMap((t) => [t.who === "operator" ? "## operator" : "## you", "", t.body, ""])
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

/** The interview's rules, the same at a phone and at a terminal. */
const INTERVIEW_RULES = [
  "Interview the operator until the task is clear enough for an agent to implement it unattended:",
  "- Read the code before you ask: never ask what the repository already answers.",
  "- Ask one question per message, short enough to read on a phone.",
  "- Disagree when you have grounds (the code, a cost, a risk), and say what they are.",
  "- When you know enough, restate the plan in a few lines and ask for a yes.",
  "- Completion criteria are mandatory: without them an unattended agent cannot know when it is done."
]

const specAndIdea = (idea: string) => [
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
]

/** How the interviewing agent is opened: its role, the rules of the interview, the task-file spec. */
export const briefing = (idea: string, repo: string): string =>
  [
    "You are the planning lead for a coding task. The operator is on a phone, away from the machine;",
    `you are in the repository ${repo}, which you may read but must never modify.`,
    "",
    ...INTERVIEW_RULES,
    "- After the yes, deliver the whole task file in one ```task fenced block, and nothing after it.",
    ...specAndIdea(idea)
  ].join("\n")

/**
 * `magi plan`'s briefing: the same interview at a terminal, ending in a file
 * at `taskFile` (the one file the agent may write) instead of a fenced block,
 * because magi does not see the agent's own terminal UI.
 */
export const terminalBriefing = (idea: string, repo: string, taskFile: string): string =>
  [
    "You are the planning lead for a coding task. The operator is at this terminal with you;",
    `you are in the repository ${repo}, which you may read but must never modify.`,
    "",
    ...INTERVIEW_RULES,
    `- After the yes, write the whole task file to ${taskFile} (the only file you may write), then tell the operator to exit;`,
    "  magi reviews the file and offers to queue it when you exit.",
    ...specAndIdea(idea === "" ? "(none given yet: ask the operator what they want done)" : idea)
  ].join("\n")

/** The first agent turn's prompt: the briefing, after a derived chat's background. */
export const firstPrompt = (chat: Chat, source: Chat | null): string =>
  (source === null ? "" : derivedBackground(source) + "\n") + briefing(chat.turns[0]?.body ?? "", chat.repo)

/**
 * What one agent turn sends. The first (no reply from the agent yet, so a
 * fresh session): the briefing, with every operator message as the idea.
 * After that, when the CLI can resume its own conversation: only the
 * operator's messages it has not seen. When it cannot: the briefing again
 * and the whole transcript, since a fresh session knows neither.
 */
export const turnPrompt = (chat: Chat, canResume: boolean, source: Chat | null): string => {
  if (!chat.turns.some(isAgentReply)) {
    const idea = chat.turns.filter((t) => t.who === "operator").map((t) => t.body).join("\n\n")
    return firstPrompt({ ...chat, turns: [{ who: "operator", body: idea, at: chat.created_at }] }, source)
  }
  if (canResume) return unanswered(chat).map((t) => t.body).join("\n\n")
  return briefing(chat.turns[0]?.body ?? "", chat.repo) + "\n\n" + transcript(chat)
}

/** The roster entry a chat is held by, as far as the chat needs it. */
export interface Candidate {
  readonly id: string
  readonly kind: string
}

/**
 * Who interviews: the agent asked for, else `[roles] chatter`, else the
 * first claude on the roster (the one that follows an interview best), else
 * the roster's first. An agent asked for by name that the roster lacks is a
 * refusal (the string says why), never a quiet substitute.
 */
export const chooseAgent = (
  roster: ReadonlyArray<Candidate>,
  asked: string | null,
  chatter: string | null
): { readonly agent: string } | { readonly refused: string } => {
  const ids = roster.map((a) => a.id)
  if (asked !== null)
    return ids.includes(asked) ? { agent: asked } : { refused: `no agent \`${asked}\` on the roster (it has: ${ids.join(", ") || "none"})` }
  if (chatter !== null)
    return ids.includes(chatter)
      ? { agent: chatter }
      : { refused: `[roles] chatter names \`${chatter}\`, which is not on the roster (it has: ${ids.join(", ") || "none"})` }
  const pick = roster.find((a) => a.kind === "claude") ?? roster[0]
  return pick === undefined
    ? { refused: "no agent to interview with: configure [agents.<id>] or put claude, codex or opencode on PATH" }
    : { agent: pick.id }
}

/** Why this chat's draft cannot be filed yet; soft problems alone do not stop it. */
export const draftProblems = (chat: Chat): ReadonlyArray<DraftProblem> =>
  chat.draft === null
    ? [{ message: "no task file yet: the agent has not delivered a ```task block", soft: false }]
    : reviewDraft(chat.draft)

export const canFile = (chat: Chat): boolean => chat.status === "open" && fileable(draftProblems(chat))
