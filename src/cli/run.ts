/**
 * `magi run`, `magi runs`, `magi show`: start an agent on an instruction in
 * its own worktree, list runs, and show one.
 *
 * `magi run` holds the terminal for one turn. When that turn ends with a
 * question still open, the run is left `waiting` and the command says so:
 * the owner's answer reaches the seat through `magi serve`, not through this
 * process.
 */
import { usageWords } from "../agents/Usage.js"
import { firstMoveSaid } from "../app/Shelving.js"
import { Args, Command, Options } from "@effect/cli"
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodePath from "node:path"
import { Clock, Effect, Option } from "effect"
import { Rosters } from "../agents/AgentRoster.js"
import { magiNameFor } from "../agents/Agents.js"
import * as Prompts from "../agents/Prompts.js"
import * as Q from "../questions/Question.js"
import { QuestionStore } from "../questions/QuestionStore.js"
import { currentReason, resumable } from "../runs/RunStatus.js"
import { IMPL_SEAT } from "../runs/NewRun.js"
import { RunDriver, type RunDriverShape } from "../runs/RunDriver.js"
import { removeRun } from "../runs/RemoveRun.js"
import { stopRun } from "../runs/StopRun.js"
import { dashDashAfterRun, readRunWords } from "./RunVerbs.js"
import { COMMITS_SHOWN, changesOf, durationMs, nextSteps, timeWords } from "../runs/RunReport.js"
import * as Artifacts from "../runs/Artifacts.js"
import type { TurnPrompt } from "../runs/RunTurns.js"
import { RunStore, type Run } from "../runs/Runs.js"
import * as Said from "../runs/Said.js"
import * as T from "../queue/Task.js"
import { TaskStore } from "../queue/TaskStore.js"
import { fileFollowUps } from "../queue/FollowUpFiling.js"
import { Hosts, offlineWords, queuedWords, type HostView } from "../platform/Hosts.js"
import { CliFailure } from "./CliFailure.js"
import { followSeat } from "./follow.js"
import { runListingLayer, runsLayer } from "../app/Layers.js"
import { formatSeconds, localTime, writeErr, writeOut } from "./io.js"
import { forTerminal, forTerminalLine } from "../platform/TerminalText.js"
import type { HelpExtras } from "./Help.js"
import { CompetitionDriver, type NewCompetition } from "../graph/CompetitionDriver.js"
import * as GraphConfig from "../graph/GraphConfig.js"
import * as Verification from "../runs/Verification.js"
import { VerifyDriver } from "../verify/VerifyDriver.js"
import * as VerificationView from "../verify/VerificationView.js"
import * as VerifyConfig from "../verify/VerifyConfig.js"
import { blind, describe } from "../graph/CompetitionView.js"

const refused = (e: { readonly message: string }) => CliFailure.refused(e.message)

const options = {
  agent: Options.text("agent").pipe(
    Options.withPseudoName("AGENT"),
    Options.withDescription("roster id of the agent to run (default: the first)"),
    Options.optional
  ),
  repo: Options.directory("repo").pipe(
    Options.withPseudoName("DIR"),
    Options.withDescription("the repository to work in (default: the current directory)"),
    Options.optional
  ),
  file: Options.file("file").pipe(Options.withPseudoName("FILE"), Options.withDescription("read the instruction from this file"), Options.optional),
  resume: Options.text("resume").pipe(Options.withPseudoName("ID"), Options.withDescription("continue this resumable run in the same seat"), Options.optional),
  solo: Options.boolean("solo").pipe(Options.withDescription("one agent works it, with no competition, whatever [graph] candidates says")),
  seed: Options.integer("seed").pipe(
    Options.withPseudoName("N"),
    Options.withDescription("a competition's shuffle seed: repeat the labels and the judges' orders of an earlier run"),
    Options.optional
  )
}

/**
 * The head of `magi show`: the record, the task the queue started it for
 * (when it did), and each seat's session. A run that cannot come back gets
 * no more sessions, so its missing one is "none", not "none yet".
 */
const describeRun = (run: Run, open: number, task: T.Task | undefined, hosts: ReadonlyArray<HostView>): string =>
  [
    `run ${run.id}  ${run.status}${currentReason(run) ? ` (${forTerminalLine(currentReason(run))})` : ""}`,
    ...(run.host === undefined ? [] : [`  host      ${forTerminalLine(offlineWords(hosts, run.host) ?? run.host)}`]),
    ...(queuedWords(hosts, run.id) === undefined ? [] : [`  turn      ${queuedWords(hosts, run.id)}`]),
    ...(task === undefined ? [] : [`  task      ${T.shortId(task.id)} ${forTerminalLine(task.title)} (${task.status}; magi task show ${T.shortId(task.id)})`]),
    `  repo      ${run.repo} (${run.base} @ ${run.base_commit.slice(0, 12)})`,
    `  worktree  ${run.worktree}`,
    `  branch    ${run.branch}`,
    ...(run.reviewed === undefined
      ? []
      : [`  reviews   ${run.reviewed.branch} @ ${run.reviewed.head.slice(0, 12)} (magi works on its own copy; that branch is left as it was)`]),
    ...run.seats.map(
      (s) =>
        `  seat      ${s.key}: ${s.agent}, ${s.turns} turn(s), session ${forTerminalLine(s.session ?? (resumable(run.status) ? "none yet" : "none"))}${
          s.usage === undefined ? "" : `; ${usageWords(s.usage)}`
        }`
    ),
    `  created   ${run.created_at}, updated ${run.updated_at}`,
    ...(open > 0 ? [`  questions ${open} waiting on the owner or on delivery`] : []),
    ...(run.summary ? ["", forTerminal(run.summary)] : [])
  ].join("\n") + "\n"

/** Tell the person at the terminal how the turn left the run. */
export const reportEnd = (run: Run) =>
  Effect.gen(function* () {
    // The agent's own words: shown, never obeyed by the terminal.
    const summary = forTerminal(run.summary)
    if (summary) yield* writeOut(summary.endsWith("\n") ? summary : `${summary}\n`)
    const c = run.competition
    if (c !== undefined && run.status === "done")
      return yield* writeErr(
        c.step === "verified_noop"
          ? `run ${Q.shortId(run.id)} done: every candidate found nothing needed changing (magi show ${Q.shortId(run.id)} has their evidence)\n`
          : `run ${Q.shortId(run.id)} elected candidate ${c.winner}; its work is on branch ${run.branch} (magi show ${
            Q.shortId(run.id)
          } has the rankings and reasons)\n`
      )
    switch (run.status) {
      case "done":
        return yield* writeErr(`run ${Q.shortId(run.id)} done; its work is on branch ${run.branch}\n`)
      case "ready": {
        yield* writeErr(`run ${Q.shortId(run.id)} ready on branch ${run.branch}: ${forTerminalLine(run.reason)}\n`)
        // Its open nits and minors become follow-up tasks; a failure to file them does not undo the ready.
        const filed = yield* fileFollowUps(run).pipe(
          // fallback: follow-ups not filed are said; the next end of the run files what is missing
          Effect.catchAll((e) =>
            Effect.as(writeErr(`could not file its follow-ups: ${e.message}; magi show ${Q.shortId(run.id)} lists the open findings\n`), [])
          )
        )
        for (const t of filed) yield* writeErr(`filed follow-up task ${T.shortId(t.id)}: ${forTerminalLine(t.title)}\n`)
        return
      }
      case "already_in_base":
        return yield* writeErr(`run ${Q.shortId(run.id)} already in base: ${forTerminalLine(run.reason)}\n`)
      case "waiting":
        return yield* writeErr(
          `run ${Q.shortId(run.id)} is waiting on the owner; once answered, \`magi serve\` resumes the seat with the answer\n`
        )
      case "stalled":
        return yield* writeErr(`run ${Q.shortId(run.id)} stalled: ${forTerminalLine(run.reason)}; continue it with magi run --resume ${run.id}\n`)
      default:
        return yield* CliFailure.refused(`run ${Q.shortId(run.id)} ${run.status}${run.reason ? `: ${run.reason}` : ""}`)
    }
  })

/**
 * Start a run: a competition when the config says so and nothing asked for
 * one agent (`--solo`, `--agent`), else today's single seat.
 */
const startRun = (instruction: string, agentId: Option.Option<string>, repoDir: string, solo = false, seed: Option.Option<number> = Option.none()) =>
  Effect.gen(function* () {
    const driver = yield* RunDriver
    // First: with no repository, which agent would have run is beside the point.
    yield* driver.repoRoot(repoDir).pipe(Effect.mapError(refused))
    const roster = yield* Effect.flatMap(Rosters, (r) => r.forRepo(repoDir)).pipe(Effect.mapError(refused))
    const agent = Option.isSome(agentId) ? roster.get(agentId.value) : roster.first
    if (Option.isNone(agent))
      return yield* CliFailure.refused(
        Option.isSome(agentId)
          ? `no agent \`${agentId.value}\` in the roster (have: ${roster.agents.map((a) => a.id).join(", ") || "none"})`
          : "no agent to run: configure [agents.<id>] in magi.toml, or put claude, codex, opencode or agy on PATH"
      )
    if (Option.isNone(agentId)) {
      const settings = yield* GraphConfig.load(repoDir).pipe(Effect.mapError(refused))
      const seating = GraphConfig.seatsFor(settings, roster.agents.map((a) => a.id), solo)
      if (seating.candidates > 1)
        return yield* startCompetition({ instruction, repoDir, seating, settings, roster, ...(Option.isSome(seed) ? { seed: seed.value } : {}) })
    }
    const run = yield* driver.create(instruction, agent.value, repoDir).pipe(Effect.mapError(refused))
    yield* writeErr(`run ${Q.shortId(run.id)}: ${agent.value.id} is working in ${run.worktree} on ${run.branch}\n`)
    return yield* turn(run.id, Prompts.runPrompt(instruction, run.worktree, run.branch, yield* magiNameFor(agent.value)))
  })

/**
 * Ctrl-C mid-turn: the turn's process group is gone and the run stalled
 * (`RunDriver.drive`); say how to pick it up, and that a question its agent
 * asked is still the owner's to answer.
 */
const saidOnInterrupt = (runId: string, driver: RunDriverShape) =>
  Effect.gen(function* () {
    // display: the count of open questions in the summary; 0 when it cannot be read
    const open = yield* driver.outstanding(runId).pipe(Effect.orElseSucceed(() => 0))
    yield* writeErr(
      `\nrun ${Q.shortId(runId)} interrupted; continue it with magi run --resume ${runId}\n` +
        (open > 0
          ? `its open question stays answerable (magi answer --list); once answered, magi serve resumes the seat with the answer\n`
          : "")
      // display: best-effort line on stderr
    ).pipe(Effect.ignore)
  })

const startCompetition = (input: NewCompetition) =>
  Effect.gen(function* () {
    const competition = yield* CompetitionDriver
    const run = yield* competition.create(input).pipe(Effect.mapError(refused))
    const labels = run.competition?.candidates.map((x) => x.label).join(", ") ?? ""
    yield* writeErr(
      `run ${Q.shortId(run.id)}: ${input.seating.candidates} candidates (${labels}) are working blind in their own worktrees under ${run.worktree}\n`
    )
    return yield* driveCompetition(run.id, input.seating, input.settings)
  })

const driveCompetition = (runId: string, seating: GraphConfig.Seating, settings: GraphConfig.GraphSettings) =>
  Effect.flatMap(CompetitionDriver, (c) => c.drive(runId, seating, settings)).pipe(
    Effect.flatMap(verifyAfter),
    Effect.catchTag("SeatBusy", (e) => Effect.fail(CliFailure.refused(`${e.message}; wait for it to end`))),
    Effect.mapError((e) => (e instanceof CliFailure ? e : refused(e)))
  )

/** A run that ended well goes on into its sync, review and gate when its repository configures them (`verify/`). */
const verifyAfter = (run: Run) => Effect.flatMap(VerifyDriver, (v) => v.afterImplementing(run))

/** Pick the verification back up at its recorded step: an answered reviewer is not asked again. */
const resumeVerification = (run: Run) =>
  Effect.gen(function* () {
    // A `magi review` run killed before its first step has no verification yet: it starts at the sync.
    const v = run.verification
    if (v !== undefined && Verification.ended(v.step)) return yield* CliFailure.refused(`run ${Q.shortId(run.id)} is ${run.status}: ${run.reason || v.stopped}`)
    const settings = yield* VerifyConfig.load(run.repo).pipe(Effect.mapError(refused))
    yield* writeErr(`run ${Q.shortId(run.id)}: resuming its verification at its ${v?.step ?? "sync"} step\n`)
    return yield* Effect.flatMap(VerifyDriver, (d) => d.drive(run.id, settings)).pipe(
      Effect.catchTag("SeatBusy", (e) => Effect.fail(CliFailure.refused(`${e.message}; wait for it to end`))),
      Effect.mapError((e) => (e instanceof CliFailure ? e : refused(e)))
    )
  })

/** Pick a competition back up at its recorded step: what is recorded is not done again. */
const resumeCompetition = (run: Run) =>
  Effect.gen(function* () {
    const driver = yield* RunDriver
    for (const seat of run.seats)
      if (yield* driver.seatBusy(run, seat.key))
        return yield* CliFailure.refused(`run ${Q.shortId(run.id)} has a turn running right now (seat ${seat.key}); wait for it to end`)
    const roster = yield* Effect.flatMap(Rosters, (r) => r.forRepo(run.repo)).pipe(Effect.mapError(refused))
    const settings = yield* GraphConfig.load(run.repo).pipe(Effect.mapError(refused))
    const seating = GraphConfig.seatsFor(settings, roster.agents.map((a) => a.id), false)
    yield* Effect.flatMap(RunStore, (runs) => runs.setStatus(run.id, "running")).pipe(Effect.mapError(refused))
    yield* writeErr(`run ${Q.shortId(run.id)}: resuming the competition at its ${run.competition?.step} step\n`)
    return yield* driveCompetition(run.id, seating, settings)
  })

/** Run the impl seat's turn and settle the run by how it went. */
const turn = (runId: string, prompt: TurnPrompt) =>
  Effect.flatMap(RunDriver, (driver) => driver.drive(runId, prompt).pipe(Effect.onInterrupt(() => saidOnInterrupt(runId, driver)))).pipe(
    Effect.flatMap((o) => verifyAfter(o.run)),
    // Another turn (the waiter's delivery) got the seat first: the run is
    // fine, only this turn did not start.
    Effect.catchTag("SeatBusy", (e) => Effect.fail(CliFailure.refused(`${e.message}; wait for it to end`))),
    Effect.mapError((e) => (e instanceof CliFailure ? e : refused(e)))
  )

const resumeRun = (wanted: string, text: string) =>
  Effect.gen(function* () {
    const runs = yield* RunStore
    const run = yield* runs.get(wanted).pipe(Effect.mapError(refused))
    if (!resumable(run.status))
      return yield* CliFailure.refused(`run ${Q.shortId(run.id)} is ${run.status} and cannot be resumed`)
    if (run.verification !== undefined || run.reviewed !== undefined) return yield* resumeVerification(run)
    if (run.competition !== undefined) return yield* resumeCompetition(run)
    if (yield* Effect.flatMap(RunDriver, (driver) => driver.seatBusy(run, IMPL_SEAT)))
      return yield* CliFailure.refused(`run ${Q.shortId(run.id)} has a turn running right now; wait for it to end`)
    const fs = yield* FileSystem.FileSystem
    // display: says whether the worktree is still there; a failed look says it is gone
    if (!(yield* fs.exists(run.worktree).pipe(Effect.orElseSucceed(() => false))))
      return yield* CliFailure.refused(`run ${Q.shortId(run.id)}'s worktree ${run.worktree} is gone`)
    yield* runs.setStatus(run.id, "running").pipe(Effect.mapError(refused))
    yield* writeErr(`run ${Q.shortId(run.id)}: resuming seat ${IMPL_SEAT}\n`)
    return yield* turn(run.id, (magi) => Prompts.resumePrompt(text, magi))
  })

export const run = Command.make(
  "run",
  {
    ...options,
    text: Args.text({ name: "instruction" }).pipe(
      Args.withDescription(
        "what the agent should do (after -- when it starts with rm or stop); or `stop ID` to stop a run's turn, `rm ID` to remove a finished run"
      ),
      Args.repeated
    )
  },
  (o) =>
    Effect.gen(function* () {
      const inline = o.text.join(" ").trim()
      // `magi run rm ID`, `magi run stop ID`, as words: a quoted "rm …" is one word, an instruction.
      const words = readRunWords(o.text, dashDashAfterRun(process.argv))
      if (words._tag === "Refused") return yield* CliFailure.refused(words.message)
      if (words._tag === "Verb") {
        if (words.id === undefined)
          return yield* CliFailure.usage(`magi run ${words.verb} needs the run's id: magi run ${words.verb} ID (magi runs lists them)`)
        if (Option.isSome(o.file) || Option.isSome(o.agent) || Option.isSome(o.repo) || Option.isSome(o.resume))
          return yield* CliFailure.usage(`magi run ${words.verb} takes only the run's id`)
        if (words.verb === "stop")
          return yield* writeOut((yield* stopRun(words.id).pipe(Effect.mapError(refused))) + "\n")
        const removed = yield* removeRun(words.id).pipe(Effect.mapError(refused))
        return yield* writeOut(removed.said.join("\n") + "\n")
      }
      if (Option.isSome(o.resume)) {
        if (Option.isSome(o.file) || Option.isSome(o.agent) || Option.isSome(o.repo) || o.solo || Option.isSome(o.seed))
          return yield* CliFailure.usage("--resume continues a run as it was set up; it takes only an optional instruction")
        const ended = yield* resumeRun(o.resume.value, inline)
        return yield* reportEnd(ended)
      }
      if (Option.isSome(o.file) && inline !== "")
        return yield* CliFailure.usage("give the instruction either as text or with --file, not both")
      const instruction = Option.isSome(o.file)
        ? yield* Effect.flatMap(FileSystem.FileSystem, (fs) => fs.readFileString(o.file.pipe(Option.getOrThrow))).pipe(
          Effect.mapError((e) => CliFailure.refused(`cannot read the instruction: ${e.message}`))
        )
        : inline
      if (instruction.trim() === "") return yield* CliFailure.usage("magi run needs an instruction: magi run TEXT, or --file F")
      const ended = yield* startRun(instruction, o.agent, Option.getOrElse(o.repo, () => process.cwd()), o.solo, o.seed)
      return yield* reportEnd(ended)
    }).pipe(Effect.provide(runsLayer()))
).pipe(Command.withDescription("Have an agent work an instruction in its own git worktree (asks you when it must)"))

/** Runs `magi runs` lists without `--all`: a screenful many times over, and a read of only these from the month shelves. */
export const RUNS_LISTED = 50

/** Runs read per page of `magi runs --all`: the whole history is printed a page at a time, never held at once. */
const RUNS_PAGE = 500

export const runs = Command.make(
  "runs",
  {
    json: Options.boolean("json").pipe(Options.withDescription("print one JSON array of the run records")),
    all: Options.boolean("all").pipe(Options.withDescription(`every run, not only the newest ${RUNS_LISTED}`))
  },
  ({ all, json }) =>
    Effect.gen(function* () {
      const store = yield* RunStore
      // display: a line on stderr that cannot be written changes nothing
      yield* firstMoveSaid((text) => writeErr(text).pipe(Effect.ignore))
      const line = (r: Run) => {
        const text = forTerminalLine((r.summary || r.instruction).split("\n")[0]!.slice(0, 72))
        const status = r.removed_at !== undefined ? `${r.status}, removed` : r.status
        return `${Q.shortId(r.id)}  ${status.padEnd(9)} ${r.branch}  ${text}\n`
      }
      let before: string | undefined
      let printed = 0
      for (;;) {
        const page = yield* store.page({ before, limit: all ? RUNS_PAGE : RUNS_LISTED }).pipe(Effect.mapError(refused))
        // JSON is one array, written a page at a time.
        if (json)
          yield* writeOut(
            (printed === 0 ? "[" : page.runs.length > 0 ? "," : "") +
              page.runs.map((r) => JSON.stringify(r, null, 2)).join(",") +
              (page.next === null || !all ? "]\n" : "")
          )
        else for (const r of page.runs) yield* writeOut(line(r))
        printed += page.runs.length
        if (page.next === null || !all) break
        before = page.next
      }
      if (printed === 0 && !json) return yield* writeOut("no runs yet; start one with magi run TEXT\n")
      if (!all && !json && printed === RUNS_LISTED) yield* writeErr(`(the newest ${RUNS_LISTED}; magi runs --all lists every run)\n`)
    }).pipe(Effect.provide(runListingLayer()))
).pipe(Command.withDescription("List runs, newest first"))

export const show = Command.make(
  "show",
  {
    id: Args.text({ name: "id" }).pipe(
      Args.withDescription("run id, a unique prefix, or its short id or a prefix of it (default: the latest run)"),
      Args.optional
    ),
    json: Options.boolean("json").pipe(Options.withDescription("print the run record as JSON")),
    follow: Options.boolean("follow").pipe(Options.withDescription("print a seat's turn as it happens (messages, tool calls, results, errors) until it ends")),
    seat: Options.text("seat").pipe(Options.withDescription("the seat --follow follows (default: the run's first)"), Options.optional)
  },
  ({ follow, id, json, seat }) =>
    Effect.gen(function* () {
      const store = yield* RunStore
      // display: a line on stderr that cannot be written changes nothing
      if (Option.isNone(id)) yield* firstMoveSaid((text) => writeErr(text).pipe(Effect.ignore))
      const r = Option.isSome(id)
        ? yield* store.get(id.value).pipe(Effect.mapError(refused))
        : (yield* store.page({ limit: 1 }).pipe(Effect.mapError(refused))).runs[0]
      if (r === undefined) return yield* CliFailure.refused("no runs yet; start one with magi run TEXT")
      if (json) return yield* writeOut(JSON.stringify(blind(r), null, 2) + "\n")
      if (Option.isSome(seat) && !follow) return yield* CliFailure.usage("--seat names the seat --follow follows: magi show ID --follow --seat S")
      if (follow) return yield* followSeat(r, Option.getOrUndefined(seat))
      // The task the queue started this run for: the one whose runs name it.
      // display: the run's task in magi show; none when it cannot be read
      const task = Option.getOrUndefined(yield* Effect.flatMap(TaskStore, (s) => s.ofRun(r.id)).pipe(Effect.orElseSucceed(() => Option.none())))
      // display: the count of open questions in magi show
      const open = yield* Effect.flatMap(RunDriver, (driver) => driver.outstanding(r.id)).pipe(Effect.orElseSucceed(() => 0))
      // display: hosts in magi show; none when they cannot be read
      const hosts = yield* Effect.flatMap(Hosts, (h) => h.list).pipe(Effect.orElseSucceed(() => []))
      yield* writeOut(describeRun(blind(r), open, task, hosts))
      if (r.competition !== undefined) yield* writeOut(describe(r.competition, forTerminalLine).join("\n") + "\n")
      if (r.verification !== undefined) yield* writeOut(VerificationView.describe(r.verification, forTerminalLine).join("\n") + "\n")
      // display: the run's questions in magi show; none when they cannot be read
      const questions = yield* Effect.flatMap(QuestionStore, (s) => s.list).pipe(Effect.orElseSucceed(() => []))
      for (const q of questions.filter((q) => q.run === r.id))
        yield* writeOut(
          `  question ${Q.shortId(q.id)} ${q.status}${q.status === "answered" && !q.answer_delivered ? " (not yet delivered)" : ""}: ${
            forTerminalLine(q.summary)
          }\n`
        )
      // The owner's words to its seats (`magi say`): what each became.
      for (const w of r.said ?? []) yield* writeOut(`  said ${forTerminalLine(Said.line(w))}\n`)
      yield* writeOut(yield* workReport(r))
    }).pipe(Effect.provide(runsLayer()))
).pipe(
  Command.withDescription("Show a run (default: the latest): status, instruction, duration, commits and diffstat, artifacts, questions, and what to do next")
)

/** The instruction, the time taken, what changed on the branch, the artifacts, and the next commands. */
const workReport = (r: Run) =>
  Effect.gen(function* () {
    const out: string[] = ["", "instruction:", ...forTerminal(r.instruction.trimEnd()).split("\n").map((l) => `  ${l}`)]
    const took = formatSeconds(durationMs(r, new Date(yield* Clock.currentTimeMillis)) / 1000)
    out.push("", `${timeWords(r, took, localTime)} (started ${localTime(new Date(r.created_at))})`)
    const changes = r.removed_at === undefined ? yield* changesOf(r) : undefined
    if (r.removed_at !== undefined) out.push("", `removed ${localTime(new Date(r.removed_at))}: its worktree and branch are gone`)
    else {
      if (changes === undefined) out.push("", `commits: git cannot read ${r.branch} in ${r.repo}`)
      else if (changes.commits.length === 0) out.push("", `commits: none on ${r.branch} yet`)
      else {
        out.push("", `commits on ${r.branch} (${changes.commits.length}):`)
        out.push(...changes.commits.slice(0, COMMITS_SHOWN).map((c) => `  ${forTerminalLine(c)}`))
        if (changes.commits.length > COMMITS_SHOWN) out.push(`  … and ${changes.commits.length - COMMITS_SHOWN} more`)
        out.push(...changes.diffstat.map((l) => `  ${forTerminalLine(l)}`))
      }
    }
    const dir = (yield* RunStore).artifactsDir(r.id)
    // display: the run's artifacts in magi show; none when they cannot be listed
    const artifacts = yield* Artifacts.list(dir).pipe(Effect.orElseSucceed(() => []))
    if (artifacts.length > 0)
      out.push(
        "",
        "artifacts (each call's prompt, stdout and stderr):",
        ...artifacts.map((a) => `  ${NodePath.join(dir, a.name)}  (${a.size} bytes)`)
      )
    const steps = nextSteps(r, changes)
    if (steps.length > 0) out.push("", "next:", ...steps.flatMap(([command, why]) => [`  ${command}`, `      ${why}`]))
    return out.join("\n") + "\n"
  })

export const runHelp: HelpExtras = {
  usage: [
    "magi run [--agent AGENT] [--repo DIR] INSTRUCTION...",
    "magi run --file FILE [--agent AGENT] [--repo DIR]",
    "magi run [--solo] [--seed N] INSTRUCTION...",
    "magi run --resume ID [INSTRUCTION...]",
    "magi run stop ID",
    "magi run rm ID",
    "magi run -- INSTRUCTION..."
  ],
  examples: [
    ['magi run "add retries to the fetcher"', "an agent works it in its own worktree, on branch magi/<short>"],
    ["magi run --file task.md --agent fast --repo ~/src/app", "the instruction from a file, a roster agent, another repository"],
    ['magi run --solo "fix the typo in the README"', "one agent, no competition, whatever [graph] candidates says"],
    ['magi run --resume ab12 "also cover timeouts"', "continue a run in the same seat (a competition at its recorded step)"],
    ["magi run stop ab12", "end the turn it has running (whichever process runs it); the run is stopped, resumable"],
    ["magi run rm ab12", "remove a finished run's worktree and branch"],
    ["magi run -- stop the flaky test from retrying", "an instruction that starts with one of magi run's words"]
  ]
}

export const showHelp: HelpExtras = {
  examples: [
    ["magi show", "the latest run"],
    ["magi show ab12 --json", "one run's record as JSON"]
  ]
}
