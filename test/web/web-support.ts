/**
 * Running the real `magi web` (the built bundle, as installed) against a temp
 * home, and talking to it with exact control of every header: the checks
 * under test are about `Host`, `Origin` and `Content-Type`, which `fetch`
 * either forbids setting or sets on its own.
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { Effect, Layer, Redacted } from "effect"
import { execFileSync, spawn, type ChildProcess } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeHttp from "node:http"
import * as NodePath from "node:path"
import type * as Q from "../../src/questions/Question.js"
import { MagiHome } from "../../src/platform/MagiHome.js"
import { QuestionStore } from "../../src/questions/QuestionStore.js"
import { StoreBackend } from "../../src/store/StoreBackend.js"
import { TaskStore } from "../../src/queue/TaskStore.js"
import { tempDirSync } from "../support.js"

export const MAGI = NodePath.resolve("dist/magi.js")

export interface Web {
  readonly url: string
  readonly port: number
  readonly home: string
  readonly child: ChildProcess
  readonly stderr: () => string
  readonly stdout: () => string
  /** SIGTERM, and wait for the exit code. */
  readonly stop: () => Promise<number | null>
}

export interface WebOptions {
  readonly bind?: string
  readonly env?: Record<string, string>
  /**
   * Run the waiter in-process, as `magi web` does by default. Off unless a
   * test is about the loop: a waiter would act on the questions other tests
   * seed (and read this machine's agent CLIs and config).
   */
  readonly loop?: boolean
  /** Where the server starts: whose `magi.toml` the waiter reads. */
  readonly cwd?: string
}

/** Start `magi web --bind 127.0.0.1 (or `bind`) --port <port, 0 = any free one>` on `home`; resolves once it printed its URL. */
export const startWeb = (home: string = tempDirSync(), port = 0, options: WebOptions = {}): Promise<Web> =>
  new Promise((resolve, reject) => {
    const args = [MAGI, "web", "--bind", options.bind ?? "127.0.0.1", "--port", String(port), "--home", home]
    if (options.loop !== true) args.push("--no-loop")
    const child = spawn(process.execPath, args, {
      stdio: ["ignore", "pipe", "pipe"],
      cwd: options.cwd,
      // The config directory is the home's own, so no owner's config leaks in.
      env: { ...process.env, MAGI_HOME: home, XDG_CONFIG_HOME: NodePath.join(home, "config"), ...options.env }
    })
    let out = ""
    let err = ""
    child.stderr.on("data", (d: Buffer) => (err += d.toString()))
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString()
      const line = /^(http:\/\/\S+)\n/.exec(out)
      if (line) {
        const url = line[1]!
        resolve({
          url,
          port: Number(new URL(url).port),
          home,
          child,
          stderr: () => err,
          stdout: () => out,
          stop: () =>
            new Promise((done) => {
              if (child.exitCode !== null) return done(child.exitCode)
              child.once("exit", (code) => done(code))
              child.kill("SIGTERM")
            })
        })
      }
    })
    child.once("exit", (code) => reject(new Error(`magi web exited with ${code} before printing its URL:\n${err}`)))
  })

export interface Reply {
  readonly status: number
  readonly headers: NodeHttp.IncomingHttpHeaders
  readonly body: Buffer
  readonly text: string
  readonly json: () => any
}

export interface Ask {
  readonly method?: string
  readonly headers?: Record<string, string>
  readonly body?: string | Buffer
  /** Send the body chunked, without a Content-Length. */
  readonly chunked?: boolean
}

/** One request to `url` with exactly the headers given (plus Node's defaults for Host and length). */
export const request = (url: string, ask: Ask = {}): Promise<Reply> =>
  new Promise((resolve, reject) => {
    // The path goes out as written: a URL object would resolve `%2E%2E`
    // away before the server could be shown it.
    const { hostname, port, origin } = new URL(url)
    const options = { hostname, port, path: url.slice(origin.length), method: ask.method ?? "GET", headers: ask.headers ?? {}, agent: false }
    const req = NodeHttp.request(options, (res) => {
      const chunks: Buffer[] = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => {
        const body = Buffer.concat(chunks)
        const text = body.toString("utf8")
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text, json: () => JSON.parse(text) })
      })
      res.on("error", reject)
    })
    req.on("error", reject)
    if (ask.body !== undefined) {
      if (ask.chunked) {
        req.setHeader("transfer-encoding", "chunked")
        const body = Buffer.from(ask.body)
        for (let i = 0; i < body.length; i += 64 * 1024) req.write(body.subarray(i, i + 64 * 1024))
      } else req.write(ask.body)
    }
    req.end()
  })

/** POST JSON the way magi's own page does (no Origin: a same-origin fetch from Node). */
export const postJson = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  request(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) })

/**
 * Run an effect against the store in `home`, as another magi process would:
 * on the backend `MAGI_STORE_URL` names, or the database at `storeUrl`.
 */
export const withStore = <A, E>(home: string, body: Effect.Effect<A, E, QuestionStore>, storeUrl?: string) =>
  Effect.runPromise(
    body.pipe(
      Effect.provide(
        QuestionStore.layer.pipe(
          Layer.provide(storeUrl === undefined ? Layer.empty : StoreBackend.postgres(Redacted.make(storeUrl))),
          Layer.provide(MagiHome.at(home)),
          Layer.provide(NodeFileSystem.layer)
        )
      )
    )
  )

/** Store questions, panels first when given, as `magi ask` would leave them. */
export const seed = (
  home: string,
  questions: ReadonlyArray<{ q: Q.Question; panel?: string; assets?: Record<string, string | Buffer> }>,
  storeUrl?: string
) =>
  withStore(
    home,
    Effect.gen(function* () {
      const store = yield* QuestionStore
      for (const { q, panel, assets } of questions) {
        let stored = q
        if (panel !== undefined) {
          const dir = NodeFs.mkdtempSync(NodePath.join(home, "assets-"))
          const paths = Object.entries(assets ?? {}).map(([name, content]) => {
            const path = NodePath.join(dir, name)
            NodeFs.writeFileSync(path, content)
            return path
          })
          stored = yield* store.putPanel(q, panel, paths)
        }
        yield* store.put(stored)
      }
    }),
    storeUrl
  )

/**
 * Read server-sent events from `url` until `until` says stop, or the server
 * ends the stream; the events seen.
 */
export const readEvents = (
  url: string,
  until: (events: ReadonlyArray<{ event: string; data: string }>) => boolean,
  timeoutMs = 10_000
): Promise<ReadonlyArray<{ event: string; data: string }>> =>
  new Promise((resolve, reject) => {
    const events: Array<{ event: string; data: string }> = []
    const timer = setTimeout(() => {
      req.destroy()
      reject(new Error(`timed out waiting for events; saw ${JSON.stringify(events)}`))
    }, timeoutMs)
    const req = NodeHttp.get(url, { agent: false }, (res) => {
      res.on("end", () => {
        clearTimeout(timer)
        resolve(events)
      })
      let buffer = ""
      res.on("data", (c: Buffer) => {
        buffer += c.toString()
        let end: number
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, end)
          buffer = buffer.slice(end + 2)
          const event = /^event: (.*)$/m.exec(block)?.[1]
          const data = /^data: (.*)$/m.exec(block)?.[1]
          if (event !== undefined) events.push({ event, data: data ?? "" })
        }
        if (until(events)) {
          clearTimeout(timer)
          req.destroy()
          resolve(events)
        }
      })
    })
    req.on("error", (e) => {
      if (!req.destroyed) reject(e)
    })
  })

/**
 * A directory holding a fake `tailscale` that answers `ip -4` and
 * `status --json` as given (exit 1 when `undefined`), for PATH.
 */
export const fakeTailscale = (answers: { readonly ip?: string; readonly status?: unknown }) => {
  const dir = tempDirSync()
  const reply = (text: string | undefined) => (text === undefined ? "exit 1" : `cat <<'MAGI_EOF'\n${text}\nMAGI_EOF\n`)
  const script = `#!/bin/sh
case "$1" in
  ip) ${reply(answers.ip)} ;;
  status) ${reply(answers.status === undefined ? undefined : JSON.stringify(answers.status))} ;;
  *) exit 2 ;;
esac
`
  NodeFs.writeFileSync(NodePath.join(dir, "tailscale"), script, { mode: 0o755 })
  return { PATH: `${dir}:${process.env["PATH"] ?? ""}` }
}

/** Poll `check` every 50 ms until it returns something other than `undefined`; fail after `timeoutMs`. */
export const eventually = async <A>(what: string, check: () => A | undefined | Promise<A | undefined>, timeoutMs = 5_000): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await check()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

/** Write a notice as the waiter does (a temp file renamed into place); its record. */
export const writeNotice = (home: string, fields: { readonly id: string; readonly question: string; readonly summary: string; readonly reason: string }) => {
  const dir = NodePath.join(home, "notices")
  NodeFs.mkdirSync(dir, { recursive: true })
  const notice = { at: new Date().toISOString().replace(/\.\d+Z$/, "Z"), run: "20260902-201256-9fb7", seat: "impl-A", input: "Answered@0", ...fields }
  const path = NodePath.join(dir, `${fields.id}.json`)
  NodeFs.writeFileSync(`${path}.tmp`, JSON.stringify(notice, null, 2) + "\n")
  NodeFs.renameSync(`${path}.tmp`, path)
  return notice
}

/** Leave `<id>.lease` as `kind` would have beaten it `ageMs` ago. */
export const writeLease = (home: string, id: string, kind: "asker" | "daemon", ageMs: number) => {
  const beat = new Date(Date.now() - ageMs).toISOString().replace(/\.\d+Z$/, "Z")
  const path = NodePath.join(home, "questions", "leases", `${id}.lease`)
  NodeFs.mkdirSync(NodePath.dirname(path), { recursive: true })
  NodeFs.writeFileSync(`${path}.tmp`, JSON.stringify({ kind, pid: 4242, beat_at: beat }) + "\n")
  NodeFs.renameSync(`${path}.tmp`, path)
}

/**
 * Leave a run as `magi run` does: `<home>/runs/<id>/run.json` written through
 * a temp file and a rename, and its artifacts beside it, oldest first.
 */
export const seedRun = (home: string, run: { readonly id: string }, artifacts: Record<string, string | Buffer> = {}) => {
  const dir = NodePath.join(home, "runs", run.id)
  NodeFs.mkdirSync(NodePath.join(dir, "artifacts"), { recursive: true })
  let at = Date.now() / 1000 - Object.keys(artifacts).length
  for (const [name, content] of Object.entries(artifacts)) {
    const path = NodePath.join(dir, "artifacts", name)
    NodeFs.writeFileSync(path, content)
    NodeFs.utimesSync(path, at, at)
    at += 1
  }
  NodeFs.writeFileSync(NodePath.join(dir, "run.json.tmp"), JSON.stringify(run, null, 2) + "\n")
  NodeFs.renameSync(NodePath.join(dir, "run.json.tmp"), NodePath.join(dir, "run.json"))
}

/** Run an effect against the queue in `home`, as `magi task` in another process would. */
export const withTasks = <A, E>(home: string, body: Effect.Effect<A, E, TaskStore>) =>
  Effect.runPromise(
    body.pipe(Effect.provide(TaskStore.layer.pipe(Layer.provide(MagiHome.at(home)), Layer.provide(NodeFileSystem.layer))))
  )

/** A git repository with one commit, in a fresh directory: where `magi web` is started, or a task's repo. */
export const gitRepo = () => {
  const dir = NodeFs.realpathSync(tempDirSync())
  const git = (...args: string[]) => execFileSync("git", args, { cwd: dir, stdio: "pipe" })
  git("init", "-q", "-b", "trunk")
  git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "init")
  return dir
}
