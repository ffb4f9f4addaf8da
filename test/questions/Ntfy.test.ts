import { describe, expect, it } from "vitest"
import * as Ntfy from "../../src/questions/Ntfy.js"
import * as Q from "../../src/questions/Question.js"
import { choiceQuestion } from "../support.js"

const BASE = "https://magi.example.ts.net"
const tokens = (q: Q.Question) => q.choices.map((c) => `token-for-${c}`)

describe("the ntfy publication of a question", () => {
  it("carries the summary, every choice in full, a click to the card, and one answering button per choice", () => {
    const q = choiceQuestion()
    const msg = Ntfy.message({ question: q, topic: "t", base: `${BASE}/`, tokens: tokens(q), notice: false })
    expect(msg).toEqual({
      topic: "t",
      title: `magi asks · ${q.run}`,
      message: "Which storage backend should the cache use?\n\n1. SQLite\n2. Redis",
      priority: 4,
      click: `${BASE}/#/questions/${q.id}`,
      actions: ["SQLite", "Redis"].map((c) => ({
        action: "http",
        label: c,
        url: `${BASE}/api/answer-by-token`,
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ token: `token-for-${c}` }),
        clear: true
      }))
    })
  })

  it("offers one Open button for more than three choices, and for free text", () => {
    const many = { ...choiceQuestion(), choices: ["a", "b", "c", "d"] }
    const free = { ...choiceQuestion(), choices: [] }
    for (const q of [many, free]) {
      const msg = Ntfy.message({ question: q, topic: "t", base: BASE, tokens: tokens(q), notice: false })
      expect(msg.actions).toEqual([{ action: "view", label: "Open", url: `${BASE}/#/questions/${q.id}`, clear: true }])
    }
  })

  it("gives a notice, a settled question, or a home with no key no answering button", () => {
    const q = choiceQuestion()
    const open = { action: "view", label: "Open", url: `${BASE}/#/questions/${q.id}`, clear: true }
    expect(Ntfy.message({ question: q, topic: "t", base: BASE, tokens: tokens(q), notice: true })).toMatchObject({ priority: 3, actions: [open] })
    const settled = { ...q, status: "answered" as const, answer: { choice: "SQLite" } }
    expect(Ntfy.message({ question: settled, topic: "t", base: BASE, tokens: tokens(q), notice: false }).actions).toEqual([open])
    expect(Ntfy.message({ question: q, topic: "t", base: BASE, tokens: undefined, notice: false }).actions).toEqual([open])
  })

  it("has no link and no buttons when nobody said where the page is", () => {
    const q = choiceQuestion()
    const msg = Ntfy.message({ question: q, topic: "t", base: "", tokens: tokens(q), notice: false })
    expect(msg.click).toBeUndefined()
    expect(msg.actions).toBeUndefined()
  })

  it("keeps agent text inside JSON strings, cutting a long label and a long message", () => {
    const hostile = '"}, {"action": "http", "url": "https://evil.example"'
    const q = { ...choiceQuestion(), summary: `x${"y".repeat(5000)}`, choices: [hostile, "b".repeat(100)] }
    const msg = Ntfy.message({ question: q, topic: "t", base: BASE, tokens: tokens(q), notice: false })
    expect(msg.actions).toHaveLength(2)
    expect(msg.actions![0]!.label).toBe(`${hostile.slice(0, Ntfy.LABEL_MAX_CHARS - 1)}…`)
    expect(msg.actions![1]!.label).toHaveLength(Ntfy.LABEL_MAX_CHARS)
    expect(msg.message.length).toBeLessThanOrEqual(3000)
    // Round-trips as exactly two actions, both to magi.
    const parsed = JSON.parse(JSON.stringify(msg)) as Ntfy.Message
    expect(parsed.actions!.every((a) => a.url.startsWith(BASE))).toBe(true)
  })
})

describe("what magi prints of an ntfy topic", () => {
  it.each([
    ["magi-one-tap-test", "mag… (17 characters)"],
    ["abcd", "<4 characters>"],
    ["abcde", "abc… (5 characters)"]
  ])("shows %s as %s, never the whole topic (it is the channel's password)", (topic, shown) => {
    expect(Ntfy.maskedTopic(topic)).toBe(shown)
    expect(Ntfy.maskedTopic(topic)).not.toContain(topic)
  })
})
