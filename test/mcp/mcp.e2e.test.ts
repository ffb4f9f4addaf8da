/**
 * `magi mcp` as an MCP client sees it: the built magi started as a real
 * process, spoken to in JSON-RPC over its stdin and stdout, the owner
 * answering with the real `magi answer`.
 */
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { MAGI } from "../runSupport.js"
import { tempDirSync } from "../support.js"

/** A bound for a hang on a busy machine; nothing here is timed by it. */
const DEADLINE_MS = 60_000

const servers: ChildProcessWithoutNullStreams[] = []
afterEach(() => {
  for (const s of servers.splice(0)) if (s.exitCode === null && s.signalCode === null) s.kill("SIGKILL")
})

interface Message {
  readonly id?: number
  readonly result?: Record<string, any>
  readonly error?: { readonly code: number; readonly message: string }
}

/** One `magi mcp` process and a client that speaks to it. */
const start = (home: string, slice: number, env: Record<string, string> = {}) => {
  const proc = spawn(process.execPath, [MAGI, "mcp", "--slice", String(slice)], {
    env: { ...process.env, MAGI_HOME: home, XDG_CONFIG_HOME: NodePath.join(home, "no-config"), ...env }
  })
  servers.push(proc)
  const waiting = new Map<number, (m: Message) => void>()
  let buffer = ""
  let stderr = ""
  proc.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
  proc.stdout.on("data", (d: Buffer) => {
    buffer += d.toString()
    let nl: number
    while ((nl = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, nl).trim()
      buffer = buffer.slice(nl + 1)
      if (line === "") continue
      const m = JSON.parse(line) as Message
      if (m.id !== undefined) waiting.get(m.id)?.(m)
    }
  })
  let next = 0
  const request = (method: string, params: unknown = {}) =>
    new Promise<Message>((resolve, reject) => {
      const id = ++next
      const timer = setTimeout(() => reject(new Error(`no answer to ${method} within ${DEADLINE_MS} ms; stderr: ${stderr}`)), DEADLINE_MS)
      waiting.set(id, (m) => {
        clearTimeout(timer)
        resolve(m)
      })
      proc.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n")
    })
  const notify = (method: string) => proc.stdin.write(JSON.stringify({ jsonrpc: "2.0", method }) + "\n")
  const exited = new Promise<number | null>((resolve) => proc.on("close", (code) => resolve(code)))
  const initialize = async () => {
    const r = await request("initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "test", version: "1" } })
    notify("notifications/initialized")
    return r
  }
  const call = (name: string, args: unknown) => request("tools/call", { name, arguments: args })
  return { proc, request, initialize, call, exited }
}

const questionsIn = (home: string) => {
  const dir = NodePath.join(home, "questions")
  return NodeFs.existsSync(dir) ? NodeFs.readdirSync(dir).filter((f) => f.endsWith(".json")) : []
}

const readQuestion = (home: string, id: string) => JSON.parse(NodeFs.readFileSync(NodePath.join(home, "questions", `${id}.json`), "utf8"))

const until = async (what: string, ok: () => boolean) => {
  const end = Date.now() + DEADLINE_MS
  while (!ok()) {
    if (Date.now() > end) throw new Error(`gave up waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

const answer = (home: string, id: string, reply: string) =>
  spawnSync(process.execPath, [MAGI, "answer", id, "--reply", reply], {
    env: { ...process.env, MAGI_HOME: home, XDG_CONFIG_HOME: NodePath.join(home, "no-config") },
    encoding: "utf8"
  })

describe("magi mcp, spoken to over stdio", () => {
  it("says who it is and lists ask, wait and reply, each with a JSON schema and a description for a model", async () => {
    const server = start(tempDirSync(), 5)
    const init = await server.initialize()
    expect(init.result!.serverInfo.name).toBe("magi")
    expect(init.result!.capabilities.tools).toBeDefined()
    const list = await server.request("tools/list")
    const tools = list.result!.tools as Array<{ name: string; description: string; inputSchema: any }>
    // `approve` is claude's permission prompt (--permission-prompt-tool); a model calling it only files a question.
    expect(tools.map((t) => t.name)).toEqual(["ask", "wait", "reply", "approve"])
    const ask = tools[0]!
    expect(ask.inputSchema.required).toEqual(["summary"])
    expect(Object.keys(ask.inputSchema.properties)).toEqual(["summary", "detail", "choices", "timeout", "panel"])
    expect(ask.description).toContain("pending (no answer yet: do what its text says, either call the wait tool with the id given at once, or end your turn")
    expect(tools[1]!.inputSchema.required).toEqual(["id"])
    expect(tools[2]!.inputSchema.required).toEqual(["id", "summary"])
  })

  it("ask files the question and returns the owner's answer, as text and as structured content", { timeout: DEADLINE_MS * 2 }, async () => {
    const home = tempDirSync()
    const server = start(home, 60, { MAGI_RUN: "", MAGI_CWD: "/work/where-the-agent-is" })
    await server.initialize()
    const asked = server.call("ask", { summary: "Which database?", detail: "Both fit.", choices: ["SQLite", "Postgres"] })
    await until("the question to be filed", () => questionsIn(home).length === 1)
    const id = questionsIn(home)[0]!.replace(/\.json$/, "")
    // Where the agent works, from the environment magi gave it, for the waiter's resume.
    expect(readQuestion(home, id).cwd).toBe("/work/where-the-agent-is")
    const answered = answer(home, id, "SQLite")
    expect(answered.status, answered.stderr).toBe(0)
    const result = (await asked).result!
    expect(result.isError).toBe(false)
    expect(result.content).toEqual([{ type: "text", text: "SQLite" }])
    expect(result.structuredContent).toEqual({ outcome: "answered", id, answer: "SQLite" })
    // Handed to the agent: the waiter must not deliver it again.
    expect(readQuestion(home, id).answer_delivered).toBe(true)
  })

  it("a slice that runs out returns pending with the exact wait call, and that wait returns the answer", { timeout: DEADLINE_MS * 2 }, async () => {
    const home = tempDirSync()
    const server = start(home, 1)
    await server.initialize()
    const pending = (await server.call("ask", { summary: "Ship it?", choices: ["yes", "no"] })).result!
    expect(pending.structuredContent.outcome).toBe("pending")
    const id = pending.structuredContent.id as string
    expect(pending.structuredContent.next).toEqual({ tool: "wait", arguments: { id } })
    expect(pending.content[0].text).toContain(`wait {"id":"${id}"}`)
    expect(answer(home, id, "yes").status).toBe(0)
    const waited = (await server.call("wait", { id })).result!
    expect(waited.structuredContent).toEqual({ outcome: "answered", id, answer: "yes" })
  })

  it("a run's seat that ends its turn on pending (MAGI_WAIT=end-turn) is told to end it, not to call wait, and the question stays open", {
    timeout: DEADLINE_MS * 2
  }, async () => {
    const home = tempDirSync()
    const server = start(home, 1, { MAGI_WAIT: "end-turn", MAGI_RUN: "20260101-000000-ab12", MAGI_SEAT: "impl" })
    await server.initialize()
    const pending = (await server.call("ask", { summary: "Ship it?", choices: ["yes", "no"] })).result!
    const id = pending.structuredContent.id as string
    expect(pending.structuredContent).toMatchObject({ outcome: "pending", id, next: "end-turn" })
    // codex shows its model the structured content alone: the words are there too.
    for (const said of [pending.content[0].text, pending.structuredContent.message])
      expect(said).toContain("End your turn now: reply with one line saying you are waiting on the owner about it. Do not call magi's wait tool")
    expect(pending.content[0].text).not.toContain(`wait {"id"`)
    expect(readQuestion(home, id)).toMatchObject({ status: "open", run: "20260101-000000-ab12", seat: "impl" })
  })

  it(
    "outside a run, MAGI_WAIT=end-turn changes nothing: nothing could resume the asker, so pending says to wait again",
    { timeout: DEADLINE_MS * 2 },
    async () => {
      const home = tempDirSync()
      const server = start(home, 1, { MAGI_WAIT: "end-turn", MAGI_RUN: "" })
      await server.initialize()
      const pending = (await server.call("ask", { summary: "Ship it?" })).result!
      const id = pending.structuredContent.id as string
      expect(pending.structuredContent.next).toEqual({ tool: "wait", arguments: { id } })
    }
  )

  it("bad input is refused with what was wrong, and nothing is filed", async () => {
    const home = tempDirSync()
    const server = start(home, 5)
    await server.initialize()
    const wrongType = (await server.call("ask", { summary: 3 })).result!
    expect(wrongType.isError).toBe(true)
    expect(wrongType.structuredContent.outcome).toBe("refused")
    expect(wrongType.content[0].text).toContain("summary: Expected string, actual 3")
    const unknownField = (await server.call("ask", { summary: "Q?", colour: "red" })).result!
    expect(unknownField.content[0].text).toContain("colour: is unexpected")
    const emptyChoice = (await server.call("ask", { summary: "Q?", choices: ["a", ""] })).result!
    expect(emptyChoice.isError).toBe(true)
    const noSuchQuestion = (await server.call("wait", { id: "20990101-000000-0000" })).result!
    expect(noSuchQuestion.isError).toBe(true)
    expect(noSuchQuestion.structuredContent.outcome).toBe("refused")
    expect(questionsIn(home)).toEqual([])
    const noSuchTool = await server.call("delete", {})
    expect(noSuchTool.error!.message).toBe("Tool 'delete' not found")
  })

  it("a client that goes away mid-wait ends the server and leaves the question open for the owner and the waiter", { timeout: DEADLINE_MS * 2 }, async () => {
    const home = tempDirSync()
    const server = start(home, 60)
    await server.initialize()
    void server.call("ask", { summary: "Still there?" })
    await until("the question to be filed", () => questionsIn(home).length === 1)
    const id = questionsIn(home)[0]!.replace(/\.json$/, "")
    await until("the asker's lease", () => NodeFs.existsSync(NodePath.join(home, "questions", "leases", `${id}.lease`)))
    server.proc.stdin.end()
    expect(await server.exited).toBe(0)
    const q = readQuestion(home, id)
    expect(q.status).toBe("open")
    // Nobody waits any more: the lease went with the server, so the waiter may deliver at once.
    expect(NodeFs.existsSync(NodePath.join(home, "questions", "leases", `${id}.lease`))).toBe(false)
    expect(answer(home, id, "yes").status).toBe(0)
  })
})
