/**
 * `magi mcp` given what a broken or hostile client writes: malformed lines,
 * unknown methods, bad params, lines far over the limit, and a client that
 * never reads its answers. The built magi as a real process, over pipes.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { MAGI } from "../runSupport.js"
import { tempDirSync } from "../support.js"

/** A bound for a hang on a busy machine; nothing here is timed by it. */
const DEADLINE_MS = 60_000
const TEST_MS = DEADLINE_MS * 2
const MiB = 1024 * 1024

const servers: ChildProcessWithoutNullStreams[] = []
afterEach(() => {
  for (const s of servers.splice(0)) if (s.exitCode === null && s.signalCode === null) s.kill("SIGKILL")
})

interface Reply {
  readonly id: number | string | null
  readonly result?: Record<string, unknown>
  readonly error?: { readonly code: number; readonly message: string }
}

/** A client that writes raw lines and collects every line the server answers. */
const start = () => {
  const home = tempDirSync()
  const proc = spawn(process.execPath, [MAGI, "mcp", "--slice", "5"], {
    env: { ...process.env, MAGI_HOME: home, XDG_CONFIG_HOME: NodePath.join(home, "no-config") }
  })
  servers.push(proc)
  const replies: Reply[] = []
  let lines = 0
  let keep = true
  let buffer = ""
  let stderr = ""
  proc.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
  const onData = (d: Buffer) => {
    if (!keep) {
      // Counting only: the bytes' newlines, without making text of 600 MB.
      for (let at = d.indexOf(10); at >= 0; at = d.indexOf(10, at + 1)) lines++
      return
    }
    buffer += d.toString()
    let nl: number
    while ((nl = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, nl)
      buffer = buffer.slice(nl + 1)
      lines++
      if (keep) replies.push(JSON.parse(line) as Reply)
    }
  }
  proc.stdout.on("data", onData)
  const write = (text: string | Buffer) => new Promise<void>((resolve, reject) => proc.stdin.write(text, (e) => (e ? reject(e) : resolve())))
  const until = async (what: string, ok: () => boolean, deadlineMs = DEADLINE_MS) => {
    const end = Date.now() + deadlineMs
    while (!ok()) {
      if (Date.now() > end) throw new Error(`gave up waiting for ${what}; stderr: ${stderr}`)
      await new Promise((r) => setTimeout(r, 50))
    }
  }
  const replyTo = async (id: number) => {
    await until(`the answer to ${id}`, () => replies.some((r) => r.id === id))
    return replies.find((r) => r.id === id)!
  }
  const ping = (id: number) => write(JSON.stringify({ jsonrpc: "2.0", id, method: "ping" }) + "\n")
  /** Peak resident memory of the server so far, from the kernel. */
  const peakRss = () => Number(/VmHWM:\s+(\d+) kB/.exec(NodeFs.readFileSync(`/proc/${proc.pid}/status`, "utf8"))![1]) * 1024
  return {
    proc,
    replies,
    write,
    ping,
    replyTo,
    until,
    peakRss,
    lines: () => lines,
    /** Stop collecting whole replies (count lines only), to read many cheaply. */
    countOnly: () => (keep = false),
    pauseReading: () => proc.stdout.pause(),
    resumeReading: () => proc.stdout.resume()
  }
}

const initialize = {
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "test", version: "1" } }
}

describe("magi mcp, given lines no client should send", () => {
  it("answers each malformed line with a JSON-RPC error under id null and goes on serving the next request", { timeout: TEST_MS }, async () => {
    const server = start()
    await server.write(JSON.stringify(initialize) + "\n")
    await server.replyTo(0)
    const bad: ReadonlyArray<readonly [string, number]> = [
      ["{not json", -32700],
      ["42", -32600],
      ["null", -32600],
      ['"text"', -32600],
      ["[1,2]", -32600],
      ['{"jsonrpc":"2.0"}', -32600],
      ['{"id":7,"method":"ping"}', -32600],
      ["\u0001\u0002\u0007\u001b[2J", -32700],
      ['{"jsonrpc":"2.0","id":{"no":"object"},"method":"ping"}', -32600]
    ]
    let id = 100
    for (const [line, code] of bad) {
      const before = server.replies.length
      await server.write(line + "\n")
      await server.ping(++id)
      const pong = await server.replyTo(id)
      expect(pong.result, `after ${JSON.stringify(line)}`).toEqual({})
      const answered = server.replies.slice(before).filter((r) => r.id !== id)
      expect(answered.map((r) => r.error?.code), `for ${JSON.stringify(line)}`).toEqual([code])
      // Only a request with a usable id gets it back.
      expect(answered[0]!.id).toBe(line.startsWith('{"id":7') ? 7 : null)
    }
    // A blank line (a stray "\r\n" some clients write) is nobody's request: no answer, and serving goes on.
    const before = server.replies.length
    await server.write("\n\r\n")
    await server.ping(++id)
    await server.replyTo(id)
    expect(server.replies.slice(before).map((r) => r.id)).toEqual([id])
  })

  it("an unknown method gets -32601 and bad params -32602, each under the request's own id", { timeout: TEST_MS }, async () => {
    const server = start()
    await server.write(JSON.stringify(initialize) + "\n")
    await server.replyTo(0)
    await server.write(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "no/such/method" }) + "\n")
    expect(await server.replyTo(2)).toMatchObject({ jsonrpc: "2.0", id: 2, error: { code: -32601 } })
    await server.write(JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/call" }) + "\n")
    const noParams = await server.replyTo(3)
    expect(noParams.error!.code).toBe(-32602)
    expect(noParams.error!.message).toContain("name")
    await server.write(JSON.stringify({ jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: 5, arguments: {} } }) + "\n")
    expect((await server.replyTo(4)).error!.code).toBe(-32602)
    await server.write(JSON.stringify({ jsonrpc: "2.0", id: 5, method: "tools/call", params: "ask" }) + "\n")
    expect((await server.replyTo(5)).error!.code).toBe(-32602)
    // A string id comes back as that string.
    await server.write(JSON.stringify({ jsonrpc: "2.0", id: "six", method: "no/such/method" }) + "\n")
    await server.until("the answer to six", () => server.replies.some((r) => r.id === "six"))
    expect(server.replies.find((r) => r.id === "six")!.error!.code).toBe(-32601)
    // And a good call after all that is still served.
    await server.write(JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/list" }) + "\n")
    expect(((await server.replyTo(7)).result!.tools as unknown[]).length).toBeGreaterThan(0)
  })

  it("a line over 16 MiB is refused, and one of 300 MiB is dropped as it arrives without being held in memory", { timeout: TEST_MS * 2 }, async () => {
    const server = start()
    await server.write(JSON.stringify(initialize) + "\n")
    await server.replyTo(0)
    const writeLine = async (bytes: number) => {
      const chunk = Buffer.alloc(MiB, "a")
      await server.write('{"jsonrpc":"2.0","id":99,"method":"ping","params":{"pad":"')
      for (let sent = 0; sent < bytes; sent += MiB) await server.write(chunk)
      await server.write('"}}\n')
    }
    await writeLine(17 * MiB)
    await server.ping(1)
    await server.replyTo(1)
    expect(server.replies.filter((r) => r.error?.code === -32700)).toHaveLength(1)
    const before = server.peakRss()
    await writeLine(300 * MiB)
    await server.ping(2)
    await server.replyTo(2)
    expect(server.replies.filter((r) => r.error?.code === -32700)).toHaveLength(2)
    expect(server.replies.some((r) => r.id === 99)).toBe(false)
    // Far below the line's size: the line is never held whole.
    expect(server.peakRss() - before).toBeLessThan(64 * MiB)
    expect(server.peakRss()).toBeLessThan(200 * MiB)
  })

  it("a client that does not read its answers stops the server reading, so it stays small, and every answer comes once it reads", {
    timeout: DEADLINE_MS * 8
  }, async () => {
    const server = start()
    await server.write(JSON.stringify(initialize) + "\n")
    await server.replyTo(0)
    server.countOnly()
    server.pauseReading()
    const requests = 100_000
    const batch: string[] = []
    for (let id = 1; id <= requests; id++) batch.push(JSON.stringify({ jsonrpc: "2.0", id, method: "tools/list" }))
    server.proc.stdin.write(batch.join("\n") + "\n")
    // Until the server takes no more of what was written: it has stopped reading (or read it all).
    let last = -1
    let still = 0
    await server.until("the server to stop taking requests", () => {
      const left = server.proc.stdin.writableLength
      still = left === last ? still + 1 : 0
      last = left
      return still >= 40
    })
    expect(server.proc.stdin.writableLength).toBeGreaterThan(0)
    expect(server.peakRss()).toBeLessThan(200 * MiB)
    server.resumeReading()
    // 600 MB of answers to read: a generous bound for a loaded machine.
    await server.until("every answer", () => server.lines() >= requests, DEADLINE_MS * 5)
    // Draining 600 MB of answers churns memory faster than a loaded machine's
    // collector returns it: bounded still, far below the 1.5 GB of before.
    expect(server.peakRss()).toBeLessThan(400 * MiB)
  })
})
