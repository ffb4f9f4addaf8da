/**
 * A run's (or a competition candidate's) diff against the commit it started
 * from, as the phone reads it: the files with their `+`/`-` counts
 * (`git diff --numstat -z`), and the patch a page of lines at a time.
 *
 * A page is read from git's stream and git is stopped once the page (and one
 * line past it, to know there is more) is in hand, so the first screen of a
 * 20,000-line diff costs what its first 400 lines cost. Each line is cut to
 * `LINE_MAX_CHARS`: a minified file's one line must not make a page
 * megabytes. Nothing here names a ref from a request: the caller hands the
 * record's base commit and branch, checked again below before git sees them.
 */
import * as Command from "@effect/platform/Command"
import * as CommandExecutor from "@effect/platform/CommandExecutor"
import { Effect, Schema, Stream } from "effect"
import { git } from "./Worktree.js"

/** Lines of patch per page: about five phone screens, a few tens of KiB. */
export const PAGE_LINES = 400
/** The most one request may ask for. */
export const MAX_PAGE_LINES = 2000
/** A longer line is cut, saying how much was left out. */
export const LINE_MAX_CHARS = 1000

export interface DiffFile {
  readonly path: string
  /** The path before a rename or copy, else null. */
  readonly from: string | null
  /** Lines added and deleted; null for a binary file. */
  readonly added: number | null
  readonly deleted: number | null
  readonly binary: boolean
}

export interface DiffPage {
  /** The patch lines from `from`, each at most `LINE_MAX_CHARS` (plus the note of the cut). */
  readonly lines: ReadonlyArray<string>
  readonly from: number
  /** Where the next page starts, or null at the end. */
  readonly next: number | null
}

export class DiffUnreadable extends Schema.TaggedError<DiffUnreadable>()("DiffUnreadable", { branch: Schema.String, why: Schema.String }) {
  override get message() {
    return `git cannot read the diff of ${this.branch}: ${this.why}`
  }
}

/** A commit id as the record holds one, and a branch git would take as a branch (never an option, never a range). */
const COMMIT = /^[0-9a-f]{7,64}$/
const safeBranch = (b: string) => /^[A-Za-z0-9._/-]{1,200}$/.test(b) && !b.startsWith("-") && !b.includes("..")

/** `git diff --numstat -z`'s output as files: `a\td\tpath\0`, or `a\td\t\0old\0new\0` for a rename. */
export const parseNumstat = (z: string): ReadonlyArray<DiffFile> => {
  const parts = z.split("\0")
  const files: DiffFile[] = []
  for (let i = 0; i < parts.length; i++) {
    const head = parts[i]!
    if (head === "") continue
    const m = /^(-|\d+)\t(-|\d+)\t(.*)$/s.exec(head)
    if (m === null) continue
    const binary = m[1] === "-" && m[2] === "-"
    const count = (s: string) => (s === "-" ? null : Number(s))
    if (m[3] === "") {
      const from = parts[i + 1] ?? ""
      const path = parts[i + 2] ?? ""
      i += 2
      files.push({ path, from, added: count(m[1]!), deleted: count(m[2]!), binary })
    } else files.push({ path: m[3]!, from: null, added: count(m[1]!), deleted: count(m[2]!), binary })
  }
  return files
}

/** A line cut to `LINE_MAX_CHARS`, saying how much is left out. */
export const boundedLine = (line: string): string =>
  line.length <= LINE_MAX_CHARS ? line : `${line.slice(0, LINE_MAX_CHARS)} [… ${line.length - LINE_MAX_CHARS} more characters]`

const cutNote = (kept: string, dropped: number) => (dropped === 0 ? kept : `${kept} [… ${dropped} more characters]`)

/**
 * Text chunks into lines, each cut to `LINE_MAX_CHARS` as it is read: a
 * 50 MB line (a minified bundle, a lockfile) costs its first
 * `LINE_MAX_CHARS` characters in memory, never the whole line. Pure state:
 * the line so far and how much of it was dropped.
 */
export const boundedLines = <E, R>(text: Stream.Stream<string, E, R>): Stream.Stream<string, E, R> =>
  Stream.concat(text as Stream.Stream<string | null, E, R>, Stream.succeed(null)).pipe(
    Stream.mapAccum({ kept: "", dropped: 0 }, (state, chunk) => {
      // The end: a last line with no newline after it is a line too.
      if (chunk === null) return [state, state.kept === "" && state.dropped === 0 ? [] : [cutNote(state.kept, state.dropped)]] as const
      const out: string[] = []
      let { dropped, kept } = state
      let at = 0
      for (;;) {
        const nl = chunk.indexOf("\n", at)
        const piece = chunk.slice(at, nl < 0 ? chunk.length : nl)
        const room = Math.max(0, LINE_MAX_CHARS - kept.length)
        kept += piece.slice(0, room)
        dropped += Math.max(0, piece.length - room)
        if (nl < 0) break
        out.push(cutNote(kept.endsWith("\r") ? kept.slice(0, -1) : kept, dropped))
        kept = ""
        dropped = 0
        at = nl + 1
      }
      return [{ kept, dropped }, out] as const
    }),
    Stream.mapConcat((lines) => lines)
  )

const refsOf = (baseCommit: string, branch: string) =>
  COMMIT.test(baseCommit) && safeBranch(branch)
    ? Effect.succeed([baseCommit, `refs/heads/${branch}`] as const)
    : Effect.fail(new DiffUnreadable({ branch, why: "the run's record names no commit and branch git can read" }))

/** The files the branch changed off `baseCommit`, with their counts. */
export const files = (repo: string, baseCommit: string, branch: string) =>
  Effect.gen(function* () {
    const [base, ref] = yield* refsOf(baseCommit, branch)
    const out = yield* git(repo, "-c", "core.quotepath=off", "diff", "--numstat", "-z", "--no-ext-diff", base, ref, "--").pipe(
      Effect.mapError((e) => new DiffUnreadable({ branch, why: e.message }))
    )
    return parseNumstat(out)
  })

/**
 * Lines `from` to `from + limit` of the patch, git stopped as soon as they
 * (and one more) are read. Plain text: no colour, no external diff tool, no
 * textconv (a repository's config must not run a program for the phone).
 */
export const page = (repo: string, baseCommit: string, branch: string, from: number, limit: number) =>
  Effect.gen(function* () {
    const [base, ref] = yield* refsOf(baseCommit, branch)
    const executor = yield* CommandExecutor.CommandExecutor
    const read = Effect.scoped(
      Effect.gen(function* () {
        const proc = yield* Command.make(
          "git",
          "-c",
          "core.quotepath=off",
          "diff",
          "--no-color",
          "--no-ext-diff",
          "--no-textconv",
          base,
          ref,
          "--"
        ).pipe(Command.workingDirectory(repo), Command.env({ GIT_TERMINAL_PROMPT: "0" }), Command.feed(""), Command.start)
        const wanted = yield* proc.stdout.pipe(
          Stream.decodeText(),
          boundedLines,
          Stream.drop(from),
          Stream.take(limit + 1),
          Stream.runCollect
        )
        const lines = Array.from(wanted)
        // A stream cut short ends the process with the scope; only a whole read says how git did.
        if (lines.length <= limit) {
          const code = yield* proc.exitCode
          if (code !== 0) return yield* new DiffUnreadable({ branch, why: `git diff exited ${code}` })
        }
        return {
          lines: lines.slice(0, limit),
          from,
          next: lines.length > limit ? from + limit : null
        } satisfies DiffPage
      })
    )
    return yield* read.pipe(
      Effect.catchTags({
        SystemError: (e) => new DiffUnreadable({ branch, why: e.message }),
        BadArgument: (e) => new DiffUnreadable({ branch, why: e.message })
      }),
      Effect.provideService(CommandExecutor.CommandExecutor, executor)
    )
  })
