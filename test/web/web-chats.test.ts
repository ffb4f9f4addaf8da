/**
 * The chat routes of `magi web`, against the built server and a scripted
 * interviewer: a chat answers 202 once the operator's words are on disk, the
 * agent's reply arrives in the background and is announced by a `chats`
 * revision, a draft is filed into the queue (or refused with its problems),
 * and the usual refusals hold.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { tempDirSync } from "../support.js"
import { chatRepo, DRAFT } from "./chat-support.js"
import { eventually, postJson, readEvents, request, startWeb, type Web } from "./web-support.js"

let web: Web
let setup: ReturnType<typeof chatRepo>
const api = (path: string) => `${web.url}${path}`
const chatOf = async (id: string) => (await request(api(`/api/chats/${id}`))).json()
const agentSaid = (id: string, n: number) =>
  eventually(`agent turn ${n}`, async () => {
    const chat = await chatOf(id)
    return chat.turns.filter((t: { who: string }) => t.who === "agent").length >= n && !chat.thinking ? chat : undefined
  }, 30_000)

beforeAll(async () => {
  setup = chatRepo([{ reply: "Which fetcher?" }, { reply: "```task\nretry it\n```" }, { reply: "Here:\n```task\n" + DRAFT + "\n```" }])
  web = await startWeb(tempDirSync(), 0, { cwd: setup.repo })
})
afterAll(async () => {
  await web?.stop()
})

describe("a chat over HTTP", () => {
  it("answers 202 with the operator's words on disk, then the agent's reply arrives and is filed as a task", async () => {
    const created = await postJson(api("/api/chats"), { idea: "retry the fetcher" })
    expect(created.status).toBe(202)
    const chat = created.json()
    expect(chat).toMatchObject({ status: "open", repo: NodeFs.realpathSync(setup.repo), agent: "interviewer", fileable: false })
    expect(chat.turns).toEqual([{ who: "operator", body: "retry the fetcher", at: expect.any(String) }])
    const onDisk = JSON.parse(NodeFs.readFileSync(NodePath.join(web.home, "chats", `${chat.id}.json`), "utf8"))
    expect(onDisk.turns[0].body).toBe("retry the fetcher")

    const first = await agentSaid(chat.id, 1)
    expect(first.turns[1]).toMatchObject({ who: "agent", body: "Which fetcher?" })
    expect((await request(api("/api/chats"))).json().map((c: { id: string }) => c.id)).toEqual([chat.id])

    expect((await postJson(api(`/api/chats/${chat.id}/say`), { body: "the HTTP one" })).status).toBe(202)
    const second = await agentSaid(chat.id, 2)
    expect(second.draft).toBe("retry it")
    const refused = await postJson(api(`/api/chats/${chat.id}/file`), {})
    expect(refused.status).toBe(400)
    expect(refused.json().problems.map((p: { message: string }) => p.message)).toEqual([
      expect.stringContaining("no completion criteria"),
      expect.stringContaining("under 200 bytes")
    ])

    await postJson(api(`/api/chats/${chat.id}/say`), { body: "criteria, please" })
    const third = await agentSaid(chat.id, 3)
    expect(third).toMatchObject({ draft: DRAFT, fileable: true, problems: [] })
    const filed = await postJson(api(`/api/chats/${chat.id}/file`), { priority: 2 })
    expect(filed.status).toBe(200)
    const task = filed.json().task
    expect(task).toMatchObject({ title: "Retry failed GETs in the fetcher", priority: 2, status: "queued", instruction: DRAFT })
    expect(filed.json().chat).toMatchObject({ status: "filed", task: task.id })
    expect(NodeFs.existsSync(NodePath.join(web.home, "queue", `${task.id}.json`))).toBe(true)

    const late = await postJson(api(`/api/chats/${chat.id}/say`), { body: "one more thing" })
    expect(late.status).toBe(409)
    expect(late.json().error).toContain("is filed")
  }, 90_000)

  it("announces a chat's change with a chats revision in the events and in health", async () => {
    const before = (await request(api("/api/health"))).json().revisions.chats
    expect(typeof before).toBe("number")
    const seen = readEvents(api("/api/events"), (events) => events.slice(1).some((e) => e.event === "change" && JSON.parse(e.data).revisions.chats !== before))
    await new Promise((r) => setTimeout(r, 200))
    await postJson(api("/api/chats"), { idea: "a second idea", repo: setup.repo })
    const events = await seen
    expect(JSON.parse(events.at(-1)!.data).revisions.chats).not.toBe(before)
    expect((await request(api("/api/health"))).json().revisions.chats).not.toBe(before)
  }, 30_000)

  it("refuses a bad body, a short id for a write, an unknown chat and a cross-site write", async () => {
    expect((await postJson(api("/api/chats"), { idea: 3 })).status).toBe(400)
    expect((await postJson(api("/api/chats"), { idea: "x", colour: "red" })).status).toBe(400)
    const empty = await postJson(api("/api/chats"), { idea: "   " })
    expect(empty.status).toBe(400)
    expect(empty.json().error).toContain("idea is empty")
    const chat = (await postJson(api("/api/chats"), { idea: "third idea" })).json()
    const short = chat.id.slice(-4)
    expect((await request(api(`/api/chats/${short}`))).json().id).toBe(chat.id)
    const byShort = await postJson(api(`/api/chats/${short}/say`), { body: "hi" })
    expect(byShort.status).toBe(404)
    expect(byShort.json().error).toContain("whole id")
    expect((await request(api("/api/chats/20200101-000000-0000"))).status).toBe(404)
    const forged = await postJson(api(`/api/chats/${chat.id}/say`), { body: "hi" }, { origin: "https://evil.example" })
    expect(forged.status).toBe(403)
    const abandoned = await postJson(api(`/api/chats/${chat.id}/abandon`), {})
    expect(abandoned.status).toBe(200)
    expect(abandoned.json().status).toBe("abandoned")
    expect((await postJson(api(`/api/chats/${chat.id}/say`), { body: "hi" })).status).toBe(409)
  }, 30_000)
})

describe("a failed turn over HTTP", () => {
  it("shows magi's note with the words kept, and a retry answers them", async () => {
    const own = chatRepo([{ mode: "quota" }, { reply: "Back: which fetcher?" }])
    const server = await startWeb(tempDirSync(), 0, { cwd: own.repo })
    try {
      const chat = (await postJson(`${server.url}/api/chats`, { idea: "retry the fetcher" })).json()
      const failed = await eventually("the failure note", async () => {
        const c = (await request(`${server.url}/api/chats/${chat.id}`)).json()
        return c.stalled ? c : undefined
      }, 30_000)
      expect(failed.turns[1].body).toMatch(/^magi: interviewer hit its usage limit \(resets: 3pm \(UTC\)\)\. Your message is saved/)
      const retried = await postJson(`${server.url}/api/chats/${chat.id}/retry`, {})
      expect(retried.status).toBe(202)
      const answered = await eventually("the retried turn", async () => {
        const c = (await request(`${server.url}/api/chats/${chat.id}`)).json()
        return c.turns.at(-1).body === "Back: which fetcher?" && !c.thinking ? c : undefined
      }, 30_000)
      expect(answered.stalled).toBe(false)
      expect((await postJson(`${server.url}/api/chats/${chat.id}/retry`, {})).status).toBe(409)
    } finally {
      await server.stop()
    }
  }, 90_000)
})

describe("a server stopped mid-turn", () => {
  it("stops at once, ending the agent's turn, and keeps the operator's words for a retry", async () => {
    const own = chatRepo([{ mode: "hang" }])
    const server = await startWeb(tempDirSync(), 0, { cwd: own.repo })
    const chat = (await postJson(`${server.url}/api/chats`, { idea: "retry the fetcher" })).json()
    await eventually("the agent's turn to start", () => (NodeFs.existsSync(NodePath.join(own.dir, "calls.jsonl")) ? true : undefined), 30_000)
    // A turn may run 300 s; the stop must not wait for it (this test's own
    // timeout is far shorter).
    await server.stop()
    const onDisk = JSON.parse(NodeFs.readFileSync(NodePath.join(server.home, "chats", `${chat.id}.json`), "utf8"))
    expect(onDisk.turns.map((t: { who: string }) => t.who)).toEqual(["operator"])
  }, 60_000)
})
