/**
 * The planning chats, and the agent turns that move them: all of the chat's
 * I/O, built on a root (`<home>/chats`), so every test drives a real store in
 * a temp directory and none touches the owner's home.
 *
 * One conversation is one record of the configured backend, written
 * atomically: `<id>.json` in the home folder (`magi web` and whatever else
 * reads it are separate processes, and a rename is the only cross-process
 * write that needs no coordination between them), or a row in PostgreSQL.
 * What each turn told the agent and what it printed go under
 * `<root>/<id>.artifacts/turn-<n>/` on the machine that ran the turn.
 *
 * The rule that shapes every function here: the operator's words are on disk
 * before any agent runs. A turn that fails in any way (the agent cannot
 * start, hits its usage limit, times out, says nothing usable) becomes a
 * `MAGI_NOTE` turn saying the message is saved, so the phone never shows a
 * message that silently went nowhere.
 *
 * One agent turn at a time per chat (in this process, which is the one
 * `magi web` that hosts chats): a message sent while a turn runs is recorded
 * at once, and the next turn carries every operator message the agent has
 * not seen.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import { Clock, Data, Duration, Effect, Either, FiberSet, Layer, Option, Random, Schedule, Stream } from "effect"
import * as NodePath from "node:path"
import { Rosters, type AgentSpec } from "../agents/AgentRoster.js"
import { Agents, hasSession, type CallResult } from "../agents/Agents.js"
import { createAtomically } from "../store/files/AtomicFile.js"
import type * as RecordStore from "../store/RecordStore.js"
import { loadTable } from "../platform/MagiConfig.js"
import { MagiHome } from "../platform/MagiHome.js"
import * as ConfiguredStore from "../platform/ConfiguredStore.js"
import * as Q from "../questions/Question.js"
import type { Task } from "../queue/Task.js"
import { TaskStore } from "../queue/TaskStore.js"
import type { DraftProblem } from "../queue/TaskFileReview.js"
import * as C from "./Chat.js"
import { CHATS_FOLDER, ChatRecords } from "./ChatRecords.js"

/** `TURN_TIMEOUT`: an agent turn longer than this is stopped and reported. */
export const TURN_TIMEOUT = Duration.seconds(C.TURN_TIMEOUT_SECONDS)

/** How often a turn waiting on another process's turn of the same chat looks again. */
export const TURN_LOCK_POLL = Duration.seconds(1)

/**
 * A turn lock older than this has no turn behind it: a turn is stopped at
 * `TURN_TIMEOUT`, and a minute more covers killing its agent and writing
 * the result. (One whose process is gone is broken at once.)
 */
export const TURN_LOCK_STALE_MS = Duration.toMillis(TURN_TIMEOUT) + 60_000

/** Is `pid` a running process on this machine? */
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM"
  }
}

/** Bad input or a chat in the wrong state: nothing was written. */
export class ChatRefused extends Data.TaggedError("ChatRefused")<{
  readonly message: string
  /** The chat is filed or abandoned: decided already, not a mistake in the request. */
  readonly settled?: boolean
  /** Set when a draft was refused by the review: every problem, for the page to list. */
  readonly problems?: ReadonlyArray<DraftProblem>
}> {}

/**
 * The agent's turn failed. The operator's message and magi's note saying so
 * are both on disk by the time this is seen.
 */
export class ChatTurnFailed extends Data.TaggedError("ChatTurnFailed")<{ readonly message: string; readonly chat: C.Chat }> {}

export interface OpenInput {
  readonly idea: string
  readonly repo: string
  /** A roster id; else `[roles] chatter`, else the first claude, else the first agent. */
  readonly agent?: string | null
  /** The chat this one continues (its transcript becomes background). */
  readonly from?: string | null
}

/** A chat could not be read: none answers to the id, or the store failed (the store's own errors). */
export type ChatReadError = RecordStore.Failure

export interface ChatsShape {
  /** This machine's chats folder: each turn's prompt and output, and the turn locks (the chats themselves are wherever the backend keeps them). */
  readonly root: string
  /** Where the chats are, for messages: that folder, or the database with its password masked. */
  readonly where: string
  /** Where turn `n`'s prompt and output go. */
  readonly turnDir: (id: string, n: number) => string
  /** Open chats first, then newest first. */
  readonly list: Effect.Effect<ReadonlyArray<C.Chat>, RecordStore.Failed>
  /** An exact id or a unique short id. */
  readonly get: (id: string) => Effect.Effect<C.Chat, ChatReadError>
  /** Moves whenever a chat is written; 0 before the first. */
  readonly revision: Effect.Effect<number>
  /** Names of chats changing (`<id>.json`; on the file backend, any file of the folder), while watching works. */
  readonly changes: Stream.Stream<string>
  readonly countOpen: Effect.Effect<number, RecordStore.Failed>
  /** Is an agent turn of this chat running (or waiting its turn) in this process? */
  readonly thinking: (id: string) => Effect.Effect<boolean>

  /** Build and persist a chat holding the idea; no agent runs. */
  readonly open: (input: OpenInput) => Effect.Effect<C.Chat, ChatRefused | ChatReadError>
  /** The first agent turn of a chat `open` made (the briefing). */
  readonly firstTurn: (id: string) => Effect.Effect<C.Chat, ChatTurnFailed | ChatRefused | ChatReadError>
  /** Append the operator's words and flush them, invoking nothing. */
  readonly record: (id: string, text: string) => Effect.Effect<C.Chat, ChatRefused | ChatReadError>
  /** One agent turn answering every operator message it has not seen. */
  readonly respond: (id: string) => Effect.Effect<C.Chat, ChatTurnFailed | ChatRefused | ChatReadError>
  /** `record`, then `respond`. */
  readonly say: (id: string, text: string) => Effect.Effect<C.Chat, ChatTurnFailed | ChatRefused | ChatReadError>
  /** `open`, then `firstTurn`. */
  readonly start: (input: OpenInput) => Effect.Effect<C.Chat, ChatTurnFailed | ChatRefused | ChatReadError>
  /**
   * Run `respond` in the background, for a caller (the web) that answers at
   * once; its failure is already a note on disk, so it is only logged.
   * Ends with the store's scope.
   */
  readonly respondInBackground: (id: string) => Effect.Effect<void>
  readonly abandon: (id: string) => Effect.Effect<C.Chat, ChatRefused | ChatReadError>
  /**
   * Review the draft and, when it passes, queue it as a task (title from
   * the draft, filed by the operator) and mark the chat filed. Refused with
   * every problem otherwise.
   */
  readonly fileDraft: (
    id: string,
    priority?: number
  ) => Effect.Effect<{ readonly chat: C.Chat; readonly task: Task }, ChatRefused | ChatReadError>
}

/**
 * The owner's chats on the configured backend (`<home>/chats`, or the
 * database); what each turn told the agent and the turn locks stay in
 * `<home>/chats` on this machine either way.
 */
export class Chats extends Effect.Service<Chats>()("magi/Chats", {
  scoped: Effect.suspend(() =>
    Effect.gen(function* () {
      const home = yield* MagiHome
      return yield* make(chatsDir(home), yield* ChatRecords.onBackend)
    })
  ),
  dependencies: [ConfiguredStore.layer]
}) {
  /** Chats in the folder `root`, their turns' artifacts and locks beside them. */
  static at = (root: string) =>
    Layer.scoped(Chats, Effect.suspend(() => Effect.map(Effect.flatMap(ChatRecords.make(root), (records) => make(root, records)), Chats.make)))
  static layer = Chats.Default
}

export const chatsDir = (home: { readonly dir: string }) => NodePath.join(home.dir, CHATS_FOLDER)

/** The interviewer the repository's config names: `[roles] chatter` (or `planner`). */
const configuredChatter = (repo: string) =>
  loadTable(repo).pipe(
    Effect.map(({ table }) => {
      const roles = table["roles"]
      if (typeof roles !== "object" || roles === null) return null
      const r = roles as Record<string, unknown>
      const named = r["chatter"] ?? r["planner"]
      return typeof named === "string" && named !== "" ? named : null
    })
  )

/**
 * The agent that interviews about `repo`, for the phone's chat and for
 * `magi plan` alike: the one asked for, else `[roles] chatter`, else the
 * first claude on the repository's roster, else its first agent.
 */
export const interviewerFor = (repo: string, asked: string | null) =>
  Effect.gen(function* () {
    const roster = yield* (yield* Rosters).forRepo(repo).pipe(Effect.mapError((e) => new ChatRefused({ message: e.message })))
    const chatter = yield* configuredChatter(repo).pipe(Effect.mapError((e) => new ChatRefused({ message: e.message })))
    const chosen = C.chooseAgent(roster.agents, asked, chatter)
    if ("refused" in chosen) return yield* new ChatRefused({ message: chosen.refused })
    return roster.get(chosen.agent).pipe(Option.getOrThrow)
  })

/**
 * The chats of `records`; `root` is this machine's chats folder, where each
 * turn's prompt and output and the turn locks go, whichever backend holds
 * the chats themselves.
 */
export const make = Effect.fn("Chats.make")(function* (root: string, records: ChatRecords) {
  const fs = yield* FileSystem.FileSystem
  const agents = yield* Agents
  const rosters = yield* Rosters
  const tasks = yield* TaskStore
  const background = yield* FiberSet.make()
  /** One agent turn at a time per chat; a turn asked for meanwhile waits its turn. */
  const turnLocks = new Map<string, Effect.Semaphore>()
  /** Turns running or waiting, per chat, for the page's "thinking…". */
  const pending = new Map<string, number>()

  const turnLock = (id: string) =>
    Effect.sync(() => {
      let lock = turnLocks.get(id)
      if (lock === undefined) {
        lock = Effect.unsafeMakeSemaphore(1)
        turnLocks.set(id, lock)
      }
      return lock
    })

  const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))
  const turnDir = (id: string, n: number) => NodePath.join(root, `${id}.artifacts`, `turn-${n}`)

  const refused = (message: string) => new ChatRefused({ message })

  const open = (input: OpenInput) =>
    Effect.gen(function* () {
      const idea = input.idea.trim()
      if (idea === "") return yield* refused("say what you want planned: the idea is empty")
      if (idea.length > C.MAX_TURN_CHARS)
        return yield* refused(`the idea is ${idea.length} characters; a chat message may be at most ${C.MAX_TURN_CHARS}`)
      const repo = NodePath.resolve(input.repo)
      const isDir = yield* fs.stat(repo).pipe(
        Effect.map((s) => s.type === "Directory"),
        // fallback: a probe that failed is "no"; only chooses whether to wait
        Effect.orElseSucceed(() => false)
      )
      if (!isDir) return yield* refused(`the repository ${repo} is not a directory on this machine`)
      // Kept by its whole id, however it was named: a short id may later name another chat.
      const from = input.from === undefined || input.from === null ? null : (yield* records.get(input.from)).id
      const chosen = yield* interviewerFor(repo, input.agent ?? null).pipe(
        Effect.provideService(FileSystem.FileSystem, fs),
        Effect.provideService(Rosters, rosters)
      )
      const at = yield* now
      // Two chats opened in one second may draw the same id; the second draws again.
      for (;;) {
        const chat = C.build({ id: Q.makeId(at, yield* Random.nextIntBetween(0, 0x10000)), idea, repo, agent: chosen.id, from, now: at })
        if (yield* records.create(chat)) return chat
      }
    }).pipe(Effect.withSpan("Chats.open"))

  const record = (id: string, text: string) =>
    Effect.gen(function* () {
      const body = text.trim()
      if (body === "") return yield* refused("the message is empty")
      if (body.length > C.MAX_TURN_CHARS)
        return yield* refused(`the message is ${body.length} characters; a chat message may be at most ${C.MAX_TURN_CHARS}`)
      const at = Q.timestamp(yield* now)
      return yield* records.update(id, (chat) =>
        chat.status !== "open"
          ? Either.left(new ChatRefused({ message: `chat ${chat.id} is ${chat.status}; start a new one to plan more`, settled: true }))
          : Either.right({ ...chat, turns: [...chat.turns, { who: "operator" as const, body, at }] }))
    })

  /** Write the agent's side of a turn after the turns it was sent. */
  const settle = (id: string, seen: number, body: string, change: (chat: C.Chat) => C.Chat) =>
    Effect.gen(function* () {
      const at = Q.timestamp(yield* now)
      return yield* records.update(id, (chat) => Either.right(change(C.insertAgentTurn(chat, seen, body, at))))
    })

  /** The agent's turn, under the chat's turn lock. */
  const turn = (id: string) =>
    Effect.gen(function* () {
      const chat = yield* records.get(id)
      if (chat.status !== "open")
        return yield* new ChatRefused({ message: `chat ${chat.id} is ${chat.status}; nothing to answer`, settled: true })
      if (C.unanswered(chat).length === 0) return chat // an earlier turn already carried every message
      const roster = yield* rosters.forRepo(chat.repo).pipe(Effect.option)
      const agent: AgentSpec | undefined = Option.getOrUndefined(Option.flatMap(roster, (r) => r.get(chat.agent)))
      const seen = chat.turns.length
      const fail = (why: string, seat: C.Chat["seat"]) =>
        Effect.flatMap(
          settle(id, seen, C.failureNote(why), (c) => ({ ...c, seat })),
          (saved) => Effect.fail(new ChatTurnFailed({ message: why, chat: saved }))
        )
      if (agent === undefined) return yield* fail(`the agent \`${chat.agent}\` is no longer on the roster for ${chat.repo}`, chat.seat)

      const replied = chat.turns.some(C.isAgentReply)
      // Until the agent has said something, every turn starts a fresh
      // session with the briefing: a failed first turn may have left a
      // session that never heard it.
      const seat = replied ? chat.seat : { ...chat.seat, session: null }
      // A `command` agent is started afresh every turn and reports no
      // session: magi cannot resume its conversation, so it gets the
      // briefing and the whole transcript every time (and the chat's id).
      const canResume = replied && agent.kind !== "command" && hasSession(agent.kind, seat)
      const source = chat.from === null ? null : yield* records.get(chat.from).pipe(Effect.option, Effect.map(Option.getOrNull))
      const prompt = C.turnPrompt(chat, canResume, source)
      const n = seat.turns + 1
      const ran = yield* agents
        .call({
          agent,
          seat,
          prompt,
          cwd: chat.repo,
          allowWrite: false,
          timeout: TURN_TIMEOUT,
          artifactsDir: turnDir(id, n),
          stem: C.CHAT_SEAT,
          run: "",
          node: C.CHAT_SEAT,
          chat: chat.id
        })
        .pipe(Effect.either)
      if (Either.isLeft(ran)) return yield* fail(`the agent could not be started: ${ran.left.message}`, seat)
      const result: CallResult = ran.right
      const why = C.turnFailure(agent.id, result)
      if (why !== null) {
        // A resumed session that gave nothing usable (not a limit or a
        // timeout, which say nothing about the session) may be gone: the
        // next turn starts a fresh one and sends the whole transcript.
        const lost = canResume && result.quota === null && !result.timedOut
        return yield* fail(why, { ...result.seat, write: false, session: lost ? null : result.seat.session })
      }
      const draft = C.extractDraft(result.text)
      return yield* settle(id, seen, C.clipReply(result.text, result.stdoutFile), (c) => ({
        ...c,
        seat: { ...result.seat, write: false },
        draft: draft ?? c.draft
      }))
    })

  /**
   * The chat's turn lock on disk, `<id>.turn` (create-new, holding the pid):
   * another process hosting the same chat (a second `magi web` on this home)
   * waits for it rather than resuming the same CLI session at the same time.
   * A lock whose process is gone, or older than any turn, is broken. It is
   * this machine's (a pid means nothing elsewhere), like the agent's session
   * the turn resumes: on a shared database, a chat is hosted by one `magi web`.
   */
  const turnFile = (id: string) => NodePath.join(root, `${id}.turn`)
  const holdTurnFile = <A, E>(id: string, body: Effect.Effect<A, E>) => {
    const file = turnFile(id)
    const attempt: Effect.Effect<"made" | "broken" | "held"> = Effect.gen(function* () {
      const at = yield* Clock.currentTimeMillis
      const made = yield* createAtomically(file, `${process.pid} ${at}\n`).pipe(
        Effect.provideService(FileSystem.FileSystem, fs),
        // fallback: a disk that refuses the lock must not stop the turn
        Effect.orElseSucceed(() => true) // a disk that refuses the lock must not stop the turn
      )
      if (made) return "made"
      // fallback: an unreadable lock file is treated as stale and taken over
      const [pid, since] = (yield* fs.readFileString(file).pipe(Effect.orElseSucceed(() => ""))).trim().split(" ").map(Number)
      const holderGone = pid === undefined || !Number.isInteger(pid) || !alive(pid)
      if (!holderGone && since !== undefined && at - since < TURN_LOCK_STALE_MS) return "held"
      // fallback: best-effort removal of a stale lock file
      yield* fs.remove(file).pipe(Effect.ignore)
      return "broken"
    })
    // A live holder is polled every `TURN_LOCK_POLL`; a stale lock just broken is tried again at once.
    const acquire: Effect.Effect<void> = attempt.pipe(
      Effect.repeat({
        schedule: Schedule.identity<"made" | "broken" | "held">().pipe(Schedule.addDelay((o) => (o === "held" ? TURN_LOCK_POLL : Duration.zero))),
        until: (o) => o === "made"
      }),
      Effect.asVoid
    )
    // fallback: best-effort removal of the lock file at the end of the turn
    return Effect.acquireUseRelease(acquire, () => body, () => fs.remove(file).pipe(Effect.ignore))
  }

  const respond = (wanted: string) =>
    Effect.gen(function* () {
      // The whole id, resolved by the store: it names the lock files, so
      // nothing the caller typed is ever joined onto a path.
      const id = (yield* records.get(wanted)).id
      const lock = yield* turnLock(id)
      return yield* Effect.acquireUseRelease(
        Effect.sync(() => pending.set(id, (pending.get(id) ?? 0) + 1)),
        () => lock.withPermits(1)(holdTurnFile(id, turn(id))),
        () => Effect.sync(() => (pending.get(id)! > 1 ? pending.set(id, pending.get(id)! - 1) : pending.delete(id)))
      )
    }).pipe(Effect.withSpan("Chats.respond", { attributes: { chat: wanted } }))

  // Interruptible whatever region it was started from (a web write runs
  // uninterruptibly so a dropped phone cannot cut it short): a server
  // stopping mid-turn must end the turn, not wait out its 300 s.
  const respondInBackground = (id: string) =>
    FiberSet.run(
      background,
      respond(id).pipe(
        // display: the chat's failure is logged; the chat record keeps what was written
        Effect.catchAll((e) => Effect.logWarning(`chat ${id}: ${e.message}`)),
        Effect.asVoid,
        Effect.interruptible
      )
    ).pipe(Effect.asVoid)

  const abandon = (id: string) =>
    records.update(id, (chat) =>
      chat.status === "filed"
        ? Either.left(new ChatRefused({ message: `chat ${chat.id} is already filed as task ${chat.task}`, settled: true }))
        : Either.right({ ...chat, status: "abandoned" as const }))

  /** One filing at a time per chat, so two taps on "File" queue one task. */
  const filing = yield* Effect.makeSemaphore(1)
  const fileDraft = (id: string, priority = 0) =>
    filing.withPermits(1)(
      Effect.gen(function* () {
        if (!Number.isInteger(priority)) return yield* refused(`the priority must be a whole number, not ${priority}`)
        const chat = yield* records.get(id)
        if (chat.status !== "open")
          return yield* new ChatRefused({
            message: chat.status === "filed" ? `chat ${chat.id} is already filed as task ${chat.task}` : `chat ${chat.id} is ${chat.status}`,
            settled: true
          })
        const problems = C.draftProblems(chat)
        if (!C.canFile(chat))
          return yield* new ChatRefused({
            message: `the draft cannot be filed yet: ${problems.filter((p) => !p.soft).map((p) => p.message).join("; ")}`,
            problems
          })
        const task = yield* tasks
          .add({ instruction: chat.draft!, repo: chat.repo, priority, source: { kind: "human" } })
          .pipe(Effect.mapError((e) => refused(`the task could not be queued: ${e.message}`)))
        const filed = yield* records.update(chat.id, (c) => Either.right({ ...c, status: "filed" as const, task: task.id }))
        return { chat: filed, task }
      })
    )

  const list = Effect.map(records.list, (chats) =>
    [...chats].sort(
      (a, b) => Number(b.status === "open") - Number(a.status === "open") || b.created_at.localeCompare(a.created_at) || b.id.localeCompare(a.id)
    ))

  return {
    root,
    where: records.where,
    turnDir,
    list,
    get: records.get,
    revision: records.revision,
    changes: records.changes,
    countOpen: Effect.map(records.list, (cs) => cs.filter((c) => c.status === "open").length),
    thinking: (id) => Effect.sync(() => (pending.get(id) ?? 0) > 0),
    open,
    firstTurn: respond,
    record,
    respond,
    say: (id, text) => Effect.flatMap(record(id, text), (chat) => respond(chat.id)),
    start: (input) => Effect.flatMap(open(input), (chat) => respond(chat.id)),
    respondInBackground,
    abandon,
    fileDraft
  } satisfies ChatsShape
})
