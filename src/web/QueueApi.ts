/**
 * The queue part of the HTTP API: list, file, and move tasks from the phone.
 *
 * Every write is the store's read-modify-write under the task's lock with the
 * queue's own transition (`Task.hold`, `Task.release`, …), the very functions
 * `magi task` calls, so the web holds no rule of its own: a refusal is the
 * transition's message, mapped to a status by its kind (a state that does
 * not allow it: 409; bad input: 400).
 */
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Effect, Either, Option, Schema } from "effect"
import * as T from "../queue/Task.js"
import type { Task } from "../queue/Task.js"
import { TaskNotFound, TaskStore } from "../queue/TaskStore.js"
import { FilingRefused, fileWork, knownRepoNames } from "../queue/Filing.js"
import { type BadBody, type BodyTooLarge, bodyAs, failure as bodyFailure } from "./Api.js"
import { QueueFeed } from "./QueueFeed.js"
import { DefaultRepo, NO_DEFAULT } from "./DefaultRepo.js"
import * as Responses from "./Responses.js"
import { ConductorLog } from "../daemon/ConductorLog.js"
import type * as RecordStore from "../store/RecordStore.js"

/** A body the route understood but whose content cannot be filed. */
class BadTask extends Error {
  readonly _tag = "BadTask"
}

type QueueError =
  | BadBody
  | BodyTooLarge
  | BadTask
  | FilingRefused
  | TaskNotFound
  | T.TaskRefused
  | T.UnreadableTask
  | RecordStore.Failure
  | { readonly _tag: "TaskStoreError" | "StoreError"; readonly message: string }

const failure = (e: QueueError) => {
  switch (e._tag) {
    case "BadBody":
    case "BodyTooLarge":
      return bodyFailure(e)
    case "BadTask":
    case "FilingRefused":
      return Responses.error(400, e.message)
    case "TaskNotFound":
      return Responses.error(404, e.message)
    case "TaskRefused":
      // Empty input is the caller's to fix; anything else is the task's
      // state, which someone else may have just changed.
      return Responses.error(e.reason === "empty" ? 400 : 409, e.message)
    default:
      return Responses.error(500, e.message)
  }
}

const AddBody = Schema.Struct({
  instruction: Schema.String,
  title: Schema.optional(Schema.String),
  priority: Schema.optional(Schema.Int),
  repo: Schema.optional(Schema.String)
})
const HoldBody = Schema.Struct({ reason: Schema.optional(Schema.String) })
/** `{}`: an empty struct schema would take any object, so fields are refused by hand. */
const NoBody = Schema.Record({ key: Schema.String, value: Schema.Unknown }).pipe(
  Schema.filter((o) => Object.keys(o).length === 0, { message: () => "this route takes no fields" })
)
const PriorityBody = Schema.Struct({ priority: Schema.Int })
const EditBody = Schema.Struct({ title: Schema.optional(Schema.String), instruction: Schema.String })

/**
 * The id a write names, which must be a task's whole id: a short id that is
 * unique today may name another task tomorrow, and a tap must move exactly
 * the task the owner read.
 */
const exactId = Effect.gen(function* () {
  const id = (yield* HttpRouter.params)["id"] ?? ""
  const resolved = yield* (yield* TaskStore).resolveId(id)
  if (resolved !== id) return yield* new TaskNotFound({ message: `no task has the id \`${id}\`; a write takes a task's whole id` })
  return id
})

/**
 * The directory a task filed from the phone names: the one given (absolute:
 * the server's own working directory means nothing to a phone), else the
 * page's default (`DefaultRepo`). Filing checks it is in a repository.
 */
const repoFor = (given: string | undefined) =>
  Effect.gen(function* () {
    if (given === undefined || given.trim() === "") {
      const chosen = yield* DefaultRepo
      if (chosen.path !== null) return chosen.name ?? chosen.path
      return yield* Effect.fail(new BadTask(`a task needs a repo (a name or a path from GET /api/repos): ${NO_DEFAULT}`))
    }
    // A repository's name, or an absolute folder: filing places either (`placeRepo`).
    return given
  })

const list = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const snapshot = yield* (yield* QueueFeed).current
  return Responses.jsonBytes(snapshot.body, snapshot.gzipped, request.headers["accept-encoding"])
  // display: the request's failure becomes its HTTP response
}).pipe(Effect.catchAll(failure))

/** `GET /api/queue/history` without `?limit=`: a phone's screenful or two. */
export const HISTORY_TASKS = 30
/** The most one history request may ask for. */
export const HISTORY_TASKS_MAX = 200

/**
 * Done tasks moved to the month shelves, a page at a time: `?before=ID`
 * (the `next` of the page before) and `?limit=N`. `GET /api/queue` holds
 * every task still hot, the recently done among them.
 */
const history = Effect.gen(function* () {
  const params = new URL((yield* HttpServerRequest.HttpServerRequest).url, "http://magi").searchParams
  const rawLimit = params.get("limit")
  const limit = rawLimit === null ? HISTORY_TASKS : /^\d{1,4}$/.test(rawLimit) ? Number(rawLimit) : NaN
  if (!Number.isInteger(limit) || limit < 1 || limit > HISTORY_TASKS_MAX)
    return Responses.error(400, `limit must be a whole number from 1 to ${HISTORY_TASKS_MAX}, not \`${rawLimit ?? ""}\``)
  const before = params.get("before") ?? undefined
  if (before !== undefined && !/^[A-Za-z0-9._-]{1,128}$/.test(before)) return Responses.error(400, "before must be a task id")
  return Responses.json(yield* (yield* QueueFeed).history({ before, limit }))
  // display: the request's failure becomes its HTTP response
}).pipe(Effect.catchAll(failure))

const add = Effect.gen(function* () {
  const given = yield* bodyAs(AddBody, '{"instruction": "…", "title"?: "…", "priority"?: N, "repo"?: "/path"}')
  const filed = yield* fileWork({
    instruction: given.instruction,
    title: given.title,
    priority: given.priority,
    repo: yield* repoFor(given.repo),
    relativeFolders: false,
    // Filed from the phone: the owner's own work.
    source: T.HUMAN
  })
  return Responses.json(yield* (yield* QueueFeed).viewOf(filed), 201)
  // display: the request's failure becomes its HTTP response
}).pipe(Effect.catchAll(failure))

/** A write route: the task's whole id, the body, and the transition it names. */
const move = <A, I>(schema: Schema.Schema<A, I>, expected: string, transition: (t: Task, body: A) => Either.Either<Task, T.TaskRefused>) =>
  Effect.gen(function* () {
    const id = yield* exactId
    const body = yield* bodyAs(schema, expected, { emptyAs: {} })
    const moved = yield* (yield* TaskStore).update(id, (t) => transition(t, body))
    return Responses.json(yield* (yield* QueueFeed).viewOf(moved))
    // display: the request's failure becomes its HTTP response
  }).pipe(Effect.catchAll(failure))

const remove = Effect.gen(function* () {
  const id = yield* exactId
  const removed = yield* (yield* TaskStore).remove(id)
  return Responses.json(removed)
  // display: the request's failure becomes its HTTP response
}).pipe(Effect.catchAll(failure))

const repos = Effect.gen(function* () {
  const feed = yield* QueueFeed
  const seen = yield* feed.repos
  const chosen = yield* DefaultRepo
  // `current`: the default, a folder, or null with `hint` saying how to name one.
  const current = chosen.path
  // The folder it was started in is offered even when it is not the default (magi's own checkout).
  const first = current ?? Option.getOrNull(feed.startedIn)
  return Responses.json({
    current,
    ...(chosen.name === null ? {} : { current_name: chosen.name }),
    ...(current === null ? { hint: NO_DEFAULT } : {}),
    repos: first === null || seen.includes(first) ? seen : [first, ...seen],
    // `names`: the repositories by the name every host knows them by (`[repos]`), offered first.
    names: yield* knownRepoNames
  })
  // display: the request's failure becomes its HTTP response
}).pipe(Effect.catchAll(failure))

/** Every decision the conductor recorded, newest first, for a Conductor view. */
const conduct = Effect.gen(function* () {
  return Responses.json({ decisions: yield* (yield* ConductorLog).read })
})

// A change the owner tapped is recorded even if the phone drops the
// connection while it is being written.
const write = { uninterruptible: true } as const

export const router = HttpRouter.empty.pipe(
  HttpRouter.get("/api/queue", list),
  HttpRouter.get("/api/queue/history", history),
  HttpRouter.post("/api/queue", add, write),
  HttpRouter.post("/api/queue/:id/hold", move(HoldBody, '{"reason"?: "…"}', (t, b) => T.hold(t, b.reason ?? "")), write),
  HttpRouter.post("/api/queue/:id/release", move(NoBody, "{} or no body", (t) => T.release(t)), write),
  HttpRouter.post("/api/queue/:id/priority", move(PriorityBody, '{"priority": N}', (t, b) => T.reprioritize(t, b.priority)), write),
  HttpRouter.post("/api/queue/:id/edit", move(EditBody, '{"instruction": "…", "title"?: "…"}', (t, b) => T.edit(t, b)), write),
  HttpRouter.post("/api/queue/:id/done", move(NoBody, "{} or no body", (t) => T.succeed(t)), write),
  HttpRouter.del("/api/queue/:id", remove, write),
  HttpRouter.get("/api/repos", repos),
  HttpRouter.get("/api/conduct", conduct)
)
