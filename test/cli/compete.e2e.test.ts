/**
 * The competition end to end (issue 29) with `command` agents: three fake
 * implementers that commit in their worktrees, three fake judges that read
 * the branches with git and answer the json block, through the built magi.
 */
import { describe, expect, it } from "vitest"
import { execFileSync, spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { tempDirSync, until } from "../support.js"
import { fileTask, MAGI, magi, serveDaemon, tasksOnDisk } from "../runSupport.js"

const AGENT = NodePath.resolve("test/fixtures/compete-agent.mjs")
const NAMES = ["alpha", "beta", "gamma"]

const setup = (extra = "", names: ReadonlyArray<string> = NAMES) => {
  const dir = tempDirSync()
  const repo = NodePath.join(dir, "repo")
  NodeFs.mkdirSync(repo)
  const git = (...args: string[]) => execFileSync("git", args, { cwd: repo, encoding: "utf8" }).trim()
  git("init", "-q", "-b", "trunk")
  git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "init")
  const agents = names.map((n) => `[agents.${n}]\nkind = "command"\ncommand = ${JSON.stringify(["node", AGENT, "{label}", n])}\n`).join("\n")
  NodeFs.writeFileSync(NodePath.join(repo, "magi.toml"), `${agents}\n[graph]\ncandidates = 3\njudges = 3\nreviewers = 0\n${extra}`)
  git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "config")
  const env: Record<string, string> = { MAGI_HOME: NodePath.join(dir, "home"), COMPETE_DIR: dir }
  const calls = () => (NodeFs.existsSync(NodePath.join(dir, "calls")) ? NodeFs.readFileSync(NodePath.join(dir, "calls"), "utf8").trim().split("\n") : [])
  const record = () => {
    const [id] = NodeFs.readdirSync(NodePath.join(env.MAGI_HOME!, "runs")).filter((f) => /^\d{8}-/.test(f))
    return JSON.parse(NodeFs.readFileSync(NodePath.join(env.MAGI_HOME!, "runs", id!, "run.json"), "utf8"))
  }
  return { dir, repo, env, git, calls, record, magi: (over: Record<string, string>, ...args: string[]) => magi(repo, { ...env, ...over }, ...args) }
}

describe("a competition", () => {
  it("runs three candidates, three rankings, a tally and a winner, folds the losers and shows it all", { timeout: 180_000 }, () => {
    const t = setup()
    const trunk = t.git("rev-parse", "trunk")
    const ran = t.magi({ COMPETE_JUDGE_alpha: "prose-once" }, "run", "--seed", "7", "add your file")
    expect(ran.status, ran.stderr).toBe(0)
    expect(ran.stderr).toContain("elected candidate B")
    const run = t.record()
    const short = run.id.split("-").at(-1)
    const c = run.competition
    expect(c.step).toBe("elected")
    expect(c.seed).toBe(7)
    expect(c.candidates.map((x: { label: string }) => x.label)).toEqual(["A", "B", "C"])
    expect(new Set(c.candidates.map((x: { agent: string }) => x.agent))).toEqual(new Set(NAMES))
    expect(c.candidates.every((x: { status: string }) => x.status === "viable")).toBe(true)
    expect(c.judges.map((j: { ranking: ReadonlyArray<string> }) => j.ranking[0])).toEqual(["B", "B", "B"])
    // The judge whose first answer was prose was asked again, once.
    expect(c.judges.find((j: { agent: string }) => j.agent === "alpha").retries).toBe(1)
    expect(c.tally).toMatchObject({ winner: "B", unanimous_first: true, tie_break: "none", answered: 3, quorum: 2 })
    // The winner is the run's branch; the losers' branches and every other worktree are gone.
    expect(run.branch).toBe(`magi/${short}/B`)
    expect(t.git("for-each-ref", "--format=%(refname:short)", "refs/heads/magi")).toBe(`magi/${short}/B`)
    expect(NodeFs.readdirSync(NodePath.join(t.env.MAGI_HOME!, "worktrees", run.id))).toEqual(["B", "B.hooks"])
    // The base did not move, and the hook stripped the author trailer.
    expect(t.git("rev-parse", "trunk")).toBe(trunk)
    expect(t.git("log", "--format=%B", `trunk..magi/${short}/B`)).not.toMatch(/Co-Authored-By/i)
    // Implementers once each; judges once, the prose one twice; no deliberation (unanimous), then one private vote each.
    const calls = t.calls()
    expect(calls.filter((l) => l.startsWith("impl-")).length).toBe(3)
    expect(calls.filter((l) => l.endsWith(" rank")).length).toBe(4)
    expect(calls.filter((l) => l.endsWith(" deliberate"))).toEqual([])
    expect(calls.filter((l) => l.endsWith(" vote")).length).toBe(3)
    expect(c.votes.map((v: { label: string }) => v.label)).toEqual(["B", "B", "B"])

    const shown = t.magi({}, "show", run.id)
    expect(shown.status, shown.stderr).toBe(0)
    const winner = c.candidates.find((x: { label: string }) => x.label === "B").agent
    expect(shown.stdout).toContain(`candidate B by ${winner}: viable on magi/${short}/B, 1 commit(s)  ← elected`)
    expect(shown.stdout).toContain("tally: B had 3 of 3 first choices, unanimous")
    expect(shown.stdout).toMatch(/judge-1 \(\w+\): B > A > C, confidence 0.8/)
    expect(shown.stdout).toContain("B is best")
    expect(shown.stdout).toContain("folded ")
    const json = JSON.parse(t.magi({}, "show", "--json", run.id).stdout)
    expect(json.competition.tally.winner).toBe("B")
    expect(json.competition.candidates[1].agent).toBe(winner)
  })

  it("keeps today's single seat for --solo and for candidates = 1", { timeout: 120_000 }, () => {
    const t = setup()
    const ran = t.magi({}, "run", "--solo", "add your file")
    expect(ran.status, ran.stderr).toBe(0)
    const run = t.record()
    expect(run.competition).toBeUndefined()
    expect(run.seats.map((s: { key: string }) => s.key)).toEqual(["impl"])
    expect(run.branch).toBe(`magi/${run.id.split("-").at(-1)}`)

    const one = setup("", ["alpha"])
    expect(one.magi({}, "run", "add your file").status).toBe(0)
    expect(one.record().competition).toBeUndefined()
  })

  it(
    "drops an empty candidate and one that moved the base (putting the base back), and elects the one left, its leftovers committed neutrally, without a panel",
    { timeout: 120_000 },
    () => {
      const t = setup()
      const trunk = t.git("rev-parse", "trunk")
      const ran = t.magi({ COMPETE_IMPL_alpha: "base", COMPETE_IMPL_beta: "empty", COMPETE_IMPL_gamma: "leave" }, "run", "add your file")
      expect(ran.status, ran.stderr).toBe(0)
      const c = t.record().competition
      const by = (n: string) => c.candidates.find((x: { agent: string }) => x.agent === n)
      expect(by("alpha").status).toBe("dropped")
      expect(by("alpha").dropped).toContain("it moved the base branch trunk")
      expect(by("beta")).toMatchObject({ status: "dropped", dropped: "it made no commits" })
      expect(by("gamma").status).toBe("viable")
      expect(c.winner).toBe(by("gamma").label)
      expect(c.judges).toEqual([])
      // What gamma left uncommitted was committed under the neutral identity, not the owner's.
      expect(t.git("log", "-1", "--format=%an <%ae>", by("gamma").branch)).toBe("magi candidate <candidate@magi.invalid>")
      expect(t.git("rev-parse", "trunk")).toBe(trunk)
      expect(t.calls().filter((l) => l.startsWith("judge-"))).toEqual([])
    }
  )

  it("ends verified_noop when every candidate says NO CHANGE NEEDED", { timeout: 120_000 }, () => {
    const t = setup()
    const ran = t.magi({ COMPETE_IMPL_alpha: "noop", COMPETE_IMPL_beta: "noop", COMPETE_IMPL_gamma: "noop" }, "run", "add your file")
    expect(ran.status, ran.stderr).toBe(0)
    expect(ran.stderr).toContain("every candidate found nothing needed changing")
    expect(t.record().competition.step).toBe("verified_noop")
  })

  it("stalls below quorum, and a resume asks only the judges that did not answer", { timeout: 180_000 }, () => {
    const t = setup()
    const bad = { COMPETE_JUDGE_alpha: "prose", COMPETE_JUDGE_beta: "fail" }
    const ran = t.magi(bad, "run", "add your file")
    expect(ran.status, ran.stderr).toBe(0)
    let run = t.record()
    expect(run.status).toBe("stalled")
    expect(run.reason).toContain("only 1 of 3 judges gave a ranking (2 needed)")
    const before = t.calls()
    const resumed = t.magi({}, "run", "--resume", run.id)
    expect(resumed.status, resumed.stderr).toBe(0)
    run = t.record()
    expect(run.competition.step).toBe("elected")
    const again = t.calls().slice(before.length)
    expect(again.every((l) => l.startsWith("judge-"))).toBe(true)
    expect(again.filter((l) => l.endsWith(" rank")).map((l) => l.split(" ")[1]).sort()).toEqual(["alpha", "beta"])
  })

  it("resumes after kill -9 mid-judging without re-invoking an implementer or a judge that answered", { timeout: 180_000 }, async () => {
    const t = setup()
    NodeFs.writeFileSync(NodePath.join(t.dir, "hang-judge-1"), "")
    const child = spawn(process.execPath, [MAGI, "run", "add your file"], {
      cwd: t.repo,
      env: { ...process.env, ...t.env, XDG_CONFIG_HOME: NodePath.join(t.repo, ".no-config") },
      stdio: "ignore"
    })
    await until("two judges answered", () => {
      try {
        return t.record().competition.judges.filter((j: { status: string }) => j.status === "answered").length === 2
      } catch {
        return false
      }
    }, 90_000)
    child.kill("SIGKILL")
    await new Promise((r) => child.once("exit", r))
    NodeFs.rmSync(NodePath.join(t.dir, "hang-judge-1"))
    const before = t.calls()
    expect(before.filter((l) => l.startsWith("impl-")).length).toBe(3)
    const resumed = t.magi({}, "run", "--resume", t.record().id)
    expect(resumed.status, resumed.stderr).toBe(0)
    expect(t.record().competition.step).toBe("elected")
    const again = t.calls().slice(before.length)
    expect(again.filter((l) => l.endsWith(" rank")).map((l) => l.split(" ")[0])).toEqual(["judge-1"])
    expect(again.filter((l) => l.endsWith(" vote")).map((l) => l.split(" ")[0]).sort()).toEqual(["judge-1", "judge-2", "judge-3"])
  })

  it("deliberates a split panel in seat order, anonymized, then votes privately, and a changed vote changes the winner", { timeout: 180_000 }, () => {
    const t = setup()
    // alpha and beta rank C first, gamma B: C would win on first rankings; alpha then votes B.
    const env = { COMPETE_JUDGE_alpha: "reverse", COMPETE_JUDGE_beta: "reverse", COMPETE_VOTE_alpha: "B", COMPETE_VOTE_gamma: "prose-once" }
    const ran = t.magi(env, "run", "add your file")
    expect(ran.status, ran.stderr).toBe(0)
    const run = t.record()
    const c = run.competition
    const seatOf = (n: string) => c.judges.find((j: { agent: string }) => j.agent === n).seat
    expect(c.deliberation.map((d: { seat: string; round: number }) => `${d.seat} ${d.round}`)).toEqual(["judge-1 1", "judge-2 1", "judge-3 1"])
    expect(t.calls().filter((l) => l.endsWith(" deliberate")).map((l) => l.split(" ")[0])).toEqual(["judge-1", "judge-2", "judge-3"])
    expect(c.deliberation.find((d: { seat: string }) => d.seat === seatOf("alpha")).pick).toBe("B")
    // The last speaker heard every opening ranking and the earlier turns by number only, its own marked.
    const last = NodeFs.readdirSync(NodePath.join(t.env.MAGI_HOME!, "runs", run.id, "artifacts")).filter((f) =>
      f.startsWith("judge-3-") && f.endsWith(".prompt.md")
    )
      .map((f) => NodeFs.readFileSync(NodePath.join(t.env.MAGI_HOME!, "runs", run.id, "artifacts", f), "utf8"))
      .map((p) => p.slice(p.indexOf("# Deliberation, round 1 of 1")))
      .find((p) => p.startsWith("# Deliberation"))!
    expect(last).toContain("## Judge 3 (you): ")
    expect(last).toContain("## Judge 1, round 1")
    for (const n of NAMES) expect(last).not.toMatch(new RegExp(`\\b${n}\\b`))
    expect(c.deliberation[2].text).toContain("heard Judge 1; Judge 2; Judge 3 (you); Judge 1, round 1; Judge 2, round 1 and leans")
    // The votes: alpha changed to B, gamma's prose was sent back once.
    const voteOf = (n: string) => c.votes.find((v: { seat: string }) => v.seat === seatOf(n))
    expect(voteOf("alpha")).toMatchObject({ label: "B", retries: 0 })
    expect(voteOf("beta")).toMatchObject({ label: "C" })
    expect(voteOf("gamma")).toMatchObject({ label: "B", retries: 1 })
    expect(c.tally).toMatchObject({ winner: "B", votes_changed: 1, unanimous_first: false, unanimous_final: false, first_choices: { A: 0, B: 2, C: 1 } })
    const shown = t.magi({}, "show", run.id).stdout
    expect(shown).toMatch(/judge-1, round 1: leaning [BC]\n {6}\w+ heard Judge 1 \(you\); Judge 2; Judge 3 and leans [BC]\./)
    expect(shown).toContain(`vote ${seatOf("alpha")}: B`)
    expect(shown).toContain(`vote ${seatOf("gamma")}: B, 1 retry`)
    expect(shown).toContain("votes changed: 1")
  })

  it("resumes after kill -9 mid-deliberation at the first turn not recorded", { timeout: 180_000 }, async () => {
    const t = setup()
    NodeFs.writeFileSync(NodePath.join(t.dir, "hang-judge-2-deliberate"), "")
    const child = spawn(process.execPath, [MAGI, "run", "add your file"], {
      cwd: t.repo,
      env: { ...process.env, ...t.env, COMPETE_JUDGE_alpha: "reverse", XDG_CONFIG_HOME: NodePath.join(t.repo, ".no-config") },
      stdio: "ignore"
    })
    await until("judge-2 is deliberating", () => t.calls().some((l) => /^judge-2 \w+ deliberate$/.test(l)), 90_000)
    child.kill("SIGKILL")
    await new Promise((r) => child.once("exit", r))
    NodeFs.rmSync(NodePath.join(t.dir, "hang-judge-2-deliberate"))
    expect(t.record().competition.deliberation.map((d: { seat: string }) => d.seat)).toEqual(["judge-1"])
    const before = t.calls()
    const resumed = t.magi({ COMPETE_JUDGE_alpha: "reverse" }, "run", "--resume", t.record().id)
    expect(resumed.status, resumed.stderr).toBe(0)
    const c = t.record().competition
    expect(c.step).toBe("elected")
    expect(c.deliberation.map((d: { seat: string }) => d.seat)).toEqual(["judge-1", "judge-2", "judge-3"])
    const again = t.calls().slice(before.length)
    expect(again.filter((l) => !l.endsWith(" vote")).map((l) => l.split(" ").filter((_, i) => i !== 1).join(" "))).toEqual([
      "judge-2 deliberate",
      "judge-3 deliberate"
    ])
  })

  it("resumes after kill -9 during voting, asking only the judges without a recorded vote", { timeout: 180_000 }, async () => {
    const t = setup()
    NodeFs.writeFileSync(NodePath.join(t.dir, "hang-judge-2-vote"), "")
    const child = spawn(process.execPath, [MAGI, "run", "add your file"], {
      cwd: t.repo,
      env: { ...process.env, ...t.env, XDG_CONFIG_HOME: NodePath.join(t.repo, ".no-config") },
      stdio: "ignore"
    })
    await until("two votes recorded", () => {
      try {
        return t.record().competition.votes.length === 2
      } catch {
        return false
      }
    }, 90_000)
    child.kill("SIGKILL")
    await new Promise((r) => child.once("exit", r))
    NodeFs.rmSync(NodePath.join(t.dir, "hang-judge-2-vote"))
    expect(t.record().competition.step).toBe("vote")
    const before = t.calls()
    const resumed = t.magi({}, "run", "--resume", t.record().id)
    expect(resumed.status, resumed.stderr).toBe(0)
    const c = t.record().competition
    expect(c.step).toBe("elected")
    expect(t.calls().slice(before.length)).toEqual([expect.stringMatching(/^judge-2 \w+ vote$/)])
    expect(c.votes.map((v: { seat: string }) => v.seat).sort()).toEqual(["judge-1", "judge-2", "judge-3"])
  })

  it("runs [verify] checks in each candidate's worktree and shows them to the judges", { timeout: 180_000 }, () => {
    const t = setup('\n[verify]\nchecks = ["ls *.txt; exit 3"]\n')
    const ran = t.magi({}, "run", "add your file")
    expect(ran.status, ran.stderr).toBe(0)
    const run = t.record()
    for (const x of run.competition.candidates) expect(x.checks).toMatchObject([{ command: "ls *.txt; exit 3", exit: 3, tail: `${x.agent}.txt\n` }])
    const prompt = NodeFs.readFileSync(NodePath.join(t.env.MAGI_HOME!, "runs", run.id, "artifacts", "judge-1-1.prompt.md"), "utf8")
    expect(prompt).toContain("- `ls *.txt; exit 3`: exit 3 after")
    // Blind: outside the candidates' own words (their fenced summary, numstat, patch
    // and check output, where this fixture writes its own name), magi names no implementer.
    const magisOwnWords = prompt.replace(/^(`{3,})[^\n]*\n[\s\S]*?\n\1$/gm, "")
    expect(magisOwnWords).toContain("## Candidate A")
    for (const n of NAMES) expect(magisOwnWords).not.toContain(n)
  })

  it("keeps the losers with keep_losers, lets the owner pick another, and folds on demand, refusing a run that can go on", { timeout: 180_000 }, () => {
    const t = setup("keep_losers = true\n")
    expect(t.magi({}, "run", "add your file").status).toBe(0)
    const run = t.record()
    const short = run.id.split("-").at(-1)
    expect(t.git("for-each-ref", "--format=%(refname:short)", "refs/heads/magi").split("\n")).toEqual(["A", "B", "C"].map((l) => `magi/${short}/${l}`))
    const picked = t.magi({}, "pick", short, "a")
    expect(picked.status, picked.stderr).toBe(0)
    expect(t.record()).toMatchObject({ branch: `magi/${short}/A`, competition: { winner: "A", pick: { label: "A" }, tally: { winner: "B" } } })
    expect(t.magi({}, "show", short).stdout).toContain("the owner picked A")
    expect(t.magi({}, "pick", short, "Z").stderr).toContain("cannot pick Z: its viable candidates are A, B, C")
    const folded = t.magi({}, "fold", short)
    expect(folded.status, folded.stderr).toBe(0)
    expect(t.git("for-each-ref", "--format=%(refname:short)", "refs/heads/magi")).toBe(`magi/${short}/A`)
    expect(t.magi({}, "fold", "--all").stdout).toBe("no finished competition left to fold\n")

    const stalled = setup()
    expect(stalled.magi({ COMPETE_JUDGE_alpha: "fail", COMPETE_JUDGE_beta: "fail" }, "run", "add your file").status).toBe(0)
    const refused = stalled.magi({}, "fold", stalled.record().id)
    expect(refused.status).not.toBe(0)
    expect(refused.stderr).toContain("is stalled and can still go on")
    expect(stalled.git("for-each-ref", "--format=%(refname:short)", "refs/heads/magi").split("\n").length).toBe(3)
  })

  it("runs a queued task as a competition, and a --solo task with one seat", { timeout: 180_000 }, async () => {
    const t = setup()
    const raced = fileTask(t.repo, t.env, ["add your file"])
    const solo = fileTask(t.repo, t.env, ["--solo", "add your file alone"])
    const daemon = serveDaemon(t.repo, t.env.MAGI_HOME!, t.env, t.dir)
    try {
      await until("both tasks done", () => tasksOnDisk(t.env.MAGI_HOME!).filter((x) => x.status === "done").length === 2, 150_000)
    } finally {
      await daemon.stop()
    }
    const runOf = (short: string) => {
      const task = tasksOnDisk(t.env.MAGI_HOME!).find((x) => x.id.endsWith(short))
      return JSON.parse(NodeFs.readFileSync(NodePath.join(t.env.MAGI_HOME!, "runs", task.runs[0], "run.json"), "utf8"))
    }
    expect(runOf(raced).competition).toMatchObject({ step: "elected", winner: "B" })
    expect(runOf(solo).competition).toBeUndefined()
    expect(tasksOnDisk(t.env.MAGI_HOME!).find((x) => x.id.endsWith(solo)).solo).toBe(true)
  })

  it("resumes only the candidate that asked with the owner's answer, then judges", { timeout: 240_000 }, async () => {
    const t = setup()
    const env = { COMPETE_ASK_SEAT: "impl-B" }
    const ran = t.magi(env, "run", "--seed", "7", "add your file")
    expect(ran.status, ran.stderr).toBe(0)
    let run = t.record()
    expect(run.status).toBe("waiting")
    expect(run.reason).toContain("candidate B asked the owner")
    const byLabel = (l: string) => run.competition.candidates.find((x: { label: string }) => x.label === l)
    expect(byLabel("B").status).toBe("pending")
    expect(byLabel("A").status).toBe("viable")
    const qdir = NodePath.join(t.env.MAGI_HOME!, "questions")
    const [file] = NodeFs.readdirSync(qdir).filter((f) => f.endsWith(".json"))
    const q = JSON.parse(NodeFs.readFileSync(NodePath.join(qdir, file!), "utf8"))
    expect(q).toMatchObject({ run: run.id, node: "implement", seat: "impl-B" })
    const before = t.calls()
    expect(before.filter((l) => l.startsWith("impl-")).map((l) => l.split(" ")[0]).sort()).toEqual(["impl-A", "impl-B", "impl-C"])
    const answered = t.magi({}, "answer", q.id, "--reply", "told")
    expect(answered.status, answered.stderr).toBe(0)
    const daemon = serveDaemon(t.repo, t.env.MAGI_HOME!, { ...t.env, ...env }, t.dir)
    try {
      await until("the competition elects", () => t.record().competition.step === "elected", 180_000)
    } finally {
      await daemon.stop()
    }
    run = t.record()
    const again = t.calls().slice(before.length)
    // Only impl-B was resumed; A and C were not re-invoked; then the panel ranked and voted.
    expect(again.filter((l) => l.startsWith("impl-")).map((l) => l.split(" ")[0])).toEqual(["impl-B"])
    expect(again.filter((l) => l.endsWith(" rank")).length).toBe(3)
    const b = run.competition.candidates.find((x: { label: string }) => x.label === "B")
    expect(b.status).toBe("viable")
    expect(b.commits.join("\n")).toContain("Add told.txt")
    expect(run.competition.tally.winner).toBe("B")
  })

  it("carries the run on when two asking candidates' answers are delivered at the same moment", { timeout: 240_000 }, async () => {
    const t = setup()
    const env = { COMPETE_ASK_SEAT: "impl-A,impl-B", COMPETE_ASK_TOGETHER: "1" }
    const ran = t.magi(env, "run", "--seed", "7", "add your file")
    expect(ran.status, ran.stderr).toBe(0)
    expect(t.record().status).toBe("waiting")
    const qdir = NodePath.join(t.env.MAGI_HOME!, "questions")
    const files = NodeFs.readdirSync(qdir).filter((f) => f.endsWith(".json"))
    expect(files.length).toBe(2)
    for (const f of files) expect(t.magi({}, "answer", f.slice(0, -5), "--reply", "told").status).toBe(0)
    const before = t.calls()
    const daemon = serveDaemon(t.repo, t.env.MAGI_HOME!, { ...t.env, ...env }, t.dir)
    try {
      await until("the competition elects", () => t.record().competition.step === "elected", 180_000)
    } finally {
      await daemon.stop()
    }
    const run = t.record()
    // Each asking seat was resumed once with its answer, none implemented again, and the panel judged.
    const again = t.calls().slice(before.length)
    expect(again.filter((l) => l.startsWith("impl-")).map((l) => l.split(" ")[0]).sort()).toEqual(["impl-A", "impl-B"])
    expect(again.filter((l) => l.endsWith(" rank")).length).toBe(3)
    for (const l of ["A", "B"]) {
      const x = run.competition.candidates.find((c: { label: string }) => c.label === l)
      expect(x.status).toBe("viable")
      expect(x.commits.join("\n")).toContain("Add told.txt")
    }
  })

  it("drops a candidate whose patch names an agent under on_leak = fail, and judges the rest", { timeout: 180_000 }, () => {
    const t = setup('\n[blind]\non_leak = "fail"\n')
    const ran = t.magi({ COMPETE_IMPL_alpha: "clean", COMPETE_IMPL_beta: "clean" }, "run", "add your file")
    expect(ran.status, ran.stderr).toBe(0)
    const c = t.record().competition
    const by = (n: string) => c.candidates.find((x: { agent: string }) => x.agent === n)
    expect(by("gamma")).toMatchObject({ status: "dropped", leaks: ["gamma"] })
    expect(by("gamma").dropped).toContain('its patch names gamma, and [blind] on_leak = "fail"')
    expect(by("alpha")).toMatchObject({ status: "viable", leaks: [] })
    expect(c.judges.every((j: { ranking: ReadonlyArray<string> }) => j.ranking.length === 2)).toBe(true)
    expect(c.step).toBe("elected")
  })

  it("shows the judges a leaking patch with the names [redacted] under on_leak = redact, the branch untouched", { timeout: 180_000 }, () => {
    const t = setup('\n[blind]\non_leak = "redact"\n')
    const ran = t.magi({}, "run", "add your file")
    expect(ran.status, ran.stderr).toBe(0)
    const run = t.record()
    expect(run.competition.candidates.map((x: { leaks: ReadonlyArray<string>; redacted: boolean }) => [x.leaks.length, x.redacted])).toEqual([
      [1, true],
      [1, true],
      [1, true]
    ])
    const prompt = NodeFs.readFileSync(NodePath.join(t.env.MAGI_HOME!, "runs", run.id, "artifacts", "judge-1-1.prompt.md"), "utf8")
    expect(prompt).toContain("[redacted] was here")
    for (const n of NAMES) expect(prompt).not.toMatch(new RegExp(`\\b${n}\\b`))
    const winner = run.competition.candidates.find((x: { label: string }) => x.label === run.competition.winner)
    expect(t.git("show", `${run.branch}:${winner.agent}.txt`)).toBe(`${winner.agent} was here`)
    expect(t.magi({}, "show", run.id).stdout).toContain(`its patch names an agent or vendor: ${winner.agent}; the judges saw them as [redacted]`)
  })

  it("parks a queued competition on SIGTERM with no attempt spent, and the next magi serve resumes that run", { timeout: 240_000 }, async () => {
    const t = setup()
    NodeFs.writeFileSync(NodePath.join(t.dir, "hang-judge-1"), "")
    const short = fileTask(t.repo, t.env, ["add your file"])
    const task = () => tasksOnDisk(t.env.MAGI_HOME!).find((x) => x.id.endsWith(short))
    const first = serveDaemon(t.repo, t.env.MAGI_HOME!, t.env, t.dir)
    try {
      await until("two judges answered", () => {
        try {
          return t.record().competition.judges.filter((j: { status: string }) => j.status === "answered").length === 2
        } catch {
          return false
        }
      }, 120_000)
    } finally {
      await first.stop()
    }
    const parked = t.record()
    expect(parked.status).toBe("stalled")
    expect(parked.reason).toContain("parked at its judge step when magi stopped")
    expect(task()).toMatchObject({ status: "failed", attempts: 0 })
    NodeFs.rmSync(NodePath.join(t.dir, "hang-judge-1"))
    const before = t.calls()
    const second = serveDaemon(t.repo, t.env.MAGI_HOME!, t.env, t.dir)
    try {
      await until("the task is done", () => task()?.status === "done", 150_000)
    } finally {
      await second.stop()
    }
    // The same run went on: no implementer again, only the judge that had not answered ranked.
    expect(task().runs).toEqual([parked.id])
    const again = t.calls().slice(before.length)
    expect(again.filter((l) => l.startsWith("impl-"))).toEqual([])
    expect(again.filter((l) => l.endsWith(" rank")).map((l) => l.split(" ")[0])).toEqual(["judge-1"])
    expect(t.record().competition.step).toBe("elected")
  })
  it("hands a seat whose agent hit its usage limit to the next implementer, recorded, and goes on", { timeout: 180_000 }, () => {
    const t = setup()
    const ran = t.magi({ COMPETE_IMPL_alpha: "limit" }, "run", "add your file")
    expect(ran.status, ran.stderr).toBe(0)
    const run = t.record()
    const c = run.competition
    const taken = c.candidates.find((x: { fallback_from: ReadonlyArray<string> }) => x.fallback_from.length > 0)
    // alpha is first in [roles] implementers (the roster), so beta, the next, takes its seat over.
    expect(taken).toMatchObject({ agent: "beta", fallback_from: ["alpha"], status: "viable" })
    expect(run.seats.find((s: { key: string }) => s.key === taken.seat).agent).toBe("beta")
    expect(t.calls().filter((l) => l.startsWith(`${taken.seat} `))).toEqual([`${taken.seat} alpha impl`, `${taken.seat} beta impl`])
    expect(c.step).toBe("elected")
    expect(c.candidates.every((x: { status: string }) => x.status === "viable")).toBe(true)
  })
})
