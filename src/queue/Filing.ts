/**
 * Filing work: what `magi task add` and the web's `POST /api/queue` both do,
 * so a task filed from a phone and one filed from a terminal (or by an agent
 * inside a run) are checked and written the same way.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import { Data, Effect, Either, Option } from "effect"
import * as NodePath from "node:path"
import { Hosts } from "../platform/Hosts.js"
import { defaults, MagiConfig } from "../platform/MagiConfig.js"
import { QuestionStore } from "../questions/QuestionStore.js"
import { git } from "../runs/Worktree.js"
import * as T from "./Task.js"
import { TaskStore } from "./TaskStore.js"

/** Work that cannot be filed as asked; nothing was written. */
export class FilingRefused extends Data.TaggedError("FilingRefused")<{ readonly message: string }> {}

export interface NewWork {
  readonly instruction: string
  readonly title?: string | undefined
  readonly priority?: number | undefined
  /**
   * A repository's name (`[repos]`, on this host or any other), or a
   * directory inside a git repository (the task's repo is its root).
   */
  readonly repo: string
  /** Whether `repo` may be a folder relative to this process's directory (the CLI), or only absolute (the page: the server's directory means nothing to a phone). */
  readonly relativeFolders?: boolean | undefined
  /** Task or question ids (any unique prefix or suffix) to wait on first. */
  readonly after?: ReadonlyArray<string>
  readonly source: T.TaskSource
  /** One agent, no competition (`magi task add --solo`). */
  readonly solo?: boolean | undefined
}

/** What a blocker id names. */
export type Blocker = { readonly kind: "task" | "question"; readonly id: string }

/**
 * The git root of `dir`, refused when there is none: a task runs in its own
 * worktree off that repository, so work filed outside one could never run.
 */
export const repoOf = Effect.fn("repoOf")(function* (dir: string) {
  const fs = yield* FileSystem.FileSystem
  const abs = NodePath.resolve(dir)
  // fallback: a path that cannot be looked at is refused as not there
  if (!(yield* fs.exists(abs).pipe(Effect.orElseSucceed(() => false))))
    return yield* new FilingRefused({ message: `repository ${abs} does not exist` })
  // Git's own answer, not a search for `.git`: a stray empty `.git` folder
  // above the directory is not a repository a worktree can be made from.
  return yield* git(abs, "rev-parse", "--show-toplevel").pipe(
    Effect.mapError(
      () =>
        new FilingRefused({
          message: `${abs} is not inside a git repository; a task runs in a worktree of one, so give --repo DIR (or file it from inside the repository)`
        })
    )
  )
})

/** Where filed work runs: a folder, and the repository's name when `[repos]` names it. */
export interface Placed {
  readonly repo: string
  readonly repoName: string | null
}

/** A name as `[repos]` spells one: no slash, so never mistaken for a folder path. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/

/**
 * Place work given `given`, a repository's name or a folder:
 *
 * - a name this host's `[repos]` has: its clone here, by that name;
 * - a folder (as today): its git root, recording the name when `[repos]`
 *   names that clone, so any host with the repository may run it;
 * - a name only other hosts have (their registered `[repos]`): filed by
 *   name, for them to run; this host keeps none of its folder;
 * - anything else: refused, naming the names that are known, when any are.
 *
 * With no `[repos]` anywhere, it is a folder exactly as before hosts.
 */
export const placeRepo = Effect.fn("placeRepo")(function* (given: string, relativeFolders = true) {
  const fs = yield* FileSystem.FileSystem
  const config = Option.getOrElse(yield* Effect.serviceOption(MagiConfig), () => defaults)
  const here = config.repos
  if (NAME.test(given) && Object.hasOwn(here, given)) return { repo: here[given]!, repoName: given } satisfies Placed
  const abs = NodePath.resolve(given)
  // fallback: a path that cannot be looked at is not a folder; it is then refused as a repository
  const isFolder = (relativeFolders || NodePath.isAbsolute(given)) && (yield* fs.exists(abs).pipe(Effect.orElseSucceed(() => false)))
  if (!isFolder && NAME.test(given)) {
    const hosts = yield* Effect.serviceOption(Hosts)
    // display: other hosts named in the refusal's words; none when they cannot be read
    const elsewhere = Option.isNone(hosts) ? [] : yield* hosts.value.list.pipe(Effect.orElseSucceed(() => []))
    if (elsewhere.some((h) => h.repos.includes(given))) return { repo: given, repoName: given } satisfies Placed
    const known = [
      ...Object.keys(here).map((n) => `${n} (here)`),
      ...elsewhere.flatMap((h) => h.repos.filter((n) => !Object.hasOwn(here, n)).map((n) => `${n} (on ${h.name})`))
    ]
    if (known.length > 0)
      return yield* new FilingRefused({
        message: `no host has a repository named \`${given}\` (known: ${
          [...new Set(known)].sort().join(", ")
        }); name one of those, or give a folder inside a git repository`
      })
  }
  if (!relativeFolders && !NodePath.isAbsolute(given))
    return yield* new FilingRefused({ message: `repo must be a repository's name ([repos]) or an absolute path, not \`${given}\`` })
  const root = yield* repoOf(given)
  // Compared as the disk sees them: git answers with the real path, and a
  // configured clone may be reached through a link.
  // fallback: an unresolvable path is compared as given
  const real = (path: string) => fs.realPath(path).pipe(Effect.orElseSucceed(() => path))
  const rootReal = yield* real(root)
  const clones: Record<string, string> = {}
  for (const [name, path] of Object.entries(here)) clones[name] = yield* real(path)
  return { repo: root, repoName: T.repoNameOf(rootReal, clones) ?? null } satisfies Placed
})

/** A repository's name, and which hosts have a clone of it. */
export interface RepoName {
  readonly name: string
  /** This host has a clone of it. */
  readonly here: boolean
  /** The registered hosts that have one (this host among them once it registered). */
  readonly hosts: ReadonlyArray<string>
}

/** Every repository name known: this host's `[repos]` and every registered host's, by name. */
export const knownRepoNames = Effect.gen(function* () {
  const config = Option.getOrElse(yield* Effect.serviceOption(MagiConfig), () => defaults)
  const hosts = yield* Effect.serviceOption(Hosts)
  // display: other hosts named in the refusal's words; none when they cannot be read
  const seen = Option.isNone(hosts) ? [] : yield* hosts.value.list.pipe(Effect.orElseSucceed(() => []))
  const names = new Set([...Object.keys(config.repos), ...seen.flatMap((h) => h.repos)])
  return [...names].sort().map(
    (name): RepoName => ({ name, here: Object.hasOwn(config.repos, name), hosts: seen.filter((h) => h.repos.includes(name)).map((h) => h.name) })
  )
})

/**
 * Which task or question `wanted` names. Both stores accept any unique prefix
 * or suffix, so an id that matches in both is refused rather than guessed.
 */
export const resolveBlocker = (wanted: string) =>
  Effect.gen(function* () {
    const tasks = yield* TaskStore
    const questions = yield* QuestionStore
    const task = yield* Effect.either(tasks.resolveId(wanted))
    const question = yield* Effect.either(questions.resolveId(wanted))
    if (Either.isRight(task) && Either.isRight(question))
      return yield* new FilingRefused({
        message: `\`${wanted}\` names both task ${task.right} and question ${question.right}; give more of the id you mean`
      })
    if (Either.isRight(task)) return { kind: "task", id: task.right } satisfies Blocker
    if (Either.isRight(question)) return { kind: "question", id: question.right } satisfies Blocker
    // An ambiguous id in one store says so; plain absence says where it looked.
    const ambiguous = [task.left, question.left].find((e) => /` matches \d+ /.test(e.message))
    return yield* new FilingRefused({
      message: ambiguous?.message ?? `--after \`${wanted}\`: no task or question has that id`
    })
  })

/** File new work: checked, blocked on its `after` ids if any, written once; the task as filed. */
export const fileWork = (work: NewWork) => Effect.map(fileWorkSaying(work), (filed) => filed.task)

/**
 * `fileWork`, and which `after` tasks it did not wait on because they are
 * done already: waiting on finished work would only say the task waits
 * when it does not, so the filer is told instead.
 */
export const fileWorkSaying = Effect.fn("fileWork")(function* (work: NewWork) {
  const tasks = yield* TaskStore
  if (work.instruction.trim() === "")
    return yield* new FilingRefused({ message: "a task needs an instruction; an empty one tells the agent nothing" })
  const tooLong = T.instructionTooLong(work.instruction)
  if (tooLong !== undefined) return yield* new FilingRefused({ message: tooLong })
  if (work.title !== undefined && Array.from(work.title).length > T.GIVEN_TITLE_MAX)
    return yield* new FilingRefused({ message: `a title is at most ${T.GIVEN_TITLE_MAX} characters; the instruction carries the rest` })
  if (work.priority !== undefined && !Number.isSafeInteger(work.priority))
    return yield* new FilingRefused({ message: `a priority is a whole number, not ${work.priority}` })
  const placed = yield* placeRepo(work.repo, work.relativeFolders ?? true)
  const named: Blocker[] = []
  for (const wanted of work.after ?? []) named.push(yield* resolveBlocker(wanted))
  const all = named.length === 0 ? [] : yield* tasks.list.pipe(Effect.mapError((e) => new FilingRefused({ message: e.message })))
  const finished = new Set(all.filter((t) => t.status === "done").map((t) => t.id))
  // A task done a while ago is on its month's shelf, not in the listing: looked up by id.
  const listed = new Set(all.map((t) => t.id))
  for (const b of named)
    if (b.kind === "task" && !listed.has(b.id)) {
      const shelved = yield* Effect.option(tasks.get(b.id))
      if (Option.isSome(shelved) && shelved.value.id === b.id && shelved.value.status === "done") finished.add(b.id)
    }
  const blockers = named.filter((b) => !(b.kind === "task" && finished.has(b.id)))
  const alreadyDone = [...new Set(named.filter((b) => !blockers.includes(b)).map((b) => b.id))]
  const ids = [...new Set(blockers.map((b) => b.id))]
  const reason = blockers.map((b) => `${b.kind} ${T.shortId(b.id)}`).join(", ")
  const task = yield* tasks
    .add(
      {
        instruction: work.instruction,
        title: work.title,
        priority: work.priority,
        repo: placed.repo,
        repoName: placed.repoName,
        source: work.source,
        solo: work.solo
      },
      (t) => {
        if (ids.length === 0) return Either.right(t)
        // A fresh task cannot be waited on yet; the check stands here so the
        // rule lives where blockers are added, whoever adds them next.
        const circle = T.circleThrough(all, t.id, ids)
        if (circle !== undefined)
          return Either.left(
            new T.TaskRefused({
              reason: "status",
              message: `waiting on ${circle.map(T.shortId).join(" → ")} would close a circle: none of them could ever run`
            })
          )
        return T.block(t, ids, `after ${reason}`)
      }
    )
    .pipe(Effect.mapError((e) => new FilingRefused({ message: e.message })))
  return { task, alreadyDone }
})
