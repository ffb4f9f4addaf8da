import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer, TestClock } from "effect"
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as Q from "../../src/questions/Question.js"
import { QuestionStore } from "../../src/questions/QuestionStore.js"
import { boundedSummary, RUN_SCHEMA, RunStore, decode, encode, outstanding, statusAfterTurn, SUMMARY_MAX_CHARS, type Run } from "../../src/runs/Runs.js"
import { timeWords } from "../../src/runs/RunReport.js"
import { currentReason } from "../../src/runs/RunStatus.js"
import { stopPlan } from "../../src/runs/StopRun.js"
import { magi, repoWithAgent, sampleRun } from "../runSupport.js"
import * as Worktree from "../../src/runs/Worktree.js"
import { choiceQuestion, tempDirSync } from "../support.js"

const FAKE = NodePath.resolve("test/fixtures/fake-agent.mjs")

describe("how a turn leaves a run", () => {
  it("an outstanding question keeps the run waiting after a turn that went well", () => {
    expect(statusAfterTurn({ usable: true, quota: null }, 1)).toBe("waiting")
  })

  it("a failed turn fails the run even with a question outstanding, and a usage limit stalls it: never hidden behind waiting", () => {
    expect(statusAfterTurn({ usable: false, quota: null }, 2)).toBe("failed")
    expect(statusAfterTurn({ usable: false, quota: "" }, 2)).toBe("stalled")
    expect(statusAfterTurn({ usable: false, quota: "3pm" }, 1)).toBe("stalled")
  })

  it("with nothing outstanding: done when usable, stalled on a usage limit, failed otherwise", () => {
    expect(statusAfterTurn({ usable: true, quota: null }, 0)).toBe("done")
    expect(statusAfterTurn({ usable: false, quota: "3pm" }, 0)).toBe("stalled")
    expect(statusAfterTurn({ usable: false, quota: null }, 0)).toBe("failed")
  })

  it("an answer the agent never read is still outstanding; a delivered one or an abandoned one is not", () => {
    const q = choiceQuestion()
    const answered = Either.getOrThrow(Q.answer(q, { choice: "SQLite" }, new Date()))
    expect(outstanding(q)).toBe(true)
    expect(outstanding(answered)).toBe(true)
    expect(outstanding({ ...answered, answer_delivered: true })).toBe(false)
    expect(outstanding(Q.abandon(q, "gone", new Date()))).toBe(false)
  })
})

describe("run records", () => {
  it("round-trip through their stored form, and one from a newer magi is refused by name", () => {
    const r = sampleRun("20260902-201256-9fb7")
    expect(Either.getOrThrow(decode(encode(r), "run.json"))).toEqual(r)
    const newer = decode(JSON.stringify({ ...r, schema: RUN_SCHEMA + 1 }), "run.json")
    expect(Either.isLeft(newer) && newer.left.message).toContain("newer magi")
  })

  it("an older record without summary or reason reads with them empty", () => {
    const { summary: _s, reason: _r, ...old } = sampleRun("20260902-201256-9fb7")
    expect(Either.getOrThrow(decode(JSON.stringify(old), "run.json"))).toMatchObject({ summary: "", reason: "" })
  })
})

const storeLayer = (home: string) =>
  RunStore.at(NodePath.join(home, "runs")).pipe(
    Layer.provideMerge(QuestionStore.at(NodePath.join(home, "questions"))),
    Layer.provideMerge(NodeContext.layer)
  )

describe("RunStore", () => {
  it.effect("finds a run by its short id, lists newest first and stamps updates", () => {
    const home = tempDirSync()
    return Effect.gen(function* () {
      const runs = yield* RunStore
      yield* runs.put(sampleRun("20260902-201256-9fb7"))
      yield* runs.put(sampleRun("20260903-101010-aaaa"))
      expect((yield* runs.get("9fb7")).id).toBe("20260902-201256-9fb7")
      expect((yield* runs.list).map((r) => r.id)).toEqual(["20260903-101010-aaaa", "20260902-201256-9fb7"])
      const after = yield* runs.update("aaaa", (r) => ({ ...r, summary: "did it" }))
      expect(after.summary).toBe("did it")
      expect((yield* runs.get("aaaa")).summary).toBe("did it")
      expect(NodeFs.readdirSync(runs.dir("20260903-101010-aaaa"))).toEqual(["run.json"])
      const missing = yield* Effect.flip(runs.get("zzzz"))
      expect(missing._tag).toBe("RecordNotFound")
    }).pipe(Effect.provide(storeLayer(home)))
  })

  it.effect("a run that can no longer resume abandons its open questions with its fate; a waiting one does not", () => {
    const home = tempDirSync()
    return Effect.gen(function* () {
      const runs = yield* RunStore
      const questions = yield* QuestionStore
      const run = sampleRun("20260902-201256-9fb7")
      yield* runs.put(run)
      yield* questions.put(choiceQuestion())
      yield* runs.setStatus(run.id, "waiting")
      expect((yield* questions.get(choiceQuestion().id)).status).toBe("open")
      // Blocked can still be picked back up: its question is left as it was.
      yield* runs.setStatus(run.id, "blocked")
      expect((yield* questions.get(choiceQuestion().id)).status).toBe("open")
      const failed = yield* runs.setStatus(run.id, "failed", "the agent's turn failed (exit 3)")
      expect(failed).toMatchObject({ status: "failed", reason: "the agent's turn failed (exit 3)" })
      const q = yield* questions.get(choiceQuestion().id)
      expect(q.status).toBe("abandoned")
      expect(q.detail).toContain(`run ${run.id} failed`)
    }).pipe(Effect.provide(storeLayer(home)))
  })
})

describe("a status and its reason (issue 27.5)", () => {
  it.effect("a run interrupted, then finished by a later turn, is done with no reason; failing keeps the reason it came with", () => {
    const home = tempDirSync()
    return Effect.gen(function* () {
      const runs = yield* RunStore
      const run = sampleRun("20260902-201256-9fb7")
      yield* runs.put(run)
      expect(yield* runs.setStatus(run.id, "stalled", "interrupted; continue with magi run --resume")).toMatchObject({
        reason: "interrupted; continue with magi run --resume"
      })
      // The waiter's turn finishes it: `finish` sets done with no reason of its own.
      expect(yield* runs.setStatus(run.id, "done")).toMatchObject({ status: "done", reason: "" })
      expect((yield* runs.get(run.id)).reason).toBe("")
    }).pipe(Effect.provide(storeLayer(home)))
  })

  it("a done run is shown with no reason, whatever an older build left in its record", () => {
    expect(currentReason({ status: "done", reason: "interrupted; continue with magi run --resume" })).toBe("")
    expect(currentReason({ status: "stalled", reason: "interrupted" })).toBe("interrupted")
    expect(currentReason({ status: "failed", reason: "exit 1" })).toBe("exit 1")
  })
})

describe("a run's time in words (issue 27.7)", () => {
  const at = (d: Date) => d.toISOString().slice(11, 16)
  it.each(
    [
      ["running", "running for 24s"],
      ["preparing", "running for 24s"],
      ["done", "took 24s"],
      ["failed", "took 24s"],
      ["stalled", "stalled since 20:13, after 24s"],
      ["waiting", "waiting since 20:13, after 24s"],
      ["stopped", "stopped since 20:13, after 24s"]
    ] as const
  )("%s: %s", (status, words) => {
    expect(timeWords(sampleRun("20260902-201256-9fb7", { status, updated_at: "2026-09-02T20:13:20Z" }), "24s", at)).toBe(words)
  })
})

describe("a turn's reply in the record (issue 32)", () => {
  it("keeps the end of a reply over the bound, and says which artifact has the whole", () => {
    const reply = "x".repeat(20 * 1024 * 1024) + "\nthe last line"
    const kept = boundedSummary(reply, "impl-1.out")
    expect(kept.length).toBeLessThan(SUMMARY_MAX_CHARS + 200)
    expect(kept.startsWith("[… the first ")).toBe(true)
    expect(kept).toContain("are in the artifact impl-1.out]")
    expect(kept.endsWith("\nthe last line")).toBe(true)
    expect(boundedSummary("short reply", "impl-1.out")).toBe("short reply")
  })
})

describe("what stopping a run takes", () => {
  const run = (status: Run["status"]) => sampleRun("20260902-201256-9fb7", { status })
  it.each(
    [
      ["running", true, true, "Ask"],
      ["running", false, false, "Ask"],
      ["running", false, true, "MarkStopped"],
      ["waiting", true, true, "Ask"],
      ["waiting", false, true, "Refuse"],
      ["stalled", false, true, "Refuse"],
      ["stopped", true, true, "Refuse"],
      ["done", false, true, "Refuse"],
      ["failed", false, true, "Refuse"]
    ] as const
  )("%s, a turn's lock held here %s, on this host %s: %s", (status, turnHere, here, plan) => {
    expect(stopPlan(run(status), turnHere, here)._tag).toBe(plan)
  })

  it("says what a waiting run's owner may mean instead", () => {
    const plan = stopPlan(run("waiting"), false, true)
    expect(plan._tag === "Refuse" && plan.why).toContain("withdraw its question (magi answer ID --withdraw)")
  })
})

describe("leftovers in a run's folder", () => {
  it.effect("a listing removes the scratch and lock-break markers kills left in a run's folder once an hour old, and leaves fresh scratch and the artifacts alone", () => {
    const home = tempDirSync()
    return Effect.gen(function* () {
      // The sweep judges ages on Effect's clock against the files' real mtimes.
      yield* TestClock.setTime(Date.now())
      const runs = yield* RunStore
      const run = sampleRun("20260902-201256-9fb7")
      yield* runs.put(run)
      const dir = runs.dir(run.id)
      const twoHoursAgo = new Date(Date.now() - 2 * 60 * 60 * 1000)
      const aged = (path: string, body = "half a record") => {
        NodeFs.mkdirSync(NodePath.dirname(path), { recursive: true })
        NodeFs.writeFileSync(path, body)
        NodeFs.utimesSync(path, twoHoursAgo, twoHoursAgo)
        return path
      }
      const scratch = aged(NodePath.join(dir, "run.json.4242.abcdefgh.tmp"))
      const marker = aged(NodePath.join(dir, "run.lock.break-0123abcd"))
      // An artifact is the agent's output, whatever its name: never swept.
      const artifact = aged(NodePath.join(runs.artifactsDir(run.id), "impl-1.out.tmp"))
      // A writer may be in the middle of this one.
      const fresh = NodePath.join(dir, "run.json.4343.ijklmnop.tmp")
      NodeFs.writeFileSync(fresh, "being written")

      expect((yield* runs.list).map((r) => r.id)).toEqual([run.id])
      expect(NodeFs.existsSync(scratch)).toBe(false)
      expect(NodeFs.existsSync(marker)).toBe(false)
      expect(NodeFs.existsSync(artifact)).toBe(true)
      expect(NodeFs.existsSync(fresh)).toBe(true)
      expect(yield* runs.sweep).toBe(0)
      expect((yield* runs.get(run.id)).id).toBe(run.id)
    }).pipe(Effect.provide(storeLayer(home)))
  })
})

describe("magi run", () => {
  it("runs the agent in a new worktree on magi/<short> off the base tip, and records a finished run", () => {
    const dir = tempDirSync()
    const log = NodePath.join(dir, "log.jsonl")
    const repo = repoWithAgent(dir, ["node", FAKE, "{prompt_file}", "{cwd}", "{label}"])
    const home = NodePath.join(dir, "home")
    const r = magi(repo, { MAGI_HOME: home, FAKE_AGENT_LOG: log }, "run", "Add", "a", "cache")
    expect(r.stderr).toContain("done; its work is on branch magi/")
    expect(r.status).toBe(0)

    const [id] = NodeFs.readdirSync(NodePath.join(home, "runs"))
    const record = JSON.parse(NodeFs.readFileSync(NodePath.join(home, "runs", id!, "run.json"), "utf8"))
    const tip = execFileSync("git", ["rev-parse", "HEAD"], { cwd: repo, encoding: "utf8" }).trim()
    expect(record).toMatchObject({
      schema: RUN_SCHEMA,
      status: "done",
      instruction: "Add a cache",
      repo: NodeFs.realpathSync(repo),
      base: "trunk",
      base_commit: tip,
      worktree: NodePath.join(home, "worktrees", id!),
      branch: `magi/${Q.shortId(id!)}`,
      seats: [{ key: "impl", agent: "fake", turns: 1, session: null, write: true }]
    })
    expect(record.summary).toMatch(/^done: /)
    const branch = execFileSync("git", ["rev-parse", "--abbrev-ref", "HEAD"], { cwd: record.worktree, encoding: "utf8" })
    expect(branch.trim()).toBe(record.branch)

    const call = JSON.parse(NodeFs.readFileSync(log, "utf8").trim())
    expect(call.cwd).toBe(record.worktree)
    expect(call.argv.slice(1)).toEqual([record.worktree, "impl"])
    expect(call.env).toMatchObject({ MAGI_RUN: id, MAGI_SEAT: "impl", MAGI_ALLOW_WRITE: "1", MAGI_HOME: home })
    const prompt = NodeFs.readFileSync(call.argv[0], "utf8")
    expect(prompt).toContain("Add a cache")
    expect(prompt).toContain("Never background it")
    expect(prompt).toContain("magi ask --wait <id>")
    expect(prompt).toContain("magi ask --thread <id>")

    const listed = magi(repo, { MAGI_HOME: home }, "runs", "--json")
    expect(JSON.parse(listed.stdout).map((x: Run) => x.id)).toEqual([id])
    const shown = magi(repo, { MAGI_HOME: home }, "show", Q.shortId(id!))
    expect(shown.stdout).toContain(`run ${id}  done`)
  })

  it("a failed turn fails the run with the reason, and a failed run cannot be resumed", () => {
    const dir = tempDirSync()
    const repo = repoWithAgent(dir, ["node", FAKE])
    const home = NodePath.join(dir, "home")
    const r = magi(repo, { MAGI_HOME: home, FAKE_AGENT_MODE: "fail" }, "run", "Do it")
    expect(r.status).toBe(1)
    expect(r.stderr).toContain("failed: the agent's turn failed (exit 3)")
    const [id] = NodeFs.readdirSync(NodePath.join(home, "runs"))
    const again = magi(repo, { MAGI_HOME: home }, "run", "--resume", id!)
    expect(again.status).toBe(1)
    expect(again.stderr).toContain("is failed and cannot be resumed")
  })

  it("--resume continues a stalled run in the same seat, as its next turn", () => {
    const dir = tempDirSync()
    const log = NodePath.join(dir, "log.jsonl")
    const repo = repoWithAgent(dir, ["node", FAKE, "{prompt_file}"])
    const home = NodePath.join(dir, "home")
    magi(repo, { MAGI_HOME: home, FAKE_AGENT_LOG: log }, "run", "Do it")
    const [id] = NodeFs.readdirSync(NodePath.join(home, "runs"))
    const file = NodePath.join(home, "runs", id!, "run.json")
    NodeFs.writeFileSync(file, JSON.stringify({ ...JSON.parse(NodeFs.readFileSync(file, "utf8")), status: "stalled" }))
    const r = magi(repo, { MAGI_HOME: home, FAKE_AGENT_LOG: log }, "run", "--resume", Q.shortId(id!), "finish", "up")
    expect(r.status).toBe(0)
    const calls = NodeFs.readFileSync(log, "utf8").trim().split("\n").map((l) => JSON.parse(l))
    expect(calls.map((c) => c.env.MAGI_TURN)).toEqual(["1", "2"])
    expect(NodeFs.readFileSync(calls[1].argv[0], "utf8")).toContain("finish up")
    expect(JSON.parse(NodeFs.readFileSync(file, "utf8"))).toMatchObject({ status: "done", seats: [{ turns: 2 }] })
  })

  it("a claude seat keeps the session id magi named it with, for every later resume", () => {
    const dir = tempDirSync()
    const log = NodePath.join(dir, "log.jsonl")
    const repo = repoWithAgent(dir, ["unused"])
    NodeFs.writeFileSync(
      NodePath.join(repo, "magi.toml"),
      `[agents.c]\nkind = "claude"\ncommand = ${JSON.stringify(NodePath.resolve("test/fixtures/bin/claude"))}\n`
    )
    const home = NodePath.join(dir, "home")
    const r = magi(repo, { MAGI_HOME: home, FAKE_AGENT_LOG: log, CLAUDE_CONFIG_DIR: NodePath.join(dir, "claude") }, "run", "Do it")
    expect(r.status).toBe(0)
    const [id] = NodeFs.readdirSync(NodePath.join(home, "runs"))
    const seat = JSON.parse(NodeFs.readFileSync(NodePath.join(home, "runs", id!, "run.json"), "utf8")).seats[0]
    const call = JSON.parse(NodeFs.readFileSync(log, "utf8").trim())
    expect(seat).toMatchObject({ agent: "c", turns: 1 })
    expect(call.argv[call.argv.indexOf("--session-id") + 1]).toBe(seat.session)
  })
})

describe("a turn that cannot start or fails", () => {
  it("an agent the system refuses to start (argv over the kernel's limit) fails the run with the reason, never leaves it running", () => {
    const dir = tempDirSync()
    const repo = repoWithAgent(dir, ["echo", "x".repeat(300_000)])
    const home = NodePath.join(dir, "home")
    const r = magi(repo, { MAGI_HOME: home }, "run", "Do it")
    expect(r.status).not.toBe(0)
    expect(r.stderr).toContain("E2BIG")
    expect(r.stderr).not.toContain("    at ")
    const [id] = NodeFs.readdirSync(NodePath.join(home, "runs"))
    const run = JSON.parse(NodeFs.readFileSync(NodePath.join(home, "runs", id!, "run.json"), "utf8"))
    expect(run.status).toBe("failed")
    expect(run.reason).toContain("command line is longer than the system allows")
  })

  it("records what each turn of a claude seat cost on the seat, and magi show says it", () => {
    const dir = tempDirSync()
    const repo = repoWithAgent(dir, ["unused"])
    NodeFs.writeFileSync(
      NodePath.join(repo, "magi.toml"),
      `[agents.c]\nkind = "claude"\ncommand = ${JSON.stringify(NodePath.resolve("test/fixtures/bin/claude"))}\n`
    )
    const home = NodePath.join(dir, "home")
    const env = { MAGI_HOME: home, CLAUDE_CONFIG_DIR: NodePath.join(dir, "claude") }
    expect(magi(repo, env, "run", "Do it").status).toBe(0)
    const [id] = NodeFs.readdirSync(NodePath.join(home, "runs"))
    const file = NodePath.join(home, "runs", id!, "run.json")
    NodeFs.writeFileSync(file, JSON.stringify({ ...JSON.parse(NodeFs.readFileSync(file, "utf8")), status: "stalled" }))
    expect(magi(repo, env, "run", "--resume", Q.shortId(id!), "again").status).toBe(0)
    const seat = JSON.parse(NodeFs.readFileSync(file, "utf8")).seats[0]
    expect(seat.usage).toMatchObject({ input_tokens: 2 * 23012, output_tokens: 2 * 345, turns: [{ turn: 1 }, { turn: 2 }] })
    expect(seat.usage.cost_usd).toBeCloseTo(0.02, 10)
    expect(magi(repo, env, "show", Q.shortId(id!)).stdout).toContain("2 turn(s)")
    expect(magi(repo, env, "show", Q.shortId(id!)).stdout).toContain("; 46.0k tokens in, 690 out, $0.0200")
  })

  it("claude refusing bypassPermissions as root fails the run saying what to do, and magi never sets IS_SANDBOX", () => {
    const dir = tempDirSync()
    const log = NodePath.join(dir, "log.jsonl")
    const repo = repoWithAgent(dir, ["unused"])
    NodeFs.writeFileSync(
      NodePath.join(repo, "magi.toml"),
      `[agents.c]\nkind = "claude"\ncommand = ${JSON.stringify(NodePath.resolve("test/fixtures/bin/claude"))}\n`
    )
    const home = NodePath.join(dir, "home")
    const r = magi(repo, { MAGI_HOME: home, FAKE_AGENT_LOG: log, FAKE_AGENT_MODE: "root", CLAUDE_CONFIG_DIR: NodePath.join(dir, "claude") }, "run", "Do it")
    expect(r.status).not.toBe(0)
    const [id] = NodeFs.readdirSync(NodePath.join(home, "runs"))
    const run = JSON.parse(NodeFs.readFileSync(NodePath.join(home, "runs", id!, "run.json"), "utf8"))
    expect(run.status).toBe("failed")
    expect(run.reason).toContain('IS_SANDBOX = "1"')
    expect(run.reason).toContain("non-root user")
    // Whatever the environment had (this machine may set it), magi added nothing.
    expect(JSON.parse(NodeFs.readFileSync(log, "utf8").trim()).env.IS_SANDBOX).toBe(process.env.IS_SANDBOX)
  })
})

describe("Worktree.branchTaken", () => {
  it.effect("tells a short id whose magi/ branch already exists from a free one", () =>
    Effect.gen(function* () {
      const dir = tempDirSync()
      execFileSync("git", ["init", "-q", "-b", "main", dir])
      execFileSync("git", ["-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "base"], { cwd: dir })
      execFileSync("git", ["branch", "magi/ab12"], { cwd: dir })
      const taken = yield* Worktree.branchTaken(dir, "ab12")
      const free = yield* Worktree.branchTaken(dir, "cd34")
      expect(taken).toBe(true)
      expect(free).toBe(false)
    }).pipe(Effect.provide(NodeContext.layer)))
})
