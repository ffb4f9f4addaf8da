/**
 * The HTTP API of `magi web`, against the built server on an ephemeral port:
 * every status the reference table names, the panel headers, and the two
 * refusals magi adds (cross-site writes, foreign Host names).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { spawn, spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeNet from "node:net"
import * as NodePath from "node:path"
import * as NodeZlib from "node:zlib"
import * as Q from "../../src/questions/Question.js"
import { answerQuestion, sayToQuestion } from "../../src/questions/Answers.js"
import { choiceQuestion, freeQuestion, ok, tempDirSync } from "../support.js"
import { freshDatabaseSync } from "../pgSupport.js"
import { eventually, fakeTailscale, MAGI, postJson, readEvents, request, seed, startWeb, withStore, writeLease, writeNotice, type Web } from "./web-support.js"

const PANEL_CSP =
  "default-src 'none'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; font-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'self'"

let counter = 0
/** A fresh id per question, so tests sharing one server never touch each other's. */
const nextId = () =>
  `20260902-23${String(Math.floor(counter / 60)).padStart(2, "0")}${String(counter % 60).padStart(2, "0")}-${(0xa000 + counter++).toString(16)}`

type Listed = { id: string; status: string; waiting_on_agent: boolean; summary: string; holder: string }
/** Every question `GET /api/questions` sent: the open ones, then the first page of history. */
const listed = (reply: { json: () => any }): Array<Listed> => {
  const body = reply.json() as { open: Array<Listed>; history: Array<Listed> }
  return [...body.open, ...body.history]
}

/**
 * Whether the records are in the home folder: `web-api.postgres.test.ts`
 * runs this suite again with `MAGI_STORE_URL` set. What only a home folder
 * has is registered on the file run alone.
 */
const onFiles = process.env["MAGI_STORE_URL"] === undefined
const filesOnly = (register: () => void) => {
  if (onFiles) register()
}

let web: Web
const api = (path: string) => `${web.url}${path}`
const q = (id: string, rest: string) => api(`/api/questions/${encodeURIComponent(id)}/${rest}`)

beforeAll(async () => {
  web = await startWeb()
})
afterAll(async () => {
  await web?.stop()
})

describe("the question list and health", () => {
  it("lists open questions before settled ones, each with whose turn it is", async () => {
    const home = tempDirSync()
    const own = await startWeb(home)
    try {
      const answered = choiceQuestion("20260101-000001-aaaa")
      const open = choiceQuestion("20260101-000002-bbbb")
      const asked = freeQuestion("20260101-000003-cccc")
      await seed(home, [{ q: ok(Q.answer(answered, { choice: "SQLite" }, new Date())) }, { q: open }, { q: asked }])
      await withStore(home, sayToQuestion(asked.id, "which service?"))

      const reply = await request(`${own.url}/api/questions`)
      expect(reply.status).toBe(200)
      expect(reply.headers["content-type"]).toBe("application/json; charset=utf-8")
      const body = reply.json() as { open: Array<{ id: string }>; history: Array<{ id: string }>; next: string | null }
      expect(body.open.map((x) => x.id)).toEqual([asked.id, open.id])
      expect(body.history.map((x) => x.id)).toEqual([answered.id])
      expect(body.next).toBeNull()
      const list = listed(reply)
      expect(list.map((x) => x.id)).toEqual([asked.id, open.id, answered.id])
      expect(list.map((x) => x.waiting_on_agent)).toEqual([true, false, false])
      expect(list[1]!.summary).toBe(open.summary)

      const health = (await request(`${own.url}/api/health`)).json()
      expect(health.questions_open).toBe(2)
      expect(health.questions_needs_owner).toBe(1)
      expect(health.revisions.questions).toBeGreaterThan(0)
    } finally {
      await own.stop()
    }
  })

  it("sees a question filed by another process on the next request", async () => {
    const before = listed(await request(api("/api/questions")))
    const fresh = choiceQuestion(nextId())
    await seed(web.home, [{ q: fresh }])
    const after = listed(await request(api("/api/questions")))
    expect(after.length).toBe(before.length + 1)
    expect(after.map((x) => x.id)).toContain(fresh.id)
  })

  it("gzips the list for a browser that accepts it, with the same questions inside", async () => {
    await seed(web.home, [{ q: choiceQuestion(nextId()) }])
    const plain = await request(api("/api/questions"))
    const zipped = await request(api("/api/questions"), { headers: { "accept-encoding": "gzip, deflate, br" } })
    expect(plain.headers["content-encoding"]).toBeUndefined()
    expect(zipped.headers["content-encoding"]).toBe("gzip")
    expect(zipped.headers["vary"]).toBe("accept-encoding")
    expect(NodeZlib.gunzipSync(zipped.body).toString("utf8")).toBe(plain.text)
  })

  it("tags the list, answers a refetch of the same list with an empty 304, and a changed list in full with a new tag", async () => {
    const home = tempDirSync()
    const own = await startWeb(home)
    try {
      const first = choiceQuestion(nextId())
      await seed(home, [{ q: first }])
      const tagged = await request(`${own.url}/api/questions`)
      const tag = tagged.headers["etag"]
      expect(tag).toMatch(/^"[A-Za-z0-9_-]+"$/)
      // What a page sends on every change event: nothing changed, nothing sent.
      const same = await request(`${own.url}/api/questions`, { headers: { "if-none-match": tag!, "accept-encoding": "gzip" } })
      expect(same.status).toBe(304)
      expect(same.body.length).toBe(0)
      expect(same.headers["etag"]).toBe(tag)
      // A weak form of the tag, or one of several, still names these bytes.
      expect((await request(`${own.url}/api/questions`, { headers: { "if-none-match": `"other", W/${tag}` } })).status).toBe(304)
      // An answer changes the list: sent in full, under another tag.
      await withStore(home, answerQuestion(first.id, { choice: first.choices[0]! }))
      const changed = await request(`${own.url}/api/questions`, { headers: { "if-none-match": tag! } })
      expect(changed.status).toBe(200)
      expect(changed.headers["etag"]).not.toBe(tag)
      expect(listed(changed).find((x) => x.id === first.id)?.status).toBe("answered")
    } finally {
      await own.stop()
    }
  })

  it("answers an unknown path with a JSON 404", async () => {
    const reply = await request(api("/api/nope"))
    expect(reply.status).toBe(404)
    expect(reply.json().error).toMatch(/no such/)
  })
})

describe("POST /api/questions/{id}/answer", () => {
  it("records a choice and returns the answered view", async () => {
    const question = choiceQuestion(nextId())
    await seed(web.home, [{ q: question }])
    const reply = await postJson(q(question.id, "answer"), { choice: "Redis" })
    expect(reply.status).toBe(200)
    expect(reply.json()).toMatchObject({ id: question.id, status: "answered", answer: { choice: "Redis" }, waiting_on_agent: false })
  })

  it("records free text on a free-text question", async () => {
    const question = freeQuestion(nextId())
    await seed(web.home, [{ q: question }])
    const reply = await postJson(q(question.id, "answer"), { text: "Say which file is missing." })
    expect(reply.status).toBe(200)
    expect(reply.json().answer).toEqual({ text: "Say which file is missing." })
  })

  it("refuses both fields, neither, unknown fields and non-JSON with 400, and leaves the question open", async () => {
    const question = choiceQuestion(nextId())
    await seed(web.home, [{ q: question }])
    for (const body of [{ choice: "Redis", text: "x" }, {}, { choice: "Redis", extra: 1 }, { choice: 3 }]) {
      const reply = await postJson(q(question.id, "answer"), body)
      expect(reply.status, JSON.stringify(body)).toBe(400)
      expect(reply.json().error).toMatch(/the body must be exactly/)
    }
    const broken = await request(q(question.id, "answer"), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{choice: Redis"
    })
    expect(broken.status).toBe(400)
    expect(broken.json().error).toMatch(/must be JSON/)
    expect(listed(await request(api("/api/questions"))).find((x) => x.id === question.id)!.status).toBe("open")
  })

  it("refuses a choice the question never offered, or text on a multiple-choice one, with the store's words", async () => {
    const question = choiceQuestion(nextId())
    await seed(web.home, [{ q: question }])
    const wrong = await postJson(q(question.id, "answer"), { choice: "Postgres" })
    expect(wrong.status).toBe(400)
    expect(wrong.json().error).toContain("is not one of the choices")
    const text = await postJson(q(question.id, "answer"), { text: "Redis" })
    expect(text.status).toBe(400)
    expect(text.json().error).toContain("is multiple choice")
  })

  it("answers 404 for a question that does not exist", async () => {
    const reply = await postJson(q("20990101-000000-ffff", "answer"), { choice: "x" })
    expect(reply.status).toBe(404)
    expect(reply.json().error).toContain("no question matches")
  })

  it("decides only a question named by its whole id, never by a prefix or short id", async () => {
    const question = choiceQuestion(nextId())
    await seed(web.home, [{ q: question }])
    for (const partial of [question.id.slice(-4), question.id.slice(0, 15)]) {
      const reply = await postJson(q(partial, "answer"), { choice: "SQLite" })
      expect(reply.status).toBe(404)
      expect(reply.json().error).toContain("whole id")
      expect((await postJson(q(partial, "say"), { body: "hello?" })).status).toBe(404)
    }
    expect((await postJson(q(question.id, "answer"), { choice: "SQLite" })).status).toBe(200)
  })

  it("answers 409 when the question was already settled elsewhere", async () => {
    const question = choiceQuestion(nextId())
    await seed(web.home, [{ q: question }])
    await withStore(web.home, answerQuestion(question.id, { choice: "SQLite" }))
    const reply = await postJson(q(question.id, "answer"), { choice: "Redis" })
    expect(reply.status).toBe(409)
    expect(reply.json().error).toContain("already answered")
  })

  it("answers 409 on an abandoned question", async () => {
    const question = Q.abandon(choiceQuestion(nextId()), "the run was deleted", new Date())
    await seed(web.home, [{ q: question }])
    const reply = await postJson(q(question.id, "answer"), { choice: "Redis" })
    expect(reply.status).toBe(409)
    expect(reply.json().error).toContain("abandoned")
  })

  it("refuses a body over 1 MiB with 413, by declared length and when streamed without one", async () => {
    const question = freeQuestion(nextId())
    await seed(web.home, [{ q: question }])
    const huge = JSON.stringify({ text: "x".repeat(1024 * 1024 + 10) })
    const declared = await request(q(question.id, "answer"), { method: "POST", headers: { "content-type": "application/json" }, body: huge })
    expect(declared.status).toBe(413)
    expect(declared.json().error).toMatch(/at most 1048576 bytes/)
    const streamed = await request(q(question.id, "answer"), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: huge,
      chunked: true
    })
    expect(streamed.status).toBe(413)
    expect(listed(await request(api("/api/questions"))).find((x) => x.id === question.id)!.status).toBe("open")
  })
})

describe("POST /api/questions/{id}/say", () => {
  it("adds the owner's words, keeps the question open and marks it waiting on the agent", async () => {
    const question = choiceQuestion(nextId())
    await seed(web.home, [{ q: question }])
    const reply = await postJson(q(question.id, "say"), { body: "What does Redis cost us?" })
    expect(reply.status).toBe(200)
    const view = reply.json()
    expect(view.status).toBe("open")
    expect(view.waiting_on_agent).toBe(true)
    expect(view.thread.at(-1)).toMatchObject({ who: "operator", body: "What does Redis cost us?" })
  })

  it("refuses an empty message with 400, a wrong shape with 400, and a settled question with 409", async () => {
    const question = choiceQuestion(nextId())
    await seed(web.home, [{ q: question }])
    const empty = await postJson(q(question.id, "say"), { body: "  " })
    expect(empty.status).toBe(400)
    expect(empty.json().error).toContain("cannot be empty")
    expect((await postJson(q(question.id, "say"), { text: "hi" })).status).toBe(400)
    await withStore(web.home, answerQuestion(question.id, { choice: "SQLite" }))
    const late = await postJson(q(question.id, "say"), { body: "wait" })
    expect(late.status).toBe(409)
    expect((await postJson(q("20990101-000000-eeee", "say"), { body: "hello?" })).status).toBe(404)
  })
})

describe("panels and their files", () => {
  const html = `<!doctype html><h1>Diff</h1><img src="asset/chart.png"><p>ünïcödé</p>\n`
  const panelled = choiceQuestion("20260902-120000-9a9a")
  const png = Buffer.from("89504e470d0a1a0a0000000d49484452", "hex")
  beforeAll(async () => {
    await seed(web.home, [
      {
        q: panelled,
        panel: html,
        assets: {
          "chart.png": png,
          "figure.svg": `<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`,
          "notes.txt": "plain",
          "style.css": "h1{color:red}",
          "page.html": "<script>alert(1)</script>",
          "app.js": "alert(1)",
          "photo.JPEG": "jpeg"
        }
      }
    ])
  })

  it("serves the panel byte for byte with the exact policy headers", async () => {
    const reply = await request(q(panelled.id, "panel"))
    expect(reply.status).toBe(200)
    expect(reply.text).toBe(html)
    expect(reply.headers["content-type"]).toBe("text/html; charset=utf-8")
    expect(reply.headers["content-security-policy"]).toBe(PANEL_CSP)
    expect(reply.headers["x-content-type-options"]).toBe("nosniff")
    expect(reply.headers["referrer-policy"]).toBe("no-referrer")
  })

  it("serves the panel as a folder too, so the names in its HTML resolve to its own files", async () => {
    const folder = await request(q(panelled.id, "panel/"))
    expect(folder.status).toBe(200)
    expect(folder.text).toBe(html)
    expect(folder.headers["content-security-policy"]).toBe(PANEL_CSP)
    // `<img src="chart.png">` from `…/panel/`, and `asset/chart.png` as panels written for the old address say it.
    for (const path of ["panel/chart.png", "panel/asset/chart.png"]) {
      const reply = await request(q(panelled.id, path))
      expect(reply.status, path).toBe(200)
      expect(reply.body.equals(png), path).toBe(true)
      expect(reply.headers["content-security-policy"], path).toBe(PANEL_CSP)
    }
    expect((await request(q(panelled.id, "panel/style.css"))).headers["content-type"]).toBe("text/css; charset=utf-8")
    expect((await request(q(panelled.id, "panel/app.js"))).headers["content-type"]).toBe("application/octet-stream")
    for (const name of ["..%2F..%2Fetc%2Fpasswd", "%2E%2E", ".hidden"]) {
      const reply = await request(q(panelled.id, `panel/${name}`))
      expect(reply.status, name).toBe(400)
    }
    expect((await request(q(panelled.id, "panel/nothing.png"))).status).toBe(404)
    expect((await request(q(panelled.id, "panel/"), { method: "HEAD" })).status).toBe(200)
  })

  it("answers HEAD on the panel with the same status and headers as GET, and no body", async () => {
    const get = await request(q(panelled.id, "panel"))
    const head = await request(q(panelled.id, "panel"), { method: "HEAD" })
    expect(head.status).toBe(200)
    expect(head.body.length).toBe(0)
    for (const name of ["content-type", "content-length", "content-security-policy", "x-content-type-options", "referrer-policy"])
      expect(head.headers[name], name).toBe(get.headers[name])
    expect(Number(head.headers["content-length"])).toBe(Buffer.byteLength(html))
    const missing = await request(q("20990101-000000-dddd", "panel"), { method: "HEAD" })
    expect(missing.status).toBe(404)
  })

  it("answers 404 for a question without a panel", async () => {
    const plain = choiceQuestion(nextId())
    await seed(web.home, [{ q: plain }])
    const reply = await request(q(plain.id, "panel"))
    expect(reply.status).toBe(404)
    expect(reply.json().error).toContain("has no panel")
  })

  it("serves assets from the closed list of types, each with the panel's policy headers", async () => {
    const cases: Array<[string, string]> = [
      ["chart.png", "image/png"],
      ["photo.JPEG", "image/jpeg"],
      ["notes.txt", "text/plain; charset=utf-8"],
      ["style.css", "text/css; charset=utf-8"]
    ]
    for (const [name, type] of cases) {
      const reply = await request(q(panelled.id, `asset/${name}`))
      expect(reply.status, name).toBe(200)
      expect(reply.headers["content-type"], name).toBe(type)
      expect(reply.headers["content-security-policy"]).toBe(PANEL_CSP)
      expect(reply.headers["x-content-type-options"]).toBe("nosniff")
      expect(reply.headers["referrer-policy"]).toBe("no-referrer")
      expect(reply.headers["content-disposition"]).toBeUndefined()
    }
    expect((await request(q(panelled.id, "asset/chart.png"))).body.equals(png)).toBe(true)
  })

  it("sends an svg as an attachment, so its script can never run in magi's origin", async () => {
    const reply = await request(q(panelled.id, "asset/figure.svg"))
    expect(reply.status).toBe(200)
    expect(reply.headers["content-type"]).toBe("image/svg+xml")
    expect(reply.headers["content-disposition"]).toBe("attachment")
  })

  it("sends html and script assets as opaque bytes, never as something a browser renders", async () => {
    for (const name of ["page.html", "app.js"]) {
      const reply = await request(q(panelled.id, `asset/${name}`))
      expect(reply.status, name).toBe(200)
      expect(reply.headers["content-type"], name).toBe("application/octet-stream")
      expect(reply.headers["x-content-type-options"]).toBe("nosniff")
    }
  })

  it("refuses traversal and hidden names with 400, and a missing file with 404", async () => {
    for (const name of ["..%2F..%2F..%2Fetc%2Fpasswd", "%2E%2E", ".hidden", "a..b", "%2Eenv", "x%5Cy"]) {
      const reply = await request(q(panelled.id, `asset/${name}`))
      expect(reply.status, name).toBe(400)
      expect(reply.json().error).toContain("is not a panel file name")
    }
    expect((await request(q(panelled.id, "asset/nothing.png"))).status).toBe(404)
    expect((await request(q("20990101-000000-cccc", "asset/chart.png"))).status).toBe(404)
  })
})

describe("live events", () => {
  it("sends the revisions on connect, then a change event once another process answered", async () => {
    const question = choiceQuestion(nextId())
    await seed(web.home, [{ q: question }])
    const questionsRevision = (e: { data: string }) => JSON.parse(e.data).revisions.questions as number
    // On files the answer is seen on disk; on PostgreSQL every write moves the revision.
    const file = NodePath.join(web.home, "questions", `${question.id}.json`)
    const answerSeen = (seen: ReadonlyArray<{ data: string }>) =>
      onFiles ? JSON.parse(NodeFs.readFileSync(file, "utf8")).status === "answered" : questionsRevision(seen.at(-1)!) > questionsRevision(seen[0]!)
    let spawned = false
    // Other tests share this server, so an event may also be about their
    // writes: the stream is read until an event arrives with the answer stored.
    const events = await readEvents(api("/api/events"), (seen) => {
      if (!spawned) {
        spawned = true
        spawn(process.execPath, [MAGI, "answer", question.id, "--reply", "SQLite"], {
          env: { ...process.env, MAGI_HOME: web.home },
          stdio: "ignore"
        })
        return false
      }
      return seen.length >= 2 && answerSeen(seen)
    })
    expect(events.every((e) => e.event === "change")).toBe(true)
    const first = JSON.parse(events[0]!.data)
    expect(first.revisions.questions).toBeGreaterThan(0)
    expect(JSON.parse(events.at(-1)!.data).revisions.questions).toBeGreaterThanOrEqual(first.revisions.questions)
    expect((await request(api(`/api/questions/${question.id}`))).json().status).toBe("answered")
  })
})

describe("refusing other web pages", () => {
  it("refuses a write that is not JSON with 403 (a form post), and the question stays open", async () => {
    const question = choiceQuestion(nextId())
    await seed(web.home, [{ q: question }])
    for (const type of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"]) {
      const reply = await request(q(question.id, "answer"), {
        method: "POST",
        headers: { "content-type": type },
        body: JSON.stringify({ choice: "Redis" })
      })
      expect(reply.status, type).toBe(403)
      expect(reply.json().error).toContain("application/json")
    }
    const none = await request(q(question.id, "answer"), { method: "POST", body: JSON.stringify({ choice: "Redis" }) })
    expect(none.status).toBe(403)
    expect(listed(await request(api("/api/questions"))).find((x) => x.id === question.id)!.status).toBe("open")
  })

  it("refuses a write whose Origin is another site, or that the browser marks cross-site", async () => {
    const question = choiceQuestion(nextId())
    await seed(web.home, [{ q: question }])
    const foreign = await postJson(q(question.id, "answer"), { choice: "Redis" }, { origin: "https://evil.example" })
    expect(foreign.status).toBe(403)
    expect(foreign.json().error).toContain("https://evil.example")
    const otherPort = await postJson(q(question.id, "say"), { body: "hi" }, { origin: `http://127.0.0.1:${web.port + 1}` })
    expect(otherPort.status).toBe(403)
    const opaque = await postJson(q(question.id, "answer"), { choice: "Redis" }, { origin: "null" })
    expect(opaque.status).toBe(403)
    const crossSite = await postJson(q(question.id, "answer"), { choice: "Redis" }, { "sec-fetch-site": "cross-site" })
    expect(crossSite.status).toBe(403)
    expect(listed(await request(api("/api/questions"))).find((x) => x.id === question.id)!.status).toBe("open")
  })

  it("accepts a write from its own page: same Origin, same-origin fetch metadata", async () => {
    const question = choiceQuestion(nextId())
    await seed(web.home, [{ q: question }])
    const reply = await postJson(q(question.id, "answer"), { choice: "Redis" }, {
      origin: web.url,
      "sec-fetch-site": "same-origin",
      "content-type": "application/json; charset=utf-8"
    })
    expect(reply.status).toBe(200)
  })

  it("refuses a request for a host name it was not bound as with 421 (DNS rebinding), reads included", async () => {
    for (const host of ["evil.example", `evil.example:${web.port}`, "127.0.0.1.evil.example", `[::2]:${web.port}`, "localhost:x"]) {
      const reply = await request(api("/api/questions"), { headers: { host } })
      expect(reply.status, host).toBe(421)
      expect(reply.json().error).toContain("DNS rebinding")
    }
    const page = await request(api("/"), { headers: { host: "rebound.example" } })
    expect(page.status).toBe(421)
    for (const host of [`localhost:${web.port}`, `127.0.0.1:${web.port}`, "LOCALHOST"]) {
      expect((await request(api("/api/health"), { headers: { host } })).status, host).toBe(200)
    }
  })
})

describe("the page", () => {
  it("is served with its script and stylesheet from the same process, under a strict policy", async () => {
    const index = await request(api("/"))
    expect(index.status).toBe(200)
    expect(index.headers["content-type"]).toBe("text/html; charset=utf-8")
    expect(index.headers["content-security-policy"]).toContain("script-src 'self'")
    expect(index.text).not.toMatch(/https?:\/\//)
    const script = await request(api("/app.js"))
    expect(script.status).toBe(200)
    expect(script.headers["content-type"]).toBe("text/javascript; charset=utf-8")
    expect(script.text).toContain("/api/events")
    expect(script.text).not.toContain("innerHTML")
    expect((await request(api("/app.css"))).headers["content-type"]).toBe("text/css; charset=utf-8")
  })
})

describe("the process", () => {
  it("prints its URL on stdout and nothing else there", async () => {
    const own = await startWeb()
    try {
      await new Promise((r) => setTimeout(r, 200))
      expect(own.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
      expect(own.stdout()).toBe(`${own.url}\n`)
      expect(own.stderr()).toContain(`MAGI_WEB_URL=${own.url}`)
    } finally {
      await own.stop()
    }
  })

  it("says in one line, when it stops, that it stopped and which address no longer answers", async () => {
    const own = await startWeb()
    expect(await own.stop()).toBe(143)
    await new Promise<void>((r) => (own.child.stdout!.readableEnded && own.child.stderr!.readableEnded ? r() : own.child.once("close", () => r())))
    expect(own.stderr().split("\n").filter((l) => l.includes("stopped"))).toEqual([`magi web: stopped by SIGTERM; ${own.url} no longer answers`])
    expect(own.stdout()).toBe(`${own.url}\n`)
  })

  it("names, in its health check, the config file it reads for the notification command", async () => {
    const own = await startWeb()
    try {
      expect((await request(`${own.url}/api/health`)).json().notify_config).toBe(NodePath.join(own.home, "config", "magi", "config.toml"))
    } finally {
      await own.stop()
    }
  })

  it("shuts down promptly on SIGTERM, ending the event stream a page was following", async () => {
    const own = await startWeb()
    const stream = readEvents(`${own.url}/api/events`, () => false, 5_000)
    await new Promise((r) => setTimeout(r, 300))
    const started = Date.now()
    await own.stop()
    expect(Date.now() - started).toBeLessThan(2_000)
    // Ended by the server (resolved), not cut off by the test's timeout (rejected).
    // (A second change may come first if the store's folder appeared just then.)
    const events = (await stream).map((e) => e.event)
    expect(events.length).toBeGreaterThanOrEqual(1)
    expect(new Set(events)).toEqual(new Set(["change"]))
  })

  it("waits for a port still held by the previous run, then serves on it", async () => {
    const holder = NodeNet.createServer()
    await new Promise<void>((r) => holder.listen(0, "127.0.0.1", () => r()))
    const port = (holder.address() as NodeNet.AddressInfo).port
    setTimeout(() => holder.close(), 1_000)
    const own = await startWeb(tempDirSync(), port)
    try {
      expect(own.port).toBe(port)
      expect((await request(`${own.url}/api/health`)).status).toBe(200)
    } finally {
      await own.stop()
    }
  })

  it("gives up on a port held for over 10 s with an error that names it", async () => {
    const holder = NodeNet.createServer()
    await new Promise<void>((r) => holder.listen(0, "127.0.0.1", () => r()))
    const port = (holder.address() as NodeNet.AddressInfo).port
    try {
      const started = Date.now()
      const run = spawnSync(process.execPath, [MAGI, "web", "--bind", "127.0.0.1", "--port", String(port), "--home", tempDirSync()], {
        encoding: "utf8",
        timeout: 20_000
      })
      expect(Date.now() - started).toBeGreaterThanOrEqual(9_500)
      expect(run.status).toBe(1)
      expect(run.stdout).toBe("")
      expect(run.stderr).toContain(`port ${port} on 127.0.0.1 is still in use`)
    } finally {
      holder.close()
    }
  }, 25_000)

  it("binds auto to loopback with a warning when Tailscale has no address, never to every interface", async () => {
    const own = await startWeb(tempDirSync(), 0, { bind: "auto", env: fakeTailscale({}) })
    try {
      expect(own.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
      expect(own.stderr()).toContain("no Tailscale address found")
    } finally {
      await own.stop()
    }
  })

  it("binds auto to the machine's Tailscale address", () => {
    // 100.100.100.100 is not on this machine, so listening fails, naming the
    // address auto chose: proof of the choice without a tailnet.
    const run = spawnSync(process.execPath, [MAGI, "web", "--port", "0", "--home", tempDirSync()], {
      encoding: "utf8",
      timeout: 10_000,
      env: { ...process.env, ...fakeTailscale({ ip: "192.168.1.9\n100.100.100.100\n" }) }
    })
    expect(run.status).toBe(1)
    expect(run.stderr).toContain("100.100.100.100 is not an address of this machine")
  })

  it("answers to the machine's Tailscale name as well as its address", async () => {
    const env = fakeTailscale({ status: { Self: { DNSName: "laptop.tail1234.ts.net.", HostName: "laptop" } } })
    const own = await startWeb(tempDirSync(), 0, { env })
    try {
      for (const host of [`laptop.tail1234.ts.net:${own.port}`, "laptop"])
        expect((await request(`${own.url}/api/health`, { headers: { host } })).status, host).toBe(200)
      expect((await request(`${own.url}/api/health`, { headers: { host: "laptop.evil.example" } })).status).toBe(421)
    } finally {
      await own.stop()
    }
  })

  it("refuses a --bind that is not auto or an IP address", () => {
    const run = spawnSync(process.execPath, [MAGI, "web", "--bind", "example.com", "--port", "0", "--home", tempDirSync()], {
      encoding: "utf8",
      timeout: 10_000
    })
    expect(run.status).toBe(1)
    expect(run.stderr).toContain("--bind takes `auto` or an IP address")
  })
})

/** A question as `magi ask` files it now: with the asking agent's working directory, which leases came with. */
const asked = (id: string): Q.Question => ({ ...choiceQuestion(id), cwd: "/work/agent" })

const holderOf = async (base: string, id: string) => {
  return listed(await request(`${base}/api/questions`)).find((x) => x.id === id)?.holder
}

describe("history by pages", () => {
  /** `count` questions asked a minute apart in July 2026, answered then and read by their agent: history by the time the server starts. */
  const settledInJuly = (count: number, first = 0) =>
    Array.from({ length: count }, (_, i) => {
      const at = new Date(2026, 6, 1, 8, first + i)
      const id = `${Q.makeId(at, 0).slice(0, 15)}-${(0xb000 + first + i).toString(16)}`
      const question = { ...choiceQuestion(id, at), summary: first + i === 42 ? "july question about zeppelins" : `july question ${first + i}` }
      return { ...ok(Q.answer(question, { choice: "Redis" }, at)), answer_delivered: true }
    })

  let home: string
  let server: Web
  const old = settledInJuly(70)
  const open = choiceQuestion(nextId())
  const historyIds = old.map((x) => x.id).sort().reverse()

  /** On PostgreSQL, a database of this history's own: the other tests' questions are not in it. */
  let own: { readonly url: string; readonly drop: () => Promise<void> } | undefined

  beforeAll(async () => {
    home = tempDirSync()
    own = onFiles ? undefined : await freshDatabaseSync()
    await seed(home, [...old.map((x) => ({ q: x })), { q: open }], own?.url)
    server = await startWeb(home, 0, own === undefined ? {} : { env: { MAGI_STORE_URL: own.url } })
    // The mover runs as the server starts: the hot folder keeps only the open question.
    if (onFiles)
      await eventually(
        "the settled questions moved to their month",
        () => (NodeFs.readdirSync(NodePath.join(home, "questions")).filter((n) => n.endsWith(".json")).length === 1 ? true : undefined),
        60_000
      )
  }, 90_000)
  afterAll(async () => {
    await server?.stop()
    await own?.drop()
  })

  filesOnly(() =>
    it("moves an older home's settled questions out of the hot folder at start, into one folder per month", () => {
      expect(NodeFs.readdirSync(NodePath.join(home, "questions")).filter((n) => n.endsWith(".json"))).toEqual([`${open.id}.json`])
      expect(NodeFs.readdirSync(NodePath.join(home, "questions", "history", "2026-07")).length).toBe(70)
    })
  )

  it("sends the open questions with the first 30 of history and a cursor, and the rest page by page", async () => {
    const first = (await request(`${server.url}/api/questions`)).json() as { open: Listed[]; history: Listed[]; next: string | null }
    expect(first.open.map((x) => x.id)).toEqual([open.id])
    expect(first.history.map((x) => x.id)).toEqual(historyIds.slice(0, 30))
    expect(first.history[0]!.holder).toBe("nobody")
    // The cursor names the last one shown (and when it was settled).
    expect(first.next).toContain(historyIds[29])

    const seen = first.history.map((x) => x.id)
    let next = first.next
    while (next !== null) {
      const page = (await request(`${server.url}/api/questions/history?before=${next}&limit=25`)).json() as { history: Listed[]; next: string | null }
      seen.push(...page.history.map((x) => x.id))
      next = page.next
    }
    expect(seen).toEqual(historyIds)
  })

  it("searches history for every word given, in any case", async () => {
    const reply = await request(`${server.url}/api/questions/history?q=${encodeURIComponent("Zeppelins  JULY")}`, { headers: { "accept-encoding": "gzip" } })
    expect(reply.headers["content-encoding"]).toBe("gzip")
    const page = JSON.parse(NodeZlib.gunzipSync(reply.body).toString("utf8")) as { history: Listed[]; next: string | null }
    expect(page.history.map((x) => x.summary)).toEqual(["july question about zeppelins"])
    expect(page.next).toBeNull()
    const none = (await request(`${server.url}/api/questions/history?q=august`)).json() as { history: Listed[] }
    expect(none.history).toEqual([])
  })

  it("opens one question by its whole id, archived or open, and refuses a prefix or an unknown id with 404", async () => {
    const archived = await request(`${server.url}/api/questions/${old[5]!.id}`)
    expect(archived.status).toBe(200)
    expect(archived.json()).toMatchObject({ id: old[5]!.id, status: "answered", summary: "july question 5", holder: "nobody" })
    expect((await request(`${server.url}/api/questions/${open.id}`)).json().status).toBe("open")
    expect((await request(`${server.url}/api/questions/${old[5]!.id.slice(0, 12)}`)).status).toBe(404)
    expect((await request(`${server.url}/api/questions/20250101-000000-0000`)).status).toBe(404)
  })

  it("refuses a history limit outside 1 to 200 with 400, saying the range", async () => {
    for (const limit of ["0", "201", "ten", "1.5"]) {
      const reply = await request(`${server.url}/api/questions/history?limit=${limit}`)
      expect(reply.status, limit).toBe(400)
      expect(reply.json().error).toContain("1 to 200")
    }
  })

  it("counts only what is open for the health check, however long the history", async () => {
    const health = (await request(`${server.url}/api/health`)).json()
    expect(health.questions_open).toBe(1)
    expect(health.questions_needs_owner).toBe(1)
  })

  it("shows a question settled after a page was read on the next read of that page", async () => {
    const before = (await request(`${server.url}/api/questions/history?limit=5`)).json() as { history: Listed[] }
    expect(before.history.map((x) => x.id)).toEqual(historyIds.slice(0, 5))
    expect((await postJson(`${server.url}/api/questions/${open.id}/answer`, { choice: "SQLite" })).status).toBe(200)
    const after = (await request(`${server.url}/api/questions/history?limit=5`)).json() as { history: Listed[] }
    expect(after.history.map((x) => x.id)).toEqual([open.id, ...historyIds.slice(0, 4)])
  })
})

describe("who holds a question's wait", () => {
  it("says the agent is waiting while its `magi ask` beats the lease, and nobody once the beat is over 90 s old", async () => {
    const live = asked(nextId())
    const gone = asked(nextId())
    await seed(web.home, [{ q: live }, { q: gone }])
    writeLease(web.home, live.id, "asker", 2_000)
    writeLease(web.home, gone.id, "asker", 95_000)
    expect(await holderOf(web.url, live.id)).toBe("asker")
    expect(await holderOf(web.url, gone.id)).toBe("nobody")
  })

  it("says magi is delivering while the daemon holds the lease, and nobody when there is no lease at all", async () => {
    const delivering = asked(nextId())
    const unheld = asked(nextId())
    await seed(web.home, [{ q: ok(Q.answer(delivering, { choice: "SQLite" }, new Date())) }, { q: unheld }])
    writeLease(web.home, delivering.id, "daemon", 1_000)
    expect(await holderOf(web.url, delivering.id)).toBe("daemon")
    expect(await holderOf(web.url, unheld.id)).toBe("nobody")
  })

  it("shows nobody on history, even when a lease file was left behind", async () => {
    const read = { ...ok(Q.answer(asked(nextId()), { choice: "Redis" }, new Date())), answer_delivered: true }
    const noSeat = choiceQuestion(nextId())
    await seed(web.home, [{ q: read }, { q: noSeat }])
    writeLease(web.home, read.id, "asker", 1_000)
    writeLease(web.home, noSeat.id, "asker", 1_000)
    expect(await holderOf(web.url, read.id)).toBe("nobody")
    expect(await holderOf(web.url, noSeat.id)).toBe("nobody")
  })

  it("answers a decision with the question's holder, so the card can say who will carry it", async () => {
    const question = asked(nextId())
    await seed(web.home, [{ q: question }])
    writeLease(web.home, question.id, "asker", 1_000)
    const reply = await postJson(q(question.id, "answer"), { choice: "SQLite" })
    expect(reply.status).toBe(200)
    expect(reply.json()).toMatchObject({ status: "answered", holder: "asker", waiting_on_agent: false })
  })

  it("tells open pages when an asker's lease goes stale, though no file changed", async () => {
    const home = tempDirSync()
    const own = await startWeb(home)
    try {
      const question = asked("20260903-000000-aaaa")
      await seed(home, [{ q: question }])
      // Stale within 2-4 s (the beat's time is whole seconds, truncated).
      writeLease(home, question.id, "asker", 87_000)
      expect(await holderOf(own.url, question.id)).toBe("asker")
      // Let the poll absorb the writes above, so the next event can only be the lease aging.
      await new Promise((r) => setTimeout(r, 1_300))
      const events = await readEvents(`${own.url}/api/events`, (seen) => seen.length >= 2, 8_000)
      expect(events.map((e) => e.event)).toEqual(["change", "change"])
      expect(await holderOf(own.url, question.id)).toBe("nobody")
    } finally {
      await own.stop()
    }
  })
})

// Notices on PostgreSQL are rows: test/daemon/NoticesPostgres.test.ts.
filesOnly(() =>
  describe("GET /api/notices", () => {
    it("lists what the waiter could not deliver, newest first, skipping a file it cannot read", async () => {
      const home = tempDirSync()
      const own = await startWeb(home)
      try {
        expect((await request(`${own.url}/api/notices`)).json()).toEqual([])
        const older = writeNotice(home, {
          id: "20260902-231500-aaaa",
          question: "20260902-231000-1111",
          summary: "Could not reach impl-A",
          reason: "the seat has no session to resume"
        })
        const newer = writeNotice(home, {
          id: "20260902-231600-bbbb",
          question: "20260902-231000-2222",
          summary: "Could not reach rev-1",
          reason: "the worktree is gone"
        })
        NodeFs.writeFileSync(NodePath.join(home, "notices", "20260902-231700-cccc.json"), "{ torn")
        const reply = await request(`${own.url}/api/notices`)
        expect(reply.status).toBe(200)
        expect(reply.headers["content-type"]).toBe("application/json; charset=utf-8")
        expect(reply.json()).toEqual([newer, older])
      } finally {
        await own.stop()
      }
    })

    it("sends a change event with a new notices revision when the waiter writes a notice", async () => {
      const home = tempDirSync()
      const own = await startWeb(home)
      try {
        let first: number | undefined
        let written: number | undefined
        // The notices folder's mtime once the notice is in it: what the
        // revision must become (the folder's own creation moves it earlier).
        const folderRevision = () => NodeFs.statSync(NodePath.join(home, "notices")).mtime.getTime()
        const events = await readEvents(`${own.url}/api/events`, (seen) => {
          const revisions = seen.map((e) => JSON.parse(e.data).revisions.notices as number)
          if (written === undefined && revisions.length > 0) {
            first = revisions[0]
            writeNotice(home, { id: "20260902-231500-dddd", question: "20260902-231000-3333", summary: "Could not reach impl-A", reason: "run is done" })
            written = folderRevision()
          }
          return revisions.some((r) => r !== first && r === written)
        })
        expect(events.every((e) => e.event === "change")).toBe(true)
        expect(JSON.parse(events.at(-1)!.data).revisions.notices).not.toBe(first)
        expect((await request(`${own.url}/api/health`)).json().revisions.notices).toBe(JSON.parse(events.at(-1)!.data).revisions.notices)
      } finally {
        await own.stop()
      }
    })
  })
)

describe("the waiter inside magi web", () => {
  const daemonPid = (home: string): number | undefined => {
    try {
      return JSON.parse(NodeFs.readFileSync(NodePath.join(home, "daemon.json"), "utf8")).pid
    } catch {
      return undefined
    }
  }

  it("runs the waiter in-process by default, and lets go of the home when it stops", async () => {
    const home = tempDirSync()
    const own = await startWeb(home, 0, { loop: true, cwd: home })
    let stopped = false
    try {
      expect(await eventually("daemon.json", () => daemonPid(home))).toBe(own.child.pid)
      // The page is told which loop delivers, so it only promises what one does
      // (health says what the page's watcher last read: within a poll).
      expect(await eventually("health to name the loop", async () => (await request(`${own.url}/api/health`)).json().loop ?? undefined)).toBe(own.child.pid)
      await own.stop()
      stopped = true
      expect(NodeFs.existsSync(NodePath.join(home, "daemon.json"))).toBe(false)
    } finally {
      if (!stopped) await own.stop()
    }
  })

  it("refuses to run a second loop on the same home, names the pid that owns it, and still serves the page", async () => {
    const home = tempDirSync()
    const first = await startWeb(home, 0, { loop: true, cwd: home })
    try {
      await eventually("the first loop to own the home", () => daemonPid(home))
      const second = await startWeb(home, 0, { loop: true, cwd: home })
      try {
        const warning = await eventually("the warning", () => second.stderr().match(/^magi: warning: magi web is not running the waiter: .*$/m)?.[0])
        expect(warning).toContain(`pid ${first.child.pid}`)
        expect(second.stderr().match(/not running the waiter/g)).toHaveLength(1)
        expect((await request(`${second.url}/api/health`)).status).toBe(200)
        expect(daemonPid(home)).toBe(first.child.pid)
      } finally {
        await second.stop()
      }
      // The refused loop never owned the home, so stopping it leaves the owner's record alone.
      expect(daemonPid(home)).toBe(first.child.pid)
    } finally {
      await first.stop()
    }
  })

  it("starts no loop with --no-loop", async () => {
    const home = tempDirSync()
    const own = await startWeb(home, 0, { loop: false, cwd: home })
    try {
      expect((await request(`${own.url}/api/health`)).status).toBe(200)
      // A loop would have written daemon.json right after the URL (the test above waits for exactly that).
      await new Promise((r) => setTimeout(r, 1_000))
      expect(NodeFs.existsSync(NodePath.join(home, "daemon.json"))).toBe(false)
      expect(own.stderr()).not.toContain("waiter")
      // No loop anywhere: the page must not promise that magi will resume an agent.
      expect((await request(`${own.url}/api/health`)).json().loop).toBeNull()
    } finally {
      await own.stop()
    }
  })

  it("keeps serving the page when the config is broken, and says why the waiter is not running", async () => {
    const home = tempDirSync()
    const repo = NodePath.join(home, "repo")
    NodeFs.mkdirSync(repo)
    NodeFs.writeFileSync(NodePath.join(repo, "magi.toml"), "this is [not toml\n")
    const own = await startWeb(home, 0, { loop: true, cwd: repo })
    try {
      const warning = await eventually("the warning", () => own.stderr().match(/^magi: warning: magi web is not running the waiter: .*$/m)?.[0])
      expect(warning).toContain("magi.toml")
      const question = asked("20260903-000000-bbbb")
      await seed(home, [{ q: question }])
      const reply = await postJson(`${own.url}/api/questions/${question.id}/answer`, { choice: "SQLite" })
      expect(reply.status).toBe(200)
      expect(NodeFs.existsSync(NodePath.join(home, "daemon.json"))).toBe(false)
    } finally {
      await own.stop()
    }
  })
})
