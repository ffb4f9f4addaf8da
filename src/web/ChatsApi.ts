/**
 * The planning chats over HTTP, for the phone page.
 *
 * Starting a chat and saying something answer at once (202) with the chat as
 * it is on disk, the operator's words included; the agent's turn runs in the
 * background, because it takes 20–90 s and a phone drops long requests. The
 * page learns of the reply from the change events (`revisions.chats`).
 *
 * Every rule is `Chats`'s: a refusal here is its message, mapped to a status.
 */
import * as HttpRouter from "@effect/platform/HttpRouter"
import { Effect, Schema } from "effect"
import * as C from "../chat/Chat.js"
import { ChatRefused, Chats } from "../chat/Chats.js"
import type * as RecordStore from "../store/RecordStore.js"
import { DefaultRepo, NO_DEFAULT } from "./DefaultRepo.js"
import type { DraftProblem } from "../queue/TaskFileReview.js"
import type { Task } from "../queue/Task.js"
import { bodyAs, type BadBody, type BodyTooLarge, storeFailure } from "./Api.js"
import * as Responses from "./Responses.js"

/** A chat as the page shows it: the record, and what the page needs to know about it now. */
export type ChatView = C.Chat & {
  /** An agent turn is running (or queued) for it in this server. */
  readonly thinking: boolean
  /**
   * Operator words no turn is working on (the last turn failed, or the
   * server restarted mid-turn): the page offers to retry.
   */
  readonly stalled: boolean
  /** The draft's review; empty when it is clean. */
  readonly problems: ReadonlyArray<DraftProblem>
  readonly fileable: boolean
}

export const viewOf = (chat: C.Chat, thinking: boolean): ChatView => ({
  ...chat,
  thinking,
  stalled: chat.status === "open" && !thinking && C.unanswered(chat).length > 0,
  problems: C.draftProblems(chat),
  fileable: C.canFile(chat)
})

/** A write named a chat by a short id: a short id unique today may name another chat tomorrow. */
class NotWholeChatId extends Schema.TaggedError<NotWholeChatId>()("NotWholeChatId", { id: Schema.String }) {
  override get message(): string {
    return `no chat has the id \`${this.id}\`; a write takes a chat's whole id`
  }
}

type ChatApiError = BadBody | BodyTooLarge | ChatRefused | NotWholeChatId | RecordStore.Failure

const failure = (e: ChatApiError) => {
  switch (e._tag) {
    case "BadBody":
      return Responses.error(400, e.message)
    case "BodyTooLarge":
      return Responses.error(413, e.message)
    case "NotWholeChatId":
      return Responses.error(404, e.message)
    case "ChatRefused":
      // Filed or abandoned elsewhere is a conflict the page reloads on, not
      // the owner's mistake; a draft refused by review carries its problems.
      return Responses.json({ error: e.message, ...(e.problems ? { problems: e.problems } : {}) }, e.settled ? 409 : 400)
    case "RecordNotFound":
    case "RecordUnreadable":
    case "NewerSchema":
    case "StoreFailed":
    case "LockBusy":
    case "UnsafeId":
      return storeFailure(e)
  }
}

const view = (chat: C.Chat) => Effect.map(Effect.flatMap(Chats, (chats) => chats.thinking(chat.id)), (t) => viewOf(chat, t))

/**
 * A write names a chat by its whole id: a short id unique today may name
 * another chat tomorrow, and a tap must reach the chat the owner read.
 */
const exactChat = Effect.gen(function* () {
  const id = (yield* HttpRouter.params)["id"] ?? ""
  const chat = yield* (yield* Chats).get(id)
  if (chat.id !== id) return yield* new NotWholeChatId({ id })
  return chat
})

const list = Effect.gen(function* () {
  const chats = yield* Chats
  return Responses.json(yield* Effect.forEach(yield* chats.list, view))
  // display: the request's failure becomes its HTTP response
}).pipe(Effect.catchAll(failure))

const one = Effect.gen(function* () {
  const id = (yield* HttpRouter.params)["id"] ?? ""
  return Responses.json(yield* view(yield* (yield* Chats).get(id)))
  // display: the request's failure becomes its HTTP response
}).pipe(Effect.catchAll(failure))

const NewChat = Schema.Struct({
  idea: Schema.String,
  repo: Schema.optional(Schema.NullOr(Schema.String)),
  agent: Schema.optional(Schema.NullOr(Schema.String)),
  from: Schema.optional(Schema.NullOr(Schema.String))
})

/** Without `repo`, the page's default repository (`DefaultRepo`), if there is one. */
const create = Effect.gen(function* () {
  const input = yield* bodyAs(NewChat, '{"idea": "…", "repo"?: "/path", "agent"?: "id", "from"?: "chat id"}')
  const chats = yield* Chats
  const repo = input.repo ?? (yield* DefaultRepo).path
  if (repo === null || repo.trim() === "") return yield* new ChatRefused({ message: `a plan needs a repository: ${NO_DEFAULT}` })
  const chat = yield* chats.open({ idea: input.idea, repo, agent: input.agent ?? null, from: input.from ?? null })
  yield* chats.respondInBackground(chat.id)
  return Responses.json(yield* view(chat), 202)
  // display: the request's failure becomes its HTTP response
}).pipe(Effect.catchAll(failure))

const say = Effect.gen(function* () {
  const chat = yield* exactChat
  const { body } = yield* bodyAs(Schema.Struct({ body: Schema.String }), '{"body": "…"}')
  const chats = yield* Chats
  const recorded = yield* chats.record(chat.id, body)
  yield* chats.respondInBackground(chat.id)
  return Responses.json(yield* view(recorded), 202)
  // display: the request's failure becomes its HTTP response
}).pipe(Effect.catchAll(failure))

/** Another turn for words a failed turn left unanswered. */
const retry = Effect.gen(function* () {
  const chat = yield* exactChat
  const chats = yield* Chats
  if (C.unanswered(chat).length === 0) return Responses.error(409, `chat ${chat.id} has nothing waiting for the agent`)
  yield* chats.respondInBackground(chat.id)
  return Responses.json({ ...(yield* view(chat)), thinking: true, stalled: false }, 202)
  // display: the request's failure becomes its HTTP response
}).pipe(Effect.catchAll(failure))

const file = Effect.gen(function* () {
  const chat = yield* exactChat
  const { priority } = yield* bodyAs(Schema.Struct({ priority: Schema.optional(Schema.Int) }), '{"priority"?: whole number}')
  const filed: { readonly chat: C.Chat; readonly task: Task } = yield* (yield* Chats).fileDraft(chat.id, priority ?? 0)
  return Responses.json({ chat: yield* view(filed.chat), task: filed.task })
  // display: the request's failure becomes its HTTP response
}).pipe(Effect.catchAll(failure))

const abandon = Effect.gen(function* () {
  const chat = yield* exactChat
  return Responses.json(yield* view(yield* (yield* Chats).abandon(chat.id)))
  // display: the request's failure becomes its HTTP response
}).pipe(Effect.catchAll(failure))

export const router = HttpRouter.empty.pipe(
  HttpRouter.get("/api/chats", list),
  // The operator's words are written even if the phone drops the connection.
  HttpRouter.post("/api/chats", create, { uninterruptible: true }),
  HttpRouter.get("/api/chats/:id", one),
  HttpRouter.post("/api/chats/:id/say", say, { uninterruptible: true }),
  HttpRouter.post("/api/chats/:id/retry", retry, { uninterruptible: true }),
  HttpRouter.post("/api/chats/:id/file", file, { uninterruptible: true }),
  HttpRouter.post("/api/chats/:id/abandon", abandon, { uninterruptible: true })
)
