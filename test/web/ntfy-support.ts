/**
 * A stand-in ntfy server on 127.0.0.1 that records what magi publishes, and
 * a press of one of its buttons made the way the ntfy app makes it: the
 * action's method, URL, headers and body, exactly as published.
 */
import * as NodeFs from "node:fs"
import * as NodeHttp from "node:http"
import type { AddressInfo } from "node:net"
import * as NodePath from "node:path"
import type { Message } from "../../src/questions/Ntfy.js"
import { request, type Reply } from "./web-support.js"

export interface Published {
  readonly path: string
  readonly headers: NodeHttp.IncomingHttpHeaders
  readonly message: Message
}

export interface StandIn {
  readonly url: string
  readonly published: Array<Published>
  /** Resolves with the `n`th publication (1-based) once it has arrived. */
  readonly nth: (n: number, timeoutMs?: number) => Promise<Published>
  readonly close: () => Promise<void>
}

/** Listen on a free port of 127.0.0.1; every POST is kept, and answered as ntfy does. */
export const standInNtfy = async (): Promise<StandIn> => {
  const published: Array<Published> = []
  const waiting: Array<() => void> = []
  const server = NodeHttp.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const message = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Message
      published.push({ path: req.url ?? "", headers: req.headers, message })
      for (const wake of waiting.splice(0)) wake()
      res.writeHead(200, { "content-type": "application/json" })
      res.end(JSON.stringify({ id: `m${published.length}`, event: "message", topic: message.topic }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  const nth = async (n: number, timeoutMs = 60_000) => {
    const deadline = Date.now() + timeoutMs
    while (published.length < n) {
      if (Date.now() > deadline) throw new Error(`the stand-in ntfy got ${published.length} publications, not ${n}`)
      await new Promise<void>((resolve) => {
        waiting.push(resolve)
        setTimeout(resolve, 100)
      })
    }
    return published[n - 1]!
  }
  return {
    url: `http://127.0.0.1:${port}`,
    published,
    nth,
    close: () => new Promise((resolve) => server.close(() => resolve()))
  }
}

/** Press the button labelled `label` as the ntfy app does an `http` action. */
export const press = (message: Message, label: string): Promise<Reply> => {
  const action = message.actions?.find((a) => a.label === label)
  if (action === undefined || action.action !== "http") throw new Error(`no http button labelled ${label}: ${JSON.stringify(message.actions)}`)
  return request(action.url, { method: action.method, headers: { ...action.headers }, body: action.body })
}

/** The token a button carries, for tests that replay or alter it. */
export const tokenOf = (message: Message, label: string): string => {
  const action = message.actions?.find((a) => a.label === label)
  if (action === undefined || action.action !== "http") throw new Error(`no http button labelled ${label}: ${JSON.stringify(message)}`)
  return (JSON.parse(action.body) as { token: string }).token
}

/** Write the owner's config: ntfy at `server`, the page at `publicUrl`. */
export const writeNtfyConfig = (configHome: string, server: string, publicUrl: string, extra = "") => {
  const dir = NodePath.join(configHome, "magi")
  NodeFs.mkdirSync(dir, { recursive: true })
  NodeFs.writeFileSync(
    NodePath.join(dir, "config.toml"),
    `[notify]\nntfy = { server = "${server}", topic = "magi-one-tap-test", token_env = "NTFY_TOKEN" }\n\n[web]\npublic_url = "${publicUrl}"\n${extra}`
  )
}
