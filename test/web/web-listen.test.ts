/**
 * `magi web` listens only once its routes are attached: a request that
 * reaches the port the moment it opens gets a full reply. (Node drops a
 * request no listener takes, so one arriving before the routes were
 * attached used to wait out the 60 s idle deadline and get an empty reply.)
 */
import { afterEach, describe, expect, it } from "vitest"
import { spawn, type ChildProcess } from "node:child_process"
import * as NodeNet from "node:net"
import * as NodePath from "node:path"
import { tempDirSync } from "../support.js"
import { MAGI } from "./web-support.js"

const children: ChildProcess[] = []
afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL")
})

/** A port free a moment ago. */
const freePort = () =>
  new Promise<number>((resolve) => {
    const server = NodeNet.createServer()
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as NodeNet.AddressInfo
      server.close(() => resolve(port))
    })
  })

type Attempt = { readonly refused: true } | { readonly refused: false; readonly reply: string }

/** One connection: refused, or the whole reply to one request (whatever came before the server closed it, or the deadline). */
const attempt = (port: number, deadlineMs: number) =>
  new Promise<Attempt>((resolve) => {
    const socket = NodeNet.connect(port, "127.0.0.1")
    let reply = ""
    let connected = false
    const timer = setTimeout(() => socket.destroy(), deadlineMs)
    socket.on("connect", () => {
      connected = true
      socket.write(`GET /api/health HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`)
    })
    socket.on("data", (d: Buffer) => (reply += d.toString()))
    socket.on("error", () => {})
    socket.on("close", () => {
      clearTimeout(timer)
      resolve(connected ? { refused: false, reply } : { refused: true })
    })
  })

describe("magi web as its port opens", () => {
  it("answers the first connection it accepts in full", async () => {
    const home = tempDirSync()
    const port = await freePort()
    const child = spawn(process.execPath, [MAGI, "web", "--bind", "127.0.0.1", "--port", String(port), "--home", home, "--no-loop"], {
      stdio: ["ignore", "ignore", "pipe"],
      env: { ...process.env, MAGI_HOME: home, XDG_CONFIG_HOME: NodePath.join(home, "config") }
    })
    children.push(child)
    // Connect in a tight loop from the moment the process starts, so the
    // first attempt to get in lands as the port opens.
    const startedBy = Date.now() + 40_000
    let first: Attempt = { refused: true }
    while (first.refused && Date.now() < startedBy && child.exitCode === null) first = await attempt(port, 20_000)
    expect(first.refused, "magi web never accepted a connection").toBe(false)
    if (!first.refused) {
      expect(first.reply).toMatch(/^HTTP\/1\.1 200 /)
      expect(first.reply).toContain('"questions_open"')
    }
  }, 90_000)
})
