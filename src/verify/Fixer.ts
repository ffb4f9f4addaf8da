/**
 * The fixer's turns (issue 30), apart from the rounds that call for them:
 * one turn with a check that it moved neither the base nor another branch,
 * and `magi fix`'s own step, the owner's chosen findings sent to the fixer.
 * `magi fix` records its choice (step `fix`) before the turn, and the
 * replies with the next step in one write after it, so a kill mid-turn is
 * resumed by running the turn again rather than refused.
 */
import * as CommandExecutor from "@effect/platform/CommandExecutor"
import * as FileSystem from "@effect/platform/FileSystem"
import { Effect, Schema } from "effect"
import * as Git from "../graph/CandidateGit.js"
import { jsonObjectOf } from "../graph/JudgeAnswer.js"
import * as Q from "../questions/Question.js"
import { RUN_TURN_TIMEOUT } from "../runs/NewRun.js"
import { RunDriver } from "../runs/RunDriver.js"
import { type Run, RunStore } from "../runs/Runs.js"
import { inFlight } from "../runs/RunStatus.js"
import * as V from "../runs/Verification.js"
import { git } from "../runs/Worktree.js"
import * as FixChoice from "./FixChoice.js"
import * as P from "./VerifyPrompts.js"

export class FixRefused extends Schema.TaggedError<FixRefused>()("FixRefused", { run: Schema.String, why: Schema.String }) {
  override get message() {
    return `run ${this.run} cannot be fixed: ${this.why}`
  }
}

/** The fixer's answer to `f`, from its replies: fixed (with its commit, or the head it left) or rejected with its argument. */
export const replyTo = (f: V.Finding, replies: ReturnType<typeof P.repliesOf>, before: string, after: string): V.Reply => {
  const said = replies.get(f.id)
  return said?.fixed === true
    ? { kind: "fixed", commit: said.commit ?? (after === before ? null : after.slice(0, 12)), argument: said.argument }
    : { kind: "rejected", commit: null, argument: said?.argument || "the fixer gave no answer to it" }
}

export class Fixer extends Effect.Service<Fixer>()("magi/Fixer", {
  effect: Effect.gen(function* () {
    const runs = yield* RunStore
    const driver = yield* RunDriver
    const fs = yield* FileSystem.FileSystem
    const executor = yield* CommandExecutor.CommandExecutor
    const io = <A, E>(e: Effect.Effect<A, E, Git.GitServices>) =>
      e.pipe(Effect.provideService(FileSystem.FileSystem, fs), Effect.provideService(CommandExecutor.CommandExecutor, executor))
    const headOf = (run: Run) => io(git(run.worktree, "rev-parse", "HEAD"))
    const verOf = (run: Run): V.Verification => {
      if (run.verification === undefined) throw new Error(`run ${run.id} has no verification`)
      return run.verification
    }
    const change = (id: string, f: (v: V.Verification) => Partial<Run> & { readonly verification: V.Verification }) =>
      runs.update(id, (r) => ({ ...r, ...f(verOf(r)) }))
    const block = (id: string, why: string) =>
      Effect.zipRight(change(id, (v) => ({ verification: { ...v, step: "blocked", stopped: why } })), runs.setStatus(id, "blocked", why))

    /** Did the fixer move the base or another run's branch? Put back what it moved, and say so. */
    const turn = (run: Run, prompt: string) =>
      Effect.gen(function* () {
        const before = yield* io(Git.tip(run.repo, `refs/heads/${run.base}`))
        const turn = yield* Effect.either(driver.turn({ run: run.id, seat: verOf(run).fixer, prompt, timeout: RUN_TURN_TIMEOUT }))
        if (turn._tag === "Left" && turn.left._tag === "SeatBusy") return yield* turn.left
        // Not "unmoved" on a failure: a base the fixer moved would go on to the gate unseen (the step stops instead, for a resume).
        const moved = yield* io(Git.baseMovedBy(run.repo, run.base, before, run.worktree, run.branch))
        return { text: turn._tag === "Right" && turn.right.usable ? turn.right.text : "", moved }
      })

    /**
     * `magi fix`'s choice, checked and recorded as the `fix` step: unknown
     * ids are refused with the known ones before any turn runs.
     */
    const choose = Effect.fn("Fixer.choose")(function* (id: string, ids: ReadonlyArray<string>, reason: string | undefined) {
      const run = yield* runs.get(id)
      if (run.verification === undefined) return yield* new FixRefused({ run: run.id, why: "it has no review, so no findings to fix" })
      if (inFlight(run.status)) return yield* new FixRefused({ run: run.id, why: `it is ${run.status}; wait for it to end` })
      const chosen = yield* FixChoice.choose(Q.shortId(run.id), run.verification, ids)
      const before = yield* headOf(run)
      const fixing: V.Fixing = { ids: chosen.map((f) => f.id), before, ...(reason === undefined ? {} : { reason }) }
      return yield* change(id, (v) => ({ status: "running", reason: "", verification: { ...v, step: "fix", stopped: "", fixing } }))
    })

    /**
     * The `fix` step: the fixer's turn on the recorded choice; its replies
     * and the step after it (review, or blocked when nothing was committed)
     * are one write, so a kill before it runs the turn again.
     */
    const chosen = (run: Run) =>
      Effect.gen(function* () {
        const v = verOf(run)
        if (v.fixing === undefined) return yield* block(run.id, "magi fix: the findings to fix were not recorded; run magi fix again")
        const { before, ids, reason } = v.fixing
        const findings = yield* FixChoice.choose(Q.shortId(run.id), v, ids)
        const got = yield* turn(run, P.fixPrompt({ findings, e2e: [], unanswered: [], ...(reason === undefined ? {} : { reason }) }))
        if (got.moved !== null) return yield* block(run.id, `the fixer ${got.moved.replace(/^it /, "")}`)
        const after = yield* headOf(run)
        const replies = P.repliesOf(got.text, jsonObjectOf)
        const wanted = new Set(ids)
        const none = after === before ? `magi fix: the fixer committed nothing for ${ids.join(", ")}` : ""
        yield* change(run.id, (cur) => ({
          verification: {
            ...cur,
            step: none === "" ? "review" : "blocked",
            stopped: none,
            rounds: cur.rounds.map((r, i) => ({
              ...r,
              ...(i === cur.rounds.length - 1 ? { fixed_to: after } : {}),
              reviews: r.reviews.map((x) => ({
                ...x,
                findings: x.findings.map((f) => (wanted.has(f.id) ? { ...f, reply: replyTo(f, replies, before, after) } : f))
              }))
            }))
          }
        }))
        if (none !== "") return yield* runs.setStatus(run.id, "blocked", none)
      })

    return { turn, choose, chosen }
  })
}) {}
