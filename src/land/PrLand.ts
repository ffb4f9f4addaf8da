/**
 * Pull request mode (`[graph] merge = "pr"`): push the branch to
 * `[graph] remote`, open the pull request, then the land loop: each
 * observation goes through `LandDecide.decide`, and what it says is done.
 *
 * Every side effect is announced in the record (`loop.pending`) before it
 * is made and cleared after, so a process killed in between looks before
 * acting again on resume: a push whose sha the remote already has is not
 * repeated, a pull request is found before one is opened (and a 422 returns
 * the existing one), a comment already on the PR is not written twice, and
 * a merge the PR shows is recorded, never repeated.
 */
import { Clock, Effect } from "effect"
import * as Git from "../graph/CandidateGit.js"
import type * as GraphConfig from "../graph/GraphConfig.js"
import * as Q from "../questions/Question.js"
import { QuestionStore } from "../questions/QuestionStore.js"
import * as L from "../runs/Landing.js"
import { IMPL_SEAT, RUN_TURN_TIMEOUT } from "../runs/NewRun.js"
import { RunDriver } from "../runs/RunDriver.js"
import { type Run, RunStore } from "../runs/Runs.js"
import type { GitFailed } from "../runs/Worktree.js"
import { Forge, type ForgeRepo } from "./Forge.js"
import { parseRemote } from "./ForgeRemote.js"
import { decide } from "./LandDecide.js"
import * as P from "./LandPrompts.js"

type Sh = (cwd: string, ...args: ReadonlyArray<string>) => Effect.Effect<string, GitFailed>
type Change = (id: string, f: (l: L.Landing, run: Run) => Partial<L.Landing>, status?: Run["status"], reason?: string) => Effect.Effect<Run, any>
type Ask = (run: Run, l: L.Landing, settings: GraphConfig.LandConfig, salt: string) => Effect.Effect<Run, any>

/** After one step: go on now, poll again after the wait, or stop (landed, held, or waiting on the owner). */
export type Next = "again" | "wait" | "stop"

const loopOf = (l: L.Landing): L.LandLoop => l.loop ?? { rounds_used: 0, waiting_since: 0, checks_missing_since: null, last_seen: "", checks: [] }

/** The seat that fixes: the verification's fixer, else the winner's own seat. */
const fixSeat = (run: Run): string => {
  if (run.verification !== undefined) return run.verification.fixer
  const c = run.competition
  return c?.winner != null ? (c.candidates.find((x) => x.label === c.winner)?.seat ?? IMPL_SEAT) : IMPL_SEAT
}

export const make = (sh: Sh, change: Change, ask: Ask) =>
  Effect.gen(function* () {
    const forge = yield* Forge
    const runs = yield* RunStore
    const questions = yield* QuestionStore
    const driver = yield* RunDriver
    const setLoop = (id: string, f: (loop: L.LandLoop) => Partial<L.LandLoop>, more: (l: L.Landing) => Partial<L.Landing> = () => ({})) =>
      change(id, (l) => ({ ...more(l), loop: { ...loopOf(l), ...f(loopOf(l)) } }))
    const stop = (id: string, status: Run["status"], why: string, stopped = why) =>
      change(id, (l) => ({ step: "done", stopped, loop: { ...loopOf(l), pending: undefined } }), status, why)
    const round = (l: L.Landing, at: string, observed: string, action: string): Partial<L.Landing> => ({
      rounds: [...l.rounds, { at, observed, action }]
    })
    const stamp = Effect.map(Clock.currentTimeMillis, (ms) => Q.timestamp(new Date(ms)))

    const repoOf = (run: Run, remote: string) =>
      Effect.gen(function* () {
        // fallback: no URL reads as no forge repository, which is refused with the remote named
        const url = yield* sh(run.repo, "config", "--get", `remote.${remote}.url`).pipe(Effect.orElseSucceed(() => ""))
        const parsed = parseRemote(url)
        return parsed === null ? null : ({ owner: parsed.owner, name: parsed.name } satisfies ForgeRepo)
      })

    /** Send `target` to the run's branch on the remote, with a lease on what magi pushed last; skipped when the remote has it. */
    const pushLease = (run: Run, remote: string, expected: string | null, target: string) =>
      Effect.gen(function* () {
        const listed = yield* sh(run.repo, "ls-remote", remote, `refs/heads/${run.branch}`)
        const there = listed.split(/\s+/)[0] ?? ""
        if (there === target) return
        const lease = `--force-with-lease=refs/heads/${run.branch}:${expected ?? ""}`
        yield* sh(run.repo, "push", "--quiet", lease, remote, `${target}:refs/heads/${run.branch}`)
      })

    /** The first push and the pull request: the steps before the loop. */
    const open = (run: Run, settings: GraphConfig.LandConfig) =>
      Effect.gen(function* () {
        const l = run.landing!
        const repo = yield* repoOf(run, settings.remote)
        if (repo === null) {
          const why = `the remote ${settings.remote} names no repository on a forge; set [graph] remote to a GitHub remote`
          return yield* stop(run.id, "ready", why)
        }
        if (l.step === "push") {
          const head = yield* sh(run.repo, "rev-parse", `refs/heads/${run.branch}`)
          yield* setLoop(run.id, () => ({ pending: "push", push_target: head }))
          yield* pushLease(run, settings.remote, null, head)
          run = yield* setLoop(run.id, () => ({ pending: undefined }), () => ({ step: "open" }))
        }
        const target = loopOf(run.landing!).push_target!
        const body = `${run.instruction.trim()}\n\nOpened by magi for run ${Q.shortId(run.id)}.`
        const pr = yield* forge.open(repo, { head: run.branch, base: run.base, title: l.subject, body })
        const now = yield* Clock.currentTimeMillis
        return yield* setLoop(run.id, () => ({ waiting_since: now }), () => ({ step: "loop", pr: { number: pr.number, url: pr.url, head_sha: target } }))
      })

    const fix = (run: Run, repo: ForgeRepo, remote: string, action: Extract<ReturnType<typeof decide>, { _tag: "fix" }>) =>
      Effect.gen(function* () {
        const pr = run.landing!.pr!
        const logs = yield* forge.failingLogs(repo, action.failing, P.MAX_LOGS, P.LOG_TAIL_BYTES)
        const prompt = P.fixPrompt({ number: pr.number, failing: action.failing, logs, remarks: action.remarks })
        const turn = yield* Effect.either(driver.turn({ run: run.id, seat: fixSeat(run), prompt, timeout: RUN_TURN_TIMEOUT }))
        if (turn._tag === "Left") yield* Effect.logWarning(`land: the fixer's turn on #${pr.number} did not run: ${turn.left.message}`)
        const head = yield* sh(run.worktree, "rev-parse", "HEAD")
        const now = yield* Clock.currentTimeMillis
        if (head === pr.head_sha) {
          // No commit: the round is spent all the same, so a fixer that cannot fix ends in a give-up, not a loop.
          return yield* setLoop(run.id, () => ({ pending: undefined, waiting_since: now, checks_missing_since: null }))
        }
        yield* setLoop(run.id, () => ({ pending: "push", push_target: head }), (l) => ({
          rounds: l.rounds.map((r, i) => (i === l.rounds.length - 1 ? { ...r, fix_commit: head } : r))
        }))
        yield* pushLease(run, remote, pr.head_sha, head)
        return yield* pushed(run, head)
      })

    /** Record a pushed head: a new head waits afresh for its checks and needs its own approval. */
    const pushed = (run: Run, head: string) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        setLoop(run.id, () => ({ pending: undefined, waiting_since: now, checks_missing_since: null }), (l) => ({ pr: { ...l.pr!, head_sha: head } })))

    const rebase = (run: Run, remote: string) =>
      Effect.gen(function* () {
        yield* sh(run.repo, "fetch", "--quiet", remote, run.base)
        const onto = `refs/remotes/${remote}/${run.base}`
        // fallback: no identity configured: git uses its own
        const name = yield* sh(run.worktree, "config", "user.name").pipe(Effect.orElseSucceed(() =>
          ""
        ))
        // fallback: no identity configured: git uses its own
        const email = yield* sh(run.worktree, "config", "user.email").pipe(Effect.orElseSucceed(() => ""))
        const ok = yield* Effect.either(
          sh(run.worktree, "-c", `user.name=${name || Git.NEUTRAL.name}`, "-c", `user.email=${email || Git.NEUTRAL.email}`, "rebase", "--quiet", onto)
        )
        if (ok._tag === "Left") {
          // fallback: an abort that fails shows up as the held run's worktree state
          yield* sh(run.worktree, "rebase", "--abort").pipe(Effect.ignore)
          return null
        }
        return yield* sh(run.worktree, "rev-parse", "HEAD")
      })

    /** One observation and what it calls for. */
    const step = (run: Run, settings: GraphConfig.LandConfig): Effect.Effect<readonly [Run, Next], any> =>
      Effect.gen(function* () {
        const l = run.landing!
        if (l.step === "push" || l.step === "open") return [yield* open(run, settings), "again"] as const
        const loop = loopOf(l)
        const pr = l.pr!
        const repo = (yield* repoOf(run, settings.remote))!
        // A push announced and not known done: the remote is asked before anything is sent again.
        if (loop.pending === "push" && loop.push_target !== undefined) {
          yield* pushLease(run, settings.remote, pr.head_sha, loop.push_target)
          return [yield* pushed(run, loop.push_target), "again"] as const
        }
        if (loop.pending === "fix") {
          const head = yield* sh(run.worktree, "rev-parse", "HEAD")
          if (head !== pr.head_sha) return [yield* setLoop(run.id, () => ({ pending: "push", push_target: head })), "again"] as const
        }
        if (l.question !== undefined && loop.asked_head === pr.head_sha && loop.approved_head !== pr.head_sha) {
          const q = yield* questions.read(l.question)
          if (Q.isOpen(q)) return [run, "stop"] as const
          const answer = Q.resolution(q)
          if (!L.approves(answer)) {
            const why = answer === undefined ? `the approval was ${q.status} without an answer` : `the owner answered "${answer}", not merge`
            return [yield* stop(run.id, "ready", `held: ${why}`), "stop"] as const
          }
          run = yield* setLoop(run.id, () => ({ approved_head: pr.head_sha }), () => ({ answer: answer ?? "" }))
        }
        const seen = yield* Effect.either(forge.observe(repo, pr.number))
        if (seen._tag === "Left") {
          const e = seen.left
          // The forge down for now is a wait (the state is on disk); a token or a repository it refuses is for the owner.
          if (e._tag === "ForgeUnavailable") return [yield* setLoop(run.id, () => ({ last_seen: e.message })), "wait"] as const
          return [yield* stop(run.id, "ready", e.message), "stop"] as const
        }
        const o = seen.right
        const now = yield* Clock.currentTimeMillis
        const at = yield* stamp
        const action = decide(o, {
          pushedSha: pr.head_sha,
          roundsUsed: loop.rounds_used,
          checksMissingSince: loop.checks_missing_since,
          waitingSince: loop.waiting_since,
          approved: loopOf(run.landing!).approved_head === pr.head_sha,
          now
        }, settings)
        const observed = P.summarize(o)
        const checks = o.checks._tag === "Read" ? o.checks.checks.map((c) => ({ name: c.name, outcome: c.outcome, conclusion: c.conclusion, url: c.url })) : []
        run = yield* setLoop(run.id, () => ({ last_seen: observed, checks }))
        const record = (pending?: L.LandLoop["pending"], f: (x: L.LandLoop) => Partial<L.LandLoop> = () => ({})) =>
          setLoop(run.id, (x) => ({ ...f(x), pending }), (cur) => round(cur, at, observed, P.describe(action)))
        switch (action._tag) {
          case "ended": {
            yield* record()
            const why = action.outcome === "merged" ? `merged on the forge: ${pr.url}` : `its pull request was closed without a merge: ${pr.url}`
            return [yield* stop(run.id, action.outcome, why, ""), "stop"] as const
          }
          case "held":
            yield* record()
            return [yield* stop(run.id, "ready", `held: ${action.reason}`), "stop"] as const
          case "wait":
            return [yield* setLoop(run.id, () => ({ checks_missing_since: action.checksMissingSince })), "wait"] as const
          case "never_merge":
            if (now - loop.waiting_since < settings.waitMs) return [run, "wait"] as const
            yield* record()
            return [yield* stop(run.id, "ready", action.reason), "stop"] as const
          case "rebase": {
            yield* record(undefined, (x) => ({ rounds_used: x.rounds_used + 1 }))
            const head = yield* rebase(run, settings.remote)
            if (head === null) {
              const why = `the rebase onto ${settings.remote}/${run.base} conflicts; resolve it in ${run.worktree}`
              return [yield* stop(run.id, "ready", `held: ${why}`), "stop"] as const
            }
            yield* setLoop(run.id, () => ({ pending: "push", push_target: head }))
            yield* pushLease(run, settings.remote, pr.head_sha, head)
            // The forge needs a moment for a pushed head (mergeability, checks starting): look again after the poll.
            return [yield* pushed(run, head), "wait"] as const
          }
          case "fix": {
            const resuming = loop.pending === "fix"
            run = resuming ? run : yield* record("fix", (x) => ({ rounds_used: x.rounds_used + 1 }))
            return [yield* fix(run, repo, settings.remote, action), "wait"] as const
          }
          case "ask_approval": {
            yield* record()
            run = yield* ask(yield* runs.get(run.id), run.landing!, settings, pr.head_sha)
            return [yield* setLoop(run.id, () => ({ asked_head: pr.head_sha })), "stop"] as const
          }
          case "merge": {
            yield* record("merge")
            const merged = yield* Effect.either(
              forge.merge(repo, { number: pr.number, method: settings.style, subject: l.subject, body: "", expectedHead: pr.head_sha })
            )
            if (merged._tag === "Left") {
              const e = merged.left
              if (e._tag === "ForgeUnavailable") return [yield* setLoop(run.id, () => ({ last_seen: e.message })), "wait"] as const
              return [yield* stop(run.id, "ready", e._tag === "HeadMoved" ? `held: ${e.message}` : e.message), "stop"] as const
            }
            const sha = merged.right.sha
            return [yield* stop(run.id, "merged", `merged ${pr.url}${sha === "" ? "" : ` at ${sha.slice(0, 12)}`}`, ""), "stop"] as const
          }
          case "give_up": {
            const body = P.giveUpComment(action.reason)
            yield* record("comment")
            // Never a second identical comment: one already there (a kill after the POST) is the one.
            if (!o.remarks.some((r) => r.mine && r.body.includes(body))) yield* forge.comment(repo, pr.number, body)
            return [yield* stop(run.id, "ready", `left open: ${action.reason}`), "stop"] as const
          }
        }
      })

    /** Steps without a wait between them until one asks for the poll's wait or stops. */
    const untilWait = (id: string, settings: GraphConfig.LandConfig) =>
      Effect.gen(function* () {
        let run = yield* runs.get(id)
        for (;;) {
          const [next, what] = yield* step(run, settings)
          if (what !== "again") return [next, what] as const
          run = next
        }
      })

    return { untilWait }
  })
