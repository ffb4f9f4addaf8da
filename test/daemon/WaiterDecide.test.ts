import { describe, expect, it } from "@effect/vitest"
import { Option } from "effect"
import type { Lease } from "../../src/questions/Leases.js"
import * as Q from "../../src/questions/Question.js"
import { Action, Word, decide, unreadOwnerTurns } from "../../src/daemon/WaiterDecide.js"

const t = (secs: number) => new Date(secs * 1000)
const at = (secs: number) => Q.timestamp(t(secs))
const DEFAULT = 86_400

/** A question asked at t=0 by a seat working in /w, with a 1000 s deadline. */
const asked = (over: Partial<Q.Question> = {}): Q.Question => ({
  ...Q.make({ id: "19700101-000000-abcd", run: "R", node: "impl", seat: "impl", summary: "Which?", detail: "", choices: ["a", "b"], now: t(0), cwd: "/w" }),
  answer_timeout: 1000,
  ...over
})
const lease = (beatAt: number, kind: Lease["kind"] = "asker"): Option.Option<Lease> => Option.some({ kind, pid: 1, beat_at: at(beatAt) })
const answered = (over: Partial<Q.Question> = {}) => asked({ status: "answered", answer: { choice: "a" }, answered_at: at(10), ...over })
const said = (body: string, secs: number, who: Q.Who = "operator"): Q.Turn => ({ who, body, at: at(secs) })

const Idle = Action.Idle()
const deliverAnswer = Action.Deliver({ word: Word.Answered({ text: "a" }) })
const expire = Action.Expire({ reason: "no answer within 1000s of asking" })

describe("decide", () => {
  const rows: ReadonlyArray<[string, Q.Question, Option.Option<Lease>, boolean, number, Action]> = [
    // rule 1
    ["a question with no recorded cwd has nobody to resume, even answered", answered({ cwd: "" }), Option.none(), false, 20, Idle],
    ["a question with no recorded cwd is not even expired", asked({ cwd: "" }), Option.none(), false, 5000, Idle],
    // rule 2
    ["a fresh asker lease keeps the waiter away from an answer", answered(), lease(15), false, 20, Idle],
    ["a fresh lease also holds off expiry", asked(), lease(1990), false, 2000, Idle],
    ["a daemon's own fresh lease counts too", answered(), lease(15, "daemon"), false, 20, Idle],
    ["a stale lease is no one", answered(), lease(0), false, 91, deliverAnswer],
    // rule 3
    ["an abandoned question is left alone", asked({ status: "abandoned" }), Option.none(), false, 5000, Idle],
    // rule 4
    ["an undelivered answer is delivered", answered(), Option.none(), false, 20, deliverAnswer],
    ["a delivered answer is not delivered again", answered({ answer_delivered: true }), Option.none(), false, 20, Idle],
    ["an answer waits while the seat is busy", answered(), Option.none(), true, 20, Idle],
    ["an answer is delivered even long after the deadline", answered(), Option.none(), false, 99_999, deliverAnswer],
    // rule 5
    [
      "an unread owner word is delivered as said",
      asked({ thread: [said("why?", 50)] }),
      Option.none(),
      false,
      60,
      Action.Deliver({ word: Word.Said({ text: "why?" }) })
    ],
    ["an unread owner word waits while the seat is busy", asked({ thread: [said("why?", 50)] }), Option.none(), true, 60, Idle],
    [
      "words said in time are delivered even after the deadline",
      asked({ thread: [said("why?", 50)] }),
      Option.none(),
      false,
      9000,
      Action.Deliver({ word: Word.Said({ text: "why?" }) })
    ],
    [
      "only the owner's turns the agent has not seen, joined by a blank line",
      asked({ thread: [said("old", 5), said("reply", 6, "agent"), said("one", 7), said("two", 8)], delivered_turns: 2 }),
      Option.none(),
      false,
      60,
      Action.Deliver({ word: Word.Said({ text: "one\n\ntwo" }) })
    ],
    // rule 6 (issue 27.6): shown the ask-back, the turn ended without a reply
    [
      "owner turns shown but never replied to are re-sent, once",
      asked({ thread: [said("seen", 5)], delivered_turns: 1 }),
      Option.none(),
      false,
      60,
      Action.Deliver({ word: Word.Resent({ text: "seen" }) })
    ],
    [
      "an ask-back re-sent already is not re-sent again",
      asked({ thread: [said("seen", 5)], delivered_turns: 1, resent_turns: 1 }),
      Option.none(),
      false,
      60,
      Idle
    ],
    [
      "a later ask-back after a re-sent one is re-sent in its turn",
      asked({ thread: [said("seen", 5), said("reply", 6, "agent"), said("again?", 7)], delivered_turns: 3, resent_turns: 1 }),
      Option.none(),
      false,
      60,
      Action.Deliver({ word: Word.Resent({ text: "again?" }) })
    ],
    ["a re-send waits while the seat is busy", asked({ thread: [said("seen", 5)], delivered_turns: 1 }), Option.none(), true, 60, Idle],
    ["a re-send waits while the asker still holds its lease", asked({ thread: [said("seen", 5)], delivered_turns: 1 }), lease(55), false, 60, Idle],
    [
      "an ask-back the agent replied to is not re-sent",
      asked({ thread: [said("seen", 5), said("reply", 6, "agent")], delivered_turns: 1 }),
      Option.none(),
      false,
      60,
      Idle
    ],
    [
      "nothing is re-sent to an agent asking outside any run",
      asked({ run: "", thread: [said("seen", 5)], delivered_turns: 1 }),
      Option.none(),
      false,
      60,
      Idle
    ],
    ["an open question past its deadline expires", asked(), Option.none(), false, 1001, expire],
    ["an open question before its deadline is idle", asked(), Option.none(), false, 999, Idle],
    ["exactly at the deadline is not yet past it", asked(), Option.none(), false, 1000, Idle],
    [
      "an unrecorded timeout falls back to the default",
      asked({ answer_timeout: 0 }),
      Option.none(),
      false,
      DEFAULT + 1,
      Action.Expire({ reason: `no answer within ${DEFAULT}s of asking` })
    ]
  ]
  for (const [name, q, l, busy, now, want] of rows)
    it(name, () => {
      expect(decide(q, l, busy, DEFAULT, t(now))).toEqual(want)
    })
})

describe("decide: the reference's time examples", () => {
  it("a lease beaten at t=95 is fresh at t=100", () => {
    expect(decide(answered(), lease(95), false, DEFAULT, t(100))).toEqual(Idle)
  })

  it("timeout 1000 asked at t=0: idle at 999, expired at 1001", () => {
    expect(decide(asked(), Option.none(), false, DEFAULT, t(999))).toEqual(Idle)
    expect(decide(asked(), Option.none(), false, DEFAULT, t(1001))).toEqual(expire)
  })

  it("with an agent turn at 4000 the deadline moves: idle at 4500, expired at 5001", () => {
    const q = asked({ thread: [said("ask back", 3000), said("answering", 4000, "agent")], delivered_turns: 1 })
    expect(decide(q, Option.none(), false, DEFAULT, t(4500))).toEqual(Idle)
    expect(decide(q, Option.none(), false, DEFAULT, t(5000))).toEqual(Idle)
    expect(decide(q, Option.none(), false, DEFAULT, t(5001))).toEqual(expire)
  })
})

describe("decide: a question asked outside any magi run (issue 20)", () => {
  const noRun = { run: "" }
  it("keeps an answer for the agent's next --wait while its deadline has not passed: no delivery, so no notice", () => {
    expect(decide(answered(noRun), Option.none(), false, DEFAULT, t(20))).toEqual(Idle)
    expect(decide(answered(noRun), Option.none(), false, DEFAULT, t(1000))).toEqual(Idle)
  })

  it("keeps the owner's words for the next --wait too, the deadline counted from the owner's turn", () => {
    const q = asked({ ...noRun, thread: [said("why?", 50)] })
    expect(decide(q, Option.none(), false, DEFAULT, t(60))).toEqual(Idle)
    expect(decide(q, Option.none(), false, DEFAULT, t(1050))).toEqual(Idle)
  })

  it("only once the deadline passed with them unread are they handed on (and refused with a notice)", () => {
    expect(decide(answered(noRun), Option.none(), false, DEFAULT, t(1001))).toEqual(deliverAnswer)
    expect(decide(asked({ ...noRun, thread: [said("why?", 50)] }), Option.none(), false, DEFAULT, t(1051))).toEqual(
      Action.Deliver({ word: Word.Said({ text: "why?" }) })
    )
  })

  it("expires like any other question when nobody answered", () => {
    expect(decide(asked(noRun), Option.none(), false, DEFAULT, t(1001))).toEqual(expire)
  })

  it("a question inside a run is delivered at once, as before", () => {
    expect(decide(answered(), Option.none(), false, DEFAULT, t(20))).toEqual(deliverAnswer)
  })
})

describe("unreadOwnerTurns", () => {
  it("is undefined when the agent has seen every owner turn", () => {
    expect(unreadOwnerTurns(asked({ thread: [said("x", 1), said("y", 2, "agent")], delivered_turns: 1 }))).toBeUndefined()
  })
})
