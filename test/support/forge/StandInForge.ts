/**
 * A stand-in GitHub on 127.0.0.1: exactly the REST subset `GitHubForge`
 * calls, with state the test drives (checks, reviews, conflicts, a merge
 * refusal, injected 500s, garbage, timeouts and rate limits), over a real
 * bare git repository the test made. Heads are read from the bare repo and a
 * merge is a real merge commit written into it, so what git says and what
 * the stand-in says never disagree.
 */
import { execFileSync } from "node:child_process"
import * as NodeHttp from "node:http"
import type { AddressInfo } from "node:net"

export type Fault = "500" | "garbage" | "timeout" | "rate" | "rate-reset"

export interface Pull {
  number: number
  head: string
  base: string
  title: string
  body: string
  state: "open" | "closed"
  merged: boolean
  mergeSha: string | null
  /** null: still computing; false: conflicts. */
  mergeable: boolean | null
}

export interface StandIn {
  readonly api: string
  readonly token: string
  readonly pulls: Map<number, Pull>
  /** Check runs by commit sha (GitHub's JSON, as `check_runs` holds them). */
  readonly checkRuns: Map<string, Array<Record<string, unknown>>>
  readonly statuses: Map<string, Array<Record<string, unknown>>>
  readonly reviews: Map<number, Array<Record<string, unknown>>>
  readonly reviewComments: Map<number, Array<Record<string, unknown>>>
  readonly issueComments: Map<number, Array<Record<string, unknown>>>
  readonly logs: Map<number, string>
  /** Faults served once each, in order, to requests whose path contains the key ("" for any). */
  readonly faults: Array<{ readonly path: string; readonly fault: Fault }>
  /** The next merge is refused with this status and message (405: branch protection). */
  mergeRefusal: { status: number; message: string; mergeAnyway?: boolean } | null
  scopes: string
  /** Every request as "METHOD path", in order. */
  readonly requests: Array<string>
  /** Every Authorization header received (to check the token went only there). */
  readonly close: () => Promise<void>
}

const git = (bare: string, ...args: Array<string>) =>
  execFileSync("git", ["--git-dir", bare, ...args], {
    encoding: "utf8",
    env: { ...process.env, GIT_AUTHOR_NAME: "stand-in", GIT_AUTHOR_EMAIL: "s@x", GIT_COMMITTER_NAME: "stand-in", GIT_COMMITTER_EMAIL: "s@x" }
  }).trim()

const sha = (bare: string, ref: string): string => {
  try {
    return git(bare, "rev-parse", `refs/heads/${ref}`)
  } catch {
    return ""
  }
}

export const start = async (
  options: { readonly bare: string; readonly owner: string; readonly name: string; readonly token: string; readonly login?: string }
): Promise<StandIn> => {
  const { bare } = options
  const prefix = `/repos/${options.owner}/${options.name}`
  const open = new Set<NodeHttp.ServerResponse>()
  let next = 1
  const state: Omit<StandIn, "api" | "close"> = {
    token: options.token,
    pulls: new Map(),
    checkRuns: new Map(),
    statuses: new Map(),
    reviews: new Map(),
    reviewComments: new Map(),
    issueComments: new Map(),
    logs: new Map(),
    faults: [],
    mergeRefusal: null,
    scopes: "repo, workflow",
    requests: []
  }
  const pullJson = (p: Pull) => ({
    number: p.number,
    html_url: `http://github.test/${options.owner}/${options.name}/pull/${p.number}`,
    state: p.state,
    merged: p.merged,
    merged_at: p.merged ? "2026-01-01T00:00:00Z" : null,
    merge_commit_sha: p.mergeSha,
    mergeable: p.state === "open" ? p.mergeable : null,
    mergeable_state: p.mergeable === false ? "dirty" : "clean",
    head: { ref: p.head, sha: sha(bare, p.head) },
    base: { ref: p.base, sha: sha(bare, p.base) }
  })

  const server = NodeHttp.createServer((req, res) => {
    let raw = ""
    req.on("data", (c) => (raw += c))
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://x")
      const path = url.pathname
      state.requests.push(`${req.method} ${path}`)
      const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
        res.writeHead(status, { "content-type": "application/json", "x-oauth-scopes": state.scopes, ...headers })
        res.end(typeof body === "string" ? body : JSON.stringify(body))
      }
      // Lists are paged as GitHub pages them: per_page (30 by default, 100 at most), a Link header to the next page.
      const page = <A>(items: ReadonlyArray<A>): [ReadonlyArray<A>, Record<string, string>] => {
        const per = Math.min(100, Number(url.searchParams.get("per_page") ?? 30))
        const n = Number(url.searchParams.get("page") ?? 1)
        const slice = items.slice((n - 1) * per, n * per)
        if (n * per >= items.length) return [slice, {}]
        const next = new URL(`http://${req.headers.host}${req.url}`)
        next.searchParams.set("page", String(n + 1))
        return [slice, { link: `<${next.toString()}>; rel="next", <${next.toString()}>; rel="last"` }]
      }
      const sendPage = (items: ReadonlyArray<unknown>, wrap: (slice: ReadonlyArray<unknown>) => unknown = (x) => x) => {
        const [slice, headers] = page(items)
        return send(200, wrap(slice), headers)
      }
      const i = state.faults.findIndex((f) => path.includes(f.path))
      if (i >= 0) {
        const fault = state.faults.splice(i, 1)[0]!.fault
        if (fault === "500") return send(500, { message: "Server Error" })
        if (fault === "garbage") return send(200, "<html>upstream error")
        if (fault === "rate") return send(429, { message: "secondary rate limit" }, { "retry-after": "1" })
        if (fault === "rate-reset") {
          return send(403, { message: "API rate limit exceeded" }, {
            "x-ratelimit-remaining": "0",
            "x-ratelimit-reset": String(Math.floor(Date.now() / 1000) + 1)
          })
        }
        open.add(res)
        return // timeout: never answered
      }
      if (req.headers.authorization !== `Bearer ${state.token}`) return send(401, { message: "Bad credentials" }, { "x-accepted-oauth-scopes": "repo" })
      const body = raw === "" ? {} : JSON.parse(raw)
      if (path === "/user") return send(200, { login: options.login ?? "magi-bot", type: "User" })
      if (!path.startsWith(prefix)) return send(404, { message: "Not Found" })
      const rest = path.slice(prefix.length)
      let m: RegExpExecArray | null
      if (rest === "/pulls" && req.method === "GET") {
        const head = (url.searchParams.get("head") ?? "").split(":")[1]
        return sendPage([...state.pulls.values()].filter((p) => p.state === "open" && (head === undefined || p.head === head)).map(pullJson))
      }
      if (rest === "/pulls" && req.method === "POST") {
        if (sha(bare, body.head) === "") return send(422, { message: "Validation Failed: head not found" })
        if ([...state.pulls.values()].some((p) => p.state === "open" && p.head === body.head)) {
          return send(422, { message: `A pull request already exists for ${options.owner}:${body.head}.` })
        }
        const p: Pull = {
          number: next++,
          head: body.head,
          base: body.base,
          title: body.title,
          body: body.body,
          state: "open",
          merged: false,
          mergeSha: null,
          mergeable: true
        }
        state.pulls.set(p.number, p)
        return send(201, pullJson(p))
      }
      if ((m = /^\/pulls\/(\d+)$/.exec(rest))) {
        const p = state.pulls.get(Number(m[1]))
        return p === undefined ? send(404, { message: "Not Found" }) : send(200, pullJson(p))
      }
      if ((m = /^\/pulls\/(\d+)\/merge$/.exec(rest)) && req.method === "PUT") {
        const p = state.pulls.get(Number(m[1]))
        if (p === undefined) return send(404, { message: "Not Found" })
        if (p.merged) return send(405, { message: "Pull Request is not mergeable" })
        const refusal = state.mergeRefusal
        state.mergeRefusal = null
        const doMerge = () => {
          const base = sha(bare, p.base)
          const head = sha(bare, p.head)
          const tree = git(bare, "merge-tree", "--write-tree", base, head)
          const commit = git(bare, "commit-tree", tree, "-p", base, "-p", head, "-m", String(body.commit_title ?? "merge"))
          git(bare, "update-ref", `refs/heads/${p.base}`, commit, base)
          p.merged = true
          p.state = "closed"
          p.mergeSha = commit
        }
        if (refusal !== null) {
          if (refusal.mergeAnyway === true) doMerge()
          return send(refusal.status, { message: refusal.message })
        }
        if (body.sha !== undefined && body.sha !== sha(bare, p.head)) return send(409, { message: "Head branch was modified. Review and try the merge again." })
        if (p.mergeable === false) return send(405, { message: "Pull Request is not mergeable" })
        doMerge()
        return send(200, { merged: true, sha: p.mergeSha, message: "Pull Request successfully merged" })
      }
      if ((m = /^\/commits\/([0-9a-f]+)\/check-runs$/.exec(rest))) {
        const runs = state.checkRuns.get(m[1]!) ?? []
        return sendPage(runs, (slice) => ({ total_count: runs.length, check_runs: slice }))
      }
      if ((m = /^\/commits\/([0-9a-f]+)\/status$/.exec(rest)))
        return sendPage(state.statuses.get(m[1]!) ?? [], (slice) => ({ state: "pending", statuses: slice }))
      if ((m = /^\/pulls\/(\d+)\/reviews$/.exec(rest))) return sendPage(state.reviews.get(Number(m[1])) ?? [])
      if ((m = /^\/pulls\/(\d+)\/comments$/.exec(rest))) return sendPage(state.reviewComments.get(Number(m[1])) ?? [])
      if ((m = /^\/issues\/(\d+)\/comments$/.exec(rest))) {
        const list = state.issueComments.get(Number(m[1])) ?? []
        state.issueComments.set(Number(m[1]), list)
        if (req.method === "POST") {
          const c = { id: 9000 + list.length, body: body.body, user: { login: options.login ?? "magi-bot", type: "User" } }
          list.push(c)
          return send(201, c)
        }
        return sendPage(list)
      }
      if ((m = /^\/actions\/jobs\/(\d+)\/logs$/.exec(rest))) {
        const log = state.logs.get(Number(m[1]))
        if (log === undefined) return send(404, { message: "Not Found" })
        res.writeHead(200, { "content-type": "text/plain" })
        return res.end(log)
      }
      return send(404, { message: `the stand-in does not serve ${req.method} ${path}` })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  return Object.assign(state, {
    api: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const r of open) r.destroy()
        server.closeAllConnections()
        server.close(() => resolve())
      })
  })
}

/** A check run as GitHub Actions reports one. */
export const actionsRun = (id: number, name: string, status: "queued" | "in_progress" | "completed", conclusion: string | null = null) => ({
  id,
  name,
  status,
  conclusion,
  html_url: `http://github.test/runs/${id}`,
  app: { slug: "github-actions" }
})
