/**
 * A running turn's output read as it arrives (issue 32.1), from what the
 * pinned real CLIs printed (test/fixtures/live/, recorded by
 * test/compat/live.compat.test.ts), and from what a hostile CLI might print.
 */
import * as NodeFs from "node:fs"
import { describe, expect, it } from "vitest"
import * as Agents from "../../src/agents/Agents.js"
import { eventsOfLine, LINE_MAX_BYTES, type LiveEvent, parser } from "../../src/agents/LiveEvents.js"
import { transcriptOf } from "../../src/agents/Transcript.js"

const fixture = (cli: string) => NodeFs.readFileSync(`test/fixtures/live/${cli}.jsonl`, "utf8")
const bytes = (s: string) => new TextEncoder().encode(s)

/** Fed in chunks of `size` bytes, as a pipe might deliver them. */
const fed = (out: Uint8Array, size: number): ReadonlyArray<LiveEvent> => {
  const p = parser()
  const events: LiveEvent[] = []
  for (let i = 0; i < out.length; i += size) events.push(...p.feed(out.subarray(i, i + size)))
  return [...events, ...p.flush()]
}

describe("live events from each real CLI's output", () => {
  it.each([
    ["claude", "Bash", "echo live-marker-42"],
    ["codex", "shell", "/bin/bash -lc 'echo live-marker-42'"],
    ["opencode", "bash", "echo live-marker-42"]
  ])("%s: the command as a tool call, its result, and the message, however the bytes are cut", (cli, name, target) => {
    const whole = fed(bytes(fixture(cli)), 1 << 20)
    for (const size of [1, 3, 64]) expect(fed(bytes(fixture(cli)), size)).toEqual(whole)
    const call = whole.find((e) => e.kind === "tool")
    expect(call).toMatchObject({ kind: "tool", name, target })
    const id = call?.kind === "tool" ? call.id : "?"
    expect(id).not.toBe("")
    expect(whole.filter((e) => e.kind === "result")).toEqual([{ kind: "result", id, text: "live-marker-42", failed: false }])
    expect(whole.filter((e) => e.kind === "message")).toEqual([{ kind: "message", text: "It printed live-marker-42." }])
  })

  it("claude's stream still gives the reply, the session and the usage, from its closing result, once", () => {
    const out = fixture("claude")
    const result = JSON.parse(out.trim().split("\n").at(-1)!)
    expect(result.type).toBe("result")
    const reply = Agents.parse("claude", out, "", 0, false)
    expect(reply).toMatchObject({ usable: true, text: "It printed live-marker-42.", session: result.session_id })
    expect(reply.usage?.output_tokens).toBe(result.usage.output_tokens)
    expect(reply.usage?.cost_usd).toBe(result.total_cost_usd)
    // The context the turn ended with: its last request's prompt, not the turn's sum; the model's window.
    const lastRequest = out.trim().split("\n").map((l) => JSON.parse(l)).findLast((e) => e.type === "assistant").message.usage.input_tokens
    expect(lastRequest).toBeLessThan(result.usage.input_tokens)
    expect(reply.usage).toMatchObject({
      context_tokens: lastRequest,
      context_window: Object.values(result.modelUsage as Record<string, { contextWindow: number }>)[0]!.contextWindow
    })
    // The finished turn's transcript says the last message once, not again for the result.
    expect(transcriptOf(out).filter((e) => e.kind === "message")).toEqual([{ kind: "message", text: "It printed live-marker-42." }])
  })

  it("a claude turn cut short (no result) still gives its session, from the stream's first event", () => {
    const [init] = fixture("claude").split("\n")
    const reply = Agents.parse("claude", `${init}\n`, "", null, true)
    expect(reply.session).toBe(JSON.parse(init!).session_id)
    expect(reply.usable).toBe(false)
  })

  it("a command agent's lines are messages", () => {
    expect(fed(bytes("working\n\ndone"), 2)).toEqual([{ kind: "message", text: "working" }, { kind: "message", text: "done" }])
  })
})

describe("live events from bad output", () => {
  it("ANSI escapes, controls and invalid UTF-8 are gone; HTML and a javascript: link stay plain characters", () => {
    const raw = new Uint8Array([...bytes("\u001b[31mred\u001b[0m \u0007<b>x</b> "), 0xff, 0xfe, 0xc3, ...bytes(" [a](javascript:alert(1))\n")])
    expect(fed(raw, 5)).toEqual([{ kind: "message", text: "red <b>x</b>  [a](javascript:alert(1))" }])
    const tool = eventsOfLine(
      JSON.stringify({
        type: "item.completed",
        item: { id: "i", type: "command_execution", aggregated_output: "<img src=x onerror=alert(1)>\nmore", exit_code: 2 }
      })
    )
    expect(tool).toEqual([{ kind: "result", id: "i", text: "<img src=x onerror=alert(1)>", failed: true }])
  })

  it("a line of 50 MB is dropped as it streams, said by its length, and the next line reads", () => {
    const p = parser()
    const chunk = new Uint8Array(64 * 1024).fill(0x61)
    const events: LiveEvent[] = []
    for (let i = 0; i < (50 * 1024 * 1024) / chunk.length; i++) events.push(...p.feed(chunk))
    events.push(...p.feed(bytes("\nnext line\n")))
    expect(events).toEqual([
      { kind: "error", text: `a line of ${50 * 1024 * 1024} bytes, not shown (the whole output is in the turn's .out artifact)` },
      { kind: "message", text: "next line" }
    ])
  })

  it("a line just under the bound is read, one just over is not", () => {
    const under = `{"type":"item.completed","item":{"id":"m","type":"agent_message","text":"${"x".repeat(LINE_MAX_BYTES - 80)}"}}`
    expect(fed(bytes(`${under}\n`), 4096)[0]?.kind).toBe("message")
    expect(fed(bytes(`${"y".repeat(LINE_MAX_BYTES + 1)}\n`), 4096)[0]?.kind).toBe("error")
  })

  it("every text is cut to the transcript's bounds", () => {
    const [m] = eventsOfLine("z".repeat(10_000))
    expect(m?.kind === "message" && m.text.length).toBeLessThan(4100)
  })
})
