/** What a turn cost, read from each CLI's own report, and a seat's sum over its turns. */
import { describe, expect, it } from "vitest"
import * as Agents from "../../src/agents/Agents.js"
import { ofClaudeResult, ofCodexEvents, ofOpencodeEvents, TURNS_KEPT, usageWords, withTurn } from "../../src/agents/Usage.js"

const lines = (events: ReadonlyArray<unknown>) => events.map((e) => JSON.stringify(e)).join("\n") + "\n"

describe("a turn's usage as each CLI reports it", () => {
  it.each(
    [
      [
        "claude's result JSON (cached prompt tokens counted in)",
        "claude",
        JSON.stringify({
          type: "result",
          subtype: "success",
          result: "done",
          session_id: "s",
          total_cost_usd: 0.0421,
          usage: { input_tokens: 12, cache_creation_input_tokens: 3000, cache_read_input_tokens: 20000, output_tokens: 345 }
        }),
        { input_tokens: 23012, output_tokens: 345, cost_usd: 0.0421 }
      ],
      [
        "codex's turn.completed events, summed, no cost",
        "codex",
        lines([
          { type: "thread.started", thread_id: "t" },
          { type: "item.completed", item: { type: "agent_message", text: "done" } },
          { type: "turn.completed", usage: { input_tokens: 1000, cached_input_tokens: 800, output_tokens: 50 } },
          { type: "turn.completed", usage: { input_tokens: 200, output_tokens: 5 } }
        ]),
        { input_tokens: 1200, output_tokens: 55, cost_usd: null }
      ],
      [
        "opencode's step_finish parts, summed, reasoning counted as output",
        "opencode",
        lines([
          { type: "text", sessionID: "ses_1", part: { type: "text", text: "done" } },
          {
            type: "step_finish",
            sessionID: "ses_1",
            part: { type: "step-finish", cost: 0.001, tokens: { input: 900, output: 40, reasoning: 10, cache: { read: 100, write: 0 } } }
          },
          {
            type: "step_finish",
            sessionID: "ses_1",
            part: { type: "step-finish", cost: 0.002, tokens: { input: 50, output: 5, reasoning: 0, cache: { read: 0, write: 0 } } }
          }
        ]),
        { input_tokens: 1050, output_tokens: 55, cost_usd: 0.003 }
      ]
    ] as const
  )("%s", (_what, kind, out, usage) => {
    const reply = Agents.parse(kind, out, "", 0, false)
    expect(reply.usable).toBe(true)
    expect(reply.usage?.input_tokens).toBe(usage.input_tokens)
    expect(reply.usage?.output_tokens).toBe(usage.output_tokens)
    if (usage.cost_usd === null) expect(reply.usage?.cost_usd).toBeNull()
    else expect(reply.usage?.cost_usd).toBeCloseTo(usage.cost_usd, 10)
  })

  it("reads nothing where a CLI reports nothing, and never a negative or non-number count", () => {
    expect(Agents.parse("command", "just text\n", "", 0, false).usage).toBeUndefined()
    expect(ofClaudeResult({ result: "x" })).toBeUndefined()
    expect(ofCodexEvents([{ type: "turn.completed" }])).toBeUndefined()
    expect(ofOpencodeEvents([{ part: { type: "step-finish" } }])).toBeUndefined()
    expect(ofClaudeResult({ usage: { input_tokens: -5, output_tokens: "9" }, total_cost_usd: "free" })).toEqual({
      input_tokens: 0,
      output_tokens: 0,
      cost_usd: null
    })
  })
})

describe("a seat's usage", () => {
  it("sums its turns, keeps each of the newest, and leaves the cost null only while no turn reported one", () => {
    const one = withTurn(undefined, 1, { input_tokens: 10, output_tokens: 1, cost_usd: null })
    expect(one).toEqual({ input_tokens: 10, output_tokens: 1, cost_usd: null, turns: [{ turn: 1, input_tokens: 10, output_tokens: 1, cost_usd: null }] })
    const two = withTurn(one, 2, { input_tokens: 5, output_tokens: 2, cost_usd: 0.5 })
    expect(two).toMatchObject({ input_tokens: 15, output_tokens: 3, cost_usd: 0.5 })
    expect(withTurn(two, 3, undefined)).toBe(two)
    let many = two
    for (let t = 3; t < TURNS_KEPT + 50; t++) many = withTurn(many, t, { input_tokens: 1, output_tokens: 1, cost_usd: 0 })
    expect(many!.turns).toHaveLength(TURNS_KEPT)
    expect(many!.input_tokens).toBe(15 + TURNS_KEPT + 47)
  })

  it("is said in a few words", () => {
    expect(usageWords({ input_tokens: 23012, output_tokens: 345, cost_usd: 0.0421 })).toBe("23.0k tokens in, 345 out, $0.0421")
    expect(usageWords({ input_tokens: 1_250_000, output_tokens: 9999, cost_usd: null })).toBe("1.25M tokens in, 9999 out")
    expect(usageWords({ input_tokens: 23012, output_tokens: 345, cost_usd: null, context_tokens: 8200, context_window: 200_000 })).toBe(
      "23.0k tokens in, 345 out, context 8200 of 200.0k"
    )
  })

  it("keeps the context its latest turn said, not a sum, and the one before when a turn says none", () => {
    const one = withTurn(undefined, 1, { input_tokens: 10, output_tokens: 1, cost_usd: null, context_tokens: 9000, context_window: 200_000 })
    const two = withTurn(one, 2, { input_tokens: 30, output_tokens: 1, cost_usd: null, context_tokens: 12_000, context_window: 200_000 })
    expect(two).toMatchObject({ input_tokens: 40, context_tokens: 12_000, context_window: 200_000 })
    expect(two!.turns.map((t) => t.context_tokens)).toEqual([9000, 12_000])
    expect(withTurn(two, 3, { input_tokens: 1, output_tokens: 1, cost_usd: null })).toMatchObject({ context_tokens: 12_000 })
  })
})
