/**
 * Issue 12, point 1, at the web: one small hostile file in the questions
 * folder must cost its own slot and nothing else. The built server is
 * started on a folder holding `[`×6000 then `]`×6000 and a valid record
 * whose `choices` nest 3,000 arrays deep (each 12 KB; decoding either used to
 * overflow the stack and fail every listing), and the page's routes still
 * answer, listing and counting the readable questions.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as Q from "../../src/questions/Question.js"
import { choiceQuestion, freeQuestion, ok, tempDirSync } from "../support.js"
import { postJson, request, seed, startWeb, type Web } from "./web-support.js"

const GOOD_OPEN = "20260101-000001-aaaa"
const GOOD_ANSWERED = "20260101-000002-bbbb"
const BARE_NEST = "20260101-000003-cccc"
const DEEP_CHOICES = "20260101-000004-dddd"

/** The ids a list response shows, whichever shape it has (a plain list, or open and history pages). */
const listedIds = (body: unknown): ReadonlyArray<string> => {
  const views = Array.isArray(body)
    ? body
    : [...((body as { open?: unknown[] }).open ?? []), ...((body as { history?: unknown[] }).history ?? [])]
  return (views as Array<{ id: string }>).map((v) => v.id)
}

let web: Web

beforeAll(async () => {
  const home = tempDirSync()
  await seed(home, [
    { q: choiceQuestion(GOOD_OPEN) },
    { q: ok(Q.answer(freeQuestion(GOOD_ANSWERED), { text: "ship it" }, new Date())) }
  ])
  const dir = NodePath.join(home, "questions")
  NodeFs.writeFileSync(NodePath.join(dir, `${BARE_NEST}.json`), "[".repeat(6000) + "]".repeat(6000))
  // A record valid in every field but one: its only choice is 3,000 arrays deep.
  const deep = { ...JSON.parse(Q.encode(choiceQuestion(DEEP_CHOICES))), choices: ["@"] }
  NodeFs.writeFileSync(NodePath.join(dir, `${DEEP_CHOICES}.json`), JSON.stringify(deep).replace('"@"', "[".repeat(3000) + "]".repeat(3000)))
  web = await startWeb(home)
}, 60_000)
afterAll(async () => {
  await web?.stop()
})

describe("magi web with a hostile file in the questions folder", () => {
  it("still lists every readable question at /api/questions, leaving out only the two hostile files", async () => {
    const reply = await request(`${web.url}/api/questions`)
    expect(reply.status).toBe(200)
    const ids = listedIds(reply.json())
    expect([...ids].sort()).toEqual([GOOD_OPEN, GOOD_ANSWERED])
  })

  it("still answers /api/health, counting the one open readable question", async () => {
    const reply = await request(`${web.url}/api/health`)
    expect(reply.status).toBe(200)
    const health = reply.json()
    expect(health.ok).toBe(true)
    expect(health.questions_open).toBe(1)
    expect(health.questions_needs_owner).toBe(1)
  })

  it("still takes the owner's answer to a readable question beside them", async () => {
    const reply = await postJson(`${web.url}/api/questions/${GOOD_OPEN}/answer`, { choice: choiceQuestion(GOOD_OPEN).choices[0] })
    expect(reply.status).toBe(200)
    expect(reply.json().status).toBe("answered")
  })
})
