/** A turn's output read as a transcript, from each CLI's own printing, bounded and plain. */
import { describe, expect, it } from "vitest"
import { ENTRIES_KEPT, LINE_PARSE_MAX_CHARS, transcriptOf } from "../../src/agents/Transcript.js"

const lines = (events: ReadonlyArray<unknown>) => events.map((e) => JSON.stringify(e)).join("\n") + "\n"

describe("transcriptOf", () => {
  it.each([
    [
      "codex's events: a message, a command with its exit, a file change",
      lines([
        { type: "thread.started", thread_id: "t" },
        {
          type: "item.completed",
          item: { id: "1", type: "command_execution", command: "npm test", aggregated_output: "\n3 passed\nmore", exit_code: 0, status: "completed" }
        },
        { type: "item.completed", item: { id: "2", type: "file_change", changes: [{ path: "src/a.ts", kind: "update" }], status: "completed" } },
        { type: "item.completed", item: { id: "3", type: "command_execution", command: "false", aggregated_output: "", exit_code: 1 } },
        { type: "item.completed", item: { id: "4", type: "agent_message", text: "Done." } },
        { type: "turn.completed", usage: { input_tokens: 1, output_tokens: 1 } }
      ]),
      [
        { kind: "tool", name: "shell", target: "npm test", result: "3 passed", failed: false },
        { kind: "tool", name: "edit", target: "update src/a.ts", result: "completed", failed: false },
        { kind: "tool", name: "shell", target: "false", result: "", failed: true },
        { kind: "message", text: "Done." }
      ]
    ],
    [
      "opencode's events: text, a tool with its input and output, an error",
      lines([
        { type: "step_start", part: { type: "step-start" } },
        { type: "tool_use", part: { type: "tool", tool: "bash", state: { status: "completed", input: { command: "ls" }, output: "a\nb" } } },
        { type: "tool_use", part: { type: "tool", tool: "read", state: { status: "error", input: { filePath: "/x" }, error: "no such file" } } },
        { type: "text", part: { type: "text", text: "All read." } },
        { type: "error", error: { name: "APIError", data: { message: "overloaded" } } }
      ]),
      [
        { kind: "tool", name: "bash", target: "ls", result: "a", failed: false },
        { kind: "tool", name: "read", target: "/x", result: "no such file", failed: true },
        { kind: "message", text: "All read." },
        { kind: "error", text: "overloaded" }
      ]
    ],
    [
      "claude's result JSON, and its stream's tool use with the result that follows",
      lines([
        { type: "assistant", message: { content: [{ type: "tool_use", name: "Bash", input: { command: "git status" } }] } },
        { type: "user", message: { content: [{ type: "tool_result", content: "clean", is_error: false }] } },
        { type: "result", subtype: "success", is_error: false, result: "It is clean." }
      ]),
      [{ kind: "tool", name: "Bash", target: "git status", result: "clean", failed: false }, { kind: "message", text: "It is clean." }]
    ],
    ["a command agent's lines, as one message", "working\nstill working\ndone\n", [{ kind: "message", text: "working\nstill working\ndone" }]]
  ])("reads %s", (_what, out, entries) => {
    expect(transcriptOf(out)).toEqual(entries)
  })

  it("strips ANSI escapes and control characters, keeps HTML as characters, and cuts a result to one short line", () => {
    const out = lines([{
      type: "item.completed",
      item: {
        type: "command_execution",
        command: "\u001b[31mrm\u001b[0m -rf",
        aggregated_output: `<a href="javascript:alert(1)">x</a>\u0007${"y".repeat(500)}`,
        exit_code: 0
      }
    }])
    const [e] = transcriptOf(out)
    expect(e).toMatchObject({ kind: "tool", target: "rm -rf" })
    const result = (e as { result: string }).result
    expect(result.startsWith(`<a href="javascript:alert(1)">x</a>yyy`)).toBe(true)
    expect(result.length).toBeLessThan(260)
  })

  it("names a line too long to parse instead of parsing it, reads invalid JSON as text, and keeps the newest entries only", () => {
    const huge = `{"type":"item.completed","item":{"type":"agent_message","text":"${"x".repeat(LINE_PARSE_MAX_CHARS)}"}}`
    expect(transcriptOf(huge)).toEqual([{ kind: "error", text: `a line of ${huge.length} characters, not shown (the whole output is in the artifact)` }])
    expect(transcriptOf("{not json\n")).toEqual([{ kind: "message", text: "{not json" }])
    const many = lines(Array.from({ length: ENTRIES_KEPT * 3 }, (_, i) => ({ type: "item.completed", item: { type: "agent_message", text: `m${i}` } })))
    const kept = transcriptOf(many)
    expect(kept).toHaveLength(ENTRIES_KEPT)
    expect(kept.at(-1)).toEqual({ kind: "message", text: `m${ENTRIES_KEPT * 3 - 1}` })
  })
})
