/**
 * The words `magi run` takes as a verb rather than an instruction (`rm ID`,
 * `stop ID`), and the rule that keeps a verb typed wrong from starting an
 * agent: `magi run stpo ab12` would otherwise have an agent work on the
 * instruction "stpo ab12" in a fresh worktree. Pure, so it is tested as a table.
 */
import { closest } from "../platform/Spelling.js"

/** `magi run`'s verbs, each taking a run's id. */
export const RUN_VERBS = ["rm", "stop"] as const
export type RunVerb = (typeof RUN_VERBS)[number]

export type RunWords =
  | { readonly _tag: "Instruction" }
  | { readonly _tag: "Verb"; readonly verb: RunVerb; readonly id: string | undefined }
  | { readonly _tag: "Refused"; readonly message: string }

/**
 * Read `magi run`'s words. A verb as the first word, alone or with one id,
 * is that verb; a verb followed by more words, or a near miss of one (a slip
 * or two, by `Spelling.closest`), is refused with the way to mean it as an
 * instruction: `--` before the text, which `dashDash` says was given. A
 * quoted instruction is one word and is never a verb.
 */
export const readRunWords = (words: ReadonlyArray<string>, dashDash: boolean): RunWords => {
  const first = words[0]
  if (dashDash || first === undefined || /\s/.test(first)) return { _tag: "Instruction" }
  const text = words.join(" ")
  const hint = `to have an agent work an instruction that starts with it, put -- before the text: magi run -- ${text}`
  const verb = RUN_VERBS.find((v) => v === first)
  if (verb !== undefined) {
    if (words.length <= 2) return { _tag: "Verb", verb, id: words[1] }
    return { _tag: "Refused", message: `magi run ${verb} takes one run's id, not ${words.length - 1} words; ${hint}` }
  }
  const meant = closest(first, RUN_VERBS)
  if (meant !== undefined) return { _tag: "Refused", message: `\`${first}\` looks like magi run ${meant} mistyped, so no agent was started; ${hint}` }
  return { _tag: "Instruction" }
}

/**
 * Did the command line put `--` before `magi run`'s text? The parser drops
 * the `--` itself, so the raw argv is the only witness.
 */
export const dashDashAfterRun = (argv: ReadonlyArray<string>): boolean => {
  const at = argv.findIndex((a) => a === "run")
  return at >= 0 && argv.slice(at + 1).includes("--")
}
