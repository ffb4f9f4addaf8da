/**
 * The verification as a service (issue 30): after the implementing, the
 * branch is synced to its base, reviewed round by round (with the e2e
 * commands and the fixer between rounds), gated, and ends `ready`,
 * `blocked` or `already_in_base`. Each step writes the run record before
 * the next starts and `drive` starts from the recorded step, so a resume
 * costs at most the step in progress: an answered reviewer is not asked
 * again, a recorded e2e not run again, a fixed round not fixed again. A gate
 * always runs afresh on a resume (its attempt is recorded with the head it
 * ran on), so an old result is never shown as a new one.
 *
 * The rules are pure (`Rounds`, `SyncRules`, `GateRules`, `ReviewAnswer`,
 * `VerifyPrompts`, `runs/Verification`); this module only does the I/O.
 */
import * as CommandExecutor from "@effect/platform/CommandExecutor"
import * as FileSystem from "@effect/platform/FileSystem"
import { Clock, Duration, Effect, Option } from "effect"
import * as NodePath from "node:path"
import { Rosters } from "../agents/AgentRoster.js"
import * as Git from "../graph/CandidateGit.js"
import { runCheck } from "../graph/Checks.js"
import { jsonObjectOf } from "../graph/JudgeAnswer.js"
import { MagiHome } from "../platform/MagiHome.js"
import * as Q from "../questions/Question.js"
import type { Check } from "../runs/Competition.js"
import { IMPL_SEAT, RUN_TURN_TIMEOUT } from "../runs/NewRun.js"
import { RunDriver } from "../runs/RunDriver.js"
import { type Run, RunStore, type Seat } from "../runs/Runs.js"
import * as V from "../runs/Verification.js"
import { git } from "../runs/Worktree.js"
import { afterGate } from "./GateRules.js"
import { Fixer, replyTo } from "./Fixer.js"
import * as ReviewAnswer from "./ReviewAnswer.js"
import { afterFix, afterRound, blockers, type RoundRules, split } from "./Rounds.js"
import { outcome as syncOutcome } from "./SyncRules.js"
import * as VerifyConfig from "./VerifyConfig.js"
import * as P from "./VerifyPrompts.js"

/** A competition's winner and a `magi review` branch get `[graph] reviewers`' default of 2; a solo run 0. */
const reviewsLikeCompetition = (run: Run): boolean => run.competition !== undefined || run.reviewed !== undefined

/** A reviewer reads a patch and answers: shorter work than implementing. */
export const REVIEW_TURN_TIMEOUT = Duration.minutes(30)
/** A reviewer's unreadable answer is sent back once, in its session. */
export const REVIEW_RETRIES = 1

export class VerifyDriver extends Effect.Service<VerifyDriver>()("magi/VerifyDriver", {
  effect: Effect.gen(function* () {
    const runs = yield* RunStore
    const driver = yield* RunDriver
    const fixer = yield* Fixer
    const home = yield* MagiHome
    const rosters = yield* Rosters
    const fs = yield* FileSystem.FileSystem
    const executor = yield* CommandExecutor.CommandExecutor
    const io = <A, E>(e: Effect.Effect<A, E, Git.GitServices>) =>
      e.pipe(Effect.provideService(FileSystem.FileSystem, fs), Effect.provideService(CommandExecutor.CommandExecutor, executor))
    const g = (cwd: string, ...args: ReadonlyArray<string>) => io(git(cwd, ...args))

    const verOf = (run: Run): V.Verification => {
      if (run.verification === undefined) throw new Error(`run ${run.id} has no verification`)
      return run.verification
    }
    const change = (id: string, f: (v: V.Verification, run: Run) => Partial<Run> & { readonly verification: V.Verification }) =>
      runs.update(id, (r) => ({ ...r, ...f(verOf(r), r) }))
    const toStep = (id: string, step: V.VerifyStep, stopped = "") => change(id, (v) => ({ verification: { ...v, step, stopped } }))
    const withRound = (v: V.Verification, f: (r: V.Round) => V.Round): V.Verification => ({
      ...v,
      rounds: v.rounds.map((r, i) => (i === v.rounds.length - 1 ? f(r) : r))
    })
    const end = (id: string, step: "blocked" | "already_in_base", why: string) => Effect.zipRight(toStep(id, step, why), runs.setStatus(id, step, why))
    const headOf = (run: Run) => g(run.worktree, "rev-parse", "HEAD")
    const treeOf = (run: Run, rev: string) => g(run.repo, "rev-parse", `${rev}^{tree}`)
    /** The seat whose session implemented the winner: the competition's candidate, or a solo run's impl. */
    const winnerSeat = (run: Run) => {
      const c = run.competition
      return c?.winner != null ? (c.candidates.find((x) => x.label === c.winner)?.seat ?? IMPL_SEAT) : IMPL_SEAT
    }
    const baseRef = (run: Run, s: VerifyConfig.VerifySettings) => (s.remote === null ? `refs/heads/${run.base}` : `refs/remotes/${s.remote}/${run.base}`)

    /** The verification set up on `r` once: its record, and a seat for `[roles] fixer` when it names another agent. */
    const begun = (r: Run, s: VerifyConfig.VerifySettings): Run => {
      if (r.verification !== undefined) return r
      const own = winnerSeat(r)
      const ownAgent = r.seats.find((x) => x.key === own)?.agent
      const fixer = s.fixer === null || s.fixer === ownAgent ? own : "fixer"
      return {
        ...r,
        seats: fixer === "fixer"
          ? [...r.seats, { key: "fixer", agent: s.fixer!, turns: 0, session: null, write: true, worktree: r.worktree } satisfies Seat]
          : r.seats,
        verification: V.fresh(fixer)
      }
    }
    const begin = (run: Run, s: VerifyConfig.VerifySettings) => run.verification !== undefined ? Effect.succeed(run) : runs.update(run.id, (r) => begun(r, s))

    // -- sync -------------------------------------------------------------------------

    const rebaseInProgress = (run: Run) =>
      Effect.gen(function* () {
        const dirs = yield* Effect.forEach(["rebase-merge", "rebase-apply"], (d) => g(run.worktree, "rev-parse", "--git-path", d))
        // fallback: a folder that cannot be looked at does not count as the project's
        for (const d of dirs) if (yield* fs.exists(NodePath.resolve(run.worktree, d)).pipe(Effect.orElseSucceed(() => false))) return true
        return false
      })
    const conflictsOf = (run: Run) =>
      // fallback: no conflicted files read is none; the rebase's own state is checked next
      g(run.worktree, "diff", "--name-only", "--diff-filter=U").pipe(Effect.map((o) => (o === "" ? [] : o.split("\n"))), Effect.orElseSucceed(() => []))
    const identity = (run: Run) =>
      Effect.gen(function* () {
        // fallback: an identity not configured is empty; git then uses its own default
        const name = yield* g(run.worktree, "config", "user.name").pipe(Effect.orElseSucceed(() => ""))
        // fallback: an identity not configured is empty; git then uses its own default
        const email = yield* g(run.worktree, "config", "user.email").pipe(Effect.orElseSucceed(() => ""))
        return ["-c", `user.name=${name || Git.NEUTRAL.name}`, "-c", `user.email=${email || Git.NEUTRAL.email}`]
      })

    const sync = (run: Run, s: VerifyConfig.VerifySettings) =>
      Effect.gen(function* () {
        const ref = baseRef(run, s)
        // Killed mid-rebase (or mid rebase-fix turn), the worktree is left
        // mid-rebase with HEAD on the base, whose tree would read as "already
        // in base": put the branch back and rebase again; the fix rounds
        // recorded so far still count.
        // fallback: an abort that fails shows up as the next rebase's own error
        if (yield* rebaseInProgress(run)) yield* g(run.worktree, "rebase", "--abort").pipe(Effect.ignore)
        for (let attempt = verOf(run).sync.attempts + 1;; attempt++) {
          if (s.remote !== null) yield* g(run.repo, "fetch", "--quiet", s.remote, run.base)
          const onto = yield* io(Git.tip(run.repo, ref))
          if (onto === null) return yield* end(run.id, "blocked", `the base ${ref} is not there to sync to`)
          const head = yield* headOf(run)
          const cherry = yield* g(run.repo, "cherry", onto, head).pipe(Effect.map((o) => o.split("\n")))
          let conflicts: ReadonlyArray<string> = []
          let fixRounds = verOf(yield* runs.get(run.id)).sync.rebase_fix_rounds
          if (!(yield* io(Git.isAncestor(run.repo, onto, head))) && !cherry.every((l) => l.trim() === "" || l.startsWith("-"))) {
            const rebased = yield* Effect.either(g(run.worktree, ...(yield* identity(run)), "rebase", "--quiet", onto))
            if (rebased._tag === "Left") {
              conflicts = yield* conflictsOf(run)
              while (conflicts.length > 0 && fixRounds < s.rebaseFixRounds) {
                fixRounds++
                yield* change(run.id, (v) => ({ verification: { ...v, sync: { ...v.sync, rebase_fix_rounds: fixRounds, conflicts } } }))
                const words = rebased.left.message
                yield* Effect.either(
                  driver.turn({ run: run.id, seat: winnerSeat(run), prompt: P.rebaseFixPrompt(onto, words, conflicts), timeout: RUN_TURN_TIMEOUT })
                )
                conflicts = (yield* rebaseInProgress(run)) ? (yield* conflictsOf(run)).concat() : []
                if (conflicts.length === 0 && (yield* rebaseInProgress(run))) conflicts = ["(the rebase was left unfinished)"]
              }
              if (conflicts.length > 0 || (yield* rebaseInProgress(run))) {
                // fallback: best-effort abort of a rebase that may not be running
                yield* g(run.worktree, "rebase", "--abort").pipe(Effect.ignore)
                if (conflicts.length === 0) conflicts = ["(the rebase was left unfinished)"]
              }
            }
          }
          const now = yield* headOf(run)
          const treeEqualsBase = (yield* treeOf(run, now)) === (yield* treeOf(run, onto))
          const moved = (yield* io(Git.tip(run.repo, ref))) !== onto
          const headInBase = now !== onto && (yield* io(Git.isAncestor(run.repo, now, onto)))
          const got = syncOutcome({ cherry, treeEqualsBase, headInBase, conflicts, baseMoved: moved, attempts: attempt })
          yield* change(run.id, (v) => ({ verification: { ...v, sync: { attempts: attempt, onto, rebase_fix_rounds: fixRounds, conflicts } } }))
          switch (got._tag) {
            case "conflicted":
              return yield* end(run.id, "blocked", `the rebase onto ${run.base} still conflicts in ${got.paths.join(", ")}`)
            case "already_in_base":
              return yield* end(run.id, "already_in_base", got.why)
            case "moving":
              return yield* end(run.id, "blocked", got.why)
            case "synced":
              return yield* change(run.id, (v) => ({ base_commit: onto, verification: { ...v, step: "review" } }))
            case "again":
              continue
          }
        }
      })

    // -- review -----------------------------------------------------------------------

    const reviewDir = (run: Run, seat: string) => NodePath.join(home.dir, "worktrees", `${run.id}.review`, seat)

    /** Seat the reviewers once: agents other than the winner's first, each in its own detached worktree. */
    const seatReviewers = (run: Run, count: number) =>
      Effect.gen(function* () {
        if (run.seats.some((s) => s.key.startsWith("review-")) || count === 0) return run
        const roster = (yield* rosters.forRepo(run.repo)).agents.map((a) => a.id)
        const own = run.seats.find((s) => s.key === winnerSeat(run))?.agent
        const pool = [...roster.filter((a) => a !== own), ...roster.filter((a) => a === own)]
        const seats: ReadonlyArray<Seat> = Array.from({ length: count }, (_, i) => ({
          key: `review-${i + 1}`,
          agent: pool[i % pool.length] ?? own ?? "",
          turns: 0,
          session: null,
          write: false,
          worktree: reviewDir(run, `review-${i + 1}`)
        }))
        return yield* runs.update(run.id, (r) => ({ ...r, seats: [...r.seats, ...seats] }))
      })

    const openRound = (run: Run) =>
      Effect.gen(function* () {
        const v = verOf(run)
        const last = v.rounds.at(-1)
        if (last !== undefined && last.fixed_to === undefined) return run
        const head = yield* headOf(run)
        const tree = yield* treeOf(run, head)
        const reviewers = run.seats.filter((s) => s.key.startsWith("review-"))
        const round: V.Round = {
          n: v.rounds.length + 1,
          head,
          tree,
          revoted: false,
          e2e: null,
          reviews: reviewers.map((s) => ({ seat: s.key, agent: s.agent, status: "pending", verdict: null, findings: [], retries: 0, failure: "" }))
        }
        return yield* change(run.id, (cur) => ({ verification: { ...cur, rounds: [...cur.rounds, round] } }))
      })

    const reviewOne = (run: Run, seat: string, first: string, round: V.Round) =>
      Effect.gen(function* () {
        const dir = reviewDir(run, seat)
        // fallback: a path that cannot be looked at is added; git refuses an existing one loudly
        if (!(yield* fs.exists(dir).pipe(Effect.orElseSucceed(() => false)))) yield* g(run.repo, "worktree", "add", "--detach", "--quiet", dir, round.head)
        else yield* g(dir, "checkout", "--quiet", "--detach", "--force", round.head)
        const files = new Set((yield* g(run.repo, "ls-tree", "-r", "--name-only", round.head)).split("\n"))
        const record = (f: (r: V.Review) => V.Review) =>
          change(run.id, (v) => ({ verification: withRound(v, (r) => ({ ...r, reviews: r.reviews.map((x) => (x.seat === seat ? f(x) : x)) })) }))
        const existing = round.reviews.find((x) => x.seat === seat)
        let retries = existing?.retries ?? 0
        let prompt = first
        for (;;) {
          const turn = yield* Effect.either(driver.turn({ run: run.id, seat, prompt, timeout: REVIEW_TURN_TIMEOUT }))
          if (turn._tag === "Left" && turn.left._tag === "SeatBusy") return yield* turn.left
          if (turn._tag === "Left") return yield* record((x) => ({ ...x, status: "unanswered", failure: turn.left.message, retries }))
          if (!turn.right.usable)
            return yield* record((x) => ({ ...x, status: "unanswered", failure: turn.right.problem ?? "its agent's turn failed", retries }))
          const firstId = (existing?.findings.length ?? 0) + 1
          const parsed = ReviewAnswer.parseReview(turn.right.text, { round: round.n, seat, first: firstId }, (f) => files.has(f))
          if (parsed._tag === "ok")
            return yield* record((x) =>
              x.status === "answered"
                ? { ...x, revote: parsed.verdict, findings: [...x.findings, ...parsed.findings], retries }
                : { ...x, status: "answered", verdict: parsed.verdict, findings: parsed.findings, retries, failure: "" }
            )
          if (retries >= REVIEW_RETRIES)
            return yield* record((x) => ({ ...x, status: x.status === "answered" ? x.status : "unanswered", failure: parsed.reason, retries }))
          retries++
          yield* record((x) => ({ ...x, retries }))
          prompt = ReviewAnswer.nudge(parsed.reason)
        }
      })

    const runChecks = (cwd: string, commands: ReadonlyArray<string>, secs: number) =>
      Effect.forEach(commands, (c) => io(runCheck(cwd, c, Duration.seconds(secs))))

    const review = (run: Run, s: VerifyConfig.VerifySettings, rules: RoundRules) =>
      Effect.gen(function* () {
        const seated = yield* openRound(yield* seatReviewers(run, VerifyConfig.reviewersFor(s, reviewsLikeCompetition(run))))
        const v = verOf(seated)
        const round = v.rounds.at(-1)!
        const earlier = v.rounds.slice(0, -1)
        // fallback: a patch that cannot be read is shown to the reviewers as empty
        const patch = yield* g(run.repo, "diff", `${seated.base_commit}...${round.head}`).pipe(Effect.orElseSucceed(() => ""))
        const focusOf = (i: number) => (s.focus.length === 0 ? null : s.focus[i % s.focus.length]!)
        const pending = round.reviews.filter((x) => x.status === "pending")
        yield* Effect.all(
          pending.map((x) =>
            reviewOne(
              seated,
              x.seat,
              P.reviewPrompt({
                instruction: run.instruction,
                branch: run.branch,
                head: round.head,
                onto: seated.base_commit,
                patch,
                focus: focusOf(Number(x.seat.replace("review-", "")) - 1),
                earlier
              }),
              round
            )
          ),
          { concurrency: "unbounded" }
        )
        let now = verOf(yield* runs.get(run.id)).rounds.at(-1)!
        if (!now.revoted && split(now)) {
          const answered = now.reviews.filter((x) => x.status === "answered")
          yield* Effect.all(answered.map((x) => reviewOne(seated, x.seat, P.revotePrompt(now.reviews.filter((o) => o.seat !== x.seat)), now)), {
            concurrency: "unbounded"
          })
          yield* change(run.id, (cur) => ({ verification: withRound(cur, (r) => ({ ...r, revoted: true })) }))
        }
        now = verOf(yield* runs.get(run.id)).rounds.at(-1)!
        if (now.e2e === null) {
          const e2e = yield* runChecks(run.worktree, s.e2e, s.e2eTimeoutSecs)
          yield* change(run.id, (cur) => ({ verification: withRound(cur, (r) => ({ ...r, e2e })) }))
        }
        const after = verOf(yield* runs.get(run.id))
        const next = afterRound(after.rounds, rules)
        if (next._tag === "clean") return yield* toStep(run.id, "gate")
        if (next._tag === "blocked") return yield* end(run.id, "blocked", next.why)
        return yield* fix(yield* runs.get(run.id), rules)
      })

    const fix = (run: Run, rules: RoundRules) =>
      Effect.gen(function* () {
        const v = verOf(run)
        const round = v.rounds.at(-1)!
        const open = V.openFindings(round)
        const got = yield* fixer.turn(
          run,
          P.fixPrompt({
            findings: open,
            e2e: (round.e2e ?? []).filter((c) => c.exit !== 0),
            unanswered: round.reviews.filter((x) => x.status === "unanswered").map((x) => x.seat)
          })
        )
        if (got.moved !== null) return yield* end(run.id, "blocked", `the fixer ${got.moved.replace(/^it /, "")}`)
        const after = yield* headOf(run)
        const tree = yield* treeOf(run, after)
        const replies = P.repliesOf(got.text, jsonObjectOf)
        const written = yield* change(run.id, (cur) => ({
          verification: withRound(cur, (r) => ({
            ...r,
            fixed_to: after,
            reviews: r.reviews.map((x) => ({
              ...x,
              findings: x.findings.map((f) => (f.reply !== undefined ? f : { ...f, reply: replyTo(f, replies, round.head, after) }))
            }))
          }))
        }))
        const next = afterFix(verOf(written).rounds, { before: round.head, after, tree }, rules)
        if (next._tag === "blocked") return yield* end(run.id, "blocked", next.why)
        return written
      })

    // -- gate and ready ---------------------------------------------------------------

    const gate = (run: Run, s: VerifyConfig.VerifySettings) =>
      Effect.gen(function* () {
        const head = yield* headOf(run)
        const results: ReadonlyArray<Check> = yield* runChecks(run.worktree, s.gate, s.gateTimeoutSecs)
        const at = Q.timestamp(new Date(yield* Clock.currentTimeMillis))
        const written = s.gate.length === 0
          ? run
          : yield* change(run.id, (v) => ({ verification: { ...v, gates: [...v.gates, { n: v.gates.length + 1, head, at, results }] } }))
        const v = verOf(written)
        const next = afterGate(s.gate, results, v.gate_fix_rounds, s.gateFixRounds)
        switch (next._tag) {
          case "passed":
          case "none":
            return yield* ready(
              written,
              next._tag === "passed" ? `the gate passed (${s.gate.length} command(s)) at ${head.slice(0, 12)}` : "no gate is configured"
            )
          case "blocked":
            return yield* end(run.id, "blocked", next.why)
          case "fix": {
            yield* change(run.id, (cur) => ({ verification: { ...cur, gate_fix_rounds: cur.gate_fix_rounds + 1 } }))
            const got = yield* fixer.turn(written, P.gateFixPrompt(next.failing))
            if (got.moved !== null) return yield* end(run.id, "blocked", `the fixer ${got.moved.replace(/^it /, "")}`)
            return yield* runs.get(run.id)
          }
        }
      })

    const ready = (run: Run, gateWords: string) =>
      Effect.gen(function* () {
        for (const s of run.seats.filter((x) => x.key.startsWith("review-"))) yield* io(Git.remove(run.repo, s.worktree ?? reviewDir(run, s.key), null))
        const last = verOf(run).rounds.at(-1)
        const rounds = last === undefined ? "no review" : `${last.n} review round(s), the last clean`
        const copy = run.reviewed === undefined ? "" : ` (${run.reviewed.branch} rebased, with any fixes; ${run.reviewed.branch} itself is as it was)`
        const why = `${rounds}; ${gateWords}. Look: git -C ${run.repo} diff ${run.base}...${run.branch}${copy}; merge: git -C ${run.repo} merge ${run.branch}`
        yield* toStep(run.id, "ready", why)
        return yield* runs.setStatus(run.id, "ready", why)
      })

    const advance = Effect.fn("VerifyDriver.advance")(function* (id: string, s: VerifyConfig.VerifySettings) {
      const rules: RoundRules = { reviewRounds: s.reviewRounds, incompleteReview: s.incompleteReview }
      yield* begin(yield* runs.get(id), s)
      for (;;) {
        const run = yield* runs.get(id)
        if (run.status !== "running") return run
        const v = verOf(run)
        switch (v.step) {
          case "sync":
            yield* sync(run, s)
            break
          case "review":
            yield* review(run, s, rules)
            break
          case "gate":
            yield* gate(run, s)
            break
          case "fix":
            yield* fixer.chosen(run)
            break
          default:
            return run
        }
      }
    })

    /**
     * Drive the verification from its recorded step. Interrupted, the run
     * stalls (resumable at that step); broken, it stalls with the reason.
     */
    const drive = (id: string, s: VerifyConfig.VerifySettings) =>
      Effect.zipRight(runs.setStatus(id, "running"), advance(id, s)).pipe(
        // fallback: best-effort status on an interrupted run; a resume reads the record as it is
        Effect.onInterrupt(() => runs.setStatus(id, "stalled", "interrupted while verifying; continue with magi run --resume").pipe(Effect.ignore)),
        Effect.catchIf(
          (e): e is Exclude<typeof e, { readonly _tag: "SeatBusy" }> => e._tag !== "SeatBusy",
          (e) =>
            Effect.zipRight(
              // fallback: best-effort status; the failure itself is what is returned
              runs.setStatus(id, "stalled", `the verification could not go on: ${e.message}; continue with magi run --resume ${id}`).pipe(Effect.ignore),
              runs.get(id)
            )
        )
      )

    /**
     * What a solo run whose turn ends well becomes in that same write when
     * its repository configures a verification: `running`, at its sync
     * step, so nothing reads it as done before it is verified. None when
     * nothing is configured, or the configuration cannot be read (the run
     * then ends done and `afterImplementing` blocks it with the reason).
     */
    const follows = (run: Run) =>
      VerifyConfig.load(run.repo).pipe(
        Effect.provideService(FileSystem.FileSystem, fs),
        Effect.map((s) =>
          run.competition === undefined && VerifyConfig.configured(s, reviewsLikeCompetition(run))
            ? Option.some((r: Run): Run => ({ ...begun(r, s), status: "running", reason: "" }))
            : Option.none()
        ),
        // fallback: an unreadable configuration is reported by afterImplementing, which blocks the run saying why
        Effect.orElseSucceed(() => Option.none<(r: Run) => Run>())
      )

    /** A run that ended well (`done`), or whose ended-well turn already set its verification up (`follows`). */
    const goesOn = (run: Run): boolean => run.status === "done" || (run.status === "running" && run.verification !== undefined && V.unstarted(run.verification))

    /**
     * After the implementing: a run that ended well goes on into the
     * verification when its repository configures any of it; with nothing
     * configured it stays `done` as before.
     */
    const afterImplementing = (run: Run) =>
      Effect.gen(function* () {
        if (!goesOn(run) || (run.competition !== undefined && run.competition.step !== "elected")) return run
        const s = yield* VerifyConfig.load(run.repo).pipe(Effect.provideService(FileSystem.FileSystem, fs), Effect.either)
        if (s._tag === "Left") return yield* runs.setStatus(run.id, "blocked", `its verification cannot be configured: ${s.left.message}`)
        if (run.status === "done" && !VerifyConfig.configured(s.right, reviewsLikeCompetition(run))) return run
        return yield* drive(run.id, s.right)
      })

    /**
     * `magi fix`: the owner's chosen recorded findings go to the fixer
     * (`Fixer`, its choice recorded first), then a fresh review round (and
     * the gate after it) verifies again.
     */
    const fixChosen = Effect.fn("VerifyDriver.fixChosen")(
      function* (id: string, ids: ReadonlyArray<string>, reason: string | undefined, s: VerifyConfig.VerifySettings) {
        yield* fixer.choose(id, ids, reason)
        return yield* drive(id, s)
      }
    )

    return { drive, afterImplementing, follows, goesOn, fixChosen, blockers: (r: V.Round, rules: RoundRules) => blockers(r, rules) }
  }),
  dependencies: [Fixer.Default]
}) {}
