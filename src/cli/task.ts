/**
 * `magi task`: file work for the loop, and look after what is filed.
 *
 * Every change goes through the task's own transition (`queue/Task.ts`) under
 * the store's lock, so a refusal here is the same refusal the web gives, and
 * a refused command has written nothing.
 */
import { firstMoveSaid } from "../app/Shelving.js"
import { Args, Command, Options } from "@effect/cli"
import * as PlatformCommand from "@effect/platform/Command"
import * as FileSystem from "@effect/platform/FileSystem"
import { Config, Effect, Either, Option } from "effect"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { MagiConfig } from "../platform/MagiConfig.js"
import { ConductorLog, latestFor } from "../daemon/ConductorLog.js"
import * as Q from "../questions/Question.js"
import { QuestionStore } from "../questions/QuestionStore.js"
import { fileWorkSaying } from "../queue/Filing.js"
import { describeProblems, fileable, reviewDraft } from "../queue/TaskFileReview.js"
import * as T from "../queue/Task.js"
import { TaskStore } from "../queue/TaskStore.js"
import { RunStore } from "../runs/Runs.js"
import { errorLine, reasonLine } from "../agents/ErrorLine.js"
import { Rosters } from "../agents/AgentRoster.js"
import { CliFailure } from "./CliFailure.js"
import { readStdinUpTo, writeErr, writeOut } from "./io.js"

import { queueLayer } from "../app/Layers.js"

/**
 * Where work filed without `--repo` happens: inside a run, the repository
 * that run branched from (its worktree is the run's own and goes away with
 * it); elsewhere, the working directory's.
 */
const defaultRepo = (source: T.TaskSource) =>
  source.kind === "agent"
    ? Effect.flatMap(RunStore, (runs) => runs.get(source.run)).pipe(
      Effect.map((run) => run.repo),
      // fallback: the current folder when the repository root cannot be worked out; filing checks the folder itself
      Effect.orElseSucceed(() => process.cwd())
    )
    : Effect.succeed(process.cwd())

const refused = (e: { readonly message: string }) => CliFailure.refused(e.message)

const SUBCOMMANDS = ["add", "list", "show", "hold", "release", "priority", "edit", "done", "rm"] as const

/**
 * Did the command line put `--` before the text of `magi task add`? The
 * parser drops the `--` itself, so the raw argv is the only witness.
 */
const dashDashBeforeText = (argv: ReadonlyArray<string>): boolean => {
  const add = argv.findIndex((a, i) => a === "add" && argv[i - 1] === "task")
  return add >= 0 && argv.slice(add + 1).includes("--")
}

// ---------------------------------------------------------------------------
// Showing tasks

const blockLine = (t: T.Task) => (t.blocked_by.length > 0 ? `waits on ${t.blocked_by.map(Q.shortId).join(", ")}` : "")

/** Running tasks whose run waits on the owner: task id → run id. */
const waitingRuns = (tasks: ReadonlyArray<T.Task>) =>
  Effect.gen(function* () {
    const runs = yield* RunStore
    const waiting = new Map<string, string>()
    for (const t of tasks) {
      const run = t.status === "running" ? t.runs.at(-1) : undefined
      if (run === undefined) continue
      const record = yield* Effect.option(runs.get(run))
      if (Option.isSome(record) && record.value.status === "waiting") waiting.set(t.id, run)
    }
    return waiting
  })

/**
 * Why each open task filed for a clone on this host cannot run: no agent
 * for its repository (none configured, no agent CLI on PATH), or a roster
 * that cannot be read. The loop would hold it on its turn; the owner is
 * told at filing and on the task instead. Task id → why.
 */
const agentless = (tasks: ReadonlyArray<T.Task>) =>
  Effect.gen(function* () {
    const config = yield* MagiConfig
    const rosters = yield* Rosters
    const byRepo = new Map<string, string | undefined>()
    const notes = new Map<string, string>()
    for (const t of tasks) {
      const repo = T.isOpen(t) && t.status !== "running" ? T.repoHere(t, config.repos) : undefined
      if (repo === undefined) continue
      if (!byRepo.has(repo)) {
        const roster = yield* Effect.either(rosters.forRepo(repo))
        byRepo.set(
          repo,
          Either.isLeft(roster)
            ? `the agent roster for ${repo} cannot be read (${roster.left.message}), so it cannot run until that is fixed`
            : Option.isNone(roster.right.first)
            ? `no agent is configured for ${repo}, so it cannot run until one is: add [agents.<id>] to its magi.toml ` +
              "(any script or CLI: docs/agents/command.md), or put claude, codex, opencode or agy on PATH (magi init finds them)"
            : undefined
        )
      }
      const why = byRepo.get(repo)
      if (why !== undefined) notes.set(t.id, why)
    }
    return notes as ReadonlyMap<string, string>
  })

/** One line per task: short id, status, priority, attempts, title, and why it is not moving. */
const line = (waiting: ReadonlyMap<string, string>, notes: ReadonlyMap<string, string> = new Map()) => (t: T.Task): string => {
  const run = waiting.get(t.id)
  const why = notes.has(t.id)
    ? `  (cannot run: ${notes.get(t.id)!.startsWith("no agent") ? "no agent is configured" : "the agent roster cannot be read"}; magi task show ${
      T.shortId(t.id)
    } says how)`
    : run !== undefined
    ? `  (waiting on the owner: run ${Q.shortId(run)} asked a question)`
    : t.status === "held"
    ? `  (${t.hold_source === "machine" ? "held by magi" : "held"}${t.hold_reason ? `: ${reasonLine(t.hold_reason, t.last_error)}` : ""})`
    : t.status === "blocked"
    ? `  (${blockLine(t)})`
    : t.status === "failed" && t.last_error
    ? `  (last error: ${errorLine(t.last_error)})`
    : ""
  return `${T.shortId(t.id)}  ${t.status.padEnd(7)}  p${String(t.priority).padEnd(3)} ${t.attempts}x  [${T.sourceLabel(t.source)}] ${t.title}${why}\n`
}

const describe = (t: T.Task, cannotRun?: string): string =>
  [
    `task ${t.id}  ${t.status}`,
    ...(cannotRun === undefined ? [] : [`  cannot run: ${cannotRun}`]),
    `  title      ${t.title}`,
    `  repo       ${t.repo_name === null ? t.repo : t.repo_name === t.repo ? `${t.repo_name} (no clone on this host)` : `${t.repo_name} (${t.repo})`}`,
    `  source     ${T.sourceLabel(t.source)}`,
    `  priority   ${t.priority}`,
    `  attempts   ${t.attempts}`,
    ...(t.runs.length > 0 ? [`  runs       ${t.runs.join(", ")}`] : []),
    ...(t.last_error ? [`  last error ${errorLine(t.last_error)}`] : []),
    ...(t.status === "held" ? [`  held       by ${t.hold_source === "machine" ? "magi" : "the owner"}${t.hold_reason ? `: ${t.hold_reason}` : ""}`] : []),
    ...(t.blocked_by.length > 0 ? [`  blocked    ${blockLine(t)}${t.block_reason ? ` (${t.block_reason})` : ""}`] : []),
    ...t.answers.map((a) => `  answered   ${Q.shortId(a.question)}: ${a.answer}`),
    ...(t.review_branch ? [`  review     ${t.review_branch}`] : []),
    `  created    ${t.created_at}, updated ${t.updated_at}`,
    "",
    t.instruction.trimEnd()
  ].join("\n") + "\n"

// ---------------------------------------------------------------------------
// Subcommands

const json = Options.boolean("json").pipe(Options.withDescription("print JSON"))
const idArg = Args.text({ name: "id" }).pipe(Args.withDescription("task id, any unique prefix, or the short id"))

/** A file's text, refused before it is read whole when it is over the instruction cap. */
const readCapped = (fs: FileSystem.FileSystem, path: string) =>
  Effect.gen(function* () {
    const info = yield* fs.stat(path)
    if (info.type !== "File") return yield* CliFailure.refused(`${path} is not a file`)
    if (Number(info.size) > T.INSTRUCTION_MAX_BYTES)
      return yield* CliFailure.refused(`${path} is ${info.size} bytes, over magi's cap of ${T.INSTRUCTION_MAX_BYTES} bytes for a task's instruction`)
    return yield* fs.readFileString(path)
  }).pipe(Effect.mapError((e) => (e instanceof CliFailure ? e : CliFailure.refused(`cannot read ${path}: ${e.message}`))))

const add = Command.make(
  "add",
  {
    file: Options.text("file").pipe(
      Options.withPseudoName("FILE"),
      Options.withDescription("read the instruction from this file (- for stdin)"),
      Options.optional
    ),
    title: Options.text("title").pipe(Options.withDescription("the title (default: the instruction's first line)"), Options.optional),
    priority: Options.integer("priority").pipe(Options.withPseudoName("N"), Options.withDescription("higher runs first (default 0)"), Options.optional),
    repo: Options.text("repo").pipe(
      Options.withPseudoName("NAME|DIR"),
      Options.withDescription("the repository to work in: a name from [repos] (any host's), or a folder (default: the git root here)"),
      Options.optional
    ),
    noReview: Options.boolean("no-review").pipe(
      Options.withDescription("file a --file that fails the task-file review (title, completion criteria) anyway")
    ),
    after: Options.text("after").pipe(Options.withPseudoName("ID"), Options.withDescription("wait for this task or question first"), Options.repeated),
    solo: Options.boolean("solo").pipe(Options.withDescription("one agent works it, with no competition, whatever [graph] candidates says")),
    json,
    text: Args.text({ name: "text" }).pipe(Args.withDescription("the instruction (unless --file gives it)"), Args.repeated)
  },
  (o) =>
    Effect.gen(function* () {
      const fs = yield* FileSystem.FileSystem
      const inline = o.text.join(" ")
      if (Option.isSome(o.file) && inline.trim() !== "")
        return yield* CliFailure.usage("give the instruction either as text or with --file, not both")
      const first = o.text[0]
      if (first !== undefined && (SUBCOMMANDS as ReadonlyArray<string>).includes(first) && !dashDashBeforeText(process.argv))
        return yield* CliFailure.refused(
          `\`${first}\` is a magi task command; to file text that starts with it, put -- before the text: magi task add -- ${inline}`
        )
      const instruction = Option.isNone(o.file)
        ? inline
        : o.file.value === "-"
        ? yield* Effect.flatMap(readStdinUpTo(T.INSTRUCTION_MAX_BYTES), (text) =>
          text === undefined
            ? Effect.fail(
              CliFailure.refused(`the instruction on stdin is over magi's cap of ${T.INSTRUCTION_MAX_BYTES} bytes for a task (reading stopped there)`)
            )
            : Effect.succeed(text))
        : yield* readCapped(fs, o.file.value)
      if (instruction.trim() === "")
        return yield* CliFailure.usage("magi task add needs an instruction: magi task add TEXT, or --file F (- for stdin)")
      // A task file passes the same review as one the planning chat or
      // `magi plan` wrote; a line of text given inline is a quick note and is not reviewed.
      if (Option.isSome(o.file) && !o.noReview) {
        const problems = reviewDraft(instruction)
        if (!fileable(problems))
          return yield* CliFailure.refused(
            `${o.file.value === "-" ? "stdin" : o.file.value} does not pass the task-file review:\n${describeProblems(problems)}\n` +
              "fix it (see docs/planning.md: the task-file shape), or file it as it is with --no-review"
          )
        if (problems.length > 0) yield* writeErr(`magi: warning: the task file is filed, but:\n${describeProblems(problems)}\n`)
      }
      const env = yield* Config.all({
        MAGI_RUN: Config.string("MAGI_RUN").pipe(Config.withDefault("")),
        MAGI_NODE: Config.string("MAGI_NODE").pipe(Config.withDefault(""))
      }).pipe(Effect.orDie)
      const source = T.sourceFromEnv(env)
      const { task: t, alreadyDone } = yield* fileWorkSaying({
        instruction,
        title: Option.getOrUndefined(o.title),
        priority: Option.getOrUndefined(o.priority),
        repo: Option.isSome(o.repo) ? o.repo.value : yield* defaultRepo(source),
        after: o.after,
        source,
        solo: o.solo
      }).pipe(Effect.mapError(refused))
      if (o.json) return yield* writeOut(JSON.stringify(t, null, 2) + "\n")
      yield* writeOut(`filed ${T.shortId(t.id)} [${T.sourceLabel(t.source)}] ${t.title}\n`)
      for (const id of alreadyDone)
        yield* writeErr(`task ${T.shortId(id)} is done already, so ${T.shortId(t.id)} does not wait on it\n`)
      if (t.status === "blocked") yield* writeErr(`task ${T.shortId(t.id)} ${blockLine(t)} before it runs\n`)
      const cannotRun = (yield* agentless([t])).get(t.id)
      if (cannotRun !== undefined) yield* writeErr(`magi: warning: task ${T.shortId(t.id)} is filed, but ${cannotRun}\n`)
    })
).pipe(Command.withDescription("File work for magi serve to do, in priority order"))

const list = Command.make(
  "list",
  { all: Options.boolean("all").pipe(Options.withDescription("done tasks too")), json },
  (o) =>
    Effect.gen(function* () {
      const store = yield* TaskStore
      // display: a line on stderr that cannot be written changes nothing
      yield* firstMoveSaid((text) => writeErr(text).pipe(Effect.ignore))
      const listing = yield* store.scan.pipe(Effect.mapError(refused))
      for (const u of listing.unreadable) yield* writeErr(`magi: warning: task ${u.id} skipped: ${u.message}\n`)
      const shelved: Array<T.Task> = []
      // `--all`: the done tasks on the month shelves too, after the hot ones, newest first.
      if (o.all) {
        for (let before: string | undefined, more = true; more;) {
          const page = yield* store.history({ before, limit: 500 }).pipe(Effect.mapError(refused))
          shelved.push(...page.tasks)
          more = page.next !== null
          before = page.next ?? undefined
        }
      }
      const tasks = [...listing.tasks.filter((t) => o.all || T.isOpen(t)), ...shelved]
      if (o.json) return yield* writeOut(JSON.stringify(tasks, null, 2) + "\n")
      if (tasks.length === 0)
        return yield* writeOut(
          o.all || (listing.tasks.length === 0 && shelved.length === 0)
            ? "no tasks yet; file one with magi task add TEXT\n"
            : "nothing open; magi task list --all shows the done ones\n"
        )
      yield* writeOut(tasks.map(line(yield* waitingRuns(tasks), yield* agentless(tasks))).join(""))
    })
).pipe(Command.withDescription("List open tasks: higher priority first, then newest"))

const show = Command.make("show", { id: idArg, json }, (o) =>
  Effect.gen(function* () {
    const t = yield* Effect.flatMap(TaskStore, (s) => s.get(o.id)).pipe(Effect.mapError(refused))
    if (o.json) return yield* writeOut(JSON.stringify(t, null, 2) + "\n")
    yield* writeOut(describe(t, (yield* agentless([t])).get(t.id)))
    // What the conductor last decided about it, applied or refused.
    const latest = latestFor(yield* (yield* ConductorLog).read, t.id)
    if (latest !== undefined) yield* writeOut(`\nconductor (${latest.at}, turn ${latest.turn}): ${latest.outcome}: ${latest.why}\n`)
    // A running task whose run waits on the owner: which questions.
    const run = t.status === "running" ? t.runs.at(-1) : undefined
    if (run === undefined) return
    // display: the open questions shown with a task; none when they cannot be read
    const open = (yield* Effect.flatMap(QuestionStore, (s) => s.list).pipe(Effect.orElseSucceed(() => []))).filter(
      (q) => q.run === run && Q.owedToAgent(q)
    )
    for (const q of open)
      yield* writeOut(
        `\nwaiting on the owner: question ${Q.shortId(q.id)} (${q.status}${q.status === "answered" ? ", not yet delivered" : ""}): ${q.summary}\n`
      )
  })).pipe(Command.withDescription("Show one task in full"))

/** Apply one transition under the task's lock and report the outcome in one line. */
const change = (id: string, apply: (t: T.Task) => Either.Either<T.Task, T.TaskRefused>, said: (t: T.Task) => string) =>
  Effect.gen(function* () {
    const t = yield* Effect.flatMap(TaskStore, (s) => s.update(id, apply)).pipe(Effect.mapError(refused))
    yield* writeOut(`${said(t)}\n`)
  })

const hold = Command.make(
  "hold",
  { id: idArg, reason: Args.text({ name: "reason" }).pipe(Args.withDescription("why it waits, shown on the task"), Args.repeated) },
  (o) => change(o.id, (t) => T.hold(t, o.reason.join(" ")), (t) => `held ${T.shortId(t.id)} ${t.title}${t.hold_reason ? ` (${t.hold_reason})` : ""}`)
).pipe(Command.withDescription("Keep a task from running until released"))

const release = Command.make("release", { id: idArg }, (o) => change(o.id, T.release, (t) => `released ${T.shortId(t.id)} ${t.title}: queued, attempts reset`))
  .pipe(Command.withDescription("Put a held, failed, blocked or done task back in the queue, attempts reset"))

const priority = Command.make(
  "priority",
  { id: idArg, priority: Args.integer({ name: "priority" }).pipe(Args.withDescription("higher runs first (10 before 0, 0 before -5)")) },
  (o) => change(o.id, (t) => T.reprioritize(t, o.priority), (t) => `priority ${t.priority} for ${T.shortId(t.id)} ${t.title}`)
).pipe(Command.withDescription("Set a task's priority (higher runs first)"))

const done = Command.make("done", { id: idArg }, (o) => change(o.id, T.succeed, (t) => `done ${T.shortId(t.id)} ${t.title}`)).pipe(
  Command.withDescription("Mark a task done without running it (again)")
)

const rm = Command.make("rm", { id: idArg }, (o) =>
  Effect.gen(function* () {
    const t = yield* Effect.flatMap(TaskStore, (s) => s.remove(o.id)).pipe(Effect.mapError(refused))
    yield* writeOut(`removed ${T.shortId(t.id)} ${t.title}\n`)
  })).pipe(Command.withDescription("Delete a task that is not running"))

/** `$VISUAL`, else `$EDITOR`, else vi: what the owner edits text with. */
const editorCommand = Effect.gen(function* () {
  const visual = yield* Config.option(Config.nonEmptyString("VISUAL"))
  const editor = yield* Config.option(Config.nonEmptyString("EDITOR"))
  return Option.getOrElse(Option.orElse(visual, () => editor), () => "vi")
}).pipe(Effect.orDie)

const edit = Command.make("edit", { id: idArg }, (o) =>
  Effect.gen(function* () {
    const store = yield* TaskStore
    const fs = yield* FileSystem.FileSystem
    const before = yield* store.get(o.id).pipe(Effect.mapError(refused))
    // Refused before the editor opens: nobody should type into a task they cannot save.
    yield* T.edit(before, { instruction: before.instruction }).pipe(Effect.mapError(refused))
    const dir = yield* fs.makeTempDirectory({ directory: NodeOs.tmpdir(), prefix: "magi-task-" }).pipe(Effect.mapError(refused))
    const file = NodePath.join(dir, `${T.shortId(before.id)}.md`)
    const edited = yield* Effect.gen(function* () {
      yield* fs.writeFileString(file, before.instruction)
      // The editor setting is a shell word list ("code --wait"), so a shell
      // splits it; the file goes as its own argument, never into the line.
      const editor = yield* editorCommand
      const code = yield* PlatformCommand.make("sh", "-c", `${editor} "$1"`, "magi-edit", file).pipe(
        PlatformCommand.stdin("inherit"),
        PlatformCommand.stdout("inherit"),
        PlatformCommand.stderr("inherit"),
        PlatformCommand.exitCode
      )
      if (code !== 0) return yield* CliFailure.refused(`the editor (${editor}) exited with ${code}; task ${T.shortId(before.id)} is unchanged`)
      return yield* fs.readFileString(file)
    }).pipe(
      Effect.mapError((e) => (e instanceof CliFailure ? e : CliFailure.refused(`editing failed: ${e.message}`))),
      // fallback: best-effort removal of a scratch folder
      Effect.ensuring(fs.remove(dir, { recursive: true }).pipe(Effect.ignore))
    )
    if (edited === before.instruction) return yield* writeOut(`no change to ${T.shortId(before.id)} ${before.title}\n`)
    // Only the title that followed the old words follows the new ones.
    const ownTitle = before.title !== T.titleFrom(before.instruction) ? before.title : undefined
    yield* change(before.id, (t) => T.edit(t, { instruction: edited, title: ownTitle }), (t) => `edited ${T.shortId(t.id)} ${t.title}`)
  })).pipe(Command.withDescription("Edit a task's instruction in $VISUAL or $EDITOR"))

export const task = Command.make("task").pipe(
  Command.withDescription("File work for the loop (magi serve) and look after the queue"),
  Command.withSubcommands([add, list, show, hold, release, priority, edit, done, rm]),
  Command.provide(() => queueLayer())
)
