/**
 * The stand-ins acting as a model would, for the graph's seats: one pure
 * `act` from what a turn was told (its prompt, the tool results since) to
 * the next move (a shell command or a final answer), and a thin adapter per
 * model API (Anthropic Messages, OpenAI Responses, OpenAI chat) that reads a
 * request into that view and writes the move back as the API's own reply.
 *
 * Stateless on purpose: three CLIs run at once against each stand-in, and
 * every request carries its whole conversation, so the move is read from
 * the request alone. Which seat a request is for is read from magi's
 * prompt (the words magi's prompts use), as a model would read it.
 */
import { type MessagesBody, type Reply as AnthropicReply, textOf } from "./anthropic.js"
import { type ChatRequest, contentText, type Reply as ChatReply } from "./openai-chat.js"
import { type RecordedRequest, type Step } from "./openai-responses.js"

/** What one turn has seen: the prompt magi sent it, and its tool results since, oldest first. */
export interface Seen {
  readonly prompt: string
  readonly results: ReadonlyArray<string>
}

export type Move = { readonly shell: string } | { readonly text: string }

/** How one stand-in's model behaves. */
export interface Acting {
  /** Its first ranking is prose, so magi sends it back once. */
  readonly proseFirstRanking?: boolean
  /** Its reviews, round by round; past the list, an approval. "prose" is said again when sent back. */
  readonly reviews?: ReadonlyArray<"blocker" | "approve" | "prose">
}

export const RANKING_NUDGE = "Your answer could not be read"
const VOTE_NUDGE = "Your vote could not be read"

const labelsOf = (prompt: string): string[] => [...prompt.matchAll(/^## Candidate (\w+)$/gm)].map((m) => m[1]!)
const branchesOf = (prompt: string): string[] => [...prompt.matchAll(/^Branch: `([^`]+)`$/gm)].map((m) => m[1]!)
const json = (v: unknown) => "```json\n" + JSON.stringify(v) + "\n```"

/** B first when there is a B (a fixed winner to assert on), then the rest in label order. */
export const preferB = (labels: ReadonlyArray<string>): string[] => {
  const sorted = [...labels].sort()
  return sorted.includes("B") ? ["B", ...sorted.filter((l) => l !== "B")] : sorted
}

/** What a judge says it read: the commit its `git show` printed, or that it saw none. */
const shown = (results: ReadonlyArray<string>) => /^commit ([0-9a-f]{40})/m.exec(results.join("\n"))?.[1] ?? "nothing"

const rank = (labels: ReadonlyArray<string>, seen: Seen) => {
  const ranking = preferB(labels)
  const reasons = Object.fromEntries(ranking.map((l, i) => [l, i === 0 ? `best; git show: ${shown(seen.results)}` : "fine"]))
  return { text: `I read the branches.\n\n${json({ ranking, reasons, confidence: 0.8 })}` }
}

/** The judge's whole turn: read the branches with git, then rank (or, unless sent back already, first say prose). */
const judge = (seen: Seen, o: Acting, first: string, sentBack: boolean): Move => {
  const labels = labelsOf(first)
  const branches = branchesOf(first)
  if (seen.results.length === 0) return { shell: `git log --oneline ${branches.join(" ")} -n 5` }
  if (seen.results.length === 1) return { shell: `git show --stat ${branches[labels.indexOf(preferB(labels)[0]!)] ?? branches[0]}` }
  if (o.proseFirstRanking === true && !sentBack) return { text: "They all look fine to me." }
  return rank(labels, seen)
}

/** An implementer: write a file and commit it through the shell, then say what it did (a solo one writes feature.txt with a placeholder). */
const implement = (seen: Seen, label: string | null): Move => {
  const file = label === null ? "feature.txt" : `candidate-${label}.txt`
  const text = label === null ? "TODO" : `made by candidate ${label}`
  return seen.results.length === 0
    ? { shell: `printf '${text}\\n' > ${file} && git add ${file} && git commit -q -m 'Add ${file}'` }
    : { text: `Added ${file} and committed it.` }
}

export const BLOCKER_TITLE = "The feature file says nothing"
export const REVIEW_NUDGE = "Your review could not be read"

/** A reviewer's answer for a round (1-based: one more than the earlier rounds its prompt lists). */
const review = (prompts: ReadonlyArray<string>, o: Acting): Move => {
  const asked = [...prompts].reverse().find((x) => /^# Review$/m.test(x)) ?? ""
  const round = [...asked.matchAll(/^Round \d+:$/gm)].length + 1
  const said = o.reviews?.[round - 1] ?? "approve"
  if (said === "prose") return { text: "Looks reasonable to me overall." }
  if (said === "approve") return { text: json({ verdict: "approve", findings: [] }) }
  return {
    text: json({
      verdict: "reject",
      findings: [{
        severity: "blocker",
        file: "feature.txt",
        line: 1,
        title: BLOCKER_TITLE,
        body: "It holds only TODO: write a sentence saying what the feature is."
      }]
    })
  }
}

export const FIXED_TEXT = "The feature, written out."

/** The fixer: edit and commit, read back the commit, then answer every finding as fixed by it. */
const fix = (seen: Seen): Move => {
  if (seen.results.length === 0)
    return { shell: `printf '${FIXED_TEXT}\\n' > feature.txt && git commit -q -am 'Say what the feature is' && git rev-parse --short HEAD` }
  const commit = seen.results[0]!.trim().split("\n").at(-1)!.trim()
  const ids = [...seen.prompt.matchAll(/^- (R\d+-\S+) \[/gm)].map((m) => m[1]!)
  return { text: `Fixed.\n\n${json({ replies: ids.map((id) => ({ id, fixed: true, commit })) })}` }
}

/**
 * The next move for a turn. `prompts` are every prompt the conversation
 * holds, oldest first (a session carries on: a retry or a vote comes after
 * the judge's first prompt).
 */
export const act = (prompts: ReadonlyArray<string>, seen: Seen, o: Acting = {}): Move => {
  const p = seen.prompt
  const first = prompts.find((x) => x.includes("You are one judge of a blind panel")) ?? p
  if (p.includes("# Your private vote") || p.includes(VOTE_NUDGE)) {
    const labels = /The candidates are ([\w, ]+)\./.exec(p)?.[1]?.split(", ") ?? labelsOf(first)
    return { text: json({ vote: preferB(labels)[0] }) }
  }
  // Sent back, it reads the branches again before it ranks.
  if (p.includes(RANKING_NUDGE)) return judge(seen, o, first, true)
  if (p.includes("You are one judge of a blind panel")) return judge(seen, o, first, false)
  if (/^# Review$/m.test(p) || p.includes(REVIEW_NUDGE)) return review(prompts, o)
  if (/^# Fix$/m.test(p)) return fix(seen)
  return implement(seen, /You are candidate (\w+)/.exec(p)?.[1] ?? null)
}

// ---------------------------------------------------------------------------
// Reading each API's requests, writing each API's replies

const realPrompt = (t: string) => t.trim() !== "" && !t.trimStart().startsWith("<")

/** Anthropic: user messages whose text is not a system reminder are prompts; tool results after the last one are this turn's. */
export const seenAnthropic = (body: MessagesBody): { prompts: string[]; seen: Seen } => {
  const prompts: string[] = []
  let results: string[] = []
  for (const m of body.messages) {
    if (m.role !== "user") continue
    const blocks = typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content
    const texts = blocks.filter((b) => b.type === "text").map((b) => String((b as { text: string }).text)).filter(realPrompt)
    const tool = blocks.filter((b) => b.type === "tool_result")
    if (tool.length > 0) results.push(textOf(tool))
    else if (texts.length > 0) {
      prompts.push(texts.join("\n"))
      results = []
    }
  }
  return { prompts, seen: { prompt: prompts.at(-1) ?? "", results } }
}

export const actAnthropic = (o: Acting = {}) => (body: MessagesBody): AnthropicReply => {
  const { prompts, seen } = seenAnthropic(body)
  const m = act(prompts, seen, o)
  return "shell" in m ? { tool: "Bash", input: { command: m.shell, description: "run a command" } } : m
}

/** OpenAI Responses (codex): user message items are prompts (codex's own context starts with "<"); function outputs after the last one are this turn's. */
export const seenResponses = (r: RecordedRequest): { prompts: string[]; seen: Seen } => {
  const prompts: string[] = []
  let results: string[] = []
  for (const i of r.body.input ?? []) {
    if (i.type === "message" && i.role === "user") {
      const t = (i.content ?? []).map((c) => c.text ?? "").join("")
      if (realPrompt(t)) {
        prompts.push(t)
        results = []
      }
    } else if (i.type === "function_call_output") results.push(typeof i.output === "string" ? i.output : JSON.stringify(i.output))
  }
  return { prompts, seen: { prompt: prompts.at(-1) ?? "", results } }
}

export const actResponses = (o: Acting = {}) => (r: RecordedRequest): Step => {
  const { prompts, seen } = seenResponses(r)
  const m = act(prompts, seen, o)
  // A generous yield, so a slow git on a loaded machine still answers in one call.
  return "shell" in m ? { kind: "call", name: "exec_command", args: { cmd: m.shell, yield_time_ms: 60_000 } } : { kind: "message", text: m.text }
}

/** OpenAI chat (opencode): user messages are prompts; tool messages after the last one are this turn's. */
export const seenChat = (r: ChatRequest): { prompts: string[]; seen: Seen } => {
  const prompts: string[] = []
  let results: string[] = []
  for (const m of r.messages) {
    if (m.role === "user" && realPrompt(contentText(m))) {
      prompts.push(contentText(m))
      results = []
    } else if (m.role === "tool") results.push(contentText(m))
  }
  return { prompts, seen: { prompt: prompts.at(-1) ?? "", results } }
}

export const actChat = (o: Acting = {}) => (r: ChatRequest): ChatReply => {
  const { prompts, seen } = seenChat(r)
  const m = act(prompts, seen, o)
  return "shell" in m ? { tool: "bash", args: { command: m.shell, description: "run a command" } } : m
}
