/**
 * `magi plan [IDEA…] [--repo DIR] [--agent ID]`: the planning interview at a
 * terminal. The agent's own interactive UI gets the terminal (stdin, stdout
 * and stderr inherited, no timeout) with the same briefing as the phone's
 * chat, told to write the task file to a path magi gives it. When the agent
 * exits, magi reviews the file with the same `reviewDraft` as the chat and
 * `magi task add --file`, shows the problems if any, and on the owner's yes
 * files it in the queue.
 *
 * Without a terminal there is nothing to hand over: it refuses and points to
 * the chat on `magi web`, which is the same interview for a phone.
 */
import { Args, Command, Options } from "@effect/cli"
import * as PlatformCommand from "@effect/platform/Command"
import * as FileSystem from "@effect/platform/FileSystem"
import { Clock, Effect, Layer, Option, Random } from "effect"
import * as NodePath from "node:path"
import * as NodeReadline from "node:readline"
import { Rosters } from "../agents/AgentRoster.js"
import { terminalBriefing } from "../chat/Chat.js"
import { interviewerFor } from "../chat/Chats.js"
import { interactiveArgv, PLAN_LABEL } from "../chat/Plan.js"
import { MagiHome } from "../platform/MagiHome.js"
import * as Q from "../questions/Question.js"
import { fileWork, repoOf } from "../queue/Filing.js"
import * as T from "../queue/Task.js"
import { describeProblems, fileable, reviewDraft } from "../queue/TaskFileReview.js"
import { CliFailure } from "./CliFailure.js"
import { writeErr, writeOut } from "./io.js"
import { queueLayer } from "../app/Layers.js"

/** `<home>/plans/<id>/`: the briefing the agent was given and the task file it wrote. */
export const plansDir = (home: { readonly dir: string }) => NodePath.join(home.dir, "plans")

/** One line the owner types at the terminal (empty at end of input). */
const askLine = (question: string) =>
  Effect.async<string>((resume) => {
    const rl = NodeReadline.createInterface({ input: process.stdin, output: process.stderr })
    let answered = false
    rl.question(question, (line) => {
      answered = true
      rl.close()
      resume(Effect.succeed(line))
    })
    rl.once("close", () => {
      if (!answered) resume(Effect.succeed(""))
    })
    return Effect.sync(() => rl.close())
  })

const refused = (e: { readonly message: string }) => CliFailure.refused(e.message)

export const plan = Command.make(
  "plan",
  {
    repo: Options.text("repo").pipe(
      Options.withPseudoName("DIR"),
      Options.withDescription("the repository to plan work in (default: the git root here)"),
      Options.optional
    ),
    agent: Options.text("agent").pipe(
      Options.withPseudoName("AGENT"),
      Options.withDescription("roster id of the interviewer (default: [roles] chatter, else the first claude, else the first agent)"),
      Options.optional
    ),
    idea: Args.text({ name: "idea" }).pipe(Args.withDescription("what you want built, in a few words (the interview starts from it)"), Args.repeated)
  },
  (o) =>
    Effect.gen(function* () {
      if (!process.stdin.isTTY || !process.stdout.isTTY)
        return yield* CliFailure.refused(
          "magi plan hands this terminal to the agent, and there is none here (stdin or stdout is not a terminal); " +
            "away from a terminal, plan in the chat instead: the Plan page of magi web (#/chats)"
        )
      const fs = yield* FileSystem.FileSystem
      const home = yield* MagiHome
      const repo = yield* repoOf(Option.getOrElse(o.repo, () => process.cwd())).pipe(Effect.mapError(refused))
      const agent = yield* interviewerFor(repo, Option.getOrNull(o.agent)).pipe(Effect.mapError(refused))
      const now = new Date(yield* Clock.currentTimeMillis)
      const dir = NodePath.join(plansDir(home), Q.makeId(now, yield* Random.nextIntBetween(0, 0x10000)))
      const taskFile = NodePath.join(dir, "task.md")
      const promptFile = NodePath.join(dir, "briefing.md")
      const prompt = terminalBriefing(o.idea.join(" "), repo, taskFile)
      yield* fs.makeDirectory(dir, { recursive: true }).pipe(Effect.mapError(refused))
      yield* fs.writeFileString(promptFile, prompt).pipe(Effect.mapError(refused))

      yield* writeErr(`magi plan: ${agent.id} has this terminal now, in ${repo}; it writes the task file to ${taskFile}\n`)
      const [program, ...args] = interactiveArgv(agent, prompt, promptFile, repo)
      // No timeout: the owner is in the conversation, and decides when it ends.
      const code = yield* PlatformCommand.make(program!, ...args).pipe(
        PlatformCommand.workingDirectory(repo),
        PlatformCommand.env({
          ...agent.env,
          MAGI_HOME: home.dir,
          MAGI_SEAT: PLAN_LABEL,
          MAGI_PROMPT_FILE: promptFile,
          MAGI_PLAN_FILE: taskFile
        }),
        PlatformCommand.stdin("inherit"),
        PlatformCommand.stdout("inherit"),
        PlatformCommand.stderr("inherit"),
        PlatformCommand.exitCode,
        Effect.mapError((e) => CliFailure.refused(`${agent.id} (\`${program}\`) could not be started: ${e.message}`))
      )

      const text = yield* fs.readFileString(taskFile).pipe(Effect.option)
      if (Option.isNone(text))
        return yield* CliFailure.refused(`${agent.id} exited (code ${code}) without writing ${taskFile}; nothing was filed`)
      const problems = reviewDraft(text.value)
      if (!fileable(problems))
        return yield* CliFailure.refused(
          `the task file ${taskFile} does not pass the task-file review:\n${describeProblems(problems)}\n` +
            `edit it, then file it with: magi task add --file ${taskFile}`
        )
      yield* writeErr(
        `\nmagi plan: the task file passes review: ${T.titleFrom(text.value)}\n` +
          (problems.length > 0 ? `${describeProblems(problems)}\n` : "")
      )
      const yes = /^\s*y(es)?\s*$/i.test(yield* askLine("File it in the queue? [y/N] "))
      if (!yes) return yield* writeErr(`not filed; it stays at ${taskFile} (magi task add --file ${taskFile} files it)\n`)
      const task = yield* fileWork({ instruction: text.value, repo, source: T.HUMAN }).pipe(Effect.mapError(refused))
      yield* writeOut(`filed ${T.shortId(task.id)} [${T.sourceLabel(task.source)}] ${task.title}\n`)
    })
).pipe(
  Command.withDescription("Plan a task with an agent at this terminal, then file its reviewed task file in the queue"),
  Command.provide(() => Layer.merge(queueLayer(), Rosters.fromFiles))
)
