// Store writes: what durability costs. 200 answers and 200 owner words (MAGI_BENCH_WRITES), each
// a locked read-modify-write through the record store on a real folder
// (temp file, fsync, rename, fsync of the folder), and the same write with
// the flushes off for comparison; medians and p99.
import * as LocalContext from "../../src/platform/LocalContext.js"
import { writeAtomically } from "../../src/store/files/AtomicFile.js"
import { Effect, Layer } from "effect"
import { mkdirSync } from "node:fs"
import { join } from "node:path"
import * as Q from "../../src/questions/Question.js"
import { QuestionStore } from "../../src/questions/QuestionStore.js"
// @ts-expect-error plain JS helper
import { isolatedEnv, median, ms, size } from "./lib.mjs"

const N: number = size("WRITES", 200)
const { home } = isolatedEnv()
const root = join(home, "questions")
mkdirSync(root, { recursive: true })
const p99 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.99)]!

const bench = Effect.gen(function* () {
  const store = yield* QuestionStore
  const answers: number[] = []
  const says: number[] = []
  const plain: number[] = []
  for (let i = 0; i < N; i++) {
    const q = Q.make({
      id: Q.makeId(new Date(Date.UTC(2026, 0, 1, 0, 0, i % 60, 0)), i),
      run: "",
      node: "ask",
      seat: "s",
      summary: `q ${i}`,
      detail: "Some reasoning. ".repeat(20),
      choices: ["yes", "no"],
      now: new Date()
    })
    yield* store.put(q)
    let t0 = performance.now()
    yield* store.update(q.id, (fresh) => Q.say(fresh, "why?", new Date()))
    says.push(performance.now() - t0)
    t0 = performance.now()
    yield* store.update(q.id, (fresh) => Q.answer(fresh, { choice: "yes" }, new Date()))
    answers.push(performance.now() - t0)
    t0 = performance.now()
    yield* writeAtomically(join(root, `plain-${i}.txt`), Q.encode(q), { durable: false })
    plain.push(performance.now() - t0)
  }
  return { answers, says, plain }
})
const { answers, says, plain } = await Effect.runPromise(bench.pipe(Effect.provide(QuestionStore.at(root).pipe(Layer.provideMerge(LocalContext.layer)))))
console.log(
  `store writes (${N} each, durable): answer median ${ms(median(answers))} p99 ${ms(p99(answers))}; ` +
    `say median ${ms(median(says))} p99 ${ms(p99(says))}; unflushed atomic write median ${ms(median(plain))}`
)
