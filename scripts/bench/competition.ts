// magi's own time per step of a competition, agents excluded: prep of 3
// candidate worktrees on a repository of 20,000 files (MAGI_BENCH_FILES),
// judge-prompt assembly for 3 patches of 200 KB, the tally, the fold; then a
// whole 3-candidate, 3-judge `magi run` with agents that return at once
// (test/fixtures/compete-agent.mjs), its wall time and peak RSS.
import * as LocalContext from "../../src/platform/LocalContext.js"
import { Effect } from "effect"
import { execFileSync, spawnSync } from "node:child_process"
import { existsSync, mkdirSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import * as Git from "../../src/graph/CandidateGit.js"
import { judgePrompt, type Shown } from "../../src/graph/JudgePrompt.js"
import { tally } from "../../src/graph/Tally.js"
// @ts-expect-error plain JS helper
import { MAGI, isolatedEnv, median, size } from "./lib.mjs"

const FILES: number = size("FILES", 20_000)
const ROUNDS: number = size("RUNS", 3)
const { cwd, env, top } = isolatedEnv()
const repo = join(cwd, "repo")
mkdirSync(repo)
const git = (...args: string[]) => execFileSync("git", args, { cwd: repo, stdio: "pipe", maxBuffer: 1 << 28 })
git("init", "-q", "-b", "trunk")
for (let i = 0; i < FILES; i++) {
  const dir = join(repo, `d${Math.floor(i / 200)}`)
  if (i % 200 === 0) mkdirSync(dir)
  writeFileSync(join(dir, `f${i}.txt`), `file ${i}\n`)
}
git("add", "-A")
git("-c", "user.email=b@b", "-c", "user.name=b", "commit", "-q", "-m", "files")
const base = git("rev-parse", "HEAD").toString().trim()

const run = <A>(e: Effect.Effect<A, unknown, any>) => Effect.runPromise(e.pipe(Effect.provide(LocalContext.layer)) as Effect.Effect<A>)
const timed = async (f: () => Promise<unknown>) => {
  const t0 = performance.now()
  await f()
  return performance.now() - t0
}

const preps: number[] = []
const folds: number[] = []
for (let r = 0; r < ROUNDS; r++) {
  const trees = ["A", "B", "C"].map((l) => ({ path: join(top, "wt", `${r}`, l), branch: `magi/b${r}/${l}` }))
  preps.push(
    await timed(() => run(Effect.zipRight(Git.allowWorktreeConfig(repo), Effect.forEach(trees, (t) => Git.addCandidate(repo, t.path, t.branch, base)))))
  )
  folds.push(await timed(() => run(Effect.forEach(trees, (t) => Git.remove(repo, t.path, t.branch)))))
}

const patch = (label: string) => Array.from({ length: 4000 }, (_, i) => `+line ${i} of candidate ${label}, some code here\n`).join("").slice(0, 200 * 1024)
const shown: ReadonlyArray<Shown> = ["A", "B", "C"].map((label) => ({
  label,
  branch: `magi/bench/${label}`,
  summary: `Did it ${label}\n\nCo-Authored-By: x`,
  numstat: "10\t2\tsrc/a.ts",
  patch: patch(label),
  checks: [{ command: "npm test", exit: 0, duration_ms: 1000, timed_out: false, tail: "ok\n".repeat(2000) }]
}))
const prompts: number[] = []
for (let i = 0; i < 20; i++) {
  const t0 = performance.now()
  judgePrompt("Add retries to the fetcher", shown, ["C", "A", "B"])
  prompts.push(performance.now() - t0)
}
const ballots = [{ seat: "j1", ranking: ["A", "B", "C"], vote: null }, { seat: "j2", ranking: ["C", "B", "A"], vote: "B" }, {
  seat: "j3",
  ranking: ["B", "A", "C"],
  vote: null
}]
const t0 = performance.now()
for (let i = 0; i < 10_000; i++) tally(["A", "B", "C"], 3, ballots)
const tallyUs = ((performance.now() - t0) / 10_000) * 1000

// The whole graph with agents that return at once.
const small = join(cwd, "small")
mkdirSync(small)
const sgit = (...args: string[]) => execFileSync("git", args, { cwd: small, stdio: "pipe" })
sgit("init", "-q", "-b", "trunk")
const agent = resolve("test/fixtures/compete-agent.mjs")
writeFileSync(
  join(small, "magi.toml"),
  ["alpha", "beta", "gamma"].map((n) => `[agents.${n}]\nkind = "command"\ncommand = ${JSON.stringify(["node", agent, "{label}", n])}\n`).join("\n") +
    // The bench times the competition up to its tally, not the review steps after it.
    "\n[graph]\ncandidates = 3\njudges = 3\nreviewers = 0\n"
)
sgit("add", "-A")
sgit("-c", "user.email=b@b", "-c", "user.name=b", "commit", "-q", "-m", "init")
const timeBin = existsSync("/usr/bin/time") ? ["/usr/bin/time", "-f", "%M"] : []
const w0 = performance.now()
const whole = spawnSync(timeBin[0] ?? process.execPath, [...timeBin.slice(1), ...(timeBin.length > 0 ? [process.execPath] : []), MAGI, "run", "add a file"], {
  cwd: small,
  env: { ...env, COMPETE_DIR: cwd },
  encoding: "utf8"
})
const wall = performance.now() - w0
if (whole.status !== 0) throw new Error(`magi run failed: ${whole.stderr}`)
const rss = timeBin.length > 0 ? `${(Number(whole.stderr.trim().split("\n").at(-1)) / 1024).toFixed(0)} MB peak RSS (largest process)` : "peak RSS: n/a"

const f = (x: number) => x.toFixed(1)
console.log(`competition prep of 3 worktrees on ${FILES} files: median ${f(median(preps))} ms; fold of 3: median ${f(median(folds))} ms (${ROUNDS} rounds)`)
console.log(`judge prompt for 3 patches of 200 KB: median ${f(median(prompts))} ms; tally: ${tallyUs.toFixed(2)} µs`)
console.log(`whole 3×3 magi run with instant agents: ${f(wall)} ms wall, ${rss}`)
