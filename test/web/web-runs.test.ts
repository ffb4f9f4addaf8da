/**
 * The runs routes of `magi web`, against the built server: the list and its
 * limit, one run with its questions, artifacts and last output, artifacts as
 * inert text, and the runs revision in health and the change events.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as Q from "../../src/questions/Question.js"
import { sampleRun } from "../runSupport.js"
import { choiceQuestion, freeQuestion, ok, tempDirSync } from "../support.js"
import { eventually, readEvents, request, seed, seedRun, startWeb, withStore, type Web } from "./web-support.js"
import { archiveNow } from "../../src/questions/Archiver.js"

const PANEL_CSP =
  "default-src 'none'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; font-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'self'"

let web: Web
const api = (path: string) => `${web.url}${path}`

/** Run ids one minute apart, in order of creation. */
const runId = (i: number) => `20260903-10${String(Math.floor(i / 60)).padStart(2, "0")}${String(i % 60).padStart(2, "0")}-${(0xb000 + i).toString(16)}`

beforeAll(async () => {
  web = await startWeb()
})
afterAll(async () => {
  await web?.stop()
})

describe("GET /api/runs", () => {
  it("pages through the history: runs finished long ago are moved to their month's shelf at start, and ?before= gives the page after", async () => {
    const home = tempDirSync()
    const old = Array.from({ length: 5 }, (_, i) => sampleRun(runId(700 + i), { status: "done" }))
    const live = sampleRun(runId(710), { status: "running" })
    for (const r of [...old, live]) seedRun(home, r)
    const own = await startWeb(home)
    try {
      await eventually(
        "the finished runs to be shelved",
        async () => NodeFs.existsSync(NodePath.join(home, "runs", "history", "2026-09", `${old[4]!.id}.json`)) ? true : undefined
      )
      const first = (await request(`${own.url}/api/runs?limit=3`)).json() as Array<{ id: string }>
      expect(first.map((r) => r.id)).toEqual([live.id, old[4]!.id, old[3]!.id])
      const next = (await request(`${own.url}/api/runs?limit=3&before=${first.at(-1)!.id}`)).json() as Array<{ id: string }>
      expect(next.map((r) => r.id)).toEqual([old[2]!.id, old[1]!.id, old[0]!.id])
      expect((await request(`${own.url}/api/runs?before=..%2Fx`)).status).toBe(400)
    } finally {
      await own.stop()
    }
  })

  it("lists runs newest first, 50 by default, and as many as ?limit= asks up to 500", async () => {
    const own = await startWeb()
    try {
      for (let i = 0; i < 55; i++) seedRun(own.home, sampleRun(runId(i), { instruction: `Task number ${i}` }))
      const all = await request(`${own.url}/api/runs`)
      expect(all.status).toBe(200)
      expect(all.headers["content-type"]).toBe("application/json; charset=utf-8")
      const list = all.json() as Array<{ id: string; instruction: string }>
      expect(list.length).toBe(50)
      expect(list[0]!.id).toBe(runId(54))
      expect(list[49]!.id).toBe(runId(5))
      const three = (await request(`${own.url}/api/runs?limit=3`)).json() as Array<{ id: string }>
      expect(three.map((r) => r.id)).toEqual([runId(54), runId(53), runId(52)])
      expect(((await request(`${own.url}/api/runs?limit=500`)).json() as unknown[]).length).toBe(55)
    } finally {
      await own.stop()
    }
  })

  it("refuses a limit that is not a whole number from 1 to 500 with 400 saying so", async () => {
    for (const limit of ["0", "501", "ten", "-1", "2.5", ""]) {
      const reply = await request(api(`/api/runs?limit=${limit}`))
      expect(reply.status, limit).toBe(400)
      expect(reply.json().error).toContain("limit must be a whole number from 1 to 500")
    }
  })

  it("says for each run how many of its questions are open and how many wait on the owner", async () => {
    const own = await startWeb()
    try {
      const id = runId(100)
      seedRun(own.home, sampleRun(id, { status: "waiting" }))
      const waiting = { ...choiceQuestion("20260903-120001-c001"), run: id }
      const askedBack = ok(Q.say({ ...freeQuestion("20260903-120002-c002"), run: id }, "which one?", new Date()))
      const elsewhere = choiceQuestion("20260903-120003-c003")
      await seed(own.home, [{ q: waiting }, { q: askedBack }, { q: elsewhere }])
      const [run] = (await request(`${own.url}/api/runs`)).json() as Array<{ id: string; questions_open: number; questions_needs_owner: number }>
      expect(run).toMatchObject({ id, status: "waiting", questions_open: 2, questions_needs_owner: 1 })
    } finally {
      await own.stop()
    }
  })

  it("skips a run whose record cannot be read, and lists the rest", async () => {
    const own = await startWeb()
    try {
      seedRun(own.home, sampleRun(runId(200)))
      NodeFs.mkdirSync(NodePath.join(own.home, "runs", runId(201)), { recursive: true })
      NodeFs.writeFileSync(NodePath.join(own.home, "runs", runId(201), "run.json"), "{ not json")
      const list = (await request(`${own.url}/api/runs`)).json() as Array<{ id: string }>
      expect(list.map((r) => r.id)).toEqual([runId(200)])
    } finally {
      await own.stop()
    }
  })
})

describe("GET /api/runs/{id}", () => {
  it("shows one run by its short id: record, seats, its own questions newest first, artifacts and the end of its last output", async () => {
    const id = runId(300)
    seedRun(
      web.home,
      sampleRun(id, {
        status: "done",
        summary: "Added an LRU cache in front of the store.",
        seats: [
          { key: "impl", agent: "fake", turns: 2, session: "s-1", write: true },
          { key: "rev", agent: "other", turns: 1, session: null, write: false }
        ]
      }),
      {
        "impl-1.prompt.md": "Add a cache",
        "impl-1.out": "first turn output\n",
        "impl-1.err": "",
        "impl-2.prompt.md": "Your answer: SQLite",
        "impl-2.out": "second turn: done\n",
        "impl-2.err": ""
      }
    )
    const older = { ...choiceQuestion("20260903-130001-d001"), run: id }
    const newer = { ...freeQuestion("20260903-130002-d002"), run: id }
    await seed(web.home, [{ q: ok(Q.answer(older, { choice: "SQLite" }, new Date())) }, { q: newer }, { q: choiceQuestion("20260903-130003-d003") }])

    const reply = await request(api(`/api/runs/${Q.shortId(id)}`))
    expect(reply.status).toBe(200)
    const run = reply.json()
    expect(run).toMatchObject({ id, status: "done", branch: `magi/${Q.shortId(id)}`, summary: "Added an LRU cache in front of the store.", task: null })
    expect(run.seats.map((s: { key: string }) => s.key)).toEqual(["impl", "rev"])
    expect(run.questions.map((q: { id: string }) => q.id)).toEqual([newer.id, older.id])
    expect(run.questions[0]).toMatchObject({ status: "open", waiting_on_agent: false, holder: "nobody" })
    expect(run.artifacts.map((a: { name: string }) => a.name)).toEqual([
      "impl-1.prompt.md",
      "impl-1.out",
      "impl-1.err",
      "impl-2.prompt.md",
      "impl-2.out",
      "impl-2.err"
    ])
    expect(run.artifacts[1]).toMatchObject({ name: "impl-1.out", size: 18 })
    expect(run.last_output).toEqual({ name: "impl-2.out", text: "second turn: done\n", truncated: false })
  })

  it("lists a run's questions that have moved to history along with those still hot", async () => {
    const id = runId(301)
    seedRun(web.home, sampleRun(id, { status: "done" }))
    const at = new Date(2026, 6, 2, 9)
    const old = { ...ok(Q.answer({ ...choiceQuestion(Q.makeId(at, 0xd101), at), run: id }, { choice: "SQLite" }, at)), answer_delivered: true }
    const hot = { ...freeQuestion("20260903-130004-d102"), run: id }
    await seed(web.home, [{ q: old }, { q: hot }])
    await withStore(web.home, archiveNow)
    expect(NodeFs.existsSync(NodePath.join(web.home, "questions", `${old.id}.json`))).toBe(false)
    const run = (await request(api(`/api/runs/${id}`))).json()
    expect(run.questions.map((q: { id: string }) => q.id)).toEqual([hot.id, old.id])
  })

  it("shows only the end of a long output, and the stderr of a turn that printed nothing else", async () => {
    const long = runId(301)
    seedRun(web.home, sampleRun(long), { "impl-1.out": "START" + "x".repeat(40_000) + "THE END\n" })
    const tail = (await request(api(`/api/runs/${long}`))).json().last_output
    expect(tail.truncated).toBe(true)
    expect(tail.text.endsWith("THE END\n")).toBe(true)
    expect(tail.text).not.toContain("START")
    expect(Buffer.byteLength(tail.text)).toBeLessThanOrEqual(16 * 1024)

    const failed = runId(302)
    seedRun(web.home, sampleRun(failed, { status: "failed", reason: "the agent's turn failed (exit 127)" }), {
      "impl-1.out": "",
      "impl-1.err": "fake-agent: command not found\n"
    })
    expect((await request(api(`/api/runs/${failed}`))).json().last_output).toEqual({
      name: "impl-1.err",
      text: "fake-agent: command not found\n",
      truncated: false
    })
    const fresh = runId(303)
    seedRun(web.home, sampleRun(fresh))
    expect((await request(api(`/api/runs/${fresh}`))).json()).toMatchObject({ artifacts: [], last_output: null, questions: [] })
  })

  it("answers 404 with the store's words for a run that does not exist", async () => {
    const reply = await request(api("/api/runs/20990101-000000-ffff"))
    expect(reply.status).toBe(404)
    expect(reply.json().error).toContain("no run matches")
  })
})

describe("GET /api/runs/{id}/artifacts/{name}", () => {
  const id = runId(400)
  beforeAll(() => {
    seedRun(web.home, sampleRun(id), {
      "impl-1.out": "<!doctype html><script>alert(1)</script><p>hi</p>\n",
      "impl-1.prompt.md": "# Add a cache\n"
    })
  })

  it("serves an artifact as plain text under the panel's policy, agent-written html included", async () => {
    const reply = await request(api(`/api/runs/${id}/artifacts/impl-1.out`))
    expect(reply.status).toBe(200)
    expect(reply.text).toBe("<!doctype html><script>alert(1)</script><p>hi</p>\n")
    expect(reply.headers["content-type"]).toBe("text/plain; charset=utf-8")
    expect(reply.headers["content-security-policy"]).toBe(PANEL_CSP)
    expect(reply.headers["x-content-type-options"]).toBe("nosniff")
    expect(reply.headers["referrer-policy"]).toBe("no-referrer")
    const head = await request(api(`/api/runs/${id}/artifacts/impl-1.prompt.md`), { method: "HEAD" })
    expect(head.status).toBe(200)
    expect(head.body.length).toBe(0)
  })

  it("refuses traversal and hidden names with 400 before looking for the run, and a missing file with 404", async () => {
    NodeFs.writeFileSync(NodePath.join(web.home, "runs", id, "artifacts", ".secret"), "hidden")
    for (const name of ["..%2Frun.json", "%2E%2E", ".secret", "a%2Fb", "x..y"]) {
      for (const run of [id, "20990101-000000-ffff"]) {
        const reply = await request(api(`/api/runs/${run}/artifacts/${name}`))
        expect(reply.status, `${run} ${name}`).toBe(400)
        expect(reply.json().error).toContain("is not an artifact name")
      }
    }
    const missing = await request(api(`/api/runs/${id}/artifacts/impl-9.out`))
    expect(missing.status).toBe(404)
    expect(missing.json().error).toContain("has no artifact `impl-9.out`")
    expect((await request(api("/api/runs/20990101-000000-ffff/artifacts/impl-1.out"))).status).toBe(404)
  })

  it("refuses an artifact that is not a regular file instead of hanging on it, and leaves it out of the list", async () => {
    const fifoRun = runId(401)
    seedRun(web.home, sampleRun(fifoRun), { "impl-1.out": "ok\n" })
    execFileSync("mkfifo", [NodePath.join(web.home, "runs", fifoRun, "artifacts", "impl-2.out")])
    const reply = await request(api(`/api/runs/${fifoRun}/artifacts/impl-2.out`))
    expect(reply.status).toBe(500)
    expect(reply.json().error).toContain("not a regular file")
    const detail = (await request(api(`/api/runs/${fifoRun}`))).json()
    expect(detail.artifacts.map((a: { name: string }) => a.name)).toEqual(["impl-1.out"])
    expect(detail.last_output.name).toBe("impl-1.out")
  })
})

describe("the runs revision", () => {
  it("moves in /api/health within a poll when a run is created or its record rewritten, and stays put otherwise", async () => {
    const own = await startWeb()
    try {
      // Health says what the page's watcher last read, at most a poll (a second) ago.
      const revision = async () => (await request(`${own.url}/api/health`)).json().revisions.runs as number
      const movesFrom = (from: number) => eventually("the runs revision to move", async () => ((r) => (r !== from ? r : undefined))(await revision()))
      expect(await revision()).toBe(0)
      const id = runId(500)
      seedRun(own.home, sampleRun(id))
      const created = await movesFrom(0)
      await new Promise((r) => setTimeout(r, 1_500))
      expect(await revision()).toBe(created)
      seedRun(own.home, sampleRun(id, { status: "done" }))
      expect(await movesFrom(created)).not.toBe(created)
    } finally {
      await own.stop()
    }
  })

  it("sends open pages a change event with the new runs revision when a run's status changes", async () => {
    const own = await startWeb()
    try {
      const id = runId(501)
      seedRun(own.home, sampleRun(id))
      // Health says what the watcher last read: once it has seen the new run.
      const before = await eventually(
        "health to see the run",
        async () => ((r: number) => (r !== 0 ? r : undefined))((await request(`${own.url}/api/health`)).json().revisions.runs)
      )
      const events = readEvents(`${own.url}/api/events`, (es) => es.some((e) => e.event === "change" && JSON.parse(e.data).revisions.runs !== before))
      await new Promise((r) => setTimeout(r, 300))
      seedRun(own.home, sampleRun(id, { status: "done", summary: "done it" }))
      const seen = await events
      const last = JSON.parse(seen.at(-1)!.data)
      expect(last.revisions.runs).toBe((await request(`${own.url}/api/health`)).json().revisions.runs)
      expect((await request(`${own.url}/api/runs/${id}`)).json().status).toBe("done")
    } finally {
      await own.stop()
    }
  })

  it("refuses a request for a foreign host name on the runs routes too (421)", async () => {
    const reply = await request(api("/api/runs"), { headers: { host: "evil.example" } })
    expect(reply.status).toBe(421)
  })
})
