import { describe, expect, it } from "vitest"
import { Either } from "effect"
import * as Q from "../../src/questions/Question.js"
import { ASKED, choiceQuestion, freeQuestion, HOSTILE_ASSET_NAMES, ok, refusal } from "../support.js"

const later = (secs: number) => new Date(ASKED.getTime() + secs * 1000)

describe("Question", () => {
  it("stores the exact JSON field set the web UI was written against", () => {
    const q = choiceQuestion("20260902-231501-ab12")
    const open = JSON.parse(Q.encode(q))
    // The front end reads these names by hand: the set is the contract.
    expect(Object.keys(open).sort()).toEqual([
      "answer",
      "answer_delivered",
      "answer_timeout",
      "answered_at",
      "asked_at",
      "assets",
      "choices",
      "cwd",
      "delivered_turns",
      "detail",
      "id",
      "node",
      "panel",
      "run",
      "schema",
      "seat",
      "status",
      "summary",
      "thread",
      "waiter"
    ])
    expect(open).toMatchObject({
      schema: 4,
      thread: [],
      id: "20260902-231501-ab12",
      run: "20260902-201256-9fb7",
      node: "implement",
      seat: "impl-A",
      status: "open",
      choices: ["SQLite", "Redis"],
      answered_at: null,
      answer: null
    })
    // UTC RFC 3339 is what `new Date()` in the phone's browser parses.
    expect(open.asked_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)

    const answered = ok(Q.answer(q, { choice: "SQLite" }, later(60)))
    const onDisk = JSON.parse(Q.encode(answered))
    expect(onDisk.status).toBe("answered")
    expect(onDisk.answer).toEqual({ choice: "SQLite" })
    expect(typeof onDisk.answered_at).toBe("string")

    const free = ok(Q.answer(freeQuestion(), { text: "Say which file it was" }, later(60)))
    expect(JSON.parse(Q.encode(free)).answer).toEqual({ text: "Say which file it was" })

    // And it survives the round trip a reader performs.
    expect(Q.decode(Q.encode(answered), "test")).toEqual(Either.right(answered))
  })

  it("takes a choice typed in another case when only one choice reads so, and refuses one that reads as two, naming both", () => {
    const q = { ...choiceQuestion(), choices: ["SQLite", "Redis", "redis"] }
    const table: ReadonlyArray<readonly [string, string]> = [
      ["sqlite", "SQLite"],
      ["SQLITE", "SQLite"],
      [" SQLite ", "SQLite"],
      ["Redis", "Redis"],
      ["redis", "redis"]
    ]
    for (const [typed, stored] of table) expect(ok(Q.answer(q, { choice: typed }, ASKED)).answer, typed).toEqual({ choice: stored })
    const two = refusal(Q.answer(q, { choice: "REDIS" }, ASKED))
    expect(two).toContain("Redis, redis")
    expect(two).toContain("exactly as it is written")
    expect(refusal(Q.answer(q, { choice: "Postgres" }, ASKED))).toContain("not one of the choices")
  })

  it("refuses each bad answer with a reason of its own and leaves the question open", () => {
    const unoffered = refusal(Q.answer(choiceQuestion(), { choice: "Postgres" }, ASKED))
    const typed = refusal(Q.answer(choiceQuestion(), { text: "use Postgres" }, ASKED))
    const blank = refusal(Q.answer(freeQuestion(), { text: "   \n" }, ASKED))
    const first = ok(Q.answer(choiceQuestion(), { choice: "SQLite" }, ASKED))
    const twice = refusal(Q.answer(first, { choice: "Redis" }, ASKED))
    const fabricated = refusal(Q.answer(freeQuestion(), { choice: "SQLite" }, ASKED))
    const gone = refusal(Q.answer(Q.abandon(choiceQuestion(), "timed out", ASKED), { choice: "SQLite" }, ASKED))

    expect(unoffered).toContain("not one of the choices")
    expect(unoffered).toContain("SQLite, Redis")
    expect(typed).toContain("multiple choice")
    expect(blank).toContain("empty")
    expect(twice).toContain("already answered")
    expect(fabricated).toContain("free text")
    expect(gone).toContain("abandoned")
    const all = [unoffered, typed, blank, twice, fabricated, gone]
    expect(new Set(all).size).toBe(all.length)

    // The first answer to the double-answered one survived.
    expect(Q.resolution(first)).toBe("SQLite")
  })

  it("tells a settled refusal apart from bad input, which the web maps to 409 and 400", () => {
    const answered = ok(Q.answer(choiceQuestion(), { choice: "SQLite" }, ASKED))
    const settled = Q.answer(answered, { choice: "Redis" }, ASKED)
    const bad = Q.answer(choiceQuestion(), { choice: "Postgres" }, ASKED)
    expect(Either.isLeft(settled) && settled.left.settled).toBe(true)
    expect(Either.isLeft(bad) && bad.left.settled).toBe(false)
  })

  it("writes a turn as who, body and at, with the two named speakers", () => {
    const q = ok(Q.say(choiceQuestion(), "why not Postgres?", later(5)))
    const turn = JSON.parse(Q.encode(q)).thread[0]
    expect(Object.keys(turn).sort()).toEqual(["at", "body", "who"])
    expect(turn).toMatchObject({ who: "operator", body: "why not Postgres?" })
    const withAgent = { ...JSON.parse(Q.encode(q)), thread: [{ who: "agent", body: "hi", at: turn.at }] }
    const parsed = Q.decode(JSON.stringify(withAgent), "test")
    expect(Either.isRight(parsed) && parsed.right.thread[0]?.who).toBe("agent")
  })

  it("records the owner speaking back without deciding anything", () => {
    const q = ok(Q.say(choiceQuestion(), "does the cache need eviction?", later(5)))
    expect(q.thread).toHaveLength(1)
    expect(q.thread[0]).toMatchObject({ who: "operator", body: "does the cache need eviction?" })
    expect(q.status).toBe("open")
    expect(q.answer).toBeNull()
    expect(Q.waitingOnAgent(q)).toBe(true)
  })

  it("refuses saying and replying on a settled question and empty text, leaving no trace", () => {
    const answered = ok(Q.answer(choiceQuestion(), { choice: "SQLite" }, ASKED))
    expect(refusal(Q.say(answered, "still there?", ASKED))).toContain("already answered")
    expect(refusal(Q.reply(answered, "still there?", [], ASKED))).toContain("already answered")
    const abandoned = Q.abandon(choiceQuestion(), "timed out", ASKED)
    expect(refusal(Q.say(abandoned, "hello?", ASKED))).toContain("abandoned")
    const open = choiceQuestion()
    expect(refusal(Q.say(open, "   ", ASKED))).toContain("empty")
    expect(refusal(Q.reply(open, "  \n", [], ASKED))).toContain("empty")
    expect(open.thread).toEqual([])
  })

  it("replaces the choices on a reply and hands the ball back to the owner", () => {
    const asked = ok(Q.say(choiceQuestion(), "SQLite or Redis, but what about disk space?", later(5)))
    const replied = ok(Q.reply(asked, "SQLite: it is one file, no server to run.", ["SQLite"], later(9)))
    expect(replied.choices).toEqual(["SQLite"])
    expect(Q.waitingOnAgent(replied)).toBe(false)
    expect(replied.thread.map((t) => t.who)).toEqual(["operator", "agent"])
    // The new set is what an answer is now judged against.
    expect(refusal(Q.answer(replied, { choice: "Redis" }, later(10)))).toContain("not one of the choices")
    expect(Q.resolution(ok(Q.answer(replied, { choice: "SQLite" }, later(10))))).toBe("SQLite")
  })

  it("notifies on the first ask, and on a reply only once the quiet window has passed", () => {
    const fresh = choiceQuestion()
    expect(Q.shouldNotify(fresh, ASKED)).toBe(true)
    const spoken = ok(Q.say(fresh, "why not Postgres?", later(10)))
    expect(Q.shouldNotify(spoken, later(10 + 60))).toBe(false)
    // Exactly the window: strictly-more-than means this stays quiet.
    expect(Q.shouldNotify(spoken, later(10 + 300))).toBe(false)
    expect(Q.shouldNotify(spoken, later(10 + 301))).toBe(true)
  })

  it("keeps the reason a question was abandoned with the question, and never abandons an answer", () => {
    const abandoned = Q.abandon(choiceQuestion(), "no answer within 60s of asking", ASKED)
    expect(abandoned.status).toBe("abandoned")
    expect(abandoned.detail).toBe("Both are already dependencies.\n\n_Abandoned: no answer within 60s of asking._\n")
    expect(Q.resolution(abandoned)).toBeUndefined()
    const answered = ok(Q.answer(choiceQuestion(), { choice: "Redis" }, ASKED))
    expect(Q.abandon(answered, "deadline", ASKED)).toBe(answered)
  })

  it("reads an older file with defaults and refuses a newer one or an unknown field by name", () => {
    const schema1 = {
      schema: 1,
      id: "20260902-231501-ab12",
      run: RUN_ID,
      node: "implement",
      seat: "impl-A",
      summary: "Which storage backend should the cache use?",
      detail: "",
      choices: ["SQLite", "Redis"],
      status: "open",
      asked_at: "2026-09-02T23:15:01Z",
      answered_at: null,
      answer: null
    }
    const old = Q.decode(JSON.stringify(schema1), "old.json")
    expect(Either.isRight(old)).toBe(true)
    const future = Q.decode(JSON.stringify({ ...schema1, schema: 99, hologram: true }), "future.json")
    expect(Either.isLeft(future) && future.left.message).toContain("newer magi (schema 99")
    const typo = Q.decode(JSON.stringify({ ...schema1, sumary: "x" }), "typo.json")
    expect(Either.isLeft(typo) && typo.left.message).toContain("sumary")
  })

  it("counts the deadline from the last word on the question, never from a later wait", () => {
    const q = { ...choiceQuestion(), answer_timeout: 3600 }
    expect(Q.budgetLeftMs(q, 86400, later(600))).toBe(3000 * 1000)
    expect(Q.budgetLeftMs(q, 86400, later(7200))).toBe(0)
    // An older file that never recorded its timeout falls back to the config.
    expect(Q.budgetLeftMs(choiceQuestion(), 100, later(40))).toBe(60 * 1000)
    // A conversation still going is not one nobody answered: the owner's
    // word at 50 min gives the agent's reply a whole hour from then.
    const talking = ok(Q.say(q, "what about disk space?", later(3000)))
    expect(Q.budgetLeftMs(talking, 86400, later(4000))).toBe(2600 * 1000)
    expect(Q.expiryReason(talking, 86400)).toBe("no answer within 3600s of asking")
  })

  it("hands the agent every word the owner said that it has not read, not just the last", () => {
    const first = ok(Q.say(choiceQuestion(), "first: what about disk space?", later(5)))
    const second = ok(Q.say(first, "second: and backups?", later(6)))
    expect(Q.wordsForAgent(second)).toBe("first: what about disk space?\n\nsecond: and backups?")
    // Once the agent has read them and replied, there is nothing for it.
    const replied = ok(Q.reply({ ...second, delivered_turns: 2 }, "SQLite, backed up nightly", ["SQLite"], later(9)))
    expect(Q.wordsForAgent(replied)).toBeUndefined()
    // A word it never saw is still its, even after it replied to an earlier one.
    const missed = ok(Q.reply({ ...second, delivered_turns: 1 }, "SQLite: one file", ["SQLite"], later(9)))
    expect(Q.wordsForAgent(missed)).toBe("second: and backups?")
    // An agent that read the words but went back to waiting instead of
    // replying is handed the last of them again rather than left silent.
    expect(Q.wordsForAgent({ ...second, delivered_turns: 2 })).toBe("second: and backups?")
  })

  it("mints ids shaped like a run's, whose last segment is the short id", () => {
    const id = Q.makeId(new Date(2026, 8, 2, 23, 15, 1), 0xab12)
    expect(id).toBe("20260902-231501-ab12")
    expect(Q.shortId(id)).toBe("ab12")
  })

  it("accepts only asset names that cannot change what a path join means", () => {
    for (const good of ["diff.svg", "a", "table_2-final.png", "x".repeat(64)]) expect(Q.validAssetName(good)).toBe(true)
    for (
      const bad of [
        ...HOSTILE_ASSET_NAMES,
        "x".repeat(65),
        "a..b",
        "c:d"
      ]
    )
      expect(Q.validAssetName(bad)).toBe(false)
  })
})

describe("caps on what is typed, and well-formed choices", () => {
  const input = { summary: "Which backend?", detail: "", choices: ["SQLite", "Redis"] }

  it("accepts a question within every cap", () => {
    expect(Either.isRight(Q.checkNew(input))).toBe(true)
  })

  it("refuses a detail over its cap, naming the cap and where long evidence belongs", () => {
    const message = refusal(Q.checkNew({ ...input, detail: "x".repeat(Q.DETAIL_MAX_BYTES + 1) }))
    expect(message).toContain(String(Q.DETAIL_MAX_BYTES))
    expect(message).toContain("panel")
  })

  it("refuses a summary over its cap, counted in bytes as stored", () => {
    const within = "é".repeat(Q.SUMMARY_MAX_BYTES / 2)
    expect(Either.isRight(Q.checkNew({ ...input, summary: within }))).toBe(true)
    expect(refusal(Q.checkNew({ ...input, summary: within + "é" }))).toContain(String(Q.SUMMARY_MAX_BYTES))
  })

  it("refuses a summary of two lines (help says one), and keeps one a trailing newline ends or a lone carriage return is in (shown escaped)", () => {
    for (const summary of ["Which backend?\nSQLite is smaller", "Which\r\nbackend?"])
      expect(refusal(Q.checkNew({ ...input, summary })), JSON.stringify(summary)).toContain("one line")
    expect(Either.isRight(Q.checkNew({ ...input, summary: "Which backend?\n" }))).toBe(true)
    expect(Either.isRight(Q.checkNew({ ...input, summary: "Which backend?\rOr none" }))).toBe(true)
  })

  it("refuses a choice of only spaces instead of storing a blank button", () => {
    expect(refusal(Q.checkNew({ ...input, choices: ["SQLite", "   "] }))).toContain("empty or only spaces")
  })

  it("refuses a lone empty choice instead of turning the question into free text", () => {
    expect(refusal(Q.checkNew({ ...input, choices: [""] }))).toContain("empty or only spaces")
  })

  it("refuses the same choice offered twice", () => {
    expect(refusal(Q.checkNew({ ...input, choices: ["SQLite", "Redis", "SQLite "] }))).toContain("offered twice")
  })

  it("refuses more choices than a phone can show, and a choice longer than a button", () => {
    const many = Array.from({ length: Q.CHOICES_MAX + 1 }, (_, i) => `option ${i}`)
    expect(refusal(Q.checkNew({ ...input, choices: many }))).toContain(String(Q.CHOICES_MAX))
    expect(refusal(Q.checkNew({ ...input, choices: ["x".repeat(Q.CHOICE_MAX_BYTES + 1)] }))).toContain(
      String(Q.CHOICE_MAX_BYTES)
    )
  })

  it("refuses an owner's message, a free-text answer or an agent's reply over the turn cap", () => {
    const long = "x".repeat(Q.TURN_MAX_BYTES + 1)
    expect(refusal(Q.say(choiceQuestion(), long, later(1)))).toContain(String(Q.TURN_MAX_BYTES))
    expect(refusal(Q.answer(freeQuestion(), { text: long }, later(1)))).toContain(String(Q.TURN_MAX_BYTES))
    expect(refusal(Q.reply(choiceQuestion(), long, [], later(1)))).toContain(String(Q.TURN_MAX_BYTES))
  })

  it("refuses a reply whose new choices break the same rules as a new question's", () => {
    expect(refusal(Q.reply(choiceQuestion(), "how about these?", ["a", "a"], later(1)))).toContain("offered twice")
    expect(refusal(Q.reply(choiceQuestion(), "how about these?", [" "], later(1)))).toContain("only spaces")
  })

  it("refuses a turn that would take the whole question over its record cap", () => {
    let q = choiceQuestion()
    const turn = "y".repeat(Q.TURN_MAX_BYTES - 100)
    let refused: string | undefined
    for (let i = 0; i < 40 && refused === undefined; i++) {
      const next = Q.say(q, turn, later(i))
      if (Either.isLeft(next)) refused = next.left.message
      else q = next.right
    }
    expect(refused).toContain(String(Q.RECORD_MAX_BYTES))
    expect(Buffer.byteLength(Q.encode(q))).toBeLessThanOrEqual(Q.RECORD_MAX_BYTES)
  })
})

const RUN_ID = "20260902-201256-9fb7"
