// Listing at scale: 10,000 questions on disk (MAGI_BENCH_QUESTIONS), 100 of
// them open, written flat as a home from before month shelves. `magi answer
// --list` wall time (MAGI_BENCH_RUNS processes; the first one moves the
// settled questions to their shelves), and the in-process `list` of what
// stays hot, cold and warm.
import * as LocalContext from "../../src/platform/LocalContext.js"
import { Effect, Layer } from "effect"
import { spawnSync } from "node:child_process"
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import * as Q from "../../src/questions/Question.js"
import { QuestionStore } from "../../src/questions/QuestionStore.js"
// @ts-expect-error plain JS helper
import { MAGI, isolatedEnv, median, ms, size } from "./lib.mjs"

const TOTAL: number = size("QUESTIONS", 10_000)
const OPEN = Math.min(100, TOTAL)
const RUNS: number = size("RUNS", 5)
const { cwd, env, home } = isolatedEnv()
const root = join(home, "questions")
mkdirSync(root, { recursive: true })
const base = Date.parse("2026-01-01T00:00:00Z")
for (let i = 0; i < TOTAL; i++) {
  const at = new Date(base + i * 60_000)
  let q = Q.make({
    id: Q.makeId(at, i),
    run: "bench",
    node: "ask",
    seat: "impl-A",
    summary: `question ${i}`,
    detail: "Some reasoning. ".repeat(20),
    choices: ["yes", "no"],
    now: at
  })
  if (i >= OPEN) q = { ...q, status: "answered", answer: { choice: "yes" }, answered_at: Q.timestamp(at) }
  writeFileSync(join(root, `${q.id}.json`), Q.encode(q))
}

const walls: number[] = []
for (let i = 0; i < RUNS; i++) {
  const t0 = performance.now()
  const r = spawnSync(process.execPath, [MAGI, "answer", "--list"], { cwd, env })
  walls.push(performance.now() - t0)
  if (r.status !== 0) throw new Error(String(r.stderr))
}

const timeList = Effect.gen(function* () {
  const store = yield* QuestionStore
  const times: number[] = []
  for (let i = 0; i < 6; i++) {
    const t0 = performance.now()
    const all = yield* store.list
    times.push(performance.now() - t0)
    // The first `magi answer --list` moved every settled question to its shelf: the open ones stay.
    if (all.length !== OPEN) throw new Error(`listed ${all.length} hot questions, not the ${OPEN} open ones`)
  }
  return times
})
const times = await Effect.runPromise(timeList.pipe(Effect.provide(QuestionStore.at(root).pipe(Layer.provideMerge(LocalContext.layer)))))
console.log(
  `list of ${TOTAL} questions (${OPEN} open): magi answer --list median ${ms(median(walls))} wall (the first run moves the settled ones, ${ms(walls[0]!)}); ` +
    `in-process list first ${ms(times[0]!)}, warm median ${ms(median(times.slice(1)))}`
)
