/**
 * The verification end to end (issue 30) with a `command` agent that
 * implements, reviews, fixes and resolves conflicts as a model would,
 * through the built magi: a solo run synced, reviewed, fixed, gated and
 * ended `ready`, `blocked` or `already_in_base`.
 */
import { describe, expect, it } from "vitest"
import { execFileSync, spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { tempDirSync, until } from "../support.js"
import { MAGI, magi, repoWithAgent, serveDaemon } from "../runSupport.js"
import { RUN_SCHEMA } from "../../src/runs/Runs.js"

const AGENT = NodePath.resolve("test/fixtures/review-agent.mjs")
const ASK_AGENT = NodePath.resolve("test/fixtures/ask-agent.mjs")

const setup = (config: string) => {
  const dir = tempDirSync()
  const repo = NodePath.join(dir, "repo")
  NodeFs.mkdirSync(repo)
  const git = (...args: string[]) => execFileSync("git", ["-c", "user.email=t@t", "-c", "user.name=t", ...args], { cwd: repo, encoding: "utf8" }).trim()
  git("init", "-q", "-b", "trunk")
  NodeFs.writeFileSync(NodePath.join(repo, "shared.txt"), "the first line\n")
  NodeFs.writeFileSync(NodePath.join(repo, "magi.toml"), `[agents.bot]\nkind = "command"\ncommand = ${JSON.stringify(["node", AGENT, "{label}"])}\n\n${config}`)
  git("add", ".")
  git("commit", "-q", "-m", "init")
  const env: Record<string, string> = { MAGI_HOME: NodePath.join(dir, "home"), REVIEW_DIR: dir }
  const calls = () => (NodeFs.existsSync(NodePath.join(dir, "calls")) ? NodeFs.readFileSync(NodePath.join(dir, "calls"), "utf8").trim().split("\n") : [])
  const record = () => {
    const [id] = NodeFs.readdirSync(NodePath.join(env.MAGI_HOME!, "runs")).filter((f) => /^\d{8}-/.test(f))
    return JSON.parse(NodeFs.readFileSync(NodePath.join(env.MAGI_HOME!, "runs", id!, "run.json"), "utf8"))
  }
  return { dir, repo, env, git, calls, record, magi: (over: Record<string, string>, ...args: string[]) => magi(repo, { ...env, ...over }, ...args) }
}

describe("the verification", () => {
  it("takes a solo run with nothing configured to done, as before", { timeout: 120_000 }, () => {
    const t = setup("")
    const ran = t.magi({}, "run", "add the feature")
    expect(ran.status, ran.stderr).toBe(0)
    expect(t.record().status).toBe("done")
    expect(t.record().verification).toBeUndefined()
  })

  it("fixes a blocking finding, reviews again clean, gates and ends ready", { timeout: 180_000 }, () => {
    const t = setup('[graph]\nreviewers = 1\n\n[verify]\ngate = ["test -f fixed.txt"]\n')
    const ran = t.magi({ REVIEW_MODE: "major-once" }, "run", "add the feature")
    expect(ran.status, ran.stderr).toBe(0)
    expect(ran.stderr).toContain("ready on branch")
    const run = t.record()
    expect(run.schema).toBe(RUN_SCHEMA)
    expect(run.status).toBe("ready")
    const v = run.verification
    expect(v.step).toBe("ready")
    expect(v.rounds.length).toBe(2)
    const [first, second] = v.rounds
    expect(first.reviews[0].findings.map((f: { id: string; severity: string }) => [f.id, f.severity])).toEqual([["R1-1-1", "major"], ["R1-1-2", "nit"]])
    expect(first.reviews[0].findings[0].reply.kind).toBe("fixed")
    expect(first.fixed_to).toBe(second.head)
    expect(second.reviews[0].verdict).toBe("approve")
    expect(v.gates.map((g: { results: ReadonlyArray<{ exit: number }> }) => g.results.map((r) => r.exit))).toEqual([[0]])
    expect(v.gates[0].head).toBe(second.head)
    expect(t.calls()).toEqual(["impl impl", "review-1 review", "impl fix", "review-1 review"])
    const shown = t.magi({}, "show", run.id)
    expect(shown.status, shown.stderr).toBe(0)
    expect(shown.stdout).toContain("verification: ready")
    expect(shown.stdout).toContain("R1-1-1 [major] feature.txt:1 feature.txt is not fixed — fixed")
    expect(shown.stdout).toContain("R1-1-2 [nit] feature.txt:1 a nit — fixed")
    expect(shown.stdout).toMatch(/gate `test -f fixed.txt`: exit 0/)
    // The reviewer's worktree is gone; the branch carries the fix.
    expect(t.git("log", "--format=%s", `trunk..${run.branch}`).split("\n")).toEqual(["Fix the review's findings", "Add feature.txt"])
  })

  it("gives a red gate with output a fix round and gates again", { timeout: 180_000 }, () => {
    const t = setup('[verify]\ngate = ["test -f gate.txt || (echo gate.txt is missing; exit 1)"]\n')
    const ran = t.magi({}, "run", "add the feature")
    expect(ran.status, ran.stderr).toBe(0)
    const v = t.record().verification
    expect(t.record().status).toBe("ready")
    expect(v.gates.map((g: { results: ReadonlyArray<{ exit: number; tail: string }> }) => g.results[0]!.exit)).toEqual([1, 0])
    expect(v.gates[0].results[0].tail).toContain("gate.txt is missing")
    expect(v.gate_fix_rounds).toBe(1)
    expect(t.calls()).toEqual(["impl impl", "impl gatefix"])
  })

  it("blocks on a gate that hangs past its timeout, without a fix round", { timeout: 180_000 }, () => {
    const t = setup('[verify]\ngate = ["sleep 60"]\ngate_timeout = 1\n')
    const ran = t.magi({}, "run", "add the feature")
    expect(ran.status).not.toBe(0)
    const run = t.record()
    expect(run.status).toBe("blocked")
    expect(run.reason).toContain("timed out")
    expect(t.calls()).toEqual(["impl impl"])
  })

  it("rebases onto a base that moved, has the seat fix the conflict in its session, and ends ready", { timeout: 180_000 }, () => {
    const t = setup('[verify]\ngate = ["true"]\n')
    const ran = t.magi({ REVIEW_IMPL: "conflict" }, "run", "change shared.txt")
    expect(ran.status, ran.stderr).toBe(0)
    const run = t.record()
    expect(run.status).toBe("ready")
    // One fix round, and nothing left conflicted after it.
    expect(run.verification.sync).toMatchObject({ attempts: 1, rebase_fix_rounds: 1, conflicts: [] })
    expect(run.verification.sync.onto).toBe(t.git("rev-parse", "trunk"))
    expect(t.calls()).toEqual(["impl impl", "impl rebasefix"])
    // The branch is on the base's tip now, one commit ahead.
    expect(t.git("rev-list", "--count", `trunk..${run.branch}`)).toBe("1")
    expect(t.git("merge-base", "trunk", run.branch)).toBe(t.git("rev-parse", "trunk"))
  })

  it("ends already_in_base when the base already has the change", { timeout: 180_000 }, () => {
    const t = setup('[verify]\ngate = ["true"]\n')
    const ran = t.magi({ REVIEW_IMPL: "inbase" }, "run", "change shared.txt")
    expect(ran.status, ran.stderr).toBe(0)
    expect(ran.stderr).toContain("already in base")
    const run = t.record()
    expect(run.status).toBe("already_in_base")
    expect(run.verification.step).toBe("already_in_base")
    expect(run.verification.gates).toEqual([])
  })

  it("counts a reviewer that answers prose twice as unanswered, and blocks once the fixer makes no difference", { timeout: 180_000 }, () => {
    const t = setup("[graph]\nreviewers = 1\nreview_rounds = 1\n")
    const ran = t.magi({ REVIEW_MODE: "prose" }, "run", "add the feature")
    expect(ran.status).not.toBe(0)
    const run = t.record()
    expect(run.status).toBe("blocked")
    const r = run.verification.rounds[0].reviews[0]
    expect(r).toMatchObject({ status: "unanswered", retries: 1 })
    expect(r.failure).toContain("no fenced ```json block")
    expect(run.reason).toContain("review-1 did not answer")
    expect(t.calls()).toEqual(["impl impl", "review-1 review", "review-1 review"])
  })

  it("resumes after a kill -9 mid-review at the review, without implementing again", { timeout: 180_000 }, async () => {
    const t = setup('[graph]\nreviewers = 1\n\n[verify]\ngate = ["true"]\n')
    const hang = NodePath.join(t.dir, "hang-review")
    NodeFs.writeFileSync(hang, "")
    const child = spawn(process.execPath, [MAGI, "run", "add the feature"], { cwd: t.repo, env: { ...process.env, ...t.env }, stdio: "ignore" })
    await until("the review to start", () => t.calls().includes("review-1 review"), 60_000)
    child.kill("SIGKILL")
    await new Promise((r) => child.once("exit", r))
    NodeFs.rmSync(hang)
    expect(t.record().verification.step).toBe("review")
    const resumed = t.magi({}, "run", "--resume", t.record().id)
    expect(resumed.status, resumed.stderr).toBe(0)
    expect(resumed.stderr).toContain("resuming its verification at its review step")
    expect(t.record().status).toBe("ready")
    // The implementer ran once; the reviewer whose turn was killed was asked again.
    expect(t.calls().filter((c) => c === "impl impl")).toEqual(["impl impl"])
    expect(t.record().verification.rounds.length).toBe(1)
  })

  it("resumes after a kill -9 mid-sync at the sync, without implementing again", { timeout: 180_000 }, async () => {
    const t = setup('[verify]\ngate = ["true"]\n')
    NodeFs.writeFileSync(NodePath.join(t.dir, "hang-rebasefix"), "")
    const child = spawn(process.execPath, [MAGI, "run", "change shared.txt"], {
      cwd: t.repo,
      env: { ...process.env, ...t.env, REVIEW_IMPL: "conflict" },
      stdio: "ignore"
    })
    await until("the rebase fix to start", () => t.calls().includes("impl rebasefix"), 60_000)
    child.kill("SIGKILL")
    await new Promise((r) => child.once("exit", r))
    NodeFs.rmSync(NodePath.join(t.dir, "hang-rebasefix"))
    // Killed with the worktree mid-rebase: the record is at its sync, the fix round counted.
    expect(t.record().verification.step).toBe("sync")
    expect(t.record().verification.sync.rebase_fix_rounds).toBe(1)
    const resumed = t.magi({ REVIEW_IMPL: "conflict" }, "run", "--resume", t.record().id)
    expect(resumed.status, resumed.stderr).toBe(0)
    expect(resumed.stderr).toContain("resuming its verification at its sync step")
    const run = t.record()
    expect(run.status).toBe("ready")
    expect(run.verification.sync).toMatchObject({ rebase_fix_rounds: 2, conflicts: [] })
    expect(t.calls()).toEqual(["impl impl", "impl rebasefix", "impl rebasefix"])
    expect(t.git("show", `${run.branch}:shared.txt`)).toBe("the branch's line")
    expect(t.git("merge-base", "trunk", run.branch)).toBe(t.git("rev-parse", "trunk"))
  })

  it("resumes after a kill -9 mid-gate at the gate, without reviewing again, and shows only the new gate", { timeout: 180_000 }, async () => {
    const dir = tempDirSync()
    const gates = NodePath.join(dir, "gates")
    const hang = NodePath.join(dir, "hang-gate")
    const t = setup(`[graph]\nreviewers = 1\n\n[verify]\ngate = [${JSON.stringify(`echo ran >> ${gates}; while [ -f ${hang} ]; do sleep 0.1; done`)}]\n`)
    NodeFs.writeFileSync(hang, "")
    const child = spawn(process.execPath, [MAGI, "run", "add the feature"], { cwd: t.repo, env: { ...process.env, ...t.env }, stdio: "ignore" })
    await until("the gate to start", () => NodeFs.existsSync(gates), 60_000)
    child.kill("SIGKILL")
    await new Promise((r) => child.once("exit", r))
    NodeFs.rmSync(hang)
    expect(t.record().verification.step).toBe("gate")
    expect(t.record().verification.gates).toEqual([])
    const resumed = t.magi({}, "run", "--resume", t.record().id)
    expect(resumed.status, resumed.stderr).toBe(0)
    expect(resumed.stderr).toContain("resuming its verification at its gate step")
    const run = t.record()
    expect(run.status).toBe("ready")
    expect(t.calls()).toEqual(["impl impl", "review-1 review"])
    expect(run.verification.rounds.length).toBe(1)
    // The killed gate left no result; the one shown is the resumed run's.
    expect(run.verification.gates.map((g: { n: number; results: ReadonlyArray<{ exit: number }> }) => [g.n, g.results[0]!.exit])).toEqual([[1, 0]])
    expect(NodeFs.readFileSync(gates, "utf8").trim().split("\n").length).toBe(2)
  })

  it("verifies a solo run whose agent asked and exited once magi serve's waiter delivers the answer and the turn ends", { timeout: 120_000 }, async () => {
    const dir = tempDirSync()
    const home = NodePath.join(dir, "home")
    const repo = repoWithAgent(dir, ["node", ASK_AGENT])
    NodeFs.appendFileSync(NodePath.join(repo, "magi.toml"), '\n[verify]\ngate = ["test -f answer.txt"]\n')
    const env = { MAGI_HOME: home }
    const started = magi(repo, env, "run", "Pick a storage backend")
    expect(started.stderr).toContain("is waiting on the owner")
    const [runId] = NodeFs.readdirSync(NodePath.join(home, "runs"))
    const runFile = NodePath.join(home, "runs", runId!, "run.json")
    const read = () => JSON.parse(NodeFs.readFileSync(runFile, "utf8"))
    expect(read().verification).toBeUndefined()
    const qdir = NodePath.join(home, "questions")
    const [qfile] = NodeFs.readdirSync(qdir).filter((f) => f.endsWith(".json"))
    expect(magi(repo, env, "answer", qfile!.slice(0, -5), "--reply", "SQLite").status).toBe(0)
    const lease = NodePath.join(qdir, "leases", `${qfile!.slice(0, -5)}.lease`)
    if (NodeFs.existsSync(lease))
      NodeFs.writeFileSync(lease, JSON.stringify({ ...JSON.parse(NodeFs.readFileSync(lease, "utf8")), beat_at: "2000-01-01T00:00:00Z" }))
    const daemon = serveDaemon(repo, home, env, dir)
    try {
      await until("the run to be verified", () => ["ready", "blocked", "stalled"].includes(read().status), 60_000)
    } finally {
      await daemon.stop()
    }
    const run = read()
    expect(run.status, run.reason).toBe("ready")
    expect(run.verification.step).toBe("ready")
    expect(run.verification.gates.map((g: { results: ReadonlyArray<{ exit: number }> }) => g.results.map((r) => r.exit))).toEqual([[0]])
  })

  it("magi review syncs, reviews, fixes and gates an existing branch on its own copy, and rm and fold keep the owner's branch", { timeout: 180_000 }, () => {
    const t = setup('[graph]\nreviewers = 1\n\n[verify]\ngate = ["test -f fixed.txt"]\n')
    t.git("checkout", "-q", "-b", "feature")
    NodeFs.writeFileSync(NodePath.join(t.repo, "feature.txt"), "the owner's feature\n")
    t.git("add", "feature.txt")
    t.git("commit", "-q", "-m", "The owner's feature")
    t.git("checkout", "-q", "trunk")
    NodeFs.writeFileSync(NodePath.join(t.repo, "other.txt"), "the base moved\n")
    t.git("add", "other.txt")
    t.git("commit", "-q", "-m", "The base moves on")
    const owners = t.git("rev-parse", "feature")

    const missing = t.magi({}, "review", "nope")
    expect(missing.status).not.toBe(0)
    expect(missing.stderr).toContain("there is no branch nope (have: feature, trunk)")

    const ran = t.magi({ REVIEW_MODE: "major-once" }, "review", "feature")
    expect(ran.status, ran.stderr).toBe(0)
    expect(ran.stderr).toContain("ready on branch")
    const run = t.record()
    expect(run).toMatchObject({ status: "ready", base: "trunk", reviewed: { branch: "feature", head: owners } })
    expect(run.branch).not.toBe("feature")
    // No implementing: a review, the fix in a fresh fixer seat, the review again.
    expect(t.calls()).toEqual(["review-1 review", "impl fix", "review-1 review"])
    expect(run.verification.sync.onto).toBe(t.git("rev-parse", "trunk"))
    // The owner's branch is exactly as it was; the run's copy is rebased and fixed.
    expect(t.git("rev-parse", "feature")).toBe(owners)
    expect(t.git("log", "--format=%s", `trunk..${run.branch}`).split("\n")).toEqual(["Fix the review's findings", "The owner's feature"])
    const shown = t.magi({}, "show", run.id)
    expect(shown.stdout).toContain(`reviews   feature @ ${owners.slice(0, 12)}`)

    const folded = t.magi({}, "fold", run.id)
    expect(folded.status).not.toBe(0)
    expect(t.git("rev-parse", "feature")).toBe(owners)
    // A ready run may still be landed, so rm refuses it; either way the owner's branch stays.
    expect(t.magi({}, "run", "rm", run.id).status).not.toBe(0)
    expect(t.git("rev-parse", "feature")).toBe(owners)

    // A branch already merged into the base ends already_in_base; rm takes only magi's copy away.
    t.git("branch", "merged", "trunk~1")
    const merged = t.git("rev-parse", "merged")
    const again = t.magi({}, "review", "merged")
    expect(again.status, again.stderr).toBe(0)
    expect(again.stderr).toContain("already in base")
    const [second] = NodeFs.readdirSync(NodePath.join(t.env.MAGI_HOME!, "runs")).filter((f) => /^\d{8}-/.test(f) && f !== run.id)
    const removed = t.magi({}, "run", "rm", second!)
    expect(removed.status, removed.stderr).toBe(0)
    expect(removed.stdout).toContain("deleted branch magi/")
    expect(removed.stdout).not.toContain("deleted branch merged")
    expect(t.git("rev-parse", "merged")).toBe(merged)
    expect(t.git("rev-parse", "feature")).toBe(owners)
  })

  it("magi fix sends chosen recorded findings to the fixer and reviews again; an unknown id is refused with the known ones", { timeout: 180_000 }, () => {
    const t = setup('[graph]\nreviewers = 1\n\n[verify]\ngate = ["true"]\n')
    const ran = t.magi({ REVIEW_MODE: "minor" }, "run", "add the feature")
    expect(ran.status, ran.stderr).toBe(0)
    const id = t.record().id
    expect(t.record().status).toBe("ready")
    expect(t.calls()).toEqual(["impl impl", "review-1 review"])

    const unknown = t.magi({}, "fix", id, "-f", "R9-9-9")
    expect(unknown.status).not.toBe(0)
    expect(unknown.stderr).toContain("has no finding R9-9-9; its findings are R1-1-1")
    expect(t.calls()).toEqual(["impl impl", "review-1 review"])

    const fixed = t.magi({ REVIEW_MODE: "minor" }, "fix", id, "-f", "r1-1-1", "--reason", "say more in feature.txt")
    expect(fixed.status, fixed.stderr).toBe(0)
    expect(fixed.stderr).toContain("ready on branch")
    const run = t.record()
    expect(run.status).toBe("ready")
    expect(t.calls()).toEqual(["impl impl", "review-1 review", "impl fix", "review-1 review"])
    const [first, second] = run.verification.rounds
    expect(first.reviews[0].findings[0]).toMatchObject({ id: "R1-1-1", reply: { kind: "fixed" } })
    expect(first.fixed_to).toBe(second.head)
    expect(second.reviews[0].verdict).toBe("approve")
    expect(run.verification.gates.length).toBe(2)
    // The owner's words reached the fixer.
    const prompts = NodeFs.readdirSync(NodePath.join(t.env.MAGI_HOME!, "runs", id, "artifacts")).filter((f) => f.includes("prompt"))
    const said = prompts.map((f) => NodeFs.readFileSync(NodePath.join(t.env.MAGI_HOME!, "runs", id, "artifacts", f), "utf8"))
    expect(said.some((p) => p.includes("# Fix") && p.includes("say more in feature.txt"))).toBe(true)
  })

  it("resumes a magi fix killed -9 mid-fixer-turn: the fixer's turn again, then the review round", { timeout: 180_000 }, async () => {
    const t = setup('[graph]\nreviewers = 1\n\n[verify]\ngate = ["true"]\n')
    const ran = t.magi({ REVIEW_MODE: "minor" }, "run", "add the feature")
    expect(ran.status, ran.stderr).toBe(0)
    const id = t.record().id
    NodeFs.writeFileSync(NodePath.join(t.dir, "hang-fix"), "")
    const child = spawn(process.execPath, [MAGI, "fix", id, "-f", "R1-1-1"], {
      cwd: t.repo,
      env: { ...process.env, ...t.env, REVIEW_MODE: "minor" },
      stdio: "ignore"
    })
    await until("the fixer's turn to start", () => t.calls().includes("impl fix"), 60_000)
    child.kill("SIGKILL")
    await new Promise((r) => child.once("exit", r))
    NodeFs.rmSync(NodePath.join(t.dir, "hang-fix"))
    expect(t.record()).toMatchObject({ status: "running", verification: { step: "fix", fixing: { ids: ["R1-1-1"] } } })
    const resumed = t.magi({ REVIEW_MODE: "minor" }, "run", "--resume", id)
    expect(resumed.status, resumed.stderr).toBe(0)
    expect(resumed.stderr).toContain("resuming its verification at its fix step")
    const run = t.record()
    expect(run.status, run.reason).toBe("ready")
    expect(t.calls()).toEqual(["impl impl", "review-1 review", "impl fix", "impl fix", "review-1 review"])
    const [first, second] = run.verification.rounds
    expect(first.reviews[0].findings[0]).toMatchObject({ id: "R1-1-1", reply: { kind: "fixed" } })
    expect(first.fixed_to).toBe(second.head)
  })

  it("files a ready run's open minor finding as one follow-up task, and not again for the same title", { timeout: 180_000 }, () => {
    const t = setup('[graph]\nreviewers = 1\n\n[verify]\ngate = ["true"]\n')
    const ran = t.magi({ REVIEW_MODE: "minor-always" }, "run", "add the feature")
    expect(ran.status, ran.stderr).toBe(0)
    const run = t.record()
    const short = run.id.slice(run.id.lastIndexOf("-") + 1)
    expect(ran.stderr).toContain(`filed follow-up task`)
    const titles = () =>
      NodeFs.readdirSync(NodePath.join(t.env.MAGI_HOME!, "queue")).filter((f) => f.endsWith(".json")).map((f) =>
        JSON.parse(NodeFs.readFileSync(NodePath.join(t.env.MAGI_HOME!, "queue", f), "utf8"))
      )
    const filed = titles()
    expect(filed.map((x: { title: string }) => x.title)).toEqual([`[review@${short}] feature.txt could say more`])
    expect(filed[0].source).toEqual({ kind: "agent", run: run.id, node: "review:R1-1-1" })
    // Fixed on request, the next round finds the same thing again: the open task already has that title.
    const again = t.magi({ REVIEW_MODE: "minor-always" }, "fix", run.id, "-f", "R1-1-1")
    expect(again.status, again.stderr).toBe(0)
    expect(t.record().verification.rounds.length).toBe(2)
    expect(again.stderr).not.toContain("filed follow-up task")
    expect(titles().length).toBe(1)
  })
})
