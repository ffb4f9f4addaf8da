// The queue at scale: 10,000 tasks on disk (MAGI_BENCH_TASKS; 100 queued, 100
// blocked on open questions, 10 held, the rest done) beside as many
// questions (100 open).
// `magi task list` wall time from a cold process, and one loop tick once warm
// (a turn in flight, so the tick decides and starts nothing, as in steady state).
import * as LocalContext from "../../src/platform/LocalContext.js"
import { Effect, Layer } from "effect"
import { spawnSync } from "node:child_process"
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { Rosters } from "../../src/agents/AgentRoster.js"
import { Agents } from "../../src/agents/Agents.js"
import { QueueLoop } from "../../src/daemon/QueueLoop.js"
import { MagiConfig } from "../../src/platform/MagiConfig.js"
import { MagiHome } from "../../src/platform/MagiHome.js"
import * as Q from "../../src/questions/Question.js"
import { QuestionStore } from "../../src/questions/QuestionStore.js"
import * as T from "../../src/queue/Task.js"
import { TaskStore } from "../../src/queue/TaskStore.js"
import { Workspaces } from "../../src/runs/NewRun.js"
import { RunDriver } from "../../src/runs/RunDriver.js"
import { RunStore } from "../../src/runs/Runs.js"
// @ts-expect-error plain JS helper
import { MAGI, isolatedEnv, median, ms, size } from "./lib.mjs"

// At least 300: the fixed 100 queued, 100 blocked and 10 held come first.
const TOTAL: number = Math.max(300, size("TASKS", 10_000))
const RUNS: number = size("RUNS", 5)
const { cwd, env, home } = isolatedEnv()
const queue = join(home, "queue")
const questions = join(home, "questions")
mkdirSync(queue, { recursive: true })
mkdirSync(questions, { recursive: true })
const base = Date.parse("2026-01-01T00:00:00Z")
const qids: string[] = []
for (let i = 0; i < TOTAL; i++) {
  const at = new Date(base + i * 60_000)
  let q = Q.make({
    id: Q.makeId(at, i),
    run: "bench",
    node: "ask",
    seat: "impl",
    summary: `question ${i}`,
    detail: "Some reasoning. ".repeat(20),
    choices: ["yes", "no"],
    now: at
  })
  if (i >= 100) q = { ...q, status: "answered", answer: { choice: "yes" }, answered_at: Q.timestamp(at), answer_delivered: true }
  qids.push(q.id)
  writeFileSync(join(questions, `${q.id}.json`), Q.encode(q))
}
for (let i = 0; i < TOTAL; i++) {
  const at = new Date(base + i * 60_000)
  const instruction = `# Task ${i}\n\n${"Do the thing carefully, with tests. ".repeat(12)}`
  let t = T.make({ id: T.makeId(at, i), instruction, repo: cwd, priority: i % 7, now: at })
  if (i >= 100 && i < 200) t = { ...t, status: "blocked", blocked_by: [qids[i - 100]!], blocked_from: "queued", block_reason: "after a question" }
  else if (i >= 200 && i < 210) t = { ...t, status: "held", hold_source: "manual", hold_reason: "later" }
  else if (i >= 210) t = { ...t, status: "done", attempts: 1, runs: [`run-${i}`] }
  writeFileSync(join(queue, `${t.id}.json`), T.encode(t))
}

// Wall time, and the process's own CPU time (user + system, from
// /usr/bin/time): on a shared machine the wall time is mostly other people's
// work, while the CPU time is roughly what the wall would be with the cores free.
const walls: number[] = []
const cpus: number[] = []
for (let i = 0; i < RUNS; i++) {
  const t0 = performance.now()
  const r = spawnSync("/usr/bin/time", ["-f", "cpu %U %S", process.execPath, MAGI, "task", "list"], { cwd, env, encoding: "utf8" })
  walls.push(performance.now() - t0)
  if (r.status !== 0) throw new Error(String(r.stderr))
  const cpu = /cpu ([\d.]+) ([\d.]+)/.exec(r.stderr)
  if (cpu) cpus.push((Number(cpu[1]) + Number(cpu[2])) * 1000)
}

// A workspace is a folder and the agent's turn never ends: the first tick
// starts one task, and every later tick is the steady state it measures.
const workspaces = Layer.succeed(Workspaces, {
  repoRoot: (dir) => Effect.succeed(dir),
  create: (repo, h, runId, short) =>
    Effect.sync(() => {
      mkdirSync(join(h, "worktrees", runId), { recursive: true })
      return { repo, base: "main", baseCommit: "0".repeat(40), branch: `magi/${short}`, path: join(h, "worktrees", runId) }
    }),
  branchTaken: () => Effect.succeed(false)
})
const layer = QueueLoop.layer({ announce: () => Effect.void }).pipe(
  Layer.provide(RunDriver.layer),
  Layer.provide(
    Layer.mergeAll(
      Rosters.fixed([{ id: "fake", kind: "command", command: ["true"], model: null, args: [], env: {} }]),
      Layer.succeed(Agents, { call: () => Effect.never }),
      MagiConfig.fixed({}),
      workspaces
    )
  ),
  Layer.provideMerge(Layer.mergeAll(TaskStore.layer, RunStore.layer).pipe(Layer.provideMerge(QuestionStore.layer))),
  Layer.provideMerge(MagiHome.at(home)),
  Layer.provideMerge(LocalContext.layer)
)
const tickCpus: number[] = []
const timeTicks = Effect.gen(function* () {
  const loop = yield* QueueLoop
  const times: number[] = []
  for (let i = 0; i < 12; i++) {
    const t0 = performance.now()
    const c0 = process.cpuUsage()
    yield* loop.tick
    times.push(performance.now() - t0)
    const c = process.cpuUsage(c0)
    tickCpus.push((c.user + c.system) / 1000)
    // Past the listing cache's mtime slack, as five seconds between ticks are.
    yield* Effect.promise(() => new Promise((r) => setTimeout(r, 60)))
  }
  if ((yield* loop.status).current.length !== 1) throw new Error("expected one task in flight")
  return times
})
const times = await Effect.runPromise(Effect.scoped(Effect.flatMap(Layer.build(layer), (ctx) => timeTicks.pipe(Effect.provide(ctx)))))
const load = (await import("node:os")).loadavg()[0]!.toFixed(1)
console.log(
  `queue of ${TOTAL} tasks beside ${TOTAL} questions (load average ${load}): ` +
    `magi task list median ${ms(median(walls))} wall, ${ms(median(cpus))} CPU (cold process); ` +
    `loop tick first ${ms(times[0]!)}, then (one in flight) ${ms(times[1]!)}, ` +
    `warm median ${ms(median(times.slice(3)))} wall / ${ms(median(tickCpus.slice(3)))} CPU, worst warm ${ms(Math.max(...times.slice(3)))}`
)
