/**
 * The task file an agent writes in a planning reply: a fenced block whose
 * info string is `task`. Import-free, so the page reads replies by the same
 * rule as the server (`Chat.ts`).
 */

/** Each fenced block of `reply`: where it starts and ends (lines), whether it is a task block, and its text. */
const fencedBlocks = (
  lines: ReadonlyArray<string>
): ReadonlyArray<{ readonly from: number; readonly to: number; readonly isTask: boolean; readonly text: string }> => {
  const blocks: Array<{ from: number; to: number; isTask: boolean; text: string }> = []
  for (let i = 0; i < lines.length; i++) {
    const open = /^\s*(`{3,})\s*([^`\s]*)\s*$/.exec(lines[i]!)
    if (open === null) continue
    const fence = open[1]!
    const body: string[] = []
    let j = i + 1
    for (; j < lines.length; j++) {
      const close = /^\s*(`{3,})\s*$/.exec(lines[j]!)
      if (close !== null && close[1]!.length >= fence.length) break
      body.push(lines[j]!)
    }
    blocks.push({ from: i, to: Math.min(j, lines.length - 1), isTask: open[2]!.toLowerCase() === "task", text: body.join("\n").trim() })
    i = j
  }
  return blocks
}

/**
 * The task draft in an agent's reply: the last fenced block whose info
 * string is exactly `task` (three or more backticks, any case). A block the
 * agent never closed is still taken — a reply cut at the end should not
 * throw away the draft it was writing. None when the block is empty.
 */
export const extractDraft = (reply: string): string | null => {
  let found: string | null = null
  for (const block of fencedBlocks(reply.split(/\r?\n/))) if (block.isTask && block.text !== "") found = block.text
  return found
}

/**
 * `reply` with the task block holding `draft` said in one line instead: the
 * page shows the draft under the conversation, and a task file shown twice
 * (in the reply, and again as the draft) is one too many.
 */
export const withoutDraft = (reply: string, draft: string | null, instead: string): string => {
  if (draft === null) return reply
  const lines = reply.split(/\r?\n/)
  const block = [...fencedBlocks(lines)].reverse().find((b) => b.isTask && b.text === draft)
  if (block === undefined) return reply
  return [...lines.slice(0, block.from), instead, ...lines.slice(block.to + 1)].join("\n")
}
