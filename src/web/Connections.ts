/**
 * What a connection may cost `magi web`: bounded time and a bounded number.
 *
 * A client that connects and never sends a byte (or sends half a request, or
 * keeps an idle keep-alive socket) holds a file descriptor for as long as the
 * server lets it; 1,100 of them at the usual `ulimit -n 1024` locked every
 * client out. So every stage of a request has a deadline, and the number of
 * open connections has a cap; at the cap, the oldest connection with no
 * request in flight makes room for the new one, so an owner opening the page
 * always gets in, however many idle sockets someone parked on the port.
 */
import type * as NodeHttp from "node:http"
import type * as NodeNet from "node:net"

export interface Limits {
  /** From connecting to the end of the request's headers. */
  readonly headersTimeoutMs: number
  /** From connecting to the end of the request's body. */
  readonly requestTimeoutMs: number
  /** How long a kept-alive connection may wait for its next request. */
  readonly keepAliveTimeoutMs: number
  /** How long a connection may go with nothing read or written either way. */
  readonly idleTimeoutMs: number
  /** Open connections at most; past it the oldest idle one is closed. */
  readonly maxConnections: number
}

export const defaultLimits: Limits = {
  // A phone on a poor link sends a request's few hundred bytes of headers in
  // well under ten seconds; a client that takes longer is not a browser.
  headersTimeoutMs: 10_000,
  // Bodies are at most 1 MiB (an answer is a sentence).
  requestTimeoutMs: 30_000,
  // Browsers reuse a connection within seconds or not at all.
  keepAliveTimeoutMs: 5_000,
  // Event streams send a keep-alive comment every 15 s, so a minute of
  // silence means the other end is gone.
  idleTimeoutMs: 60_000,
  // Well under the 1,024 open files a process usually gets, leaving room for
  // the store's files and the agents' processes; dozens of phone tabs with
  // their event streams need a few hundred at most.
  maxConnections: 400
}

/** The `http.createServer` options that carry the deadlines. */
export const serverOptions = (limits: Limits): NodeHttp.ServerOptions => ({
  headersTimeout: limits.headersTimeoutMs,
  requestTimeout: limits.requestTimeoutMs,
  keepAliveTimeout: limits.keepAliveTimeoutMs,
  // How often Node checks the two deadlines above: often enough that a
  // deadline is kept to within a second, not the default 30 s.
  connectionsCheckingInterval: Math.min(1_000, limits.headersTimeoutMs)
})

/** Apply the idle deadline and the cap to `server`. */
export const limitConnections = (server: NodeHttp.Server, limits: Limits): void => {
  server.setTimeout(limits.idleTimeoutMs)
  /** Open connections, oldest first, with how many requests each has in flight and has had. */
  const open = new Map<NodeNet.Socket, { inFlight: number; requests: number }>()
  server.on("connection", (socket: NodeNet.Socket) => {
    if (open.size >= limits.maxConnections) {
      let idle: NodeNet.Socket | undefined
      for (const [s, state] of open)
        if (state.inFlight === 0) {
          idle = s
          break
        }
      // Every connection busy: the cap holds, and the newcomer is turned away.
      if (idle === undefined) return void socket.destroy()
      open.delete(idle)
      idle.destroy()
    }
    const state = { inFlight: 0, requests: 0 }
    open.set(socket, state)
    // Node's header deadline only starts with the first byte of a request: a
    // client that connects and never sends one is closed here, on the same
    // deadline.
    const silent = setTimeout(() => {
      if (state.requests === 0) socket.destroy()
    }, limits.headersTimeoutMs)
    silent.unref()
    socket.once("close", () => {
      clearTimeout(silent)
      open.delete(socket)
    })
  })
  server.on("request", (request: NodeHttp.IncomingMessage, response: NodeHttp.ServerResponse) => {
    const state = open.get(request.socket as NodeNet.Socket)
    if (state === undefined) return
    state.inFlight++
    state.requests++
    response.once("close", () => state.inFlight--)
  })
}
