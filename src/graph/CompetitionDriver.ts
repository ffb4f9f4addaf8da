/**
 * The competition as a service: a run whose steps (prep, implement, checks,
 * judge, deliberate, vote, tally, fold) each write the run record before the next starts and
 * skip what is already recorded, so `magi run --resume`, a restarted loop or
 * a second try costs at most the step in progress: no implementer is
 * re-invoked once its candidate is recorded, no judge re-asked who answered.
 *
 * The turns go through `RunDriver.turn` (each seat its own CLI session, its
 * own lock, the host's turn slots; the judge step is `JudgeStep.ts`, deliberation and the vote `VoteStep.ts`); the rules are pure (`Labels`, `Tally`,
 * `JudgeAnswer`, `JudgePrompt`, `runs/Competition`); this module only does
 * the I/O between them.
 */
import * as CommandExecutor from "@effect/platform/CommandExecutor"
import * as FileSystem from "@effect/platform/FileSystem"
import { Clock, Duration, Effect, Either, Option, Random, Schema } from "effect"
import * as NodePath from "node:path"
import { Rosters, type AgentRosterShape } from "../agents/AgentRoster.js"
import type { CallResult } from "../agents/Agents.js"
import * as Prompts from "../agents/Prompts.js"
import { MagiHome } from "../platform/MagiHome.js"
import { defaultHostName, MagiConfig } from "../platform/MagiConfig.js"
import * as Q from "../questions/Question.js"
import { QuestionStore } from "../questions/QuestionStore.js"
import * as C from "../runs/Competition.js"
import { RUN_TURN_TIMEOUT, RunNotStarted } from "../runs/NewRun.js"
import { RunDriver } from "../runs/RunDriver.js"
import { outstanding, RunStore, type Run, type Seat } from "../runs/Runs.js"
import { resumable } from "../runs/RunStatus.js"
import type { SeatBusy } from "../runs/RunTurns.js"
import { git } from "../runs/Worktree.js"
import * as Git from "./CandidateGit.js"
import * as Labels from "./Labels.js"
import * as Leaks from "./Leaks.js"
import { runCheck } from "./Checks.js"
import * as GraphConfig from "./GraphConfig.js"
import type { GraphSettings, Seating } from "./GraphConfig.js"
import { implementNote } from "./JudgePrompt.js"
import * as D from "./Deliberation.js"
import { judging } from "./JudgeStep.js"
import { newCompetitionRun } from "./NewCompetition.js"
import * as Tally from "./Tally.js"
import { voting } from "./VoteStep.js"

export interface NewCompetition {
  readonly instruction: string
  readonly repoDir: string
  readonly seating: Seating
  readonly settings: GraphSettings
  readonly roster: AgentRosterShape
  /** `magi run --seed N`: repeat a competition's labels and orders; else drawn. */
  readonly seed?: number
}

export class CompetitionDriver extends Effect.Service<CompetitionDriver>()("magi/CompetitionDriver", {
  effect: Effect.gen(function* () {
    const runs = yield* RunStore
    const driver = yield* RunDriver
    const questions = yield* QuestionStore
    const rosters = yield* Rosters
    const home = yield* MagiHome
    const fs = yield* FileSystem.FileSystem
    const executor = yield* CommandExecutor.CommandExecutor
    const self = Option.match(yield* Effect.serviceOption(MagiConfig), { onNone: defaultHostName, onSome: (c) => c.hostName })
    const io = <A, E>(e: Effect.Effect<A, E, Git.GitServices>) =>
      e.pipe(Effect.provideService(FileSystem.FileSystem, fs), Effect.provideService(CommandExecutor.CommandExecutor, executor))

    const compOf = (run: Run): C.Competition => {
      if (run.competition === undefined) throw new Error(`run ${run.id} is not a competition`)
      return run.competition
    }
    /** Change the competition under the run's lock, and return the run as written. */
    const change = (id: string, f: (c: C.Competition, run: Run) => Partial<Run> & { readonly competition: C.Competition }) =>
      runs.update(id, (r) => ({ ...r, ...f(compOf(r), r) }))
    const toStep = (id: string, step: C.Step) => change(id, (c) => ({ competition: { ...c, step } }))

    const create = Effect.fn("CompetitionDriver.create")(function* (input: NewCompetition) {
      const fail = (e: { readonly message: string }) => new RunNotStarted({ message: e.message })
      const repo = yield* io(git(input.repoDir, "rev-parse", "--show-toplevel")).pipe(Effect.mapError(fail))
      const baseCommit = yield* io(git(repo, "rev-parse", "HEAD")).pipe(Effect.mapError(fail))
      // fallback: a detached HEAD runs against the base commit itself
      const base = yield* io(git(repo, "symbolic-ref", "--quiet", "--short", "HEAD")).pipe(Effect.orElseSucceed(() => baseCommit))
      const at = new Date(yield* Clock.currentTimeMillis)
      const draw = Effect.map(Random.nextIntBetween(0, 0x10000), (n) => Q.makeId(at, n))
      let id = yield* draw
      const taken = (short: string) => io(Git.tip(repo, `refs/heads/magi/${short}/A`)).pipe(Effect.map((t) => t !== null))
      while (
        Option.isSome(yield* Effect.option(runs.get(id))) || (yield* taken(Q.shortId(id))) ||
        (yield* io(Git.tip(repo, `refs/heads/magi/${Q.shortId(id)}`))) !== null
      )
        id = yield* draw
      const seed = input.seed ?? (yield* Random.nextIntBetween(0, 0x7fffffff))
      const run = newCompetitionRun({
        id,
        at,
        instruction: input.instruction,
        repo,
        base,
        baseCommit,
        dir: NodePath.join(home.dir, "worktrees", id),
        host: self,
        seed,
        implementers: input.seating.implementers,
        candidates: input.seating.candidates,
        keepLosers: input.settings.keepLosers
      })
      yield* runs.put(run).pipe(Effect.mapError(fail))
      return run
    })

    // -- the steps ----------------------------------------------------------------------

    const prep = (run: Run) =>
      Effect.gen(function* () {
        yield* io(Git.allowWorktreeConfig(run.repo))
        for (const x of compOf(run).candidates) yield* io(Git.addCandidate(run.repo, x.worktree, x.branch, run.base_commit))
        return yield* toStep(run.id, "implement")
      })

    /**
     * A candidate's seat with a question the owner has not settled: it waits
     * for the answer, which the waiter delivers to that seat alone
     * (`afterAnswer`), and nothing re-invokes it meanwhile. A list that cannot
     * be read counts as asking: a candidate is never re-run over a question.
     */
    const asking = (runId: string, seat: string) =>
      questions.list.pipe(
        Effect.map((all) => all.some((q) => q.run === runId && q.seat === seat && outstanding(q))),
        // fallback: unread questions count as asking, so the seat waits rather than be judged early
        Effect.orElseSucceed(() => true)
      )

    /**
     * A candidate's turn; when its agent hits its usage limit, the seat goes
     * to the next agent of `[roles] implementers` that has not held it
     * (recorded in `fallback_from`), in a fresh session on the same worktree,
     * until one answers or every implementer has been tried (then it stalls).
     */
    const implementOne = (run: Run, x: C.Candidate, onLeak: Leaks.OnLeak, implementers: ReadonlyArray<string>) =>
      Effect.gen(function* () {
        for (;;) {
          const ended = yield* implementTurn(run, x, onLeak)
          if (ended !== "limited") return ended
          const cur = compOf(yield* runs.get(run.id)).candidates.find((y) => y.label === x.label) ?? x
          const next = Labels.fallbackAgent(implementers, cur.agent, cur.fallback_from)
          if (next === undefined) return ended
          yield* Effect.logInfo(`candidate ${x.label}'s agent hit its usage limit; ${next} takes the seat over`)
          yield* change(run.id, (c, r) => ({
            seats: r.seats.map((s): Seat => {
              if (s.key !== x.seat) return s
              const { env: _env, ...rest } = s
              return { ...rest, agent: next, session: null }
            }),
            competition: C.withCandidate(c, x.label, (y) => ({ ...y, agent: next, fallback_from: [...y.fallback_from, y.agent] }))
          }))
        }
      })

    const implementTurn = (run: Run, x: C.Candidate, onLeak: Leaks.OnLeak) =>
      Effect.gen(function* () {
        const before = yield* io(Git.tip(run.repo, `refs/heads/${run.base}`))
        const prompt = (magi: Prompts.MagiName) => Prompts.runPrompt(run.instruction, x.worktree, x.branch, magi) + implementNote(x.label)
        const started = yield* Clock.currentTimeMillis
        const turn = yield* Effect.either(driver.turn({ run: run.id, seat: x.seat, prompt, timeout: RUN_TURN_TIMEOUT }))
        if (turn._tag === "Left" && turn.left._tag === "SeatBusy") return yield* turn.left
        return yield* settleCandidate(run, x, turn, before, onLeak, (yield* Clock.currentTimeMillis) - started)
      })

    /** What a candidate's turn (its first, or the one an answer resumed) makes of it, recorded; or why it is not settled yet. */
    const settleCandidate = (
      run: Run,
      x: C.Candidate,
      turn: Either.Either<CallResult, { readonly message: string }>,
      before: string | null,
      onLeak: Leaks.OnLeak,
      tookMs: number
    ) =>
      Effect.gen(function* () {
        const result = turn._tag === "Right" ? turn.right : undefined
        // A usage limit leaves the candidate pending: the run stalls and a resume gives it its turn.
        if (result !== undefined && result.quota !== null && !result.usable) return "limited" as const
        if (yield* asking(run.id, x.seat)) return "asked" as const
        // What is written below is read here: only a branch that is gone is "no commits"; a git or disk
        // failure stops the step (the candidate stays pending for a resume) rather than fail it as empty.
        const baseMoved = yield* io(Git.baseMovedBy(run.repo, run.base, before, x.worktree, x.branch))
        const gone = !(yield* fs.exists(x.worktree))
        const branchTip = yield* io(Git.tip(run.repo, `refs/heads/${x.branch}`))
        const commits = branchTip === null ? [] : yield* io(Git.commitsOf(run.repo, run.base_commit, x.branch))
        const numstat = commits.length > 0 ? yield* io(Git.numstatOf(run.repo, run.base_commit, x.branch)) : ""
        const failed = turn._tag === "Left" ? turn.left.message : result!.usable ? null : (result!.problem ?? "its agent's turn failed")
        const summary = result?.usable === true ? Git.stripTrailers(result.text) : ""
        // What the judges would read, searched for agent and vendor names (`[blind] on_leak`).
        // Read for the leak check like the commits above: a git failure stops the step, the candidate stays pending.
        const patch = commits.length > 0 ? yield* io(Git.patchOf(run.repo, run.base_commit, x.branch)) : ""
        const names = [...Leaks.VENDOR_NAMES, ...compOf(run).candidates.map((y) => y.agent)]
        const leaks = commits.length > 0 ? Leaks.findLeaks([patch, summary, ...commits], names) : []
        const leak = Leaks.decide(onLeak, leaks)
        yield* change(run.id, (c) => ({
          competition: C.withCandidate(c, x.label, (cur) => {
            const after = C.afterImplement(cur, {
              commits,
              summary,
              failed: failed ?? (gone && commits.length === 0 ? "its worktree was deleted" : null),
              baseMoved
            })
            const dropped = leak._tag === "drop" && after.status === "viable" ? { status: "dropped" as const, dropped: leak.why } : {}
            return { ...after, numstat, leaks, redacted: leak._tag === "redact", implement_ms: cur.implement_ms + tookMs, ...dropped }
          })
        }))
        return "done" as const
      })

    const implement = (run: Run, seating: Seating, settings: GraphSettings) =>
      Effect.gen(function* () {
        const pending = compOf(run).candidates.filter((x) => x.status === "pending")
        const waiting = yield* Effect.filter(pending, (x) => asking(run.id, x.seat))
        const going = pending.filter((x) => !waiting.includes(x))
        const ended = yield* Effect.all(going.map((x) => implementOne(run, x, settings.onLeak, seating.implementers)), { concurrency: "unbounded" })
        if (ended.includes("limited"))
          return yield* runs.setStatus(run.id, "stalled", "a candidate's agent hit its usage limit; continue with magi run --resume")
        const asked = [...waiting, ...going.filter((_, i) => ended[i] === "asked")]
        if (asked.length > 0) return yield* runs.setStatus(run.id, "waiting", waitingWhy(asked))
        const now = yield* runs.get(run.id)
        const next = C.afterAllImplemented(compOf(now))
        if (next.next === "failed") {
          yield* toStep(run.id, "failed")
          return yield* runs.setStatus(
            run.id,
            "failed",
            "no candidate made a change: " + compOf(now).candidates.map((x) => `${x.label} ${x.dropped || x.status}`).join("; ")
          )
        }
        if (next.next === "verified_noop") {
          yield* toStep(run.id, "verified_noop")
          return yield* runs.setStatus(run.id, "done", "every candidate found nothing needed changing")
        }
        return yield* change(run.id, (c) => ({ competition: { ...c, step: next.next, winner: next.winner } }))
      })

    const checks = (run: Run, settings: GraphSettings) =>
      Effect.gen(function* () {
        if (settings.checks.length > 0) {
          for (const x of C.viable(compOf(run)).filter((x) => x.checks.length === 0)) {
            const got: Array<C.Check> = []
            for (const command of settings.checks) got.push(yield* io(runCheck(x.worktree, command, Duration.seconds(settings.checkTimeoutSecs))))
            yield* change(run.id, (c) => ({ competition: C.withCandidate(c, x.label, (cur) => ({ ...cur, checks: got })) }))
          }
        }
        return yield* toStep(run.id, "judge")
      })

    const { judgeOne, seatJudges, shownOf } = judging({ runs, driver, io, change, compOf })

    const judge = (run: Run, seating: Seating, settings: GraphSettings) =>
      Effect.gen(function* () {
        const seated = yield* seatJudges(run, seating, settings)
        const shown = yield* shownOf(seated)
        const pending = compOf(seated).judges.filter((j) => j.status === "pending")
        yield* Effect.all(pending.map((j) => judgeOne(seated, j, shown)), { concurrency: "unbounded" })
        // Below quorum there is nothing to deliberate or vote on yet: the tally stalls and a resume re-asks the missing seats.
        const answered = D.answered(compOf(yield* runs.get(run.id)).judges).length
        return yield* toStep(run.id, answered < Tally.quorumOf(compOf(seated).judges.length) ? "tally" : "deliberate")
      })

    const { deliberate, vote } = voting({ runs, driver, io, change, compOf }, shownOf, toStep)

    const tally = (run: Run) =>
      Effect.gen(function* () {
        const c = compOf(run)
        const labels = C.viable(c).map((x) => x.label)
        const ballots = c.judges.map((j) => ({
          seat: j.seat,
          ranking: j.status === "answered" ? j.ranking : [],
          vote: c.votes.find((v) => v.seat === j.seat)?.label ?? null
        }))
        const outcome = Tally.tally(labels, c.judges.length, ballots)
        if (outcome._tag === "stalled") {
          // Only the seats that did not answer are asked again on a resume.
          yield* change(run.id, (cur) => ({
            competition: {
              ...cur,
              step: "judge",
              judges: cur.judges.map((j) => (j.status === "failed" ? { ...j, status: "pending" as const, retries: 0 } : j))
            }
          }))
          return yield* runs.setStatus(
            run.id,
            "stalled",
            `only ${outcome.answered} of ${c.judges.length} judges gave a ranking (${outcome.quorum} needed): ${
              c.judges.filter((j) => j.status === "failed").map((j) => `${j.seat}: ${j.failure}`).join("; ")
            }; continue with magi run --resume ${run.id}`
          )
        }
        return yield* change(run.id, (cur) => ({ competition: { ...cur, step: "fold", tally: outcome.tally, winner: outcome.tally.winner } }))
      })

    /** Remove the losers' worktrees and branches and the judges' worktrees; the winner becomes the run's worktree and branch. */
    const fold = (run: Run, keep: boolean) =>
      Effect.gen(function* () {
        const c = compOf(run)
        const winner = c.candidates.find((x) => x.label === c.winner)
        if (!keep) {
          for (const x of c.candidates.filter((x) => x.label !== c.winner)) yield* io(Git.remove(run.repo, x.worktree, x.branch))
          for (const j of c.judges) yield* io(Git.remove(run.repo, j.worktree, null))
        }
        const at = Q.timestamp(new Date(yield* Clock.currentTimeMillis))
        yield* change(run.id, (cur, r) => ({
          worktree: winner?.worktree ?? r.worktree,
          branch: winner?.branch ?? r.branch,
          summary: winner?.summary ?? r.summary,
          competition: { ...cur, step: "elected", ...(keep ? {} : { folded_at: at }) }
        }))
        return yield* runs.setStatus(run.id, "done")
      })

    /**
     * Drive the competition from its recorded step to an ending or a stall.
     * Each step re-reads the record, so what a step wrote is what the next sees.
     */
    const advance = Effect.fn("CompetitionDriver.advance")(function* (id: string, seating: Seating, settings: GraphSettings) {
      for (;;) {
        const run = yield* runs.get(id)
        const c = compOf(run)
        if (run.status !== "running") return run
        switch (c.step) {
          case "prep":
            yield* prep(run)
            break
          case "implement":
            yield* implement(run, seating, settings)
            break
          case "checks":
            yield* checks(run, settings)
            break
          case "judge":
            yield* judge(run, seating, settings)
            break
          case "deliberate":
            yield* deliberate(run, settings)
            break
          case "vote":
            yield* vote(run)
            break
          case "tally":
            yield* tally(run)
            break
          case "fold":
            yield* fold(run, c.keep_losers)
            break
          default:
            return run
        }
      }
    })

    /** `advance`, settling the run on the way out: interrupted, it stalls (resumable); broken, it fails with the reason. */
    const drive = (id: string, seating: Seating, settings: GraphSettings) =>
      advance(id, seating, settings).pipe(
        // fallback: best-effort status on an interrupted run; a resume reads the record as it is
        // Parked at the recorded step: what it recorded stays, the step in progress is done again by whoever picks it up.
        Effect.onInterrupt(() =>
          Effect.flatMap(runs.get(id), (r) =>
            runs.setStatus(
              id,
              "stalled",
              `parked at its ${r.competition?.step ?? "next"} step when magi stopped; the queue's next loop or magi run --resume ${Q.shortId(id)} continues it`
              // fallback: best-effort status on a parked run; a resume reads the record as it is
            )).pipe(Effect.ignore)
        ),
        Effect.catchIf(
          (e): e is Exclude<typeof e, SeatBusy> => e._tag !== "SeatBusy",
          // fallback: best-effort status; the failure itself is what is returned
          (e) => Effect.zipRight(runs.setStatus(id, "failed", `the competition could not go on: ${e.message}`).pipe(Effect.ignore), runs.get(id))
        )
      )

    /**
     * Pick the competition up where its record stands, seated and set as its
     * repository's config says now: what `magi run --resume` does, for the
     * loop (an answered candidate, a parked run).
     */
    const resume = Effect.fn("CompetitionDriver.resume")(function* (id: string) {
      const run = yield* runs.get(id)
      if (!resumable(run.status)) return run
      const set = yield* configOf(run)
      if (set._tag === "Left") return yield* configBroken(id, set.left)
      yield* runs.setStatus(id, "running")
      return yield* drive(id, set.right.seating, set.right.settings)
    })

    /** How the run's repository seats and sets a competition now, or why it cannot say. */
    const configOf = (run: Run) =>
      Effect.gen(function* () {
        const roster = yield* rosters.forRepo(run.repo)
        const settings = yield* io(GraphConfig.load(run.repo))
        return { seating: GraphConfig.seatsFor(settings, roster.agents.map((a) => a.id), false), settings }
      }).pipe(Effect.either)

    /** Unreadable config: the run stalls with the reason, resumable once it is fixed. */
    const configBroken = (id: string, e: { readonly message: string }) =>
      runs.setStatus(id, "stalled", `its config cannot be read (${e.message}); fix it and continue with magi run --resume ${Q.shortId(id)}`)

    /**
     * The waiter resumed candidate `seat` with the owner's answer: that
     * candidate is settled by the turn (the others are not re-invoked).
     * True when the competition can go on (`resume`); false when the run
     * stalled or the candidate asked again. The waiter settles under the
     * run's lock, so a competition going on never reads a candidate whose
     * answer was delivered but not yet settled (it would be re-invoked).
     */
    const settleAnswer = Effect.fn("CompetitionDriver.settleAnswer")(function* (id: string, seat: string, result: CallResult) {
      const run = yield* runs.get(id)
      const x = compOf(run).candidates.find((y) => y.seat === seat && y.status === "pending")
      if (x === undefined) return true
      const set = yield* configOf(run)
      if (set._tag === "Left") return yield* Effect.as(configBroken(id, set.left), false)
      const ended = yield* settleCandidate(run, x, Either.right(result), null, set.right.settings.onLeak, 0)
      if (ended === "limited")
        return yield* Effect.as(runs.setStatus(id, "stalled", `candidate ${x.label}'s agent hit its usage limit; continue with magi run --resume`), false)
      if (ended === "asked") return yield* Effect.as(runs.setStatus(id, "waiting", waitingWhy([x])), false)
      return true
    })

    /** `magi pick`: the owner makes another viable candidate the winner, recorded beside the panel's. */
    const pick = Effect.fn("CompetitionDriver.pick")(function* (id: string, wanted: string) {
      const run = yield* runs.get(id)
      const c = compOf(run)
      const label = wanted.toUpperCase()
      const x = c.candidates.find((y) => y.label === label)
      if (x === undefined || x.status !== "viable")
        return yield* new PickRefused({ run: run.id, label, why: `its viable candidates are ${C.viable(c).map((y) => y.label).join(", ") || "none"}` })
      if (c.folded_at !== undefined && x.label !== c.winner)
        return yield* new PickRefused({ run: run.id, label, why: "the run is folded and that candidate's branch is gone" })
      const at = Q.timestamp(new Date(yield* Clock.currentTimeMillis))
      return yield* change(
        id,
        (cur) => ({ worktree: x.worktree, branch: x.branch, summary: x.summary, competition: { ...cur, winner: x.label, pick: { label: x.label, at } } })
      )
    })

    /** `magi fold`: remove a finished competition's losers (and judges), now. */
    const foldNow = Effect.fn("CompetitionDriver.foldNow")(function* (id: string) {
      const run = yield* runs.get(id)
      const c = compOf(run)
      const winner = c.winner
      for (const x of c.candidates.filter((x) => x.label !== winner)) yield* io(Git.remove(run.repo, x.worktree, x.branch))
      for (const j of c.judges) yield* io(Git.remove(run.repo, j.worktree, null))
      const at = Q.timestamp(new Date(yield* Clock.currentTimeMillis))
      return yield* change(id, (cur) => ({ competition: { ...cur, folded_at: at } }))
    })

    return { create, drive, resume, settleAnswer, pick, foldNow }
  })
}) {}

const waitingWhy = (asked: ReadonlyArray<C.Candidate>) =>
  `candidate ${asked.map((x) => x.label).join(", ")} asked the owner; the answer resumes that seat only, then the competition goes on`

/** The owner's pick names no candidate that can win. */
export class PickRefused extends Schema.TaggedError<PickRefused>()("PickRefused", { run: Schema.String, label: Schema.String, why: Schema.String }) {
  override get message() {
    return `run ${Q.shortId(this.run)} cannot pick ${this.label}: ${this.why}`
  }
}
