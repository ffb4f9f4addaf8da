/**
 * The queue routes of `magi web`, against the built server: filing a task
 * from the phone, the list's order and what each task waits on, every move
 * the owner can make and each refusal with its status, the repos, and the
 * queue revision in health and the change events.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { Effect, Either } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as Q from "../../src/questions/Question.js"
import * as T from "../../src/queue/Task.js"
import { TaskStore } from "../../src/queue/TaskStore.js"
import { appendDecision, type DecisionRecord } from "../../src/daemon/ConductorLog.js"
import { sampleRun } from "../runSupport.js"
import { choiceQuestion, ok, tempDirSync } from "../support.js"
import { eventually, gitRepo, postJson, readEvents, request, seed, seedRun, startWeb, withTasks, type Web } from "./web-support.js"

let web: Web
let repo: string
const api = (path: string) => `${web.url}${path}`
const task = (id: string, rest: string) => api(`/api/queue/${encodeURIComponent(id)}/${rest}`)
const del = (url: string, headers: Record<string, string> = {}) =>
  request(url, { method: "DELETE", headers: { "content-type": "application/json", ...headers } })

/** A task as `magi task add` would file it, then moved as given and written. */
const file = (home: string, fields: Partial<T.NewTask> & { readonly instruction: string }, then: (t: T.Task) => T.Task = (t) => t) =>
  withTasks(
    home,
    Effect.gen(function* () {
      const store = yield* TaskStore
      const filed = yield* store.add({ repo: "/r", ...fields })
      const moved = then(filed)
      return moved === filed ? filed : yield* store.put(moved)
    })
  )

const queue = async (url = web.url) => (await request(`${url}/api/queue`)).json() as Array<T.Task & { blockers: any[]; run_questions: any[] }>

beforeAll(async () => {
  repo = gitRepo()
  web = await startWeb(tempDirSync(), 0, { cwd: repo })
})
afterAll(async () => {
  await web?.stop()
})

describe("filing a task from the phone", () => {
  it("files it with 201, titled from its first line, in the repository magi web was started in, as the owner's", async () => {
    const reply = await postJson(api("/api/queue"), { instruction: "## Fix the flaky login test\nIt fails one run in ten.", priority: 3 })
    expect(reply.status).toBe(201)
    const filed = reply.json()
    expect(filed).toMatchObject({
      title: "Fix the flaky login test",
      instruction: "## Fix the flaky login test\nIt fails one run in ten.",
      priority: 3,
      status: "queued",
      attempts: 0,
      repo,
      source: { kind: "human" },
      blockers: [],
      runnable: true
    })
    expect((await queue()).map((t) => t.id)).toContain(filed.id)
    expect(NodeFs.existsSync(NodePath.join(web.home, "queue", `${filed.id}.json`))).toBe(true)
  })

  it("takes a title and a repository given, the repository as its git root", async () => {
    const other = gitRepo()
    NodeFs.mkdirSync(NodePath.join(other, "src"))
    const reply = await postJson(api("/api/queue"), { instruction: "Refactor the parser", title: "Parser cleanup", repo: NodePath.join(other, "src") })
    expect(reply.status).toBe(201)
    expect(reply.json()).toMatchObject({ title: "Parser cleanup", repo: other, priority: 0 })
  })

  it("refuses an empty instruction, a repository that is not one, and a body of another shape with 400, filing nothing", async () => {
    const before = (await queue()).length
    const cases: Array<[unknown, RegExp]> = [
      [{ instruction: "  \n " }, /needs an instruction/],
      [{ instruction: "x", repo: "relative/dir" }, /absolute path/],
      [{ instruction: "x", repo: tempDirSync() }, /is not inside a git repository/],
      [{ instruction: "x", repo: "/no/such/dir" }, /does not exist/],
      [{ instruction: "x", priority: 1.5 }, /must be exactly/],
      [{ instruction: "x", owner: "me" }, /must be exactly/],
      [{ title: "no instruction" }, /must be exactly/]
    ]
    for (const [body, error] of cases) {
      const reply = await postJson(api("/api/queue"), body)
      expect(reply.status, JSON.stringify(body)).toBe(400)
      expect(reply.json().error).toMatch(error)
    }
    expect((await queue()).length).toBe(before)
  })

  it("asks for a repository when magi web was not started inside one", async () => {
    const own = await startWeb(tempDirSync(), 0, { cwd: tempDirSync() })
    try {
      const reply = await postJson(`${own.url}/api/queue`, { instruction: "Do it" })
      expect(reply.status).toBe(400)
      expect(reply.json().error).toContain("no repository is chosen by default")
      expect((await request(`${own.url}/api/repos`)).json()).toEqual({ current: null, hint: expect.stringContaining("[repos]"), repos: [], names: [] })
    } finally {
      await own.stop()
    }
  })

  it("refuses a form another site posts (403) and a foreign Host (421), filing nothing", async () => {
    const before = (await queue()).length
    const form = await request(api("/api/queue"), {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: JSON.stringify({ instruction: "rm -rf" })
    })
    expect(form.status).toBe(403)
    const crossSite = await postJson(api("/api/queue"), { instruction: "rm -rf" }, { origin: "http://evil.example" })
    expect(crossSite.status).toBe(403)
    const rebound = await postJson(api("/api/queue"), { instruction: "rm -rf" }, { host: "evil.example" })
    expect(rebound.status).toBe(421)
    expect((await queue()).length).toBe(before)
  })
})

describe("GET /api/queue", () => {
  it("leaves out the tasks done over an hour ago, which GET /api/queue/history pages through, newest first", async () => {
    const home = tempDirSync()
    const done = []
    for (const n of [1, 2, 3]) {
      const t = await file(home, { instruction: `finished ${n}` }, (x) => Either.getOrThrow(T.succeed(x)))
      // Done in June: long past the hour a done task stays in the queue.
      const path = NodePath.join(home, "queue", `${t.id}.json`)
      NodeFs.writeFileSync(path, JSON.stringify({ ...JSON.parse(NodeFs.readFileSync(path, "utf8")), updated_at: "2026-06-01T00:00:00Z" }))
      done.push(t)
    }
    const open = await file(home, { instruction: "still to do" })
    const own = await startWeb(home)
    try {
      await eventually("the done tasks to be shelved", async () => ((await queue(own.url)).length === 1 ? true : undefined))
      expect((await queue(own.url)).map((t) => t.id)).toEqual([open.id])
      const ids = done.map((t) => t.id).sort().reverse()
      const first = (await request(`${own.url}/api/queue/history?limit=2`)).json() as { tasks: Array<{ id: string }>; next: string | null }
      expect(first.tasks.map((t) => t.id)).toEqual(ids.slice(0, 2))
      const rest = (await request(`${own.url}/api/queue/history?limit=2&before=${first.next}`)).json() as { tasks: Array<{ id: string }>; next: string | null }
      expect(rest).toEqual({ tasks: [expect.objectContaining({ id: ids[2], status: "done" })], next: null })
    } finally {
      await own.stop()
    }
  })

  it("lists open tasks first by priority then newest, then history, each blocker by name", async () => {
    const own = await startWeb()
    try {
      const low = await file(own.home, { instruction: "Low", priority: 0 })
      const high = await file(own.home, { instruction: "High", priority: 5 })
      await new Promise((r) => setTimeout(r, 1100))
      const newerLow = await file(own.home, { instruction: "Newer low", priority: 0 })
      const finished = await file(own.home, { instruction: "Finished", priority: 9 }, (t) => ok(T.succeed(t)))
      const question = choiceQuestion("20260903-140001-e001")
      await seed(own.home, [{ q: question }])
      const blocked = await file(
        own.home,
        { instruction: "Waits", priority: 1 },
        (t) => ok(T.block(t, [high.id, question.id, "20990101-000000-dead"], "needs the others"))
      )
      const list = await queue(own.url)
      expect(list.map((t) => t.title)).toEqual(["High", "Waits", "Newer low", "Low", "Finished"])
      expect(list.find((t) => t.id === blocked.id)!.blockers).toEqual([
        { id: high.id, kind: "task", title: "High", status: "queued" },
        { id: question.id, kind: "question", title: question.summary, status: "open" },
        { id: "20990101-000000-dead", kind: "missing", title: "", status: "missing" }
      ])
      expect(list.map((t) => t.id)).toEqual([high.id, blocked.id, newerLow.id, low.id, finished.id])
    } finally {
      await own.stop()
    }
  })

  it("names a blocker that is a question settled onto a month's shelf, not as missing", async () => {
    const home = tempDirSync()
    const long = new Date(Date.now() - 3 * 3600_000)
    const settled = {
      ...ok(Q.answer({ ...choiceQuestion("20260903-090001-e0e1", long), summary: "Which cache?" }, { choice: "SQLite" }, long)),
      answer_delivered: true
    }
    await seed(home, [{ q: settled }])
    const own = await startWeb(home)
    try {
      // Read by its agent hours ago: the start's pass shelves it.
      await eventually(
        "the answered question on its month's shelf",
        () => NodeFs.existsSync(NodePath.join(home, "questions", `${settled.id}.json`)) ? undefined : true
      )
      const blocked = await file(home, { instruction: "Waits on the cache decision", priority: 1 }, (t) => ok(T.block(t, [settled.id], "needs it")))
      const listed = (await queue(own.url)).find((t) => t.id === blocked.id)!
      expect(listed.blockers).toEqual([{ id: settled.id, kind: "question", title: "Which cache?", status: "answered" }])
    } finally {
      await own.stop()
    }
  })

  it("shows a running task's open questions from its run, so the owner sees what it waits on", async () => {
    const own = await startWeb()
    try {
      const runId = "20260903-150000-f001"
      const running = await file(own.home, { instruction: "Add a cache" }, (t) => ok(T.start(t, runId)))
      seedRun(own.home, sampleRun(runId, { status: "waiting" }))
      const question = { ...choiceQuestion("20260903-150001-f002"), run: runId }
      await seed(own.home, [{ q: question }])
      const [view] = await queue(own.url)
      expect(view).toMatchObject({ id: running.id, status: "running", attempts: 1, runs: [runId] })
      expect(view!.run_questions).toEqual([{ id: question.id, summary: question.summary, status: "open", waiting_on_agent: false }])
      // And the run's page names its task.
      expect((await request(`${own.url}/api/runs/${runId}`)).json().task).toEqual({ id: running.id, title: "Add a cache", status: "running" })
    } finally {
      await own.stop()
    }
  })

  it("gzips the list for a browser that accepts it", async () => {
    await file(web.home, { instruction: "Something to list" })
    const plain = await request(api("/api/queue"))
    const zipped = await request(api("/api/queue"), { headers: { "accept-encoding": "gzip" } })
    expect(zipped.headers["content-encoding"]).toBe("gzip")
    expect(JSON.parse((await import("node:zlib")).gunzipSync(zipped.body).toString("utf8"))).toEqual(plain.json())
  })
})

describe("moving a task", () => {
  it("holds with a reason, changes the priority, edits, releases and marks it done, answering with the task each time", async () => {
    const t = await file(web.home, { instruction: "Write the docs", priority: 1 })
    const held = await postJson(task(t.id, "hold"), { reason: "waiting for the API to settle" })
    expect(held.status).toBe(200)
    expect(held.json()).toMatchObject({ status: "held", hold_source: "manual", hold_reason: "waiting for the API to settle", runnable: false })
    expect((await postJson(task(t.id, "priority"), { priority: 7 })).json()).toMatchObject({ priority: 7, status: "held" })
    const edited = await postJson(task(t.id, "edit"), { instruction: "# Write the user docs\nfor the queue" })
    expect(edited.json()).toMatchObject({ title: "Write the user docs", instruction: "# Write the user docs\nfor the queue" })
    expect((await postJson(task(t.id, "edit"), { instruction: "x", title: "Docs" })).json().title).toBe("Docs")
    // No body at all is fine where every field is optional.
    const released = await request(task(t.id, "release"), { method: "POST", headers: { "content-type": "application/json" } })
    expect(released.status).toBe(200)
    expect(released.json()).toMatchObject({ status: "queued", attempts: 0, hold_reason: null, runnable: true })
    expect((await request(task(t.id, "hold"), { method: "POST", headers: { "content-type": "application/json" } })).json()).toMatchObject({
      status: "held",
      hold_reason: null
    })
    expect((await postJson(task(t.id, "done"), {})).json()).toMatchObject({ status: "done" })
    const stored = T.decode(NodeFs.readFileSync(NodePath.join(web.home, "queue", `${t.id}.json`), "utf8"), "test")
    expect(ok(stored).status).toBe("done")
  })

  it("refuses what the task's state does not allow with 409 and the queue's own words, changing nothing", async () => {
    const running = await file(web.home, { instruction: "Busy" }, (t) => ok(T.start(t, "20260903-160000-a001")))
    const refusals: Array<[string, unknown, RegExp]> = [
      ["priority", { priority: 3 }, /is running; change its priority once its run has ended/],
      ["edit", { instruction: "new words" }, /is running; edit it once/],
      ["release", {}, /is running; release it once/]
    ]
    for (const [route, body, words] of refusals) {
      const reply = await postJson(task(running.id, route), body)
      expect(reply.status, route).toBe(409)
      expect(reply.json().error).toMatch(words)
    }
    const removing = await del(api(`/api/queue/${running.id}`))
    expect(removing.status).toBe(409)
    expect(removing.json().error).toMatch(/is running; remove it once/)
    const done = await file(web.home, { instruction: "Over" }, (t) => ok(T.succeed(t)))
    expect((await postJson(task(done.id, "done"), {})).status).toBe(409)
    expect((await postJson(task(done.id, "hold"), { reason: "x" })).json().error).toContain("is done")
    expect((await queue()).find((t) => t.id === running.id)).toMatchObject({ status: "running", priority: 0, instruction: "Busy" })
  })

  it("refuses bad input with 400: an empty edit, a priority that is not a whole number, unknown fields", async () => {
    const t = await file(web.home, { instruction: "Keep me" })
    expect((await postJson(task(t.id, "edit"), { instruction: "   " })).status).toBe(400)
    expect((await postJson(task(t.id, "priority"), { priority: "high" })).status).toBe(400)
    expect((await postJson(task(t.id, "priority"), {})).status).toBe(400)
    expect((await postJson(task(t.id, "release"), { now: true })).status).toBe(400)
    expect((await postJson(task(t.id, "hold"), { reason: 5 })).status).toBe(400)
    expect((await queue()).find((x) => x.id === t.id)).toMatchObject({ status: "queued", instruction: "Keep me" })
  })

  it("removes a task with DELETE, and answers 404 for one that is gone or named only by a short id", async () => {
    const t = await file(web.home, { instruction: "Throw me away" })
    expect((await del(api(`/api/queue/${Q.shortId(t.id)}`))).json().error).toContain("whole id")
    const removed = await del(api(`/api/queue/${t.id}`))
    expect(removed.status).toBe(200)
    expect(removed.json()).toMatchObject({ id: t.id, title: "Throw me away" })
    expect(NodeFs.existsSync(NodePath.join(web.home, "queue", `${t.id}.json`))).toBe(false)
    const again = await del(api(`/api/queue/${t.id}`))
    expect(again.status).toBe(404)
    expect(again.json().error).toContain("no task matches")
    expect((await postJson(task(t.id, "hold"), {})).status).toBe(404)
  })

  it("refuses a removal a form on another site sends (403)", async () => {
    const t = await file(web.home, { instruction: "Precious" })
    expect((await request(api(`/api/queue/${t.id}`), { method: "DELETE" })).status).toBe(403)
    expect((await del(api(`/api/queue/${t.id}`), { "sec-fetch-site": "cross-site" })).status).toBe(403)
    expect((await queue()).some((x) => x.id === t.id)).toBe(true)
  })
})

describe("GET /api/repos", () => {
  it("names the repository magi web runs in and every one this home's tasks and runs used, most recent first", async () => {
    const own = await startWeb(tempDirSync(), 0, { cwd: repo })
    try {
      seedRun(own.home, sampleRun("20260101-000000-b001", { repo: "/old/run-repo", created_at: "2026-01-01T00:00:00Z" }))
      await file(own.home, { instruction: "x", repo: "/task/repo" })
      expect((await request(`${own.url}/api/repos`)).json()).toEqual({ current: repo, repos: [repo, "/task/repo", "/old/run-repo"], names: [] })
    } finally {
      await own.stop()
    }
  })
})

describe("the default repository", () => {
  // This test's own checkout of magi, where `npm start` runs `magi web`.
  const checkout = NodeFs.realpathSync(".")

  it("is none when magi web runs in magi's own checkout: a task or a plan without a repository is refused saying how to name one", async () => {
    const own = await startWeb(tempDirSync(), 0, { cwd: checkout })
    try {
      const repos = (await request(`${own.url}/api/repos`)).json()
      expect(repos.current).toBeNull()
      expect(repos.hint).toContain("`[repos]`")
      // Offered, but only when picked.
      expect(repos.repos).toContain(checkout)
      const filed = await postJson(`${own.url}/api/queue`, { instruction: "Do it" })
      expect(filed.status).toBe(400)
      expect(filed.json().error).toContain("`[repos]`")
      const planned = await postJson(`${own.url}/api/chats`, { idea: "Do it" })
      expect(planned.status).toBe(400)
      expect(planned.json().error).toContain("`[repos]`")
      expect((await queue(own.url)).length).toBe(0)
      expect((await request(`${own.url}/api/chats`)).json()).toEqual([])
    } finally {
      await own.stop()
    }
  })

  it("is magi's own checkout once the owner names it in [repos]", async () => {
    const home = tempDirSync()
    NodeFs.mkdirSync(NodePath.join(home, "config", "magi"), { recursive: true })
    NodeFs.writeFileSync(NodePath.join(home, "config", "magi", "config.toml"), `[repos]\nmagi = ${JSON.stringify(checkout)}\n`)
    const own = await startWeb(home, 0, { cwd: checkout })
    try {
      const repos = (await request(`${own.url}/api/repos`)).json()
      expect(repos).toMatchObject({ current: checkout, current_name: "magi" })
      expect(repos.hint).toBeUndefined()
      const filed = await postJson(`${own.url}/api/queue`, { instruction: "Do it" })
      expect(filed.status).toBe(201)
      expect(filed.json()).toMatchObject({ repo: checkout, repo_name: "magi" })
    } finally {
      await own.stop()
    }
  })
})

describe("the queue revision", () => {
  it("moves in /api/health and reaches open pages as a change event when a task is filed elsewhere", async () => {
    const own = await startWeb()
    try {
      const revision = async () => (await request(`${own.url}/api/health`)).json().revisions.queue as number
      expect(await revision()).toBe(0)
      const events = readEvents(`${own.url}/api/events`, (es) => es.some((e) => e.event === "change" && JSON.parse(e.data).revisions.queue !== 0))
      await new Promise((r) => setTimeout(r, 300))
      await file(own.home, { instruction: "Filed at a terminal" })
      const seen = await events
      expect(JSON.parse(seen.at(-1)!.data).revisions.queue).toBe(await revision())
      expect(await revision()).not.toBe(0)
    } finally {
      await own.stop()
    }
  })
})

describe("GET /api/conduct", () => {
  it("lists the conductor's recorded decisions newest first, and none before it ever ran", async () => {
    expect((await request(api("/api/conduct"))).json()).toEqual({ decisions: [] })
    const dir = NodePath.join(web.home, "conduct")
    NodeFs.mkdirSync(dir, { recursive: true })
    const older = {
      at: "2026-01-01T00:00:00Z",
      turn: 1,
      task: "t1",
      decision: { id: "t1", recovery: "requeue" },
      outcome: "applied",
      why: "requeued for a fresh start"
    }
    const newer = {
      at: "2026-01-01T00:01:00Z",
      turn: 2,
      task: "t2",
      decision: { id: "t2", blocked_by: ["t2"] },
      outcome: "refused",
      why: "task t2 cannot wait on itself"
    }
    NodeFs.writeFileSync(NodePath.join(dir, "decisions.jsonl"), `${JSON.stringify(older)}\n${JSON.stringify(newer)}\n{"torn`)
    const r = await request(api("/api/conduct"))
    expect(r.status).toBe(200)
    expect(r.json()).toEqual({ decisions: [newer, older] })
  })
})

describe("the conductor's latest decision on each task", () => {
  it("shows each task's latest decision in GET /api/queue, null for one never decided, and a new decision without waiting on a task change", async () => {
    const own = await startWeb(tempDirSync(), 0, { cwd: repo })
    try {
      const decided = await file(own.home, { instruction: "Wire the cache" })
      const untouched = await file(own.home, { instruction: "Write the docs" })
      const dir = NodePath.join(own.home, "conduct")
      const append = (r: DecisionRecord) => Effect.runPromise(appendDecision(dir, r).pipe(Effect.provide(NodeFileSystem.layer)))
      const first: DecisionRecord = {
        at: "2026-01-01T00:00:00Z",
        turn: 1,
        task: decided.id,
        decision: { id: decided.id, blocked_by: [untouched.id] },
        outcome: "applied",
        why: `blocked on ${untouched.id}`
      }
      await append(first)
      const before = await queue(own.url)
      expect(before.find((t) => t.id === decided.id)).toMatchObject({ conductor: first })
      expect(before.find((t) => t.id === untouched.id)).toMatchObject({ conductor: null })

      // A refused decision moves no task, yet the page must still see it.
      const second: DecisionRecord = {
        at: "2026-01-01T00:01:00Z",
        turn: 2,
        task: decided.id,
        decision: { id: decided.id, blocked_by: ["nope"] },
        outcome: "refused",
        why: "no task or question has the id nope"
      }
      await append(second)
      const after = await queue(own.url)
      expect(after.find((t) => t.id === decided.id)).toMatchObject({ conductor: second })
      expect(after.find((t) => t.id === untouched.id)).toMatchObject({ conductor: null })
      expect((await request(`${own.url}/api/conduct`)).json()).toEqual({ decisions: [second, first] })
    } finally {
      await own.stop()
    }
  })
})
