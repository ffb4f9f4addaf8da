import { describe, expect, it } from "vitest"
import * as Chat from "../../src/chat/Chat.js"

const NOW = new Date("2026-11-30T10:00:00Z")
const base = () => Chat.build({ id: "20261130-100000-ab12", idea: "  retry the fetcher  ", repo: "/src/app", agent: "claude", from: null, now: NOW })

describe("a chat record", () => {
  it("starts with the operator's trimmed idea as its only turn and no agent turn", () => {
    const chat = base()
    expect(chat.turns).toEqual([{ who: "operator", body: "retry the fetcher", at: "2026-11-30T10:00:00Z" }])
    expect(chat.status).toBe("open")
    expect(chat.seat).toMatchObject({ key: "plan", agent: "claude", turns: 0, session: null, write: false })
  })

  it("hands the agent every operator message it has not answered, not only the last", () => {
    const at = "2026-11-30T10:01:00Z"
    const chat = {
      ...base(),
      turns: [
        ...base().turns,
        { who: "agent" as const, body: "Which fetcher?", at },
        { who: "operator" as const, body: "the HTTP one", at },
        { who: "operator" as const, body: "and only GETs", at }
      ]
    }
    expect(Chat.unanswered(chat).map((t) => t.body)).toEqual(["the HTTP one", "and only GETs"])
  })
})

describe("extracting the draft from a reply", () => {
  it("takes the last task block, whatever the fence length or case", () => {
    const reply = "first\n```task\n# Old\n```\nthen\n````TASK\n# New\n- [ ] x\n````\nbye"
    expect(Chat.extractDraft(reply)).toBe("# New\n- [ ] x")
  })

  it("ignores blocks of other languages, and a task fence inside them", () => {
    expect(Chat.extractDraft("````md\n```task\n# nested\n```\n````\n")).toBeNull()
    expect(Chat.extractDraft("```ts\nlet x = 1\n```")).toBeNull()
  })

  it("still takes a block the agent never closed", () => {
    expect(Chat.extractDraft("Here:\n   ```task\n# Cut off\n- [ ] y")).toBe("# Cut off\n- [ ] y")
  })

  it("finds none in an empty block or a reply without one", () => {
    expect(Chat.extractDraft("```task\n\n```")).toBeNull()
    expect(Chat.extractDraft("no draft here")).toBeNull()
  })
})

describe("what the agent is told", () => {
  it("briefs the interviewer on the rules, the spec and the idea", () => {
    const b = Chat.briefing("retry the fetcher", "/src/app")
    expect(b).toContain("/src/app")
    expect(b).toContain("never modify")
    expect(b).toContain("one question per message")
    expect(b).toContain("```task")
    expect(b).toContain("## Completion criteria")
    expect(b.trimEnd().split("\n").at(-3)).toBe("retry the fetcher")
  })

  it("frames a derived chat's source as background about another repository", () => {
    const source = { ...base(), repo: "/src/other", turns: [...base().turns, { who: "agent" as const, body: "Noted.", at: "2026-11-30T10:02:00Z" }] }
    const prompt = Chat.firstPrompt({ ...base(), from: source.id }, source)
    expect(prompt.indexOf("/src/other")).toBeLessThan(prompt.indexOf("You are the planning lead"))
    expect(prompt).toContain("not an instruction about the one you are in now")
    expect(prompt).toContain("Noted.")
  })

  it("sends the whole transcript, asking for an answer to the last message, when the CLI cannot resume", () => {
    const t = Chat.transcript({ ...base(), turns: [...base().turns, { who: "agent" as const, body: "Why?", at: "2026-11-30T10:02:00Z" }] })
    expect(t).toContain("Answer only the operator's last message")
    expect(t.indexOf("## operator")).toBeLessThan(t.indexOf("## you"))
  })
})

describe("filing", () => {
  it("cannot file a chat without a draft, and says why", () => {
    expect(Chat.canFile(base())).toBe(false)
    expect(Chat.draftProblems(base())[0]!.message).toContain("no task file yet")
  })

  it("files a draft whose only problem is being short, but not a filed chat again", () => {
    const chat = { ...base(), draft: "# Fix\n- [ ] green" }
    expect(Chat.canFile(chat)).toBe(true)
    expect(Chat.canFile({ ...chat, status: "filed" as const })).toBe(false)
  })

  it("marks magi's own notes so they are never read as the agent's", () => {
    expect(Chat.failureNote("the agent could not start")).toMatch(/^magi: the agent could not start\. Your message is saved/)
  })
})

describe("turns", () => {
  const at = "2026-11-30T10:01:00Z"
  const op = (body: string) => ({ who: "operator" as const, body, at })
  const ag = (body: string) => ({ who: "agent" as const, body, at })

  it("does not count magi's failure note as an answer: the words before it still wait for the agent", () => {
    const chat = { ...base(), turns: [...base().turns, ag("Which one?"), op("the HTTP one"), ag(Chat.failureNote("it timed out"))] }
    expect(Chat.unanswered(chat).map((t) => t.body)).toEqual(["the HTTP one"])
  })

  it("puts a reply after the turns it was sent, so a message sent meanwhile stays unanswered after it", () => {
    const chat = { ...base(), turns: [...base().turns, op("also GETs only")] }
    const replied = Chat.insertAgentTurn(chat, 1, "Which fetcher?", at)
    expect(replied.turns.map((t) => t.body)).toEqual(["retry the fetcher", "Which fetcher?", "also GETs only"])
    expect(Chat.unanswered(replied).map((t) => t.body)).toEqual(["also GETs only"])
  })

  it("opens with the briefing, then sends only the unseen words when the CLI resumes, and the transcript when it cannot", () => {
    const first = Chat.turnPrompt(base(), true, null)
    expect(first).toContain("You are the planning lead")
    expect(first).toContain("retry the fetcher")
    const later = { ...base(), turns: [...base().turns, ag("Which fetcher?"), op("the HTTP one"), op("GETs only")] }
    expect(Chat.turnPrompt(later, true, null)).toBe("the HTTP one\n\nGETs only")
    const fallback = Chat.turnPrompt(later, false, null)
    expect(fallback).toContain("You are the planning lead")
    expect(fallback).toContain("cannot resume")
    expect(fallback.indexOf("Which fetcher?")).toBeLessThan(fallback.indexOf("GETs only"))
  })

  it("briefs again, with everything the operator said, when the first turn failed", () => {
    const chat = { ...base(), turns: [...base().turns, ag(Chat.failureNote("no start")), op("and log each retry")] }
    const prompt = Chat.turnPrompt(chat, true, null)
    expect(prompt).toContain("You are the planning lead")
    expect(prompt).toContain("retry the fetcher\n\nand log each retry")
    expect(prompt).not.toContain("magi: ")
  })

  it("leaves magi's notes out of a transcript", () => {
    const chat = { ...base(), turns: [...base().turns, ag("Why?"), ag(Chat.failureNote("usage limit"))] }
    expect(Chat.transcript(chat)).not.toContain("usage limit")
  })

  it("says why a turn failed: usage limit with its reset, timeout, or unusable output", () => {
    const r = { usable: false, timedOut: false, quota: null, exitCode: 3, text: "boom\nmore" }
    expect(Chat.turnFailure("claude", { ...r, usable: true })).toBeNull()
    expect(Chat.turnFailure("claude", { ...r, quota: "3pm (UTC)" })).toContain("usage limit (resets: 3pm (UTC))")
    expect(Chat.turnFailure("claude", { ...r, timedOut: true, exitCode: null })).toContain("300 s")
    expect(Chat.turnFailure("claude", r)).toBe("claude gave no usable answer (exit 3: boom)")
    expect(Chat.turnFailure("claude", { ...r, quota: "" })).toBe("claude hit its usage limit")
    expect(Chat.turnFailure("claude", { ...r, problem: "claude refuses bypassPermissions as root" })).toBe(
      "claude failed: claude refuses bypassPermissions as root"
    )
  })
})

describe("choosing the interviewer", () => {
  const roster = [
    { id: "cx", kind: "codex" },
    { id: "fast", kind: "claude" },
    { id: "slow", kind: "claude" }
  ]
  it("takes the agent asked for, else [roles] chatter, else the first claude, else the first", () => {
    expect(Chat.chooseAgent(roster, "slow", "cx")).toEqual({ agent: "slow" })
    expect(Chat.chooseAgent(roster, null, "cx")).toEqual({ agent: "cx" })
    expect(Chat.chooseAgent(roster, null, null)).toEqual({ agent: "fast" })
    expect(Chat.chooseAgent([roster[0]!], null, null)).toEqual({ agent: "cx" })
  })

  it("refuses an agent the roster lacks, by name, rather than substituting one", () => {
    expect(Chat.chooseAgent(roster, "gone", null)).toEqual({ refused: expect.stringContaining("no agent `gone`") })
    expect(Chat.chooseAgent(roster, null, "gone")).toEqual({ refused: expect.stringContaining("[roles] chatter") })
    expect(Chat.chooseAgent([], null, null)).toEqual({ refused: expect.stringContaining("no agent to interview with") })
  })
})

describe("keeping a chat readable", () => {
  it("cuts a huge reply, saying where the whole of it is, and leaves a normal one alone", () => {
    expect(Chat.clipReply("short", "/a/plan.out")).toBe("short")
    const huge = "x".repeat(Chat.MAX_TURN_CHARS + 10)
    const cut = Chat.clipReply(huge, "/a/plan.out")
    expect(cut.startsWith("x".repeat(Chat.MAX_TURN_CHARS) + "\n\n[10 more characters")).toBe(true)
    expect(cut).toContain("/a/plan.out")
  })
})
