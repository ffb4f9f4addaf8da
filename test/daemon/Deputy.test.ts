import { describe, expect, it } from "vitest"
import { Either } from "effect"
import * as Deputy from "../../src/daemon/Deputy.js"
import { deputySeat, settle, settleRefusal } from "../../src/daemon/Deputy.js"
import * as Q from "../../src/questions/Question.js"

const at = new Date("2026-01-01T00:00:00Z")
const base = Q.make({
  id: "20260101-000000-ab12",
  run: "task-1",
  node: "conduct",
  seat: "conduct",
  summary: "Which database?",
  detail: "unclear",
  choices: ["Postgres", "SQLite"],
  now: at
})
const withOwner = Either.getOrThrow(Q.say(base, "Honestly, let's keep it small: sqlite is fine for now.", at))
const req = { seat: "deputy-ab12", choice: "SQLite", quote: "sqlite is fine for now" }

describe("a deputy settling a conductor question", () => {
  it("is named deputy-<short id>", () => expect(deputySeat(base.id)).toBe("deputy-ab12"))

  it("settles it with the offered label the owner's quoted words picked", () => {
    const q = Either.getOrThrow(settle(withOwner, req, at))
    expect(q).toMatchObject({ status: "answered", answer: { choice: "SQLite" } })
    expect(Q.resolution(q)).toBe("SQLite")
  })

  it("refuses a forged quote: words the owner never wrote", () => {
    expect(settleRefusal(withOwner, { ...req, quote: "use SQLite" })).toContain('the owner never said "use SQLite"')
    // The agent's own words on the thread are not the owner's.
    const agentSaid = Either.getOrThrow(Q.reply(base, "sqlite is fine for now", base.choices, at))
    expect(settleRefusal(agentSaid, req)).toContain("the owner never said")
  })

  it("refuses another seat's --settle, and one from outside any seat", () => {
    expect(settleRefusal(withOwner, { ...req, seat: "deputy-cd34" })).toContain("only seat deputy-ab12 may settle question ab12, not seat deputy-cd34")
    expect(settleRefusal(withOwner, { ...req, seat: "" })).toContain("not a process outside any seat")
  })

  it("refuses a label that was not offered, a settled question, and a question the conductor did not ask", () => {
    expect(settleRefusal(withOwner, { ...req, choice: "MySQL" })).toContain("not one of the choices question ab12 offers: Postgres, SQLite")
    const answered = Either.getOrThrow(Q.answer(withOwner, { choice: "Postgres" }, at))
    expect(settleRefusal(answered, req)).toContain("is answered; there is nothing left to settle")
    expect(settleRefusal({ ...withOwner, node: "impl" }, req)).toContain("not a conductor question")
  })
})

describe("which conductor questions get a deputy", () => {
  const { deputiesToStart } = Deputy
  const q = (id: string, over: Partial<Q.Question> = {}) => ({ ...base, id: `20260101-000000-${id}`, ...over })
  const now = at.getTime() + 1000
  const ids = (r: { start: ReadonlyArray<Q.Question> }) => r.start.map((x) => Q.shortId(x.id))

  it("starts at most max_deputies at once, skipping a leased one, another node's, and one already running", () => {
    const cands = [q("aaaa"), q("bbbb"), q("cccc"), q("dddd", { node: "impl" })].map((x) => ({ q: x, leased: false }))
    expect(ids(deputiesToStart(cands, new Map(), new Set(), 2, 86_400, now))).toEqual(["aaaa", "bbbb"])
    expect(ids(deputiesToStart(cands, new Map(), new Set([q("aaaa").id]), 2, 86_400, now))).toEqual(["bbbb"])
    expect(ids(deputiesToStart([{ q: q("aaaa"), leased: true }], new Map(), new Set(), 2, 86_400, now))).toEqual([])
  })

  it("restarts none within 30 s, and after 3 starts gives one notice instead, once", () => {
    const one = [{ q: q("aaaa"), leased: false }]
    const recent = new Map([[q("aaaa").id, { starts: 1, lastStartMs: now - 29_000, noticed: false }]])
    expect(ids(deputiesToStart(one, recent, new Set(), 2, 86_400, now))).toEqual([])
    expect(ids(deputiesToStart(one, new Map([[q("aaaa").id, { starts: 1, lastStartMs: now - 30_000, noticed: false }]]), new Set(), 2, 86_400, now))).toEqual([
      "aaaa"
    ])
    const spent = new Map([[q("aaaa").id, { starts: 3, lastStartMs: 0, noticed: false }]])
    const r = deputiesToStart(one, spent, new Set(), 2, 86_400, now)
    expect([ids(r), r.notice.length]).toEqual([[], 1])
    expect(deputiesToStart(one, new Map([[q("aaaa").id, { starts: 3, lastStartMs: 0, noticed: true }]]), new Set(), 2, 86_400, now).notice).toEqual([])
  })

  it("starts none for a question past its deadline unless the owner said something unread", () => {
    const late = at.getTime() + 2 * 86_400_000
    expect(ids(deputiesToStart([{ q: base, leased: false }], new Map(), new Set(), 2, 86_400, late))).toEqual([])
    expect(ids(deputiesToStart([{ q: withOwner, leased: false }], new Map(), new Set(), 2, 86_400, late))).toEqual(["ab12"])
  })
})

describe("the deputy's brief and record", () => {
  it("the brief names the blocked task, why the conductor asked (or that it recorded no reason), and what the choices lead to", () => {
    const brief = Deputy.conductorBrief({ id: "task-1", title: "Add a database" }, "Which database?", "  the instruction names none ", ["Postgres", "SQLite"])
    expect(brief).toContain("Blocked task: task-1 (Add a database).")
    expect(brief).toContain("Why the conductor asked: the instruction names none\n")
    expect(brief).toContain("Choices: `Postgres`, `SQLite`. Whichever the owner picks is recorded on the task and carried into its next run.")
    expect(Deputy.conductorBrief({ id: "task-1", title: "t" }, "What name?", "", [])).toContain("it recorded no reason")
  })

  it("is told the stored brief, and a question filed before briefs were stored says so and shows what it has", () => {
    const withBrief = { ...base, deputy_brief: "Blocked task: task-1 (Add a database)." }
    expect(Deputy.deputyPrompt(withBrief)).toContain("## The brief\n\nBlocked task: task-1 (Add a database).\n")
    const older = Deputy.deputyPrompt(base)
    expect(older).toContain("filed without a stored brief")
    expect(older).toContain("Why the conductor asked: unclear")
  })

  it("counts starts in a record that round-trips, keeps the time of the last start to the millisecond, and refuses a newer or unknown-field record by name", () => {
    const first = Deputy.started(base.id, undefined, new Date("2026-01-01T00:00:00.250Z"))
    const second = Deputy.started(base.id, first, new Date("2026-01-01T00:00:31.500Z"))
    expect(second).toMatchObject({ question: base.id, starts: 2, noticed: false })
    expect(Deputy.memoryOf(second).lastStartMs).toBe(Date.parse("2026-01-01T00:00:31.500Z"))
    expect(Either.getOrThrow(Deputy.decodeRecord(Deputy.encodeRecord(second), "deputy.json"))).toEqual(second)
    const newer = Deputy.decodeRecord(JSON.stringify({ ...second, schema: Deputy.DEPUTY_SCHEMA + 1 }), "deputy.json")
    expect(Either.isLeft(newer) && newer.left.message).toContain("newer magi")
    const unknown = Deputy.decodeRecord(JSON.stringify({ ...second, restarts: 9 }), "deputy.json")
    expect(Either.isLeft(unknown)).toBe(true)
  })
})

describe("a tool approval is the owner's alone", () => {
  // A conductor seat's own tool call needing permission: node `conduct`, as a conductor question's.
  const approval: Q.Question = {
    ...withOwner,
    summary: "Bash: `rm -rf build/`",
    choices: ["Allow", "Deny", "Always allow Bash(rm -rf build/)"],
    approval: { tool: "Bash", digest: "0123456789abcdef", rule: "Bash(rm -rf build/)" }
  }

  it("gets no deputy, even when raised by the conductor's seat and nobody waits on it", () => {
    expect(Deputy.deputiesToStart([{ q: approval, leased: false }], new Map(), new Set(), 2, 86_400, at.getTime() + 1000).start).toEqual([])
    // The same question without the mark would get one: the mark is what keeps it off.
    const { approval: _, ...plain } = approval
    expect(Deputy.deputiesToStart([{ q: plain, leased: false }], new Map(), new Set(), 2, 86_400, at.getTime() + 1000).start).toHaveLength(1)
  })

  it("cannot be settled by a deputy, whatever the owner said", () => {
    const owner = Either.getOrThrow(Q.say(approval, "Allow", at))
    expect(settleRefusal(owner, { seat: deputySeat(approval.id), choice: "Allow", quote: "Allow" })).toContain("is a tool approval; only the owner decides one")
    expect(Either.isLeft(settle(owner, { seat: deputySeat(approval.id), choice: "Allow", quote: "Allow" }, at))).toBe(true)
  })
})
