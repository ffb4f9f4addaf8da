/**
 * `magi task` as the owner and agents use it: the built CLI, real processes,
 * a real git repository and a real home on disk.
 */
import { describe, expect, it } from "@effect/vitest"
import { execFileSync, spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { MAGI, magi, sampleRun } from "../runSupport.js"
import { choiceQuestion, tempDirSync } from "../support.js"

interface World {
  readonly dir: string
  readonly repo: string
  readonly home: string
  readonly env: Record<string, string>
  readonly queue: string
}

const world = (agent = true): World => {
  const dir = tempDirSync()
  const repo = NodePath.join(dir, "repo")
  NodeFs.mkdirSync(NodePath.join(repo, "src", "deep"), { recursive: true })
  execFileSync("git", ["init", "-q", "-b", "trunk"], { cwd: repo })
  // An agent to run the tasks, so filing says nothing of its absence.
  if (agent) NodeFs.writeFileSync(NodePath.join(repo, "magi.toml"), `[agents.fake]\nkind = "command"\ncommand = ["true"]\n`)
  const home = NodePath.join(dir, "home")
  return { dir, repo, home, env: { MAGI_HOME: home, MAGI_RUN: "", MAGI_NODE: "" }, queue: NodePath.join(home, "queue") }
}

const files = (w: World) => (NodeFs.existsSync(w.queue) ? NodeFs.readdirSync(w.queue).sort() : [])
const stored = (w: World, short: string) => {
  const name = files(w).find((f) => f.endsWith(`-${short}.json`))!
  return JSON.parse(NodeFs.readFileSync(NodePath.join(w.queue, name), "utf8"))
}
const rewrite = (w: World, short: string, over: Record<string, unknown>) => {
  const name = files(w).find((f) => f.endsWith(`-${short}.json`))!
  NodeFs.writeFileSync(NodePath.join(w.queue, name), JSON.stringify({ ...stored(w, short), ...over }, null, 2) + "\n")
}
/** File one task; its short id. */
const filed = (w: World, ...args: string[]): string => {
  const r = magi(w.repo, w.env, "task", "add", ...args)
  expect(r.stderr).toBe("")
  expect(r.status).toBe(0)
  return /^filed (\w+) /.exec(r.stdout)![1]!
}

/** A refusal: exit 1, its message on stderr, and not one byte of the queue changed. */
const refusedWith = (w: World, args: ReadonlyArray<string>, message: string, cwd = w.repo) => {
  const before = files(w).map((f) => [f, NodeFs.readFileSync(NodePath.join(w.queue, f), "utf8")])
  const r = magi(cwd, w.env, ...args)
  expect(r.stderr).toContain(message)
  expect(r.status).toBe(1)
  expect(r.stdout).toBe("")
  expect(files(w).map((f) => [f, NodeFs.readFileSync(NodePath.join(w.queue, f), "utf8")])).toEqual(before)
}

describe("magi task add with no agent to run it", { timeout: 180_000 }, () => {
  it("files the task and says it cannot run until an agent is configured, and how; task list and show say it on the task", () => {
    const w = world(false)
    // No agent CLI on this PATH: node and the system's tools only.
    const env = { ...w.env, PATH: `${NodePath.dirname(process.execPath)}:/usr/bin:/bin` }
    const r = magi(w.repo, env, "task", "add", "Add a cache")
    expect(r.status, r.stderr).toBe(0)
    const short = /^filed (\w+) /.exec(r.stdout)![1]!
    expect(stored(w, short)).toMatchObject({ status: "queued", instruction: "Add a cache" })
    expect(r.stderr).toContain(`task ${short} is filed, but no agent is configured for ${NodeFs.realpathSync(w.repo)}, so it cannot run until one is`)
    expect(r.stderr).toContain("[agents.<id>]")
    expect(r.stderr).toContain("docs/agents/command.md")
    const listed = magi(w.repo, env, "task", "list")
    expect(listed.stdout).toContain(`(cannot run: no agent is configured; magi task show ${short} says how)`)
    const shown = magi(w.repo, env, "task", "show", short)
    expect(shown.stdout).toContain("  cannot run: no agent is configured for")
    // Once one is, nothing of it is said.
    NodeFs.writeFileSync(NodePath.join(w.repo, "magi.toml"), `[agents.fake]\nkind = "command"\ncommand = ["true"]\n`)
    expect(magi(w.repo, env, "task", "list").stdout).not.toContain("cannot run")
    expect(magi(w.repo, env, "task", "show", short).stdout).not.toContain("cannot run")
  })
})

describe("magi task add", { timeout: 180_000 }, () => {
  it("files a task from the words, titled by its first line, in the repo's root, by the owner", () => {
    const w = world()
    const r = magi(NodePath.join(w.repo, "src", "deep"), w.env, "task", "add", "Add", "a", "cache")
    expect(r.status).toBe(0)
    expect(r.stdout).toMatch(/^filed [0-9a-f]{4} \[human\] Add a cache\n$/)
    const short = /^filed (\w+)/.exec(r.stdout)![1]!
    expect(stored(w, short)).toMatchObject({
      schema: 1,
      title: "Add a cache",
      instruction: "Add a cache",
      repo: NodeFs.realpathSync(w.repo),
      source: { kind: "human" },
      priority: 0,
      status: "queued",
      attempts: 0
    })
  })

  it("inside a run, files as the agent of that run", () => {
    const w = world()
    const r = magi(w.repo, { ...w.env, MAGI_RUN: "20260902-201256-9fb7", MAGI_NODE: "impl" }, "task", "add", "Follow up on flaky test")
    expect(r.stdout).toMatch(/^filed \w+ \[impl@9fb7\] Follow up on flaky test\n$/)
    expect(stored(w, /^filed (\w+)/.exec(r.stdout)![1]!).source).toEqual({ kind: "agent", run: "20260902-201256-9fb7", node: "impl" })
  })

  it("takes --file, --file - (stdin), --title, --priority, --repo and --json", () => {
    const w = world()
    const spec = NodePath.join(w.dir, "spec.md")
    NodeFs.writeFileSync(spec, "# Use Redis\n\nfor the cache\n")
    const a = filed(w, "--file", spec, "--priority", "4", "--no-review")
    expect(stored(w, a)).toMatchObject({ title: "Use Redis", instruction: "# Use Redis\n\nfor the cache\n", priority: 4 })
    const fromStdin = spawnSync(process.execPath, [MAGI, "task", "add", "--file", "-", "--no-review", "--title", "Mine", "--json"], {
      cwd: w.dir,
      env: { ...process.env, ...w.env, XDG_CONFIG_HOME: NodePath.join(w.dir, "nc") },
      input: "words from a pipe\n",
      encoding: "utf8"
    })
    expect(fromStdin.status).toBe(1)
    expect(fromStdin.stderr).toContain("not inside a git repository")
    const ok = spawnSync(process.execPath, [MAGI, "task", "add", "--file", "-", "--no-review", "--title", "Mine", "--json", "--repo", w.repo], {
      cwd: w.dir,
      env: { ...process.env, ...w.env, XDG_CONFIG_HOME: NodePath.join(w.dir, "nc") },
      input: "words from a pipe\n",
      encoding: "utf8"
    })
    expect(ok.status).toBe(0)
    expect(JSON.parse(ok.stdout)).toMatchObject({ title: "Mine", instruction: "words from a pipe\n", repo: NodeFs.realpathSync(w.repo) })
  })

  it("reads stdin only for --file -: piped text without it files nothing", () => {
    const w = world()
    const r = spawnSync(process.execPath, [MAGI, "task", "add"], {
      cwd: w.repo,
      env: { ...process.env, ...w.env, XDG_CONFIG_HOME: NodePath.join(w.dir, "nc") },
      input: "this must not become a task\n",
      encoding: "utf8",
      timeout: 30_000
    })
    expect(r.stderr).toContain("needs an instruction")
    expect(r.status).toBe(2)
    expect(files(w)).toEqual([])
  })

  it("refuses text starting with a subcommand's name unless -- comes first", () => {
    const w = world()
    refusedWith(w, ["task", "add", "list", "the", "flaky", "tests"], "`list` is a magi task command; to file text that starts with it, put -- before the text")
    expect(files(w)).toEqual([])
    const r = magi(w.repo, w.env, "task", "add", "--", "list", "the", "flaky", "tests")
    expect(r.stdout).toMatch(/\[human\] list the flaky tests\n$/)
  })

  it("refuses an instruction over the cap, from a file or from stdin, filing nothing", () => {
    const w = world()
    const big = NodePath.join(w.dir, "big.md")
    NodeFs.writeFileSync(big, "x".repeat(128 * 1024 + 1))
    refusedWith(w, ["task", "add", "--file", big], "over magi's cap of 131072 bytes")
    const piped = spawnSync(process.execPath, [MAGI, "task", "add", "--file", "-"], {
      cwd: w.repo,
      env: { ...process.env, ...w.env, XDG_CONFIG_HOME: NodePath.join(w.dir, "nc") },
      input: "y".repeat(200 * 1024),
      encoding: "utf8"
    })
    expect(piped.status).toBe(1)
    expect(piped.stderr).toContain("the instruction on stdin is over magi's cap")
    refusedWith(w, ["task", "add", "--title", "t".repeat(201), "short"], "a title is at most 200 characters")
    expect(files(w)).toEqual([])
  })

  it("refuses a directory outside any git repository, and one that does not exist", () => {
    const w = world()
    refusedWith(w, ["task", "add", "x"], "is not inside a git repository", w.dir)
    refusedWith(w, ["task", "add", "--repo", NodePath.join(w.dir, "nope"), "x"], "does not exist")
    expect(files(w)).toEqual([])
  })

  it("--after files it blocked on a task or a question, and refuses an id that names nothing", () => {
    const w = world()
    const first = filed(w, "first")
    const qdir = NodePath.join(w.home, "questions")
    NodeFs.mkdirSync(qdir, { recursive: true })
    const qid = "20260902-231501-ab12"
    NodeFs.writeFileSync(
      NodePath.join(qdir, `${qid}.json`),
      JSON.stringify({
        schema: 4,
        id: qid,
        run: "",
        node: "ask",
        seat: "",
        summary: "Which backend?",
        detail: "",
        choices: [],
        status: "open",
        asked_at: "2026-09-02T23:15:01Z",
        answered_at: null,
        answer: null
      })
    )
    const r = magi(w.repo, w.env, "task", "add", "--after", first, "--after", "ab12", "second")
    expect(r.status).toBe(0)
    expect(r.stderr).toContain(`waits on ${first}, ab12 before it runs`)
    const second = /^filed (\w+)/.exec(r.stdout)![1]!
    expect(stored(w, second)).toMatchObject({
      status: "blocked",
      blocked_from: "queued",
      blocked_by: [stored(w, first).id, qid],
      block_reason: `after task ${first}, question ab12`
    })
    refusedWith(w, ["task", "add", "--after", "zzzz", "third"], "--after `zzzz`: no task or question has that id")
  })

  it("--after a task that is done already files it to run now, and says it does not wait", () => {
    const w = world()
    const first = filed(w, "first")
    expect(magi(w.repo, w.env, "task", "done", first).status).toBe(0)
    const r = magi(w.repo, w.env, "task", "add", "--after", first, "second")
    expect(r.status).toBe(0)
    const second = /^filed (\w+)/.exec(r.stdout)![1]!
    expect(r.stderr).toBe(`task ${first} is done already, so ${second} does not wait on it\n`)
    expect(stored(w, second)).toMatchObject({ status: "queued", blocked_by: [] })
  })
})

/** Block until the wall clock enters a new second, so the next filing is strictly newer. */
const nextSecond = () => {
  const second = Math.floor(Date.now() / 1000)
  while (Math.floor(Date.now() / 1000) === second) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20)
}

describe("magi task list and show", { timeout: 180_000 }, () => {
  it("lists open tasks by priority then newest, --all adds done ones, --json is the records", () => {
    const w = world()
    const low = filed(w, "low one")
    const high = filed(w, "--priority", "2", "high one")
    // "Newest" is by the filing's whole second; in the same second the order is the ids'.
    nextSecond()
    const gone = filed(w, "finished one")
    expect(magi(w.repo, w.env, "task", "done", gone).status).toBe(0)
    const list = magi(w.repo, w.env, "task", "list")
    expect(list.stdout.split("\n").filter(Boolean).map((l) => l.slice(0, 4))).toEqual([high, low])
    expect(list.stdout).toContain(`${high}  queued   p2   0x  [human] high one`)
    const all = magi(w.repo, w.env, "task", "list", "--all")
    expect(all.stdout.split("\n").filter(Boolean).map((l) => l.slice(0, 4))).toEqual([high, gone, low])
    expect(JSON.parse(magi(w.repo, w.env, "task", "list", "--json").stdout).map((t: { title: string }) => t.title)).toEqual([
      "high one",
      "low one"
    ])
  })

  it("skips a task file it cannot read, naming it on stderr, and still lists the rest", () => {
    const w = world()
    const ok = filed(w, "readable")
    NodeFs.writeFileSync(NodePath.join(w.queue, "20260101-000000-bad1.json"), "{ broken")
    const r = magi(w.repo, w.env, "task", "list")
    expect(r.status).toBe(0)
    expect(r.stdout).toContain(`${ok}  queued`)
    expect(r.stderr).toContain("task 20260101-000000-bad1 skipped:")
    expect(r.stderr).toContain("not valid JSON")
  })

  it("says which question a running task's run waits on", () => {
    const w = world()
    const t = filed(w, "Pick a backend")
    const runId = "20260902-201256-9fb7"
    const qid = "20260902-231501-ab12"
    NodeFs.mkdirSync(NodePath.join(w.home, "runs", runId), { recursive: true })
    NodeFs.writeFileSync(NodePath.join(w.home, "runs", runId, "run.json"), JSON.stringify(sampleRun(runId, { status: "waiting" })))
    NodeFs.mkdirSync(NodePath.join(w.home, "questions"), { recursive: true })
    NodeFs.writeFileSync(
      NodePath.join(w.home, "questions", `${qid}.json`),
      JSON.stringify({ ...choiceQuestion(qid), run: runId, seat: "impl" })
    )
    rewrite(w, t, { status: "running", attempts: 1, runs: [runId] })
    expect(magi(w.repo, w.env, "task", "list").stdout).toContain(
      `${t}  running  p0   1x  [human] Pick a backend  (waiting on the owner: run 9fb7 asked a question)`
    )
    expect(magi(w.repo, w.env, "task", "show", t).stdout).toContain(
      "waiting on the owner: question ab12 (open): Which storage backend should the cache use?"
    )
  })

  it("keeps one row per task when an agent's whole stderr is its last error, showing the line that says what went wrong", () => {
    const w = world()
    const stderr = [...Array.from({ length: 40 }, (_, i) => `debug: loading plugin ${i}`), "Error: no API key; set ANTHROPIC_API_KEY", "bye"].join("\n")
    const failed = filed(w, "Add a cache")
    rewrite(w, failed, { status: "failed", attempts: 1, last_error: `the agent's turn failed (exit 1): ${stderr}` })
    const held = filed(w, "Add a queue")
    rewrite(w, held, {
      status: "held",
      attempts: 2,
      hold_source: "machine",
      last_error: `the agent's turn failed (exit 1): ${stderr}`,
      hold_reason: `failed 2 of 2 attempts; last: the agent's turn failed (exit 1): ${stderr}`
    })
    const rows = magi(w.repo, w.env, "task", "list").stdout.trimEnd().split("\n")
    expect(rows).toHaveLength(2)
    const row = (short: string) => rows.find((r) => r.startsWith(short))!
    expect(row(failed)).toContain("(last error: Error: no API key; set ANTHROPIC_API_KEY)")
    expect(row(held)).toContain("(held by magi: failed 2 of 2 attempts; last: Error: no API key; set ANTHROPIC_API_KEY)")
    expect(magi(w.repo, w.env, "task", "show", failed).stdout).toContain("  last error Error: no API key; set ANTHROPIC_API_KEY\n")
  })

  it("shows one task in full, and as JSON", () => {
    const w = world()
    const t = filed(w, "--priority", "1", "Add a cache")
    const r = magi(w.repo, w.env, "task", "show", t)
    expect(r.stdout).toContain(`task ${stored(w, t).id}  queued`)
    expect(r.stdout).toContain("  priority   1")
    expect(r.stdout).toContain("\nAdd a cache\n")
    expect(JSON.parse(magi(w.repo, w.env, "task", "show", t, "--json").stdout)).toEqual(stored(w, t))
  })
})

describe("changing a task", { timeout: 180_000 }, () => {
  it("holds with a reason, releases, reprioritizes, marks done and removes", () => {
    const w = world()
    const t = filed(w, "Add a cache")
    expect(magi(w.repo, w.env, "task", "hold", t, "not", "before", "Monday").stdout).toBe(`held ${t} Add a cache (not before Monday)\n`)
    expect(stored(w, t)).toMatchObject({ status: "held", hold_source: "manual", hold_reason: "not before Monday" })
    expect(magi(w.repo, w.env, "task", "release", t).status).toBe(0)
    expect(stored(w, t)).toMatchObject({ status: "queued", hold_reason: null, hold_source: null })
    expect(magi(w.repo, w.env, "task", "priority", t, "7").stdout).toBe(`priority 7 for ${t} Add a cache\n`)
    expect(stored(w, t).priority).toBe(7)
    expect(magi(w.repo, w.env, "task", "done", t).stdout).toBe(`done ${t} Add a cache\n`)
    expect(stored(w, t).status).toBe("done")
    expect(magi(w.repo, w.env, "task", "rm", t).stdout).toBe(`removed ${t} Add a cache\n`)
    expect(files(w)).toEqual([])
  })

  it("edits the instruction in $EDITOR, the title following the first line", () => {
    const w = world()
    const t = filed(w, "Use SQLite")
    const editor = NodePath.join(w.dir, "editor.sh")
    NodeFs.writeFileSync(editor, `#!/bin/sh\nprintf '# Use Redis\\n\\nnot SQLite\\n' > "$1"\n`, { mode: 0o755 })
    const r = magi(w.repo, { ...w.env, VISUAL: "", EDITOR: editor }, "task", "edit", t)
    expect(r.stdout).toBe(`edited ${t} Use Redis\n`)
    expect(stored(w, t)).toMatchObject({ instruction: "# Use Redis\n\nnot SQLite\n", title: "Use Redis" })
    const unchanged = magi(w.repo, { ...w.env, VISUAL: "true", EDITOR: editor }, "task", "edit", t)
    expect(unchanged.stdout).toBe(`no change to ${t} Use Redis\n`)
  })

  it("refuses each mistake with its own message, exit 1 and nothing written", () => {
    const w = world()
    const a = filed(w, "first")
    const b = filed(w, "second")
    const idA = stored(w, a).id as string
    const idB = stored(w, b).id as string
    const prefix = idA.slice(0, 9)
    if (idB.startsWith(prefix)) refusedWith(w, ["task", "show", prefix], `\`${prefix}\` matches 2 tasks:`)
    refusedWith(w, ["task", "hold", "zzzz"], "no task matches `zzzz`")
    refusedWith(w, ["task", "done", "zzzz"], "no task matches `zzzz`")
    rewrite(w, a, { status: "running", attempts: 1, runs: ["20260902-201256-9fb7"] })
    refusedWith(w, ["task", "priority", a, "3"], `task ${a} is running; change its priority once its run has ended`)
    refusedWith(w, ["task", "edit", a], `task ${a} is running; edit it once its run has ended`)
    refusedWith(w, ["task", "rm", a], `task ${a} is running; remove it once its run has ended`)
    refusedWith(w, ["task", "release", a], `task ${a} is running; release it once its run has ended`)
    expect(magi(w.repo, w.env, "task", "done", b).status).toBe(0)
    refusedWith(w, ["task", "done", b], `task ${b} is already done`)
    refusedWith(w, ["task", "hold", b], `task ${b} is done; there is nothing left to hold`)
  })
})
