/**
 * Every bench in scripts/bench/, run small as a real process, so none of them
 * rots between the times someone measures with it: `web.mjs` had crashed on
 * the `/api/questions` of the day and left its `magi web` listening.
 *
 * Each runs through `run-all.mjs` (which bundles the TypeScript ones) with
 * its sizes from `MAGI_BENCH_*`, and must exit 0, print its figures, and leave
 * nothing behind: every bench gets a temp folder of its own as `TMPDIR`, which
 * must be empty after it, and no process may still name that folder (in its
 * command line or its environment) once it has exited. Nothing is asserted on
 * the figures' values: the machine's load moves them; the mechanisms they
 * depend on are tested where they live (e.g. test/daemon/QueueLoop.test.ts for
 * the waiter's wake-ups).
 *
 * `page-ab.mjs` is not run here: it compares two builds on a home that
 * `history.mjs` built and kept, loads of at least 100 open cards in Chromium,
 * 40 page loads by default; its page-loading code is `history.mjs`'s own
 * (lib.mjs `loadPage`), which runs here with one load when Chromium is
 * installed.
 */
import { describe, expect, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"

interface Bench {
  readonly name: string
  readonly env: Readonly<Record<string, string>>
  /** What its report must say: the lines of figures it exists for. */
  readonly prints: ReadonlyArray<RegExp>
}

const CHROMIUM = NodeFs.existsSync("/usr/bin/chromium")

const benches: ReadonlyArray<Bench> = [
  { name: "answer-latency", env: { MAGI_BENCH_RUNS: "3" }, prints: [/answer latency over 3 runs: median [\d.]+ ms, max [\d.]+ ms/] },
  { name: "ask-memory", env: { MAGI_BENCH_WAIT_MS: "1500" }, prints: [/peak memory of a waiting magi ask: [\d.]+ MB/] },
  {
    name: "cold-start",
    env: { MAGI_BENCH_RUNS: "3" },
    prints: [
      /cold start: node -e 0 [\d.]+ ms, magi --help [\d.]+ ms \([\d.]+x\)/,
      /magi --version: median [\d.]+ ms wall, ([\d.]+ ms|n\/a) CPU/,
      /magi answer --list \(empty home\): median [\d.]+ ms wall, ([\d.]+ ms|n\/a) CPU/,
      /magi runs \(empty home\): median [\d.]+ ms wall, ([\d.]+ ms|n\/a) CPU/
    ]
  },
  {
    name: "history",
    env: { MAGI_BENCH_SETTLED: "300", MAGI_BENCH_CLI_RUNS: "1", MAGI_BENCH_PAGE_RUNS: CHROMIUM ? "1" : "0" },
    prints: [
      /migration \(moved 300 to ten month shelves and indexed them\)/,
      /GET \/api\/questions: [\d.]+ KiB raw, [\d.]+ KiB gzipped/,
      /history page \(30\): after the first page [\d.]+ ms median/,
      /magi answer \(open list of 100\): median [\d.]+ ms wall/,
      /magi answer --list --all --json: 400 questions/,
      CHROMIUM ? /page at 4× CPU .* interactive \(drawn, and responding after the next frame\) [\d.]+ ms/ : /page interactive: skipped/
    ]
  },
  {
    name: "hosts",
    env: { MAGI_BENCH_ROUNDS: "1" },
    prints: [
      /hosts: answer on beta → seat resumed on alpha, over 1 rounds: median [\d.]+ ms/,
      /hosts: turns started by beta for alpha's runs: 0; resumed turns: 1 of 1/,
      /hosts: a page on beta sees a change made on gamma, over 1 rounds: median [\d.]+ ms/,
      /hosts: answer on beta → asker on alpha prints, over 1 rounds: median [\d.]+ ms/
    ]
  },
  {
    name: "queue-hosts",
    env: { MAGI_BENCH_TASKS: "6", MAGI_BENCH_HOSTS: "2", MAGI_BENCH_RUNS: "1" },
    prints: [
      /queue-hosts: 1 host drained 6 tasks in [\d.]+ s \([\d.]+ tasks\/s\); duplicates 0, lost 0/,
      /queue-hosts: 2 hosts drained 6 tasks in [\d.]+ s \([\d.]+ tasks\/s, [\d.]+x one host\); duplicates 0, lost 0/
    ]
  },
  {
    name: "list",
    env: { MAGI_BENCH_QUESTIONS: "200", MAGI_BENCH_RUNS: "2" },
    prints: [
      /list of 200 questions \(100 open\): magi answer --list median [\d.]+ ms wall \(the first run moves the settled ones, [\d.]+ ms\); in-process list first [\d.]+ ms/
    ]
  },
  {
    name: "one-tap",
    env: { MAGI_BENCH_ROUNDS: "2" },
    prints: [
      /one tap over 2 rounds: magi ask started → notification published median [\d.]+ ms; button pressed → magi ask prints median [\d.]+ ms, max [\d.]+ ms/
    ]
  },
  {
    name: "postgres",
    env: { MAGI_BENCH_ROUNDS: "2", MAGI_BENCH_RACES: "1", MAGI_BENCH_RACERS: "4", MAGI_BENCH_QUESTIONS: "200", MAGI_BENCH_PER_CLIENT: "2" },
    prints: [
      /postgres answer → ask prints, over 1 rounds from the commit: median [\d.]+ ms/,
      /postgres magi answer started → ask prints .* 1 rounds: median [\d.]+ ms/,
      /postgres 4 concurrent answers to one question: exactly one winner in 1 of 1 rounds/,
      /postgres magi answer --list at 200 questions \(100 open\): median [\d.]+ ms/,
      /postgres \/api\/questions at 200, 20 connections × 2: p50 [\d.]+ ms, p90 [\d.]+ ms, p99 [\d.]+ ms/
    ]
  },
  {
    name: "store-migrate",
    env: { MAGI_BENCH_QUESTIONS: "300" },
    prints: [
      /first migration: [\d.]+ s, peak RSS [\d.]+ MiB/,
      /0 differences/,
      /goal: under 5 minutes met, under 256 MB RSS met, checksums equal and the rerun copied nothing/
    ]
  },
  {
    name: "competition",
    env: { MAGI_BENCH_FILES: "200", MAGI_BENCH_RUNS: "1" },
    prints: [
      /competition prep of 3 worktrees on 200 files: median [\d.]+ ms; fold of 3: median [\d.]+ ms/,
      /judge prompt for 3 patches of 200 KB: median [\d.]+ ms; tally: [\d.]+ µs/,
      /whole 3×3 magi run with instant agents: [\d.]+ ms wall, ([\d]+ MB peak RSS|peak RSS: n\/a)/
    ]
  },
  {
    name: "review",
    env: { MAGI_BENCH_COMMITS: "20", MAGI_BENCH_RUNS: "1" },
    prints: [
      /magi review, one clean round with instant agents and gate true: median \d+ ms wall/,
      /two rounds \(a major finding, the fix, a clean round\): median \d+ ms wall; the second round and its fix: -?\d+ ms/,
      /magi review of a branch 20 commits behind its base \(the rebase and gate true\): median \d+ ms wall/
    ]
  },
  { name: "queue", env: { MAGI_BENCH_TASKS: "300", MAGI_BENCH_RUNS: "2" }, prints: [/queue of 300 tasks beside 300 questions .* loop tick first [\d.]+ ms/] },
  {
    name: "resume-latency",
    env: { MAGI_BENCH_ROUNDS: "3" },
    prints: [/resume latency .* over 3 rounds: median [\d.]+ ms, max [\d.]+ ms; by way: rename [\d.]+ ms .*; answer [\d.]+ ms .*; page [\d.]+ ms/]
  },
  {
    name: "first-move",
    env: { MAGI_BENCH_SETTLED: "300", MAGI_BENCH_SERVE_SETTLE: "1" },
    prints: [
      /first magi answer --list \(the move of 300 included\): [\d.]+ s, peak RSS \d+ MiB/,
      /magi answer --list after the move: [\d.]+ ms/,
      /magi serve on a flat home of 300: the move took [\d.]+ s, peak RSS \d+ MiB; 1 s after it, RSS \d+ MiB; a magi serve started on the moved home: RSS \d+ MiB/
    ]
  },
  {
    name: "runs-history",
    env: { MAGI_BENCH_RUNS: "60", MAGI_BENCH_TASKS: "60", MAGI_BENCH_IDLE_SECONDS: "1" },
    prints: [
      /the first magi runs on an upgraded home \(its move included\) [\d.]+ ms/,
      /the move of 60 runs and 60 tasks to month shelves by magi web: [\d.]+ s \(0 records left hot\)/,
      /idle magi web over 1 s: [\d.]+% of a core at 60 runs \+ 60 tasks, [\d.]+% on an empty home/,
      /\/api\/runs \(50 runs\): median [\d.]+ ms/,
      /magi runs: median [\d.]+ ms; magi show: median [\d.]+ ms/
    ]
  },
  {
    name: "diff-page",
    env: { MAGI_BENCH_DIFF_LINES: "2000", MAGI_BENCH_RUNS: "1" },
    prints: [
      /diff of 2000 lines in 100 files at 4× CPU, 390×844: first screen after the tap median [\d.]+ ms, max [\d.]+ ms \(1 loads\); first page [\d.]+ KiB/
    ]
  },
  {
    name: "live",
    env: { MAGI_BENCH_EVENTS: "400", MAGI_BENCH_RATE: "100" },
    prints: [
      /live: append -> SSE client: median [\d.]+ ms, p99 [\d.]+ ms, max [\d.]+ ms \(400\/400 received\)/,
      /live: append -> page at 390×844: median [\d.]+ ms/,
      /live: server RSS first [\d.]+ MB, last [\d.]+ MB, max [\d.]+ MB; page DOM nodes max \d+ \(\d+ lines kept\); log \d+ KiB/
    ]
  },
  { name: "store-write", env: { MAGI_BENCH_WRITES: "20" }, prints: [/store writes \(20 each, durable\): answer median [\d.]+ ms/] },
  // The header deadline is 10 s: a shorter wait would only report that the parked sockets were not closed yet.
  {
    name: "web-idle",
    env: { MAGI_BENCH_SOCKETS: "50", MAGI_BENCH_CLOSE_WAIT: "15" },
    prints: [/50 idle sockets parked .* 20\/20 ok, median [\d.]+ ms/, /every parked socket closed after [\d.]+ s/]
  },
  {
    name: "web-leases",
    env: { MAGI_BENCH_QUESTIONS: "50", MAGI_BENCH_SECONDS: "0.5", MAGI_BENCH_WARMUP: "0.3" },
    prints: [/50 undelivered questions with leases, 20 connections, 0.5 s per route/, /'\/api\/health'/, /'\/api\/questions'/]
  },
  {
    name: "web-queue",
    env: {
      MAGI_BENCH_TASKS: "50",
      MAGI_BENCH_QUESTIONS: "50",
      MAGI_BENCH_RUNS: "10",
      MAGI_BENCH_SECONDS: "0.5",
      MAGI_BENCH_WARMUP: "0.3",
      MAGI_BENCH_WRITE_EVERY: "100"
    },
    prints: [/\| GET \/api\/queue \(plain\) \| [\d,]+ \| [\d.]+ ms/, /\| GET \/api\/runs\/\{id\} \| [\d,]+ \|/]
  },
  {
    name: "web",
    env: { MAGI_BENCH_QUESTIONS: "100", MAGI_BENCH_SECONDS: "0.5", MAGI_BENCH_SSE: "5", MAGI_BENCH_ROUNDS: "2", MAGI_BENCH_WARMUP: "0.3" },
    prints: [
      /\| GET \/api\/questions \(gzip\) \| 20 \| 0.5 s \| \d+ \|/,
      /answer on disk -> last client received: median [\d.]+ ms/,
      /every client has refetched the list \(gzip\): median [\d.]+ ms/
    ]
  }
]

/** Processes whose command line or environment names `marker`: what a bench left running. */
const namingIt = (marker: string): ReadonlyArray<string> => {
  const found: string[] = []
  for (const pid of NodeFs.readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const cmdline = NodeFs.readFileSync(`/proc/${pid}/cmdline`, "utf8")
      const environ = NodeFs.readFileSync(`/proc/${pid}/environ`, "utf8")
      if (cmdline.includes(marker) || environ.includes(marker)) found.push(`${pid} ${cmdline.replaceAll("\0", " ").trim()}`)
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return found
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Run `run-all.mjs name` in its own process group, killed whole if it outlives `limit`. */
const runBench = (bench: Bench, tmp: string, limit: number) =>
  new Promise<{ readonly code: number | null; readonly out: string }>((done) => {
    const child = spawn(process.execPath, ["scripts/bench/run-all.mjs", bench.name], {
      env: { ...process.env, ...bench.env, TMPDIR: tmp },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true
    })
    let out = ""
    child.stdout.on("data", (c) => (out += c))
    child.stderr.on("data", (c) => (out += c))
    const timer = setTimeout(() => {
      out += `\n(killed after ${limit / 1000} s)`
      try {
        process.kill(-child.pid!, "SIGKILL")
      } catch {
        // Already gone.
      }
    }, limit)
    child.once("close", (code) => {
      clearTimeout(timer)
      done({ code, out })
    })
  })

describe("every bench, run small", () => {
  for (const bench of benches)
    it(`${bench.name} runs to completion, prints its figures and leaves nothing behind`, async () => {
      // Its own TMPDIR: everything the bench and its children make there is
      // theirs to remove. Readable by all, since PostgreSQL's server runs as
      // its own user inside it.
      const tmp = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "magi-benches-test-"))
      NodeFs.chmodSync(tmp, 0o755)
      try {
        const { code, out } = await runBench(bench, tmp, 150_000)
        expect(code, out).toBe(0)
        for (const line of bench.prints) expect(out).toMatch(line)
        // What a bench stopped is gone by the time it exits; a moment's grace
        // for a process killed at its exit to be reaped.
        let left = namingIt(tmp)
        for (let i = 0; i < 20 && left.length > 0; i++, left = namingIt(tmp)) await sleep(250)
        expect(left).toEqual([])
        expect(NodeFs.readdirSync(tmp)).toEqual([])
      } finally {
        for (const p of namingIt(tmp)) process.kill(Number(p.split(" ")[0]), "SIGKILL")
        NodeFs.rmSync(tmp, { recursive: true, force: true })
      }
    }, 180_000)
})
