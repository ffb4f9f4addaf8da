/**
 * The `Forge` port over GitHub's REST API (and GitHub Enterprise's, at
 * `[forge] api`). Each operation is a few calls through `GitHubHttp`, which
 * retries and redacts; this module only reads GitHub's shapes into the
 * port's. Lists (checks, statuses, reviews, comments) are read 100 at a
 * time, following the `Link` header to the last page (at most `MAX_PAGES`).
 * Who the token is (`GET /user`) is asked once per process, in a `Cache`
 * that keeps only a success.
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpClient from "@effect/platform/HttpClient"
import type * as CommandExecutor from "@effect/platform/CommandExecutor"
import { Cache, Duration, Effect, Exit, Layer, Ref } from "effect"
import type { Check, ForgeApi, ForgeRepo, JobLog, MergeRequest, Observation, PullRequest, Remark } from "./Forge.js"
import { Forge, ForgeUnavailable, HeadMoved, MARKER, MergeRefused } from "./Forge.js"
import * as ForgeConfig from "./ForgeConfig.js"
import * as ForgeToken from "./ForgeToken.js"
import * as Http from "./GitHubHttp.js"

/** Pages of one list read at most: 5,000 entries, far past any pull request magi opened. */
export const MAX_PAGES = 50

type Json = Record<string, any>
const obj = (v: unknown): Json => (typeof v === "object" && v !== null ? (v as Json) : {})
const arr = (v: unknown): ReadonlyArray<Json> => (Array.isArray(v) ? v.map(obj) : [])
const str = (v: unknown): string => (typeof v === "string" ? v : "")

const repoPath = (repo: ForgeRepo) => `/repos/${encodeURIComponent(repo.owner)}/${encodeURIComponent(repo.name)}`

const pullOf = (p: Json): PullRequest => ({
  number: Number(p.number),
  url: str(p.html_url),
  head: str(obj(p.head).ref),
  base: str(obj(p.base).ref),
  headSha: str(obj(p.head).sha),
  state: p.merged === true || (p.merged_at !== null && p.merged_at !== undefined) ? "merged" : p.state === "closed" ? "closed" : "open"
})

/** A malformed answer that parsed as JSON but is not what GitHub sends. */
const shape = (operation: string, ok: boolean) =>
  ok ? Effect.void : Effect.fail(new ForgeUnavailable({ operation, reason: "the answer is not the shape GitHub sends" }))

const checkRunOf = (c: Json): Check => {
  const status = str(c.status)
  const conclusion = str(c.conclusion)
  const outcome = status !== "completed" ? "pending" : ["success", "neutral", "skipped"].includes(conclusion) ? "success" : "failure"
  return {
    name: str(c.name),
    source: "check_run",
    outcome,
    conclusion: status === "completed" ? conclusion : status,
    // An Actions check run's id is its job's id, whose log can be fetched.
    jobId: str(obj(c.app).slug) === "github-actions" ? Number(c.id) : null,
    url: str(c.html_url)
  }
}

const statusOf = (s: Json): Check => {
  const state = str(s.state)
  return {
    name: str(s.context),
    source: "status",
    outcome: state === "pending" ? "pending" : state === "success" ? "success" : "failure",
    conclusion: state,
    jobId: null,
    url: str(s.target_url)
  }
}

export const make = (options: Http.HttpOptions, env: Record<string, string | undefined>) =>
  Effect.gen(function* () {
    const client = yield* HttpClient.HttpClient
    const executor = yield* Effect.context<CommandExecutor.CommandExecutor>()
    // Resolved once and kept on success only: a failed lookup is tried again next call, never remembered as "no token".
    const found = yield* Ref.make<ForgeToken.ForgeToken | null>(null)
    const token = Effect.flatMap(Ref.get(found), (t) =>
      t !== null ? Effect.succeed(t) : ForgeToken.resolve(env).pipe(Effect.provide(executor), Effect.tap((r) => Ref.set(found, r))))
    const send = Http.make(options, client, token)
    const viewers = yield* Cache.makeWith({
      capacity: 1,
      lookup: (_: "me") =>
        send({ operation: "who the token is", method: "GET", path: "/user" }),
      // A failed look-up is asked again next time, never remembered.
      timeToLive: (exit) => (Exit.isSuccess(exit) ? Duration.infinity : Duration.zero)
    })
    const viewer = viewers.get("me")

    /** Every page of a list: `items` reads one page's entries, null when the page is not the shape GitHub sends. */
    const all = (call: Http.Call, items: (json: unknown) => ReadonlyArray<Json> | null) =>
      Effect.gen(function* () {
        const out: Array<Json> = []
        let path: string | null = call.path
        for (let i = 0; path !== null && i < MAX_PAGES; i++) {
          const a: Http.Answer = yield* send({ ...call, path })
          const got = items(a.json)
          if (got === null) return yield* new ForgeUnavailable({ operation: call.operation, reason: "the answer is not the shape GitHub sends" })
          out.push(...got)
          path = Http.nextPage(a.headers["link"], options.api)
        }
        return out
      })
    const list = (json: unknown) => (Array.isArray(json) ? arr(json) : null)

    const findOpen: ForgeApi["findOpen"] = (repo, head) =>
      send({
        operation: "find the pull request",
        method: "GET",
        path: `${repoPath(repo)}/pulls?state=open&per_page=100&head=${encodeURIComponent(`${repo.owner}:${head}`)}`
      })
        .pipe(Effect.map((a) => arr(a.json).map(pullOf).find((p) => p.head === head) ?? null))

    const open: ForgeApi["open"] = (repo, request) =>
      Effect.gen(function* () {
        const a = yield* send({
          operation: "open the pull request",
          method: "POST",
          path: `${repoPath(repo)}/pulls`,
          body: { title: request.title, head: request.head, base: request.base, body: `${request.body}\n\n${MARKER}` },
          pass: [422],
          needs: ["repo"]
        })
        if (a.status === 422) {
          // "A pull request already exists": a retried POST whose first try got through, or a restart.
          const existing = yield* findOpen(repo, request.head)
          if (existing !== null) return existing
          return yield* new ForgeUnavailable({ operation: "open the pull request", reason: `GitHub refused: ${Http.messageOf(a.json)}` })
        }
        yield* shape("open the pull request", typeof obj(a.json).number === "number")
        return pullOf(obj(a.json))
      })

    const readChecks = (repo: ForgeRepo, sha: string): Effect.Effect<Observation["checks"]> =>
      Effect.all([
        all({ operation: "read the check runs", method: "GET", path: `${repoPath(repo)}/commits/${sha}/check-runs?per_page=100` }, (j) =>
          Array.isArray(obj(j).check_runs) ? arr(obj(j).check_runs) : null),
        all({ operation: "read the commit statuses", method: "GET", path: `${repoPath(repo)}/commits/${sha}/status?per_page=100` }, (j) =>
          Array.isArray(obj(j).statuses) ? arr(obj(j).statuses) : null)
      ]).pipe(
        Effect.map(([runs, statuses]) => [...runs.map(checkRunOf), ...statuses.map(statusOf)]),
        Effect.match({
          // Checks that cannot be read are reported so, never as "none": the loop never merges on them.
          onFailure: (e) => ({ _tag: "Unreadable" as const, reason: e.message }),
          onSuccess: (checks) => ({ _tag: "Read" as const, checks })
        })
      )

    const conversationOf = (repo: ForgeRepo, number: number) =>
      all({ operation: "read the comments", method: "GET", path: `${repoPath(repo)}/issues/${number}/comments?per_page=100` }, list)

    const readRemarks = (repo: ForgeRepo, number: number) =>
      Effect.gen(function* () {
        const me = str(obj((yield* viewer).json).login)
        const [reviews, inline, conversation] = yield* Effect.all([
          all({ operation: "read the reviews", method: "GET", path: `${repoPath(repo)}/pulls/${number}/reviews?per_page=100` }, list),
          all({ operation: "read the review comments", method: "GET", path: `${repoPath(repo)}/pulls/${number}/comments?per_page=100` }, list),
          conversationOf(repo, number)
        ])
        const base = (r: Json, kind: Remark["kind"]): Remark => {
          const user = obj(r.user)
          const body = str(r.body)
          return {
            id: Number(r.id),
            kind,
            author: str(user.login),
            authorKind: str(user.type) === "Bot" ? "bot" : "human",
            mine: (me !== "" && str(user.login) === me) || body.includes(MARKER),
            verdict: kind === "review" ? str(r.state) : "",
            body,
            // REST has no thread resolution; a comment outdated by a later push (no position any more) is over.
            resolved: kind === "review_comment" ? r.position === null || r.position === undefined : false,
            path: kind === "review_comment" ? str(r.path) : null
          }
        }
        return [
          ...reviews.map((r) => base(r, "review")),
          ...inline.map((r) => base(r, "review_comment")),
          ...conversation.map((r) => base(r, "issue_comment"))
        ]
      })

    const readPull = (repo: ForgeRepo, number: number) =>
      Effect.gen(function* () {
        const a = yield* send({ operation: `read pull request #${number}`, method: "GET", path: `${repoPath(repo)}/pulls/${number}` })
        const p = obj(a.json)
        yield* shape(`read pull request #${number}`, typeof p.number === "number" && typeof obj(p.head).sha === "string")
        return p
      })

    const observe: ForgeApi["observe"] = (repo, number) =>
      Effect.gen(function* () {
        const p = yield* readPull(repo, number)
        const pr = pullOf(p)
        const mergeable = p.mergeable === true ? "mergeable" : p.mergeable === false || p.mergeable_state === "dirty" ? "conflicting" : "unknown"
        const [checks, remarks] = yield* Effect.all([readChecks(repo, pr.headSha), readRemarks(repo, number)])
        return { pr, mergeable, checks, remarks } satisfies Observation
      })

    const failingLogs: ForgeApi["failingLogs"] = (repo, checks, max, bytes) =>
      Effect.forEach(
        checks.filter((c) => c.outcome === "failure" && c.jobId !== null).slice(0, max),
        (c) =>
          send({ operation: `read the log of ${c.name}`, method: "GET", path: `${repoPath(repo)}/actions/jobs/${c.jobId}/logs`, text: true }).pipe(
            Effect.map((a): ReadonlyArray<JobLog> => {
              const buf = Buffer.from(a.text, "utf8")
              return [{ name: c.name, jobId: c.jobId!, tail: buf.subarray(Math.max(0, buf.length - bytes)).toString("utf8") }]
            }),
            // A log that cannot be read (expired, no actions:read) leaves the fixer the check's name and link alone.
            // display: job logs shown with a red check; none when they cannot be fetched
            Effect.catchAll((e) => Effect.logWarning(`forge: ${e.message}`).pipe(Effect.as([] as ReadonlyArray<JobLog>)))
          )
      ).pipe(Effect.map((logs) => logs.flat()))

    const comment: ForgeApi["comment"] = (repo, number, body) =>
      Effect.gen(function* () {
        const text = `${body}\n\n${MARKER}`
        // Never a second identical comment: a retried POST, or a restart after one got through, finds the first.
        const there = yield* conversationOf(repo, number)
        if (there.some((c) => str(c.body) === text)) return
        yield* send({
          operation: `comment on #${number}`,
          method: "POST",
          path: `${repoPath(repo)}/issues/${number}/comments`,
          body: { body: text },
          needs: ["repo"]
        })
      })

    const merge: ForgeApi["merge"] = (repo, request: MergeRequest) =>
      Effect.gen(function* () {
        const a = yield* send({
          operation: `merge #${request.number}`,
          method: "PUT",
          path: `${repoPath(repo)}/pulls/${request.number}/merge`,
          body: { merge_method: request.method, commit_title: request.subject, commit_message: request.body, sha: request.expectedHead },
          pass: [403, 405, 409, 422],
          needs: ["repo"]
        })
        if (a.status >= 200 && a.status < 300 && obj(a.json).merged === true) return { sha: str(obj(a.json).sha), afterRefusal: false }
        // Refused, or an answer that is not a merge: what the PR shows now decides.
        const raw = yield* readPull(repo, request.number)
        const now = pullOf(raw)
        if (now.state === "merged") return { sha: str(raw.merge_commit_sha), afterRefusal: true }
        if (now.headSha !== request.expectedHead) return yield* new HeadMoved({ number: request.number, expected: request.expectedHead, actual: now.headSha })
        return yield* new MergeRefused({ number: request.number, status: a.status, reason: Http.messageOf(a.json) || "no reason given" })
      })

    const grant: ForgeApi["grant"] = Effect.gen(function* () {
      const tok = yield* token
      const a = yield* viewer
      return { source: tok.source, login: str(obj(a.json).login), scopes: Http.scopesOf(a.headers, "x-oauth-scopes") }
    })

    return { findOpen, open, observe, failingLogs, comment, merge, grant } satisfies ForgeApi
  })

/** The layer over `api` (options for tests: shorter backoff and timeouts); the token from `env`, or `gh`. */
export const layer = (options: Http.HttpOptions, env: Record<string, string | undefined> = process.env) => Layer.effect(Forge, make(options, env))

/** Over the `[forge] api` of the config read from `cwd` (the process's directory), with the fetch client. */
export const layerConfigured = (cwd: string = process.cwd(), env: Record<string, string | undefined> = process.env) =>
  Layer.unwrapEffect(
    ForgeConfig.load(cwd).pipe(Effect.map((s) => layer(Http.defaultOptions(s.api), env)))
  ).pipe(Layer.provide(FetchHttpClient.layer))

/** With the platform's fetch client. */
export const layerFetch = (options: Http.HttpOptions, env: Record<string, string | undefined> = process.env) =>
  layer(options, env).pipe(Layer.provide(FetchHttpClient.layer))

/** A forge whose every call fails with `reason`: what a process that must serve anyway gets when `[forge]` does not read. */
export const unavailable = (reason: string): ForgeApi => {
  const no = Effect.fail(new ForgeUnavailable({ operation: "reach the forge", reason }))
  return { findOpen: () => no, open: () => no, observe: () => no, failingLogs: () => no, comment: () => no, merge: () => no, grant: no }
}

/**
 * `layerConfigured`, but a config that does not read makes a forge that
 * refuses each call with the reason: `magi web` must serve the page (and
 * every local merge) whatever `[forge]` says, and a pull request's landing
 * records the refusal where the owner reads it.
 */
export const layerConfiguredOrUnavailable = (cwd: string = process.cwd(), env: Record<string, string | undefined> = process.env) =>
  layerConfigured(cwd, env).pipe(Layer.catchAll((e) => Layer.succeed(Forge, unavailable(e.message))))
