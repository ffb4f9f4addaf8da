/**
 * What the card says about who holds a question (issue 20.4): a question
 * asked outside any run is never "resumed by magi"; its words wait for the
 * agent's next `magi ask --wait`.
 */
import { describe, expect, it } from "vitest"
import { Either } from "effect"
import { holderText } from "../../src/web/client/card.js"
import { view } from "../../src/web/Snapshot.js"
import * as Q from "../../src/questions/Question.js"

const asked = (run: string) =>
  Q.make({ id: "19700101-000000-abcd", run, node: "ask", seat: "", summary: "Which?", detail: "", choices: ["a", "b"], now: new Date(0), cwd: "/w" })

describe("holderText", () => {
  it("outside any run with nobody waiting: the words are kept for the next --wait, loop or no loop", () => {
    const open = view(asked(""), "nobody")
    for (const loop of [true, false, undefined])
      expect(holderText(open, loop)).toBe("No agent is waiting; your words are kept for the agent's next `magi ask --wait`.")
    const answered = view({ ...asked(""), status: "answered", answer: { choice: "a" } }, "nobody")
    expect(holderText(answered, true)).toBe("No agent is waiting; your answer is kept for the agent's next `magi ask --wait`.")
  })

  it("an asker that still holds its lease is waiting, in a run or not", () => {
    expect(holderText(view(asked(""), "asker"), true)).toBe("The agent is waiting.")
    expect(holderText(view(asked("R"), "asker"), true)).toBe("The agent is waiting.")
  })

  it("inside a run, nobody waiting still means magi resumes it, as before", () => {
    expect(holderText(view(asked("R"), "nobody"), true)).toBe("No agent is waiting; magi will resume it when you answer.")
  })

  it("an answer waiting for room on its host says behind how many turns, and that it is not lost", () => {
    const answered = { ...asked("R"), status: "answered" as const, answer: { choice: "a" } }
    expect(holderText(view(answered, "daemon", "queued behind 3 turns on buildbox"), true)).toBe(
      "Queued behind 3 turns on buildbox: magi resumes the agent with your answer as soon as one ends."
    )
    expect(holderText(view(answered, "daemon"), true)).toBe("magi is delivering your answer to the agent.")
  })
})

describe("a question whose agent owes a reply (issue 27.6)", () => {
  const askedBack = (holder: "nobody" | "asker") => {
    const said = Either.getOrThrow(Q.say(asked("R"), "why a?", new Date(1000)))
    // The asker's `magi ask` showed the agent the owner's words.
    return view(Q.markShown(said, { answer: false, turns: said.thread.length }), holder)
  }

  it('with its asker gone, says it owes a reply and how to bring it back, never "No agent is waiting"', () => {
    const text = holderText(askedBack("nobody"), true)!
    expect(text).toBe(
      "The agent owes you a reply but its turn has ended without one: say more below and magi resumes it with your words, or decide anyway."
    )
    expect(text).not.toContain("No agent is waiting")
  })

  it("while its asker still waits, says so", () => {
    expect(holderText(askedBack("asker"), true)).toBe("The agent is waiting.")
  })
})
