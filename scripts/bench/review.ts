// magi's own time in the verification (issue 30), agents excluded as far as
// they can be: fake agents that answer at once (test/fixtures/review-agent.mjs)
// and a gate of `true`.
// - one round: `magi review BRANCH` with one reviewer that approves (sync,
//   one round, the gate, ready), and a run of two rounds (a major finding,
//   the fix, a clean round): the second round's cost is their difference;
// - a rebase: `magi review` of a branch MAGI_BENCH_COMMITS (500) commits
//   behind its base, no reviewers: the sync's rebase and the gate.
// Each is the median of MAGI_BENCH_RUNS (3) runs of the whole command.
import { execFileSync, spawnSync } from "node:child_process"
import { mkdirSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
// @ts-expect-error plain JS helper
import { MAGI, isolatedEnv, median, size } from "./lib.mjs"

const COMMITS: number = size("COMMITS", 500)
const RUNS: number = size("RUNS", 3)
const { cwd, env } = isolatedEnv()
const agent = resolve("test/fixtures/review-agent.mjs")

/** A repository with `trunk` and the owner's `feature` branch one commit off it; `behind` commits on trunk after. */
const repoWith = (name: string, config: string, behind: number) => {
  const repo = join(cwd, name)
  mkdirSync(repo)
  const git = (...args: string[]) => execFileSync("git", ["-c", "user.email=b@b", "-c", "user.name=b", ...args], { cwd: repo, stdio: "pipe" }).toString().trim()
  git("init", "-q", "-b", "trunk")
  writeFileSync(join(repo, "magi.toml"), `[agents.bot]\nkind = "command"\ncommand = ${JSON.stringify(["node", agent, "{label}"])}\n\n${config}`)
  writeFileSync(join(repo, "shared.txt"), "base\n")
  git("add", "shared.txt")
  git("commit", "-q", "-m", "init")
  git("checkout", "-q", "-b", "feature")
  writeFileSync(join(repo, "feature.txt"), "the feature\n")
  git("add", "feature.txt")
  git("commit", "-q", "-m", "The feature")
  git("checkout", "-q", "trunk")
  // The base moves on by `behind` commits, through fast-import: one process, not 500.
  if (behind > 0) {
    const stream = Array.from(
      { length: behind },
      (_, i) =>
        [
          `commit refs/heads/trunk`,
          `committer b <b@b> ${1_700_000_000 + i} +0000`,
          `data <<E`,
          `base ${i}`,
          `E`,
          ...(i === 0 ? [`from refs/heads/trunk^0`] : []),
          `M 100644 inline base/${i}.txt`,
          `data <<E`,
          `${i}`,
          `E`,
          ""
        ]
          .join("\n")
    ).join("\n")
    execFileSync("git", ["fast-import", "--quiet"], { cwd: repo, input: stream + "\n" })
    git("reset", "-q", "--hard", "trunk")
  }
  return { repo, git }
}

const timedReview = (repo: string, mode: string) => {
  const t0 = performance.now()
  const r = spawnSync(process.execPath, [MAGI, "review", "feature"], { cwd: repo, env: { ...env, REVIEW_DIR: cwd, REVIEW_MODE: mode }, encoding: "utf8" })
  const wall = performance.now() - t0
  if (r.status !== 0 || !r.stderr.includes("ready on branch")) throw new Error(`magi review failed (${r.status}): ${r.stderr}`)
  return wall
}

const oneRound: number[] = []
const twoRounds: number[] = []
const rebases: number[] = []
for (let i = 0; i < RUNS; i++) {
  oneRound.push(timedReview(repoWith(`one-${i}`, '[graph]\nreviewers = 1\n\n[verify]\ngate = ["true"]\n', 0).repo, "clean"))
  twoRounds.push(timedReview(repoWith(`two-${i}`, '[graph]\nreviewers = 1\n\n[verify]\ngate = ["true"]\n', 0).repo, "major-once"))
  const behind = repoWith(`behind-${i}`, '[graph]\nreviewers = 0\n\n[verify]\ngate = ["true"]\n', COMMITS)
  rebases.push(timedReview(behind.repo, "clean"))
  // It was rebased onto the base's tip, one commit ahead.
  const ahead = behind.git("rev-list", "--count", "trunk..magi/" + behind.git("for-each-ref", "--format=%(refname:short)", "refs/heads/magi").split("/")[1])
  if (ahead !== "1") throw new Error(`the rebased copy is ${ahead} commits ahead of trunk, not 1`)
}

const f = (x: number) => x.toFixed(0)
console.log(`magi review, one clean round with instant agents and gate true: median ${f(median(oneRound))} ms wall (${RUNS} runs)`)
console.log(
  `two rounds (a major finding, the fix, a clean round): median ${f(median(twoRounds))} ms wall; the second round and its fix: ${
    f(median(twoRounds) - median(oneRound))
  } ms`
)
console.log(`magi review of a branch ${COMMITS} commits behind its base (the rebase and gate true): median ${f(median(rebases))} ms wall`)
