/**
 * Every `magi` command, in the order `magi --help` lists them: each is an
 * @effect/cli `Command` exported by its own module under `cli/`, and adding
 * one is one line here (an import and its place in the list). What a command
 * adds to its help (usage forms, examples, sections) is in `commandHelp`, by
 * its path. `magi completion` is built in `main.ts` from this list.
 */
import type { HelpExtras } from "./Help.js"
import { ask, askHelp } from "./ask.js"
import { answer, answerHelp } from "./answer.js"
import { notify } from "./notify.js"
import { web } from "./web.js"
import { start } from "./start.js"
import { run, runHelp, runs, show, showHelp } from "./run.js"
import { fold, foldHelp, pick, pickHelp } from "./compete.js"
import { stats } from "./stats.js"
import { serve } from "./serve.js"
import { hosts } from "./hosts.js"
import { task } from "./task.js"
import { plan } from "./plan.js"
import { doctor } from "./doctor.js"
import { store } from "./store.js"
import { mcp } from "./mcp.js"
import { approvals } from "./approvals.js"
import { service } from "./service.js"
import { init } from "./init.js"
import { land } from "./land.js"
import { review, reviewHelp } from "./review.js"
import { fix, fixHelp } from "./fix.js"
import { say, sayHelp } from "./say.js"

export const commands = [
  ask,
  answer,
  notify,
  web,
  start,
  run,
  runs,
  show,
  say,
  fold,
  pick,
  review,
  fix,
  stats,
  land,
  serve,
  hosts,
  task,
  plan,
  doctor,
  store,
  mcp,
  approvals,
  service,
  init
] as const

/**
 * What some commands add to their help (usage forms, sections, examples), by
 * command path. Not in the command's `withDescription`: @effect/cli takes a
 * description's first paragraph as the command's line in the completion
 * scripts and a longer HelpDoc as none, and it has no annotations. Every
 * option these name is one the command defines (`test/cli/Help.test.ts`).
 */
export const commandHelp: Record<string, HelpExtras> = {
  "magi say": sayHelp,
  "magi ask": askHelp,
  "magi answer": answerHelp,
  "magi run": runHelp,
  "magi show": showHelp,
  "magi fold": foldHelp,
  "magi pick": pickHelp,
  "magi review": reviewHelp,
  "magi fix": fixHelp
}
