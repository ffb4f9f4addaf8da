/**
 * Landing a `ready` run, as steps over its record (`runs/Landing.ts`): each
 * written before the next starts and skipped once recorded, so a second
 * `drive`, a restarted daemon or `magi land` again never asks twice or
 * merges twice.
 *
 * The approval is a question (node `land`, seat `land`, no working
 * directory, so the waiter never tries to deliver it to a seat) under an id
 * drawn from the run itself: filing it again after a kill finds the one
 * already filed. Only the answer `merge` merges; anything else holds.
 */
import * as CommandExecutor from "@effect/platform/CommandExecutor"
import * as FileSystem from "@effect/platform/FileSystem"
import { Clock, Duration, Effect, Option, Schedule, Schema } from "effect"
import * as GraphConfig from "../graph/GraphConfig.js"
import * as Q from "../questions/Question.js"
import { QuestionStore } from "../questions/QuestionStore.js"
import * as L from "../runs/Landing.js"
import { removeRun } from "../runs/RemoveRun.js"
import { RunStore, type Run } from "../runs/Runs.js"
import { git } from "../runs/Worktree.js"
import { POLL_MS } from "./LandDecide.js"
import * as Panel from "./LandPanel.js"
import * as PrLand from "./PrLand.js"

/** A run that cannot be landed now, and what to do about it. */
export class LandRefused extends Schema.TaggedError<LandRefused>()("LandRefused", { run: Schema.String, why: Schema.String }) {
  override get message() {
    return `run ${Q.shortId(this.run)} cannot land: ${this.why}`
  }
}

/**
 * The question id a run's approval is filed under: the same on every try, so
 * a restart finds it. `salt` (a pull request's head) makes the approval of a
 * later head another question.
 */
export const approvalId = (run: Pick<Run, "id">, startedAt: string, salt = ""): string => {
  let h = 0
  for (const ch of run.id + salt) h = (h * 31 + ch.charCodeAt(0)) & 0xffff
  return Q.makeId(new Date(startedAt), h)
}

/** Why a local merge cannot happen in the repository as it is, or null. */
export const localRefusal = (input: { readonly checkedOut: string; readonly base: string; readonly status: string }): string | null =>
  input.checkedOut !== input.base
    ? `its base branch ${input.base} is not checked out in the repository (${input.checkedOut || "a detached HEAD"} is); check it out and run magi land again`
    : input.status.trim() !== ""
    ? `the repository has uncommitted changes on ${input.base}; commit or stash them and run magi land again`
    : null

export class LandDriver extends Effect.Service<LandDriver>()("magi/LandDriver", {
  effect: Effect.gen(function* () {
    const runs = yield* RunStore
    const questions = yield* QuestionStore
    const fs = yield* FileSystem.FileSystem
    const executor = yield* CommandExecutor.CommandExecutor
    const sh = (cwd: string, ...args: ReadonlyArray<string>) => git(cwd, ...args).pipe(Effect.provideService(CommandExecutor.CommandExecutor, executor))
    const now = Effect.map(Clock.currentTimeMillis, (ms) => Q.timestamp(new Date(ms)))
    const landingOf = (run: Run): L.Landing => {
      if (run.landing === undefined) throw new Error(`run ${run.id} has no landing`)
      return run.landing
    }
    const change = (id: string, f: (l: L.Landing, run: Run) => Partial<L.Landing>, status?: Run["status"], reason?: string) =>
      Effect.flatMap(now, (at) =>
        runs.update(id, (r) => ({
          ...r,
          ...(status === undefined ? {} : { status, reason: reason ?? "" }),
          landing: { ...landingOf(r), ...f(landingOf(r), r), updated_at: at }
        })))

    const panelOf = (run: Run, l: L.Landing, style: string) =>
      Effect.gen(function* () {
        const range = `${run.base_commit}...${run.branch}`
        const numstat = yield* sh(run.repo, "diff", "--numstat", range)
        const diff = yield* sh(run.repo, "diff", "--no-color", range)
        const commits = yield* sh(run.repo, "log", "--no-color", "--format=%h %s", `${run.base_commit}..${run.branch}`)
        const winner = run.competition?.candidates.find((x) => x.label === run.competition?.winner)
        const checks = (winner?.checks ?? []).map((c) =>
          `${c.command}: ${c.timed_out ? "timed out" : c.exit === 0 ? "passed" : c.exit === null ? "did not run" : `failed (exit ${c.exit})`}`
        )
        return Panel.render({
          run: run.id,
          instruction: run.instruction,
          branch: run.branch,
          base: run.base,
          subject: l.subject,
          style,
          numstat,
          diff,
          commits,
          checks,
          findings: []
        })
      })

    /** File the approval once; found again under the same id after a restart. */
    const ask = (run: Run, l: L.Landing, settings: GraphConfig.LandConfig, salt = "") =>
      Effect.gen(function* () {
        const id = approvalId(run, l.started_at, salt)
        const found = yield* Effect.option(questions.read(id))
        if (Option.isNone(found)) {
          const html = yield* panelOf(run, l, settings.style)
          const draft = Q.make({
            id,
            run: run.id,
            node: "land",
            seat: "land",
            summary: `Merge ${run.branch} into ${run.base}? (${Q.shortId(run.id)})`,
            detail: `The panel holds the diff, the checks and the commits. Answer \`merge\` to merge with the subject "${l.subject}"; anything else holds.`,
            // No buttons unless asked for: the notification opens the page, never merges in one tap.
            choices: settings.oneTap ? ["merge", "hold"] : [],
            now: new Date(yield* Clock.currentTimeMillis)
          })
          yield* questions.fileNew(draft, (q) => questions.putPanel(q, html, []))
        }
        return yield* change(run.id, () => ({ question: id }))
      })

    const mergeLocal = (run: Run, l: L.Landing, style: L.MergeStyle) =>
      Effect.gen(function* () {
        // fallback: a detached HEAD has no branch name
        const checkedOut = yield* sh(run.repo, "symbolic-ref", "--quiet", "--short", "HEAD").pipe(Effect.orElseSucceed(() => ""))
        const status = yield* sh(run.repo, "status", "--porcelain", "--untracked-files=no")
        const refused = localRefusal({ checkedOut, base: run.base, status })
        if (refused !== null) return yield* change(run.id, () => ({ stopped: refused }), "ready", refused)
        // Already merged by an earlier try that died before recording it: record, never merge again.
        const inBase = yield* Effect.isSuccess(sh(run.repo, "merge-base", "--is-ancestor", run.branch, "HEAD"))
        const lastSubject = yield* sh(run.repo, "log", "-1", "--format=%s")
        if (!inBase && lastSubject !== l.subject) {
          if (style === "merge") yield* sh(run.repo, "merge", "--no-ff", "-m", l.subject, run.branch)
          else if (style === "squash") {
            yield* sh(run.repo, "merge", "--squash", run.branch)
            yield* sh(run.repo, "commit", "--no-verify", "-m", l.subject)
          } else {
            yield* sh(run.worktree, "rebase", run.base)
            yield* sh(run.repo, "merge", "--ff-only", run.branch)
          }
        }
        const sha = yield* sh(run.repo, "rev-parse", "HEAD")
        const at = yield* now
        return yield* change(
          run.id,
          () => ({ step: "done", local: { sha, style, at }, stopped: "" }),
          "merged",
          `merged into ${run.base} at ${sha.slice(0, 12)}`
        )
      })

    /** After a merge: the run's worktree and branch go (the record stays, as history). */
    const fold = (run: Run) =>
      removeRun(run.id).pipe(
        Effect.provideService(RunStore, runs),
        Effect.provideService(FileSystem.FileSystem, fs),
        Effect.provideService(CommandExecutor.CommandExecutor, executor),
        // display: the merge stands; a worktree left behind is logged
        Effect.catchAll((e) => Effect.logWarning(`run ${Q.shortId(run.id)} merged, but its worktree was not removed: ${e.message}`))
      )

    const pr = yield* PrLand.make(sh, change, ask)

    /**
     * One pass over the landing: as far as it can go now. Waiting on the
     * owner returns the run with its question recorded; call again when the
     * answer may have come (the daemon does, `magi land` does).
     */
    const drive = Effect.fn("LandDriver.drive")(function* (wanted: string) {
      let run = yield* runs.get(wanted)
      if (run.status !== "ready") return yield* new LandRefused({ run: run.id, why: `it is ${run.status}; only a ready run lands` })
      const settings = (yield* GraphConfig.load(run.repo)).landing
      if (run.landing === undefined) {
        if (settings.merge === "none")
          return yield* new LandRefused({
            run: run.id,
            why: `[graph] merge is "none"; set it to "local" or "pr", or merge with git -C ${run.repo} merge ${run.branch}`
          })
        const at = yield* now
        const landing: L.Landing = {
          mode: settings.merge,
          step: settings.merge === "pr" ? "push" : settings.approval ? "approval" : "merge",
          subject: L.subjectFor(run),
          rounds: [],
          stopped: "",
          started_at: at,
          updated_at: at
        }
        run = yield* runs.update(run.id, (r) => ({ ...r, landing }))
      }
      for (;;) {
        const l = landingOf(run)
        switch (l.step) {
          case "approval": {
            if (l.question === undefined) {
              run = yield* ask(run, l, settings)
              continue
            }
            const q = yield* questions.read(l.question)
            const answer = Q.resolution(q)
            if (Q.isOpen(q)) return run
            if (!L.approves(answer)) {
              const why = answer === undefined ? `the approval was ${q.status} without an answer` : `the owner answered "${answer}", not merge`
              return yield* change(run.id, () => ({ step: "done", answer: answer ?? "", stopped: `held: ${why}` }), "ready", `held: ${why}`)
            }
            run = yield* change(run.id, () => ({ step: "merge", answer: answer ?? "" }))
            continue
          }
          case "push":
          case "open":
          case "loop": {
            // Each poll is one observation; a wait is the 30 s of the Schedule, on Effect's Clock.
            const [after] = yield* pr.untilWait(run.id, settings).pipe(
              Effect.repeat(
                Schedule.identity<readonly [Run, PrLand.Next]>().pipe(
                  Schedule.addDelay(() => Duration.millis(POLL_MS)),
                  Schedule.whileInput(([, next]) => next === "wait")
                )
              )
            )
            if (after.status === "merged") yield* fold(after)
            return yield* runs.get(after.id)
          }
          case "merge": {
            run = yield* mergeLocal(run, l, settings.style)
            if (run.status === "merged") yield* fold(run)
            return yield* runs.get(run.id)
          }
          default:
            return run
        }
      }
    })

    return { drive }
  }),
  dependencies: []
}) {}
