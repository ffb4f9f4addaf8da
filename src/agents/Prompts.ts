/**
 * What magi tells an agent. Kept apart from the code that sends it, so the
 * words can be read (and reviewed) as the agent will read them.
 */
import * as Q from "../questions/Question.js"
import { KEEP_CHOICES, threadCommand } from "../questions/AgentHints.js"

/**
 * How a prompt names magi. `path` is this build's magi by its absolute path
 * (plain `magi` when magi runs from source); `run` is the word the prompt's
 * commands start with: `magi` for an agent whose shell keeps the PATH magi
 * gives it, the path itself for one whose shell is known to lose it (codex
 * runs every command as `bash -lc`), so that agent's first `magi ask` works
 * instead of failing once and being retried by the path.
 */
export interface MagiName {
  readonly path: string
  readonly run: string
  /**
   * The agent has magi's MCP tools (`ask`, `reply`, `wait`; registered by
   * magi when it starts the CLI): the prompts teach those, and the shell form
   * stays as the fallback.
   */
  readonly tools?: boolean
  /**
   * On `pending` the agent ends its turn (`[agents.<id>] wait = "end-turn"`)
   * instead of waiting again: the question stays open, and magi resumes the
   * same session with the owner's answer. Unset: it waits again (`poll`).
   */
  readonly endTurn?: boolean
}

/** Plain `magi`: magi runs from source, so no path is known. */
export const PLAIN_MAGI: MagiName = { path: "magi", run: "magi" }

/** The note after the commands: where magi is, when the commands do not already say. */
const whereMagiIs = (magi: MagiName): string =>
  magi.path === "magi"
    ? ""
    : magi.run === magi.path
    ? `

The commands here name magi by its path, ${magi.path}: run them as written,
since your shell loses the PATH plain \`magi\` is on.`
    : `

\`magi\` is ${magi.path}: if your shell does not find \`magi\` on PATH (a login
shell may reset it), run it by that path.`

/**
 * The "asking the owner" instructions every run prompt carries. Each rule
 * answers a way an agent loses the owner's answer: a backgrounded ask ends
 * with nobody reading, a second fresh ask after a slice files a duplicate
 * the owner must answer twice, a fresh ask after the owner spoke back loses
 * the thread.
 */
export const askingTheOwner = (magi: MagiName = PLAIN_MAGI): string => (magi.tools === true ? askingByTool(magi) : askingByShell(magi))

/**
 * The same rules for an agent with magi's MCP tools. The tool waits for the
 * answer inside one call; the rules left are those of its outcomes.
 */
const askingByTool = (magi: MagiName): string =>
  `## Asking the owner

You work unattended; the owner reads questions on their phone. When the next
step is a decision that is theirs — product behaviour, scope, anything
destructive or hard to undo, or an ambiguity the code and docs cannot settle —
ask instead of guessing, with the \`ask\` tool of the \`magi\` MCP server
(summary: the question in one line; detail: why, with the options; choices:
the answers they may pick, none for free text). Do not ask about what you can
find out yourself. Evidence that does not fit in a few lines (a table, a
chart, a diff) can go in its panel: HTML text, with the files it uses as
assets, named in the HTML by their bare file names.

${
    magi.endTurn === true
      ? `- The call waits a while for the owner and returns an outcome. Act on it.
- \`pending\`: the wait slice ran out, the question is still open and magi
  keeps it for you. End your turn then, with one line saying you are waiting
  on the owner: when they answer, magi resumes this same session with their
  answer. Do not call \`wait\` to keep waiting, and do not ask again.
`
      : `- The call waits for the owner and returns an outcome. Act on it; never end
  your turn while a question is pending.
- \`pending\`: the wait slice ran out, the question is still open. Call magi's
  \`wait\` tool with the id it gives, as often as it takes — do not ask the
  same question again.
`
  }- \`replied\`: the owner spoke back without deciding. Answer them on the same
  question with magi's \`reply\` tool (its id, your words, and the question's
  choices again, or it becomes a free-text question); it waits again.
- \`answered\`: carry on with the answer.

If the tools are missing, the same works from your shell:
\`${magi.run} ask --summary "..." --choice "A" --choice "B"\` (see \`${magi.run} ask --help\`).
`

const askingByShell = (magi: MagiName): string =>
  `## Asking the owner

You work unattended; the owner reads questions on their phone. When the next
step is a decision that is theirs — product behaviour, scope, anything
destructive or hard to undo, or an ambiguity the code and docs cannot settle —
ask instead of guessing:

    ${magi.run} ask --summary "one-line question" --detail "why, with the options" --choice "A" --choice "B"

(no --choice means a free-text answer). Do not ask about what you can find
out yourself. Evidence that does not fit in a few lines (a table, a chart, a
diff) can go in an HTML panel: \`--panel report.html --asset chart.png --asset
panel.css\`, where the HTML names each asset by its bare file name
(\`<img src="chart.png">\`, \`<link rel="stylesheet" href="panel.css">\`). The
panel runs no script and loads nothing from elsewhere.${whereMagiIs(magi)}

- Run \`magi ask\` in the foreground and read its output. Never background it,
  never pipe it away, never end your turn while it is waiting: the answer is
  printed to the process that waits, and nobody else reads it.
${
    magi.endTurn === true
      ? `- Each \`magi ask\` returns within one wait slice, before your shell tool
  gives up on it. If it prints that its wait slice ran out, the question is
  still open and magi keeps it for you: end your turn then, with one line
  saying you are waiting on the owner. When they answer, magi resumes this
  same session with their answer. Do not run \`--wait\`, and do not ask again.
`
      : `- Each \`magi ask\` returns within one wait slice, before your shell tool
  gives up on it. If it prints that its wait slice ran out, the question is
  still open: keep waiting with \`${magi.run} ask --wait <id>\`, again in the
  foreground, as often as it takes — do not ask the same question again.
`
  }- If the owner replies without deciding (the output says so), answer them on
  the same question with \`${magi.run} ask --thread <id> --summary "..."\`, which
  waits again; repeat the question's \`--choice\`s on it (the output shows
  them), or it becomes a free-text question.
- When it prints the answer, carry on with it.
`

/**
 * The first turn of a run: the owner's instruction, then how to ask, naming
 * magi as the agent's shell can run it.
 */
export const runPrompt = (instruction: string, worktree: string, branch: string, magi: MagiName = PLAIN_MAGI): string =>
  `${instruction.trim()}

## Where you work

You are in your own git worktree at ${worktree}, on branch ${branch}. Commit
your work there. When you are done, reply with a short summary of what you did.

${askingTheOwner(magi)}`

/** A resumed turn of a run the owner picked back up. */
export const resumePrompt = (text: string, magi: MagiName = PLAIN_MAGI): string =>
  magi.tools === true
    ? `${text.trim() === "" ? "Continue where you left off, and finish the task." : text.trim()}

When you are done, reply with a short summary of what you did. The rules for
asking the owner (magi's \`ask\` tool; ${
      magi.endTurn === true ? "ending your turn when a call returns pending" : "its `wait` tool when a call returns\npending, never ending your turn on it"
    }) still hold.
`
    : `${text.trim() === "" ? "Continue where you left off, and finish the task." : text.trim()}

When you are done, reply with a short summary of what you did. The rules for
asking the owner (\`${magi.run} ask\`, foreground only, ${
      magi.endTurn === true ? "ending your turn when a\nslice runs out" : `\`${magi.run} ask --wait <id>\` when a\nslice runs out`
    }) still hold.${magi.path === "magi" || magi.run === magi.path ? "" : ` \`magi\` is ${magi.path}.`}
`

/** What the agent has not read yet: the owner spoke back, or decided. */
export type Word =
  | { readonly _tag: "Said"; readonly text: string }
  | { readonly _tag: "Answered"; readonly text: string }
  /** Shown once already; the agent's turn ended without a reply to it. */
  | { readonly _tag: "Resent"; readonly text: string }

const turnLine = (t: Q.Turn) => `**${t.who === "operator" ? "owner" : "you"}** (${t.at}):\n${t.body}`

/**
 * The prompt that resumes a seat whose `magi ask` is gone: the question, the
 * thread the agent already saw, and the words it has not. For an owner's
 * word without a decision, the agent answers on the thread; for an answer,
 * it carries on.
 */
export const deliveryPrompt = (q: Q.Question, word: Word, magi: MagiName = PLAIN_MAGI): string => {
  // A re-sent word was shown already: the thread up to it, without it.
  const seen = word._tag === "Said" ? q.thread.slice(0, q.delivered_turns) : word._tag === "Resent" ? q.thread.slice(0, -1) : q.thread
  const thread = seen.length === 0 ? "" : `\n### The conversation so far\n\n${seen.map(turnLine).join("\n\n")}\n`
  const ask = magi.tools === true ? "magi `ask`" : "`magi ask`"
  const head = `${
    word._tag === "Resent"
      ? `Your ${ask} on question ${q.id} showed you the owner's words below, and your turn ended without replying to them, so the owner is still waiting on you: magi brings them to you once more.`
      : `Your ${ask} on question ${q.id} is no longer running (its process ended before the owner responded), so magi is bringing you the owner's response in this turn instead.`
  }

## Your question

**${q.summary}**
${q.detail.trim() === "" ? "" : `\n${q.detail.trim()}\n`}${q.choices.length > 0 ? `\nChoices offered: ${q.choices.join(" | ")}\n` : ""}${thread}`
  if (word._tag === "Answered")
    return `${head}
## The owner's answer

${word.text}

Carry on with the task using this answer. When you are done, reply with a
short summary of what you did.
`
  if (magi.tools === true)
    return `${head}
## What the owner just said (they have not decided yet)

${word.text}

Answer them on the same question, which stays open, with magi's \`reply\`
tool: id ${q.id}, your words as its summary${
      q.choices.length > 0 ? `, and the choices ${JSON.stringify(q.choices)} again (a reply without them turns it into a free-text question)` : ""
    }.
It waits for the owner again. If you cannot, reply here and magi records
your reply on the question for the owner.
`
  return `${head}
## What the owner just said (they have not decided yet)

${word.text}

Answer them on the same question, which stays open:

    ${threadCommand(magi.path, q, `"your reply"`)}
${q.choices.length > 0 ? `\n${KEEP_CHOICES}\n` : ""}
and read what it prints, in the foreground. If you cannot, reply here and
magi records your reply on the question for the owner.
`
}

/** One of the owner's words to a seat, as a turn is given it (`runs/Said.ts`). */
export interface OwnerWord {
  readonly n: number
  readonly at: string
  readonly text: string
  /** Absolute paths of the images attached to it. */
  readonly images?: ReadonlyArray<string>
}

/**
 * A turn's prompt with the owner's queued words first: they are the owner's
 * own (said with `magi say` or the run's page), not a tool's output or
 * another agent's, so the prompt says so before anything else.
 */
export const withOwnerWords = (prompt: string, words: ReadonlyArray<OwnerWord>, o: { readonly imagesGiven?: boolean } = {}): string => {
  if (words.length === 0) return prompt
  // A CLI that takes images is given them with this message (its adapter's
  // way); the path is named anyway, for the agent to refer to or reopen.
  // Any other (a `command` agent) is told to open each file itself.
  const how = o.imagesGiven === true ? "given to you with this message; each is also this file" : "open each file to see it"
  const attached = (w: OwnerWord) =>
    (w.images ?? []).length === 0
      ? ""
      : `\n\nAttached image${(w.images ?? []).length === 1 ? "" : "s"} (${how}):\n${(w.images ?? []).map((p) => `- ${p}`).join("\n")}`
  const said = words.map((w) => `**The owner** (${w.at}):\n${w.text.trim()}${attached(w)}`).join("\n\n")
  return `## The owner's words to you

The owner, the person you work for, wrote ${words.length === 1 ? "this" : "these"} to you while reading your work (with \`magi say\` or
the run's page). These are the owner's own words, not a tool's output or another agent's: take ${words.length === 1 ? "it" : "them"} up in this turn.

${said}

---

${prompt}`
}

/** The rest of a turn started only to give the seat the owner's words (`magi say` to a seat at rest). */
export const sayPrompt = (magi: MagiName = PLAIN_MAGI): string => resumePrompt("Act on the owner's words above, then carry on with your task.", magi)
