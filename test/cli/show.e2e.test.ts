/**
 * `magi show` and `magi run rm` over a real repository and a real run (issue
 * 11, point 13): what a run did, what to do next, and removing it after.
 */
import { describe, expect, it } from "vitest"
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { tempDirSync, until } from "../support.js"
import { magi, repoWithAgent, sampleRun, serveDaemon, tasksOnDisk } from "../runSupport.js"

/** An agent that adds a file and says so; magi commits what it left. */
const HELLO_AGENT = ["sh", "-c", "echo hello > hello.txt; echo Added hello.txt"]

const setup = () => {
  const dir = tempDirSync()
  const repo = repoWithAgent(dir, HELLO_AGENT)
  const env = { MAGI_HOME: NodePath.join(dir, "home") }
  return { dir, repo, env, magi: (...args: string[]) => magi(repo, env, ...args) }
}

describe("magi show", () => {
  it("shows the latest run's instruction, duration, commits and diffstat, artifacts and what to do next", { timeout: 120_000 }, () => {
    const t = setup()
    const ran = t.magi("run", "add a hello file")
    expect(ran.status, ran.stderr).toBe(0)
    const [id] = NodeFs.readdirSync(NodePath.join(t.env.MAGI_HOME, "runs"))
    const short = id!.split("-").at(-1)!

    const shown = t.magi("show")
    expect(shown.status, shown.stderr).toBe(0)
    const out = shown.stdout
    expect(out).toContain(`run ${id}  done`)
    expect(out).toContain("instruction:\n  add a hello file\n")
    expect(out).toMatch(/\ntook \d+s \(started \d{4}-\d\d-\d\d \d\d:\d\d\)\n/)
    expect(out).toMatch(
      new RegExp(`commits on magi/${short} \\(1\\):\\n  [0-9a-f]{7,} Added hello.txt\\n  hello.txt \\| 1 \\+\\n  1 file changed, 1 insertion\\(\\+\\)`)
    )
    const artifacts = out.split("\n").filter((l) => l.includes("/artifacts/")).map((l) => l.trim().split("  ")[0]!)
    expect(artifacts.length).toBeGreaterThan(0)
    for (const path of artifacts) expect(NodeFs.existsSync(path), path).toBe(true)
    expect(out).toContain(`next:\n  git -C ${t.repo} diff trunk...magi/${short}\n`)
    expect(out).toContain(`  git -C ${t.repo} merge magi/${short}\n`)
    expect(out).toContain(`  magi run rm ${id}\n`)
    // The same run by the start of its short id.
    expect(t.magi("show", short.slice(0, 3)).stdout).toBe(out)
  })

  it("offers no diff or merge for a failed run that committed nothing, and says its seat has no session rather than none yet", { timeout: 120_000 }, () => {
    const dir = tempDirSync()
    const repo = repoWithAgent(dir, ["sh", "-c", "echo 'error: no API key' >&2; exit 1"])
    const env = { MAGI_HOME: NodePath.join(dir, "home") }
    expect(magi(repo, env, "run", "add a hello file").status).toBe(1)
    const [id] = NodeFs.readdirSync(NodePath.join(env.MAGI_HOME, "runs"))
    const short = id!.split("-").at(-1)!

    const out = magi(repo, env, "show").stdout
    expect(out).toContain(`run ${id}  failed`)
    expect(out).toContain(`commits: none on magi/${short} yet`)
    expect(out).toContain("  seat      impl: fake, 1 turn(s), session none\n")
    expect(out).not.toContain("none yet\n")
    expect(out).not.toContain(" diff ")
    expect(out).not.toContain(" merge ")
    expect(out).toContain(`next:\n  magi run rm ${id}\n`)
  })

  it("says in one line why an agent failed, not its whole stderr, in magi show and magi runs alike", { timeout: 120_000 }, () => {
    const dir = tempDirSync()
    const noisy =
      'for i in $(seq 1 60); do echo "debug: loading plugin $i" >&2; done; echo "Error: no API key; set ANTHROPIC_API_KEY" >&2; echo bye >&2; exit 1'
    const repo = repoWithAgent(dir, ["sh", "-c", noisy])
    const env = { MAGI_HOME: NodePath.join(dir, "home") }
    expect(magi(repo, env, "run", "add a hello file").status).toBe(1)
    const [id] = NodeFs.readdirSync(NodePath.join(env.MAGI_HOME, "runs"))

    const shown = magi(repo, env, "show").stdout
    expect(shown).toContain(`run ${id}  failed (the agent's turn failed (exit 1): Error: no API key; set ANTHROPIC_API_KEY)\n`)
    expect(shown).not.toContain("debug: loading plugin")
    // The whole log is still there, named among the artifacts.
    expect(shown).toContain(NodePath.join(env.MAGI_HOME, "runs", id!, "artifacts", "impl-1.err"))
    const rows = magi(repo, env, "runs").stdout.trimEnd().split("\n")
    expect(rows).toHaveLength(1)
    expect(rows[0]).not.toContain("debug")
    expect(rows[0]).toContain("add a hello file")
  })

  it("names the task the queue started the run for", { timeout: 120_000 }, async () => {
    const t = setup()
    expect(t.magi("task", "add", "--title", "Say hello", "add a hello file").status).toBe(0)
    const [task] = tasksOnDisk(t.env.MAGI_HOME)
    const daemon = serveDaemon(t.repo, t.env.MAGI_HOME, t.env, t.dir)
    try {
      await until("the task is done", () => tasksOnDisk(t.env.MAGI_HOME)[0].status === "done", 60_000)
    } finally {
      await daemon.stop()
    }
    const taskShort = task.id.split("-").at(-1)
    const out = t.magi("show").stdout
    expect(out).toContain(`  task      ${taskShort} Say hello (done; magi task show ${taskShort})\n`)
  })

  it("says there is nothing to show before the first run", () => {
    const t = setup()
    const shown = t.magi("show")
    expect(shown.status).toBe(1)
    expect(shown.stderr).toBe("magi: no runs yet; start one with magi run TEXT\n")
  })
})

describe("magi show tells the truth about a run's state (issue 27.5, 27.7)", () => {
  const plant = (t: ReturnType<typeof setup>, id: string, over: Parameters<typeof sampleRun>[1]) => {
    NodeFs.mkdirSync(NodePath.join(t.env.MAGI_HOME, "runs", id), { recursive: true })
    NodeFs.writeFileSync(NodePath.join(t.env.MAGI_HOME, "runs", id, "run.json"), JSON.stringify(sampleRun(id, { repo: t.repo, ...over })))
  }

  it('a run done after an interrupted turn shows done alone, not "interrupted"', { timeout: 60_000 }, () => {
    const t = setup()
    const id = "20261130-101500-7a7b"
    plant(t, id, { status: "done", reason: "interrupted; continue with magi run --resume" })
    const out = t.magi("show", "7a7b").stdout
    expect(out).toContain(`run ${id}  done\n`)
    expect(out).not.toContain("interrupted")
  })

  it('a stalled run is not "running for": it says since when it has sat, after how long', { timeout: 60_000 }, () => {
    const t = setup()
    const id = "20261130-101500-7a7c"
    plant(t, id, { status: "stalled", reason: "the agent hit its usage limit", created_at: "2026-11-30T10:15:00Z", updated_at: "2026-11-30T10:15:24Z" })
    const out = t.magi("show", "7a7c").stdout
    expect(out).not.toContain("running for")
    expect(out).toMatch(/\nstalled since \d{4}-\d\d-\d\d \d\d:\d\d, after 24s \(started /)
  })
})

describe("a turn that prints 20 MB (issue 32)", () => {
  it("leaves a bounded run.json, the whole output in its artifact, and magi show and the record readable", { timeout: 120_000 }, () => {
    const dir = tempDirSync()
    // 20 MB on stdout in one turn, its last line the one that matters.
    const repo = repoWithAgent(dir, ["sh", "-c", "head -c 20000000 /dev/zero | tr '\\0' x; echo; echo all done"])
    const env = { MAGI_HOME: NodePath.join(dir, "home") }
    const ran = magi(repo, env, "run", "print a lot")
    expect(ran.status, ran.stderr).toBe(0)
    const [id] = NodeFs.readdirSync(NodePath.join(env.MAGI_HOME, "runs"))
    const record = NodePath.join(env.MAGI_HOME, "runs", id!, "run.json")
    expect(NodeFs.statSync(record).size).toBeLessThan(200 * 1024)
    const run = JSON.parse(NodeFs.readFileSync(record, "utf8"))
    expect(run.status).toBe("done")
    expect(run.summary).toMatch(/^\[… the first \d+ characters of this reply are in the artifact impl-1\.out\]\n/)
    expect(run.summary.endsWith("all done")).toBe(true)
    expect(NodeFs.statSync(NodePath.join(env.MAGI_HOME, "runs", id!, "artifacts", "impl-1.out")).size).toBeGreaterThanOrEqual(20_000_000)
    const shown = magi(repo, env, "show", "--json")
    expect(shown.status, shown.stderr).toBe(0)
    expect(JSON.parse(shown.stdout).id).toBe(id)
  })
})

describe("magi run rm", () => {
  it("removes a finished run's worktree and branch, keeps its record marked removed, and says which", { timeout: 120_000 }, () => {
    const t = setup()
    expect(t.magi("run", "add a hello file").status).toBe(0)
    const [id] = NodeFs.readdirSync(NodePath.join(t.env.MAGI_HOME, "runs"))
    const short = id!.split("-").at(-1)!
    const worktree = NodePath.join(t.env.MAGI_HOME, "worktrees", id!)
    expect(NodeFs.existsSync(worktree)).toBe(true)

    const removed = t.magi("run", "rm", short.slice(0, 2))
    expect(removed.status, removed.stderr).toBe(0)
    expect(removed.stdout).toContain(`removed worktree ${worktree}\n`)
    expect(removed.stdout).toMatch(
      new RegExp(`deleted branch magi/${short} \\(was [0-9a-f]{12}; \`git -C \\S+ branch magi/${short} [0-9a-f]{40}\` brings it back\\)`)
    )
    expect(removed.stdout).toContain(`kept run ${id}'s record, marked removed`)
    expect(NodeFs.existsSync(worktree)).toBe(false)
    expect(execFileSync("git", ["branch", "--list", `magi/${short}`], { cwd: t.repo, encoding: "utf8" })).toBe("")
    const record = JSON.parse(NodeFs.readFileSync(NodePath.join(t.env.MAGI_HOME, "runs", id!, "run.json"), "utf8"))
    expect(record.removed_at).toMatch(/^\d{4}-/)

    const shown = t.magi("show", short)
    expect(shown.stdout).toMatch(/removed \d{4}-\d\d-\d\d \d\d:\d\d: its worktree and branch are gone/)
    expect(shown.stdout).not.toContain("next:")
    expect(t.magi("runs").stdout).toContain(`${short}  done, removed`)

    const again = t.magi("run", "rm", short)
    expect(again.status).toBe(1)
    expect(again.stderr).toContain(`magi: run ${id} was already removed`)
  })

  it("refuses a run that may still go on, touching nothing", { timeout: 60_000 }, () => {
    const t = setup()
    const id = "20261130-101500-7a7a"
    const worktree = NodePath.join(t.dir, "live-worktree")
    NodeFs.mkdirSync(worktree)
    NodeFs.mkdirSync(NodePath.join(t.env.MAGI_HOME, "runs", id), { recursive: true })
    NodeFs.writeFileSync(
      NodePath.join(t.env.MAGI_HOME, "runs", id, "run.json"),
      JSON.stringify(sampleRun(id, { status: "waiting", repo: t.repo, worktree }))
    )
    const refused = t.magi("run", "rm", "7a7a")
    expect(refused.status).toBe(1)
    expect(refused.stderr).toBe(`magi: run ${id} is waiting, so it may still go on in its worktree; only a done, failed or superseded run is removed\n`)
    expect(NodeFs.existsSync(worktree)).toBe(true)
  })

  it("takes a quoted instruction that starts with rm as an instruction, and says what rm needs", { timeout: 60_000 }, () => {
    const t = setup()
    const bare = t.magi("run", "rm")
    expect(bare.status).toBe(2)
    expect(bare.stderr).toBe("magi: magi run rm needs the run's id: magi run rm ID (magi runs lists them)\n")
    // One quoted word: an instruction for the agent, not a removal.
    const quoted = t.magi("run", "rm the stale hello.txt")
    expect(quoted.status, quoted.stderr).toBe(0)
    expect(quoted.stdout).toBe("Added hello.txt\n")
  })
})

describe("magi run outside a repository", () => {
  it("says it needs one and suggests --repo", () => {
    const dir = tempDirSync()
    const ran = magi(dir, { MAGI_HOME: NodePath.join(dir, "home") }, "run", "do something")
    expect(ran.status).toBe(1)
    expect(ran.stderr).toBe(
      `magi: ${dir} is not inside a git repository; a run works in a worktree of one, so run it from inside the repository or give --repo DIR\n`
    )
  })
})
