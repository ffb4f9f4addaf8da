/**
 * The land loop in pull request mode, in process, over the stand-in forge
 * (a real HTTP server on 127.0.0.1) and a real bare remote, with a real
 * `command` agent as the fixer. Waits run in virtual time (TestClock): the
 * test moves the clock 30 s at a time and changes what the forge reports.
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import { Duration, Effect, Fiber, Layer, TestClock, TestContext } from "effect"
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { runsLayer } from "../../src/app/Layers.js"
import * as GitHubForge from "../../src/land/GitHubForge.js"
import { LandDriver } from "../../src/land/LandDriver.js"
import { MagiHome } from "../../src/platform/MagiHome.js"
import { answerWithText } from "../../src/questions/Answers.js"
import type { Run } from "../../src/runs/Runs.js"
import * as StandIn from "../support/forge/StandInForge.js"
import { sampleRun } from "../runSupport.js"

const TOKEN = "ghp_landLOOPsecret0123456789abcdef"
const ID = "20261204-180000-cd34"
const dirs: Array<string> = []
const forges: Array<StandIn.StandIn> = []
afterEach(async () => {
  for (const f of forges.splice(0)) await f.close()
  for (const d of dirs.splice(0)) NodeFs.rmSync(d, { recursive: true, force: true })
})

const git = (cwd: string, ...args: Array<string>) =>
  execFileSync("git", ["-c", "user.email=t@t", "-c", "user.name=t", ...args], { cwd, encoding: "utf8", stdio: "pipe" }).trim()

/** A repository whose `origin` is a GitHub URL rewritten to a bare remote, a ready run's worktree, and the stand-in. */
const setup = async (graph: string) => {
  const top = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "magi-prland-")))
  dirs.push(top)
  const bare = NodePath.join(top, "remote.git")
  const repo = NodePath.join(top, "repo")
  const home = NodePath.join(top, "home")
  const prompts = NodePath.join(top, "prompts")
  NodeFs.mkdirSync(prompts)
  git(top, "init", "-q", "--bare", "-b", "main", bare)
  // Every push the remote receives, one line each: "no second push" is counted here.
  NodeFs.writeFileSync(NodePath.join(bare, "hooks", "post-receive"), `#!/bin/sh\ncat >> ${JSON.stringify(NodePath.join(top, "pushes"))}\n`, { mode: 0o755 })
  NodeFs.mkdirSync(repo)
  git(repo, "init", "-q", "-b", "main")
  // The fixer: keeps each prompt it is given and commits one line per turn.
  const fixer = `cp "$1" ${
    JSON.stringify(prompts)
  }/$(date +%s%N); echo fixed >> fix.txt; git add fix.txt; git -c user.email=f@f -c user.name=f commit -qm "Fix the check"`
  NodeFs.writeFileSync(
    NodePath.join(repo, "magi.toml"),
    `[graph]\n${graph}\n\n[agents.fake]\nkind = "command"\ncommand = ["sh", "-c", ${JSON.stringify(fixer)}, "fixer", "{prompt_file}"]\n`
  )
  git(repo, "add", ".")
  git(repo, "commit", "-qm", "init")
  git(repo, "remote", "add", "origin", "https://github.test/octo/app.git")
  git(repo, "config", `url.${bare}.insteadOf`, "https://github.test/octo/app.git")
  git(repo, "push", "-q", "origin", "main")
  NodeFs.rmSync(NodePath.join(top, "pushes"), { force: true })
  const base = git(repo, "rev-parse", "HEAD")
  const worktree = NodePath.join(top, "wt")
  git(repo, "worktree", "add", "-q", "-b", "magi/cd34", worktree, base)
  NodeFs.writeFileSync(NodePath.join(worktree, "cache.ts"), "export const cache = 1\n")
  git(worktree, "add", ".")
  git(worktree, "commit", "-qm", "Add a cache")
  const run = sampleRun(ID, { status: "ready", repo, base: "main", base_commit: base, worktree, branch: "magi/cd34" })
  NodeFs.mkdirSync(NodePath.join(home, "runs", ID), { recursive: true })
  NodeFs.writeFileSync(NodePath.join(home, "runs", ID, "run.json"), JSON.stringify(run, null, 2))
  const forge = await StandIn.start({ bare, owner: "octo", name: "app", token: TOKEN })
  forges.push(forge)
  const options = { api: forge.api, retryBase: Duration.seconds(1), retries: 2, timeout: Duration.hours(10), maxRateWait: Duration.minutes(1) }
  const layer = LandDriver.Default.pipe(
    Layer.provide(GitHubForge.layer(options, { GH_TOKEN: TOKEN, PATH: "/nonexistent" }).pipe(Layer.provide(FetchHttpClient.layer))),
    Layer.provideMerge(runsLayer(MagiHome.at(home)))
  )
  const record = (): Run => JSON.parse(NodeFs.readFileSync(NodePath.join(home, "runs", ID, "run.json"), "utf8"))
  const pushes = () => (NodeFs.existsSync(NodePath.join(top, "pushes")) ? NodeFs.readFileSync(NodePath.join(top, "pushes"), "utf8").trim().split("\n") : [])
  const remoteTip = (ref: string) => git(top, "--git-dir", bare, "rev-parse", ref)
  const promptsGiven = () => NodeFs.readdirSync(prompts).sort().map((f) => NodeFs.readFileSync(NodePath.join(prompts, f), "utf8"))
  return { top, bare, repo, home, worktree, forge, layer, record, pushes, remoteTip, promptsGiven }
}

type World = Awaited<ReturnType<typeof setup>>

const real = (ms: number) => Effect.promise(() => new Promise((r) => setTimeout(r, ms)))

/**
 * `drive` in a fiber; each real 100 ms the forge may be changed by `tick`
 * (given the record), and the virtual clock moves 30 s. Done when the drive
 * returns; the clock moves at most `limit` times.
 */
const driveWith = (w: World, tick: (run: Run) => void, limit = 400) =>
  Effect.gen(function* () {
    const driver = yield* LandDriver
    const fiber = yield* Effect.fork(driver.drive(ID))
    for (let i = 0; i < limit; i++) {
      yield* real(100)
      const done = yield* Fiber.poll(fiber)
      if (done._tag === "Some") break
      tick(w.record())
      yield* TestClock.adjust(Duration.seconds(30))
    }
    return yield* Fiber.join(fiber)
  })

// The drive's context is the whole runs layer (the fixer's turn, the file system): given here as one.
const run = <A, E>(w: World, effect: Effect.Effect<A, E, any>) =>
  Effect.runPromise(effect.pipe(Effect.provide(Layer.merge(w.layer, TestContext.TestContext)), Effect.scoped) as Effect.Effect<A, E, never>)

const green = (w: World, sha: string) => w.forge.checkRuns.set(sha, [StandIn.actionsRun(20, "test", "completed", "success")])

describe("pull request mode: the land loop", () => {
  it("pushes, opens one PR, fixes a red check with its log's tail, waits for the new head's checks, asks, and merges with the subject", async () => {
    const w = await setup(`merge = "pr"\nmerge_style = "squash"`)
    const first = git(w.worktree, "rev-parse", "HEAD")
    w.forge.checkRuns.set(first, [StandIn.actionsRun(11, "test", "completed", "failure")])
    w.forge.logs.set(11, "x".repeat(9000) + "\nError: expected 2 to be 3\n")
    const asked = await run(
      w,
      driveWith(w, (r) => {
        const head = r.landing?.pr?.head_sha
        // The fixer's head gets no checks for a while (believed absent only after 3 min), then green.
        if (head !== undefined && head !== first && r.landing!.loop!.checks_missing_since !== null) green(w, head)
      })
    )
    expect(asked.status).toBe("ready")
    const l = asked.landing!
    expect(l.question).toBeDefined()
    expect(l.pr).toMatchObject({ number: 1 })
    const fixed = l.pr!.head_sha
    expect(fixed).not.toBe(first)
    expect(w.remoteTip("refs/heads/magi/cd34")).toBe(fixed)
    expect(l.rounds.map((x) => x.action)).toEqual(["fix: test", "asked the owner to approve the merge"])
    expect(l.rounds[0]!.fix_commit).toBe(fixed)
    // The fixer saw the end of the failing log, not all of it.
    const [prompt] = w.promptsGiven()
    expect(prompt).toContain("Error: expected 2 to be 3")
    expect(prompt!.length).toBeLessThan(6000)
    expect(w.remoteTip("refs/heads/main")).toBe(git(w.repo, "rev-parse", "main"))

    await run(w, answerWithText(l.question!, "merge"))
    const merged = await run(w, driveWith(w, () => {}))
    expect(merged.status, JSON.stringify(merged.landing)).toBe("merged")
    expect(git(w.top, "--git-dir", w.bare, "log", "-1", "--format=%s", "main")).toBe("Add a cache (magi cd34)")
    expect(w.forge.requests.filter((r) => r === "POST /repos/octo/app/pulls")).toHaveLength(1)
    expect(w.forge.requests.filter((r) => r.startsWith("PUT "))).toHaveLength(1)
    expect(w.pushes()).toHaveLength(2)
    // Folded: the worktree is gone, the record stays.
    expect(NodeFs.existsSync(w.worktree)).toBe(false)
    expect(JSON.stringify(merged)).not.toContain(TOKEN)
  }, 120_000)

  it("a drive interrupted mid-wait resumes at the same observation: no second PR, push or question", async () => {
    const w = await setup(`merge = "pr"\nland_approval = false`)
    const head = git(w.worktree, "rev-parse", "HEAD")
    w.forge.checkRuns.set(head, [StandIn.actionsRun(11, "test", "in_progress")])
    await run(
      w,
      Effect.gen(function* () {
        const driver = yield* LandDriver
        const fiber = yield* Effect.fork(driver.drive(ID))
        for (let i = 0; i < 100 && w.record().landing?.loop?.last_seen.includes("1 pending") !== true; i++) yield* real(100)
        yield* Fiber.interrupt(fiber)
      })
    )
    expect(w.record().landing!.step).toBe("loop")
    green(w, head)
    const merged = await run(w, driveWith(w, () => {}))
    expect(merged.status, JSON.stringify(merged.landing)).toBe("merged")
    expect(w.forge.requests.filter((r) => r === "POST /repos/octo/app/pulls")).toHaveLength(1)
    expect(w.pushes()).toHaveLength(1)
    expect(merged.landing!.rounds.map((x) => x.action)).toEqual(["merge"])
  }, 120_000)

  it("a conflict with the base is rebased onto the remote's base and pushed with a lease", async () => {
    const w = await setup(`merge = "pr"\nland_approval = false`)
    const first = git(w.worktree, "rev-parse", "HEAD")
    NodeFs.writeFileSync(NodePath.join(w.repo, "other.txt"), "moved on\n")
    git(w.repo, "add", "other.txt")
    git(w.repo, "commit", "-qm", "Base moves on")
    git(w.repo, "push", "-q", "origin", "main")
    const moved = w.remoteTip("refs/heads/main")
    // No checks at first (a wait), then the forge finds the conflict; the rebased head is clean and green.
    const merged = await run(
      w,
      driveWith(w, (r) => {
        const pull = w.forge.pulls.get(1)
        const head = r.landing?.pr?.head_sha
        if (pull !== undefined) pull.mergeable = head === first ? false : true
        if (head !== undefined && head !== first) green(w, head)
      })
    )
    expect(merged.status, JSON.stringify(merged.landing)).toBe("merged")
    expect(merged.landing!.rounds.map((x) => x.action)).toEqual(["rebase onto the remote's base", "merge"])
    const rebased = merged.landing!.pr!.head_sha
    expect(git(w.top, "--git-dir", w.bare, "merge-base", "--is-ancestor", moved, rebased)).toBe("")
  }, 120_000)

  it("checks pending past land_wait: one comment saying what still waits, and the PR left open", async () => {
    const w = await setup(`merge = "pr"\nland_wait = 2`)
    const head = git(w.worktree, "rev-parse", "HEAD")
    w.forge.checkRuns.set(head, [StandIn.actionsRun(11, "slow-e2e", "in_progress")])
    const left = await run(w, driveWith(w, () => {}))
    expect(left.status).toBe("ready")
    expect(left.landing!.stopped, left.landing!.stopped).toMatch(/^left open: checks still pending after \d+ min: slow-e2e/)
    const comments = w.forge.issueComments.get(1) ?? []
    expect(comments).toHaveLength(1)
    expect(String(comments[0]!.body)).toContain("slow-e2e")
    expect(w.forge.pulls.get(1)!.state).toBe("open")
    expect(w.forge.requests.filter((r) => r.startsWith("PUT "))).toHaveLength(0)
  }, 120_000)

  it("out of land_rounds while red: a comment naming the failing check, never a merge", async () => {
    const w = await setup(`merge = "pr"\nland_rounds = 1`)
    const red = (sha: string) => w.forge.checkRuns.set(sha, [StandIn.actionsRun(11, "test", "completed", "failure")])
    red(git(w.worktree, "rev-parse", "HEAD"))
    const left = await run(
      w,
      driveWith(w, (r) => {
        const h = r.landing?.pr?.head_sha
        if (h !== undefined) red(h)
      })
    )
    expect(left.status).toBe("ready")
    expect(left.landing!.stopped).toContain("still failing: test (failure)")
    expect(w.forge.issueComments.get(1)).toHaveLength(1)
    expect(w.forge.requests.filter((r) => r.startsWith("PUT "))).toHaveLength(0)
  }, 120_000)
})
