/**
 * GitHubForge against the stand-in forge (a real HTTP server on 127.0.0.1
 * over a real bare repository): every operation, every fault, and the token
 * in no error and no log line.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import { Duration, Effect, Exit, Layer, Logger } from "effect"
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { Forge } from "../../src/land/Forge.js"
import * as ForgeConfig from "../../src/land/ForgeConfig.js"
import * as GitHubForge from "../../src/land/GitHubForge.js"
import { nextPage } from "../../src/land/GitHubHttp.js"
import * as StandIn from "../support/forge/StandInForge.js"

const TOKEN = "ghp_s3cr3tTOKENvalue0123456789"
const REPO = { owner: "octo", name: "app" }

let top = ""
let bare = ""
let work = ""
let forge: StandIn.StandIn

const sh = (cwd: string, ...args: Array<string>) =>
  execFileSync("git", args, {
    cwd,
    encoding: "utf8",
    env: { ...process.env, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@x", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@x" }
  }).trim()

beforeEach(async () => {
  top = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "magi-forge-"))
  bare = NodePath.join(top, "remote.git")
  work = NodePath.join(top, "work")
  sh(top, "init", "-q", "--bare", "-b", "main", bare)
  sh(top, "init", "-q", "-b", "main", work)
  NodeFs.writeFileSync(NodePath.join(work, "a.txt"), "one\n")
  sh(work, "add", ".")
  sh(work, "commit", "-qm", "first")
  sh(work, "remote", "add", "origin", bare)
  sh(work, "push", "-q", "origin", "main")
  sh(work, "checkout", "-qb", "magi/x")
  NodeFs.writeFileSync(NodePath.join(work, "b.txt"), "two\n")
  sh(work, "add", ".")
  sh(work, "commit", "-qm", "second")
  sh(work, "push", "-q", "origin", "magi/x")
  forge = await StandIn.start({ bare, ...REPO, token: TOKEN })
})

afterEach(async () => {
  await forge.close()
  NodeFs.rmSync(top, { recursive: true, force: true })
})

const logs: Array<string> = []
const run = <A, E>(effect: Effect.Effect<A, E, Forge>, env: Record<string, string | undefined> = { GH_TOKEN: TOKEN, PATH: "/nonexistent" }) => {
  const options = { api: forge.api, retryBase: Duration.millis(20), retries: 3, timeout: Duration.millis(400), maxRateWait: Duration.seconds(5) }
  const layer = GitHubForge.layer(options, env).pipe(Layer.provide(Layer.merge(FetchHttpClient.layer, NodeContext.layer)))
  const logger = Logger.replace(Logger.defaultLogger, Logger.make(({ message }) => void logs.push(String(message))))
  return Effect.runPromiseExit(effect.pipe(Effect.provide(Layer.merge(layer, logger))))
}
const ok = async <A, E>(effect: Effect.Effect<A, E, Forge>) => {
  const exit = await run(effect)
  if (Exit.isFailure(exit)) throw new Error(`failed: ${JSON.stringify(exit.cause)}`)
  return exit.value
}
const failure = async <A, E>(effect: Effect.Effect<A, E, Forge>, env?: Record<string, string | undefined>) => {
  const exit = await run(effect, env)
  if (Exit.isSuccess(exit)) throw new Error("succeeded")
  const text = JSON.stringify(exit.cause) + String(exit.cause)
  expect(text).not.toContain(TOKEN)
  return exit.cause._tag === "Fail" ? (exit.cause.error as { _tag: string; message: string }) : { _tag: exit.cause._tag, message: String(exit.cause) }
}
const head = () => sh(work, "rev-parse", "HEAD")
const openPr = Effect.flatMap(Forge, (f) => f.open(REPO, { head: "magi/x", base: "main", title: "Add b", body: "why" }))

afterEach(() => {
  for (const line of logs) expect(line).not.toContain(TOKEN)
  logs.length = 0
})

describe("GitHubForge against the stand-in", () => {
  it("opens one pull request, finds it again, and a second open returns the same one", async () => {
    expect(await ok(Effect.flatMap(Forge, (f) => f.findOpen(REPO, "magi/x")))).toBeNull()
    const pr = await ok(openPr)
    expect(pr).toMatchObject({ number: 1, head: "magi/x", base: "main", headSha: head(), state: "open" })
    expect(await ok(Effect.flatMap(Forge, (f) => f.findOpen(REPO, "magi/x")))).toMatchObject({ number: 1 })
    expect(await ok(openPr)).toMatchObject({ number: 1 })
    expect(forge.pulls.size).toBe(1)
  })

  it("observes checks pending, then red with the failing job's log tail, then green, statuses included", async () => {
    await ok(openPr)
    const sha = head()
    forge.checkRuns.set(sha, [StandIn.actionsRun(11, "test", "in_progress")])
    forge.statuses.set(sha, [{ context: "ci/lint", state: "success", target_url: "" }])
    const o1 = await ok(Effect.flatMap(Forge, (f) => f.observe(REPO, 1)))
    expect(o1.mergeable).toBe("mergeable")
    expect(o1.checks).toEqual({
      _tag: "Read",
      checks: [
        { name: "test", source: "check_run", outcome: "pending", conclusion: "in_progress", jobId: 11, url: "http://github.test/runs/11" },
        { name: "ci/lint", source: "status", outcome: "success", conclusion: "success", jobId: null, url: "" }
      ]
    })
    forge.checkRuns.set(sha, [StandIn.actionsRun(11, "test", "completed", "failure")])
    forge.logs.set(11, "x".repeat(10_000) + "\nError: expected 2 to be 3\n")
    const o2 = await ok(Effect.flatMap(Forge, (f) => f.observe(REPO, 1)))
    const failing = o2.checks._tag === "Read" ? o2.checks.checks.filter((c) => c.outcome === "failure") : []
    expect(failing.map((c) => c.name)).toEqual(["test"])
    const tails = await ok(Effect.flatMap(Forge, (f) => f.failingLogs(REPO, failing, 3, 4096)))
    expect(tails).toHaveLength(1)
    expect(tails[0]!.tail.length).toBe(4096)
    expect(tails[0]!.tail.endsWith("Error: expected 2 to be 3\n")).toBe(true)
  })

  it("reads reviews and comments with bot/human, resolved and magi's own", async () => {
    await ok(openPr)
    forge.reviewComments.set(1, [
      { id: 1, body: "rename this", user: { login: "alice", type: "User" }, position: 3, path: "b.txt" },
      { id: 2, body: "old note", user: { login: "alice", type: "User" }, position: null, path: "b.txt" }
    ])
    forge.reviews.set(1, [{ id: 3, body: "", state: "CHANGES_REQUESTED", user: { login: "bob", type: "User" } }])
    forge.issueComments.set(1, [{ id: 4, body: "coverage 90%", user: { login: "codecov[bot]", type: "Bot" } }])
    await ok(Effect.flatMap(Forge, (f) => f.comment(REPO, 1, "magi: round 1")))
    const o = await ok(Effect.flatMap(Forge, (f) => f.observe(REPO, 1)))
    expect(o.remarks.map((r) => [r.kind, r.author, r.authorKind, r.resolved, r.mine, r.verdict])).toEqual([
      ["review", "bob", "human", false, false, "CHANGES_REQUESTED"],
      ["review_comment", "alice", "human", false, false, ""],
      ["review_comment", "alice", "human", true, false, ""],
      ["issue_comment", "codecov[bot]", "bot", false, false, ""],
      ["issue_comment", "magi-bot", "human", false, true, ""]
    ])
  })

  it("sees a conflict, and a PR merged or closed by someone else", async () => {
    await ok(openPr)
    forge.pulls.get(1)!.mergeable = false
    expect((await ok(Effect.flatMap(Forge, (f) => f.observe(REPO, 1)))).mergeable).toBe("conflicting")
    forge.pulls.get(1)!.state = "closed"
    expect((await ok(Effect.flatMap(Forge, (f) => f.observe(REPO, 1)))).pr.state).toBe("closed")
  })

  it("merges with the explicit subject into the bare remote, on the expected head only", async () => {
    await ok(openPr)
    const merge = (expectedHead: string) =>
      Effect.flatMap(Forge, (f) => f.merge(REPO, { number: 1, method: "merge", subject: "Add b (#1)", body: "", expectedHead }))
    const moved = await failure(merge("0".repeat(40)))
    expect(moved._tag).toBe("HeadMoved")
    expect(sh(top, "--git-dir", bare, "log", "-1", "--format=%s", "main")).toBe("first")
    const merged = await ok(merge(head()))
    expect(merged.afterRefusal).toBe(false)
    expect(sh(top, "--git-dir", bare, "log", "-1", "--format=%s", "main")).toBe("Add b (#1)")
    expect(sh(top, "--git-dir", bare, "rev-parse", "main")).toBe(merged.sha)
  })

  it("reports a branch-protection refusal as such, and a refusal the PR shows merged counts as merged", async () => {
    await ok(openPr)
    const merge = Effect.flatMap(Forge, (f) => f.merge(REPO, { number: 1, method: "squash", subject: "Add b", body: "", expectedHead: head() }))
    forge.mergeRefusal = { status: 405, message: 'Required status check "test" is expected.' }
    const refused = await failure(merge)
    expect(refused._tag).toBe("MergeRefused")
    expect(refused.message).toContain("branch protection")
    expect(refused.message).toContain("Required status check")
    forge.mergeRefusal = { status: 409, message: "conflict", mergeAnyway: true }
    expect(await ok(merge)).toMatchObject({ afterRefusal: true })
  })

  it.each<[StandIn.Fault]>([["500"], ["garbage"], ["timeout"], ["rate"], ["rate-reset"]])("retries past one %s and says so", async (fault) => {
    await ok(openPr)
    forge.faults.push({ path: "/pulls/1", fault })
    const o = await ok(Effect.flatMap(Forge, (f) => f.observe(REPO, 1)))
    expect(o.pr.number).toBe(1)
    expect(logs.some((l) => l.includes("retrying with backoff"))).toBe(true)
    if (fault.startsWith("rate")) expect(logs.some((l) => l.includes("rate limited"))).toBe(true)
  }, 20_000)

  it("gives up on a forge that keeps failing with ForgeUnavailable, and checks it cannot read are Unreadable, not none", async () => {
    await ok(openPr)
    for (let i = 0; i < 5; i++) forge.faults.push({ path: "/pulls/1", fault: "500" })
    expect((await failure(Effect.flatMap(Forge, (f) => f.observe(REPO, 1))))._tag).toBe("ForgeUnavailable")
    forge.faults.length = 0
    for (let i = 0; i < 5; i++) forge.faults.push({ path: "/check-runs", fault: "garbage" })
    const o = await ok(Effect.flatMap(Forge, (f) => f.observe(REPO, 1)))
    expect(o.checks._tag).toBe("Unreadable")
  }, 20_000)

  it("a refused token says which variable and which scope, never the token", async () => {
    forge.scopes = "read:org"
    const refused = await failure(openPr, { GITHUB_TOKEN: "ghp_wrongwrongwrong", PATH: "/nonexistent" })
    expect(refused._tag).toBe("ForgeAuthError")
    expect(refused.message).toContain("GITHUB_TOKEN")
    expect(refused.message).toContain("repo")
    expect(refused.message).not.toContain("ghp_wrong")
    const missing = await failure(openPr, { PATH: "/nonexistent" })
    expect(missing._tag).toBe("ForgeTokenMissing")
  })

  it("reads the token's grant: its source, login and scopes", async () => {
    expect(await ok(Effect.flatMap(Forge, (f) => f.grant))).toEqual({ source: "GH_TOKEN", login: "magi-bot", scopes: ["repo", "workflow"] })
    expect(forge.requests.every((r) => !r.includes(TOKEN))).toBe(true)
  })

  it("reads every page of a long list (the stand-in pages at 100, with a Link header)", async () => {
    await ok(openPr)
    const sha = head()
    forge.checkRuns.set(sha, Array.from({ length: 230 }, (_, i) => StandIn.actionsRun(100 + i, `job-${i}`, "completed", i === 229 ? "failure" : "success")))
    forge.reviewComments.set(
      1,
      Array.from({ length: 150 }, (_, i) => ({ id: i, body: `note ${i}`, user: { login: "alice", type: "User" }, position: 1, path: "b.txt" }))
    )
    const o = await ok(Effect.flatMap(Forge, (f) => f.observe(REPO, 1)))
    const checks = o.checks._tag === "Read" ? o.checks.checks : []
    expect(checks).toHaveLength(230)
    expect(checks.filter((c) => c.outcome === "failure").map((c) => c.name)).toEqual(["job-229"])
    expect(o.remarks.filter((r) => r.kind === "review_comment")).toHaveLength(150)
    expect(forge.requests.filter((r) => r.endsWith("/check-runs"))).toHaveLength(3)
  })

  it("asks who the token is once per process, and never writes a second identical comment", async () => {
    await ok(Effect.gen(function* () {
      const f = yield* Forge
      yield* f.open(REPO, { head: "magi/x", base: "main", title: "Add b", body: "why" })
      yield* f.observe(REPO, 1)
      yield* f.observe(REPO, 1)
      yield* f.comment(REPO, 1, "magi stopped: test still fails")
      yield* f.comment(REPO, 1, "magi stopped: test still fails")
      yield* f.comment(REPO, 1, "magi stopped: lint fails too")
    }))
    expect(forge.requests.filter((r) => r === "GET /user")).toHaveLength(1)
    expect((forge.issueComments.get(1) ?? []).map((c) => String(c.body).split("\n")[0])).toEqual([
      "magi stopped: test still fails",
      "magi stopped: lint fails too"
    ])
  })
})

describe("pages and [forge] api, pure", () => {
  it.each<[string | undefined, string, string | null]>([
    [undefined, "https://api.github.com", null],
    [
      '<https://api.github.com/repos/o/r/pulls/1/comments?per_page=100&page=2>; rel="next", <https://api.github.com/x?page=9>; rel="last"',
      "https://api.github.com",
      "/repos/o/r/pulls/1/comments?per_page=100&page=2"
    ],
    ['<https://ghe.example/api/v3/repos/o/r/issues/1/comments?page=3>; rel="next"', "https://ghe.example/api/v3", "/repos/o/r/issues/1/comments?page=3"],
    ['<https://api.github.com/x?page=1>; rel="prev"', "https://api.github.com", null],
    ['<https://elsewhere.example/repos/o/r?page=2>; rel="next"', "https://ghe.example/api/v3", null]
  ])("Link %s on %s: next is %s", (link, api, next) => {
    expect(nextPage(link, api)).toBe(next)
  })

  it.each<[Record<string, unknown>, string | null]>([
    [{}, "https://api.github.com"],
    [{ forge: { api: "https://ghe.example/api/v3/" } }, "https://ghe.example/api/v3"],
    [{ forge: { api: "ghe.example" } }, null],
    [{ forge: { api: 3 } }, null]
  ])("[forge] %j reads as %s", (table, api) => {
    const exit = Effect.runSyncExit(ForgeConfig.settingsOf(table, ["magi.toml"]))
    if (api === null) {
      expect(Exit.isFailure(exit)).toBe(true)
      expect(String(exit._tag === "Failure" ? exit.cause : "")).toContain("forge.api")
    } else expect(exit).toEqual(Exit.succeed({ api }))
  })
})
