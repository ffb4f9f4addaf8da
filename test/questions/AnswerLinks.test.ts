import { describe, expect, it } from "@effect/vitest"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { Effect, Either } from "effect"
import * as NodeCrypto from "node:crypto"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as AnswerLinks from "../../src/questions/AnswerLinks.js"
import { answerByLink } from "../../src/questions/Answers.js"
import { choiceQuestion, tempDirSync } from "../support.js"

const SECRET = Buffer.alloc(32, 7)
const NOW = Date.parse("2026-09-03T00:00:00Z")
const q = choiceQuestion()
const link = (index: number, over: Partial<Parameters<typeof AnswerLinks.mint>[1]> = {}) =>
  AnswerLinks.mint(SECRET, { question: q.id, choices: q.choices, index, expiresAt: NOW + 60_000, ...over })
const reason = (token: string, at = NOW) => Either.match(AnswerLinks.verify(SECRET, token, at), { onLeft: (e) => e.reason, onRight: () => "ok" })

describe("capability links", () => {
  it("allow the question, the choice and the set they were made for, until their expiry", () => {
    const claim = AnswerLinks.verify(SECRET, link(1), NOW)
    expect(Either.getOrThrow(claim)).toEqual({ question: q.id, index: 1, digest: AnswerLinks.choicesDigest(q.choices), expiresAt: NOW + 60_000 })
    expect(reason(link(1), NOW + 59_999)).toBe("ok")
    expect(reason(link(1), NOW + 60_000)).toBe("expired")
  })

  it("are refused when made with another key or altered anywhere", () => {
    expect(Either.isLeft(AnswerLinks.verify(NodeCrypto.randomBytes(32), link(0), NOW))).toBe(true)
    const token = link(0)
    for (let i = 3; i < token.length; i++) {
      if (token[i] === ".") continue
      const altered = token.slice(0, i) + (token[i] === "A" ? "B" : "A") + token.slice(i + 1)
      expect(["forged", "malformed"]).toContain(reason(altered))
    }
  })

  it("are refused when malformed, however", () => {
    for (const junk of ["", ".", "v1", "v1.", "v1..", "v1.a.b", "v0.a.b", `v1.e30.${"A".repeat(43)}`, "x".repeat(5000)])
      expect(["malformed", "forged"]).toContain(reason(junk))
  })

  it("answer only while the choice set is the one they were made for, and only an open question", () => {
    const at = new Date(NOW)
    const claim = Either.getOrThrow(AnswerLinks.verify(SECRET, link(1), NOW))
    expect(Either.getOrThrow(answerByLink(q, claim, at))).toMatchObject({ status: "answered", answer: { choice: "Redis" }, answered_via: "link" })
    const reordered = { ...q, choices: ["Redis", "SQLite"] }
    expect(Either.getLeft(answerByLink(reordered, claim, at)).pipe((e) => e._tag === "Some" && e.value.reason)).toBe("not-offered")
    const settled = Either.getOrThrow(answerByLink(q, claim, at))
    expect(Either.getLeft(answerByLink(settled, claim, at)).pipe((e) => e._tag === "Some" && e.value.reason)).toBe("answered")
  })

  it.live("keep their key in the home, made once with mode 0600, the same for every process that races to make it", () =>
    Effect.gen(function* () {
      const home = tempDirSync()
      const keys = yield* Effect.all(Array.from({ length: 8 }, () => AnswerLinks.secret(home)), { concurrency: "unbounded" })
      for (const k of keys) expect(k.equals(keys[0]!)).toBe(true)
      const path = NodePath.join(home, AnswerLinks.SECRET_FILE)
      expect(NodeFs.statSync(path).mode & 0o777).toBe(0o600)
      expect(NodeFs.readdirSync(home)).toEqual([AnswerLinks.SECRET_FILE])
      NodeFs.writeFileSync(path, "not hex\n")
      const broken = yield* Effect.flip(AnswerLinks.secret(home))
      expect(broken.message).toMatch(/not 64 hex digits; remove it/)
    }).pipe(Effect.provide(NodeFileSystem.layer)))
})

describe("a token's expiry", () => {
  const HOUR = 3_600_000
  it("outlives a deadline that is near or already past when the button goes out: a day from sending, and a grace for clocks", () => {
    // A question with a minute left (or one whose deadline a late announcement finds past) keeps its buttons for a day.
    expect(AnswerLinks.expiryFor(NOW + 60_000, NOW)).toBe(NOW + 24 * HOUR + AnswerLinks.CLOCK_GRACE_MS)
    expect(AnswerLinks.expiryFor(NOW - HOUR, NOW)).toBe(NOW + 24 * HOUR + AnswerLinks.CLOCK_GRACE_MS)
  })

  it("is the deadline, with the grace, when the question waits longer than a day", () => {
    expect(AnswerLinks.expiryFor(NOW + 72 * HOUR, NOW)).toBe(NOW + 72 * HOUR + AnswerLinks.CLOCK_GRACE_MS)
  })

  it("still lets a press through after the deadline known at sending moved on (the question is open), and refuses one past the expiry", () => {
    const expiresAt = AnswerLinks.expiryFor(NOW + 10 * 60_000, NOW)
    const token = link(0, { expiresAt })
    expect(reason(token, NOW + 2 * HOUR)).toBe("ok")
    expect(reason(token, expiresAt)).toBe("expired")
  })
})
