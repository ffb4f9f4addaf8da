/**
 * Abusive connections against magi web's connection limits, with small
 * limits: parked idle sockets never lock the owner out, a socket that never
 * sends a byte is closed, and an open event stream is never the one evicted.
 */
import { afterEach, describe, expect, it } from "vitest"
import * as NodeHttp from "node:http"
import * as NodeNet from "node:net"
import { defaultLimits, type Limits, limitConnections, serverOptions } from "../../src/web/Connections.js"

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c()
})

/**
 * A Node HTTP server with magi web's limits applied exactly as `WebServer`
 * applies them, answering `/api/health` and holding `/api/events` open like
 * the real routes. (The real server's bundle is exercised by
 * `scripts/bench/web-idle.mjs` with 1,000 idle sockets.)
 */
const startServer = async (limits: Partial<Limits>) => {
  const all = { ...defaultLimits, ...limits }
  const server = NodeHttp.createServer(serverOptions(all), (req, res) => {
    if (req.url === "/api/events") {
      res.writeHead(200, { "content-type": "text/event-stream" })
      res.write("event: change\ndata: {}\n\n")
      return
    }
    res.writeHead(200, { "content-type": "application/json" })
    res.end(JSON.stringify({ questions_open: 0 }))
  })
  limitConnections(server, all)
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()))
  cleanups.push(
    () =>
      new Promise<void>((r) => {
        server.closeAllConnections()
        server.close(() => r())
      })
  )
  return (server.address() as NodeNet.AddressInfo).port
}

/** A socket that connects and then says nothing. */
const parked = (port: number) =>
  new Promise<{ socket: NodeNet.Socket; gone: Promise<void> }>((resolve, reject) => {
    const socket = NodeNet.connect(port, "127.0.0.1")
    const gone = new Promise<void>((done) => socket.once("close", () => done()))
    socket.on("error", () => {})
    // Read (and drop) whatever comes, so the server's close is seen.
    socket.resume()
    socket.once("connect", () => resolve({ socket, gone }))
    socket.once("error", reject)
    cleanups.push(async () => void socket.destroy())
  })

const get = (port: number, path: string) =>
  new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = NodeHttp.get({ host: "127.0.0.1", port, path, agent: false }, (res) => {
      let body = ""
      res.on("data", (c) => (body += c))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }))
    })
    req.on("error", reject)
  })

const settle = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe("connections to magi web", () => {
  it("serves a normal request while more idle sockets are parked on it than its cap allows", { timeout: 60_000 }, async () => {
    const port = await startServer({ maxConnections: 20 })
    const sockets = []
    for (let i = 0; i < 60; i++) sockets.push(await parked(port))
    const health = await get(port, "/api/health")
    expect(health.status).toBe(200)
    expect(JSON.parse(health.body)).toHaveProperty("questions_open", 0)
    // The oldest idle ones made room: at most the cap are still open.
    await settle(200)
    expect(sockets.filter((s) => !s.socket.destroyed && s.socket.readyState === "open").length).toBeLessThanOrEqual(20)
  })

  it("closes a connection that never sends a byte once the header deadline passes", { timeout: 60_000 }, async () => {
    const port = await startServer({ headersTimeoutMs: 300, requestTimeoutMs: 600 })
    const { gone } = await parked(port)
    // Generous: only proves it is closed at all, not how fast.
    const closed = await Promise.race([gone.then(() => true), settle(20_000).then(() => false)])
    expect(closed).toBe(true)
  })

  it("never evicts an open event stream to make room for idle sockets", { timeout: 60_000 }, async () => {
    const port = await startServer({ maxConnections: 5 })
    let stream = ""
    let ended = false
    const req = NodeHttp.get({ host: "127.0.0.1", port, path: "/api/events", agent: false }, (res) => {
      res.on("data", (c) => (stream += c))
      res.on("close", () => (ended = true))
    })
    req.on("error", () => {})
    cleanups.push(async () => void req.destroy())
    for (let i = 0; i < 50 && !stream.includes("event: change"); i++) await settle(50)
    expect(stream).toContain("event: change")
    for (let i = 0; i < 20; i++) await parked(port)
    expect((await get(port, "/api/health")).status).toBe(200)
    await settle(200)
    expect(ended).toBe(false)
  })
})
