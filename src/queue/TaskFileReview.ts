/**
 * The one review a task file passes before it goes into the queue, whichever
 * way it was written: the phone's planning chat, `magi plan` at a terminal,
 * or `magi task add --file`. Two planning paths that accepted different task
 * files would be two products, so all three call `reviewDraft`.
 *
 * The shape it asks for:
 *
 *     # <one imperative line>
 *     ## Context
 *     ## Change
 *     ## Constraints
 *     ## Completion criteria      (one checkbox per line, judgeable from the diff)
 *     ## Out of scope
 *
 * Only two things are hard requirements — a title and some completion
 * criteria — because those are what an unattended agent cannot guess: what
 * the work is called and when it is finished. Everything else is advice the
 * briefing gives the interviewer.
 */

/** One thing wrong with a draft; `soft` ones alone do not stop it being filed. */
export interface DraftProblem {
  readonly message: string
  readonly soft: boolean
}

/**
 * Under this many bytes a draft is suspicious rather than wrong: a whole task
 * file with context and criteria rarely fits in two lines, so a short one
 * usually means the interview was cut off before the agent wrote it out.
 */
export const SHORT_DRAFT_BYTES = 200

/** Markers a title line may start with; a line of nothing else has no title. */
const DECORATION = /^[\s#\-*>]*/

/** `- [ ] …`, `* [x] …`, `+ [X] …`: one completion criterion. */
const CHECKBOX = /^\s*[-*+]\s+\[[ xX]\]/

/**
 * Headings that introduce completion criteria. English and Japanese, because
 * the operators this was written for plan in both.
 */
const CRITERIA_PHRASES = ["completion criteria", "acceptance", "完了条件", "受け入れ基準"]

/**
 * Is `line` a heading for the criteria? A decorated line (`## Acceptance
 * criteria`, `**Completion criteria:**`) need only start with the phrase; a
 * bare line must be the phrase itself, so prose that happens to begin with
 * "acceptance" is not mistaken for a heading.
 */
const isCriteriaHeading = (line: string): boolean => {
  const trimmed = line.trim().toLowerCase()
  const bare = trimmed.replace(/^[#*_>\s-]+/, "").replace(/[*_:：\s]+$/, "")
  const decorated = bare !== trimmed
  return CRITERIA_PHRASES.some((p) => (decorated ? bare.startsWith(p) : bare === p))
}

/** Every problem with `body` as a task file, hard ones first; empty when it is fine. */
export const reviewDraft = (body: string): ReadonlyArray<DraftProblem> => {
  if (body.trim() === "") return [{ message: "the draft is empty", soft: false }]
  const lines = body.split(/\r?\n/)
  const problems: DraftProblem[] = []
  const firstLine = lines.find((l) => l.trim() !== "") ?? ""
  if (firstLine.replace(DECORATION, "").trim() === "")
    problems.push({ message: "the draft has no title: its first line must say what the task is (`# Add retries to the fetcher`)", soft: false })
  if (!lines.some((l) => CHECKBOX.test(l)) && !lines.some(isCriteriaHeading))
    problems.push({
      message:
        "the draft has no completion criteria: add a `## Completion criteria` section with one `- [ ]` checkbox per thing a reviewer can check in the diff",
      soft: false
    })
  if (Buffer.byteLength(body, "utf8") < SHORT_DRAFT_BYTES)
    problems.push({
      message: `the draft is under ${SHORT_DRAFT_BYTES} bytes: check the interview actually finished`,
      soft: true
    })
  return problems
}

/** May a draft with these problems be filed? Only when every problem is soft. */
export const fileable = (problems: ReadonlyArray<DraftProblem>): boolean => problems.every((p) => p.soft)

/**
 * The problems as the owner reads them at a terminal, one per line, hard ones
 * first and soft ones marked as warnings.
 */
export const describeProblems = (problems: ReadonlyArray<DraftProblem>): string =>
  problems.map((p) => `  - ${p.soft ? "warning: " : ""}${p.message}`).join("\n")
