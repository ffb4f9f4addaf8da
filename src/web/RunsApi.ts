/**
 * The runs part of the HTTP API: the list, one run with everything the
 * owner needs to judge it (its seats, its task, its questions, its
 * artifacts, the end of what its agent printed), and one artifact as text.
 *
 * Read-only but for Stop: a run is changed by the loop, `magi run` and the
 * waiter; the page can only ask its turn to stop, as `magi run stop` does.
 */
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect, Option } from "effect"
import * as Artifacts from "../runs/Artifacts.js"
import * as RunReport from "../runs/RunReport.js"
import * as Q from "../questions/Question.js"
import { type Run, RunStore } from "../runs/Runs.js"
import { currentReason } from "../runs/RunStatus.js"
import { stopRun } from "../runs/StopRun.js"
import { blind } from "../graph/CompetitionView.js"
import { PANEL_HEADERS } from "./Api.js"
import * as Responses from "./Responses.js"
import { RunFeed } from "./RunFeed.js"
import { HISTORY_LIMIT_MAX, type QuestionView, Snapshots } from "./Snapshot.js"
import { QuestionStore } from "../questions/QuestionStore.js"
import { QueueFeed, type TaskRef } from "./QueueFeed.js"
import { Hosts, offlineWords, queuedWords, type HostView } from "../platform/Hosts.js"

/** `GET /api/runs` without `?limit=`: a phone's screenful many times over. */
export const DEFAULT_RUNS = 50
/** The most one request may ask for: past this, a list is a dump, not a page. */
export const MAX_RUNS = 500

/** A run in the list: the record, and how many of its questions are open and wait on the owner. */
export type RunListEntry = Run & {
  readonly questions_open: number
  readonly questions_needs_owner: number
  /** "host buildbox offline since …" when the run's host is down (its seats wait for it), else null. */
  readonly host_offline: string | null
  /** "queued behind 3 turns on buildbox" while its next turn waits for room on its host, else null. */
  readonly queued: string | null
}

/** One run as its page shows it. */
export type RunDetail = Run & {
  readonly host_offline: string | null
  readonly queued: string | null
  /** The queued task this run works, if the loop started it. */
  readonly task: TaskRef | null
  /** Its questions, newest asked first, as the question list shows them. */
  readonly questions: ReadonlyArray<QuestionView>
  /** Its artifacts by name, oldest first. */
  readonly artifacts: ReadonlyArray<Artifacts.ArtifactEntry>
  /** The end of what its agent printed last, if it printed anything. */
  readonly last_output: Artifacts.Tail | null
  /**
   * Its commits (the newest `COMMITS_SHOWN`) and diffstat off the base, as
   * `magi show` prints them; null when the run was removed or git cannot
   * read its branch.
   */
  readonly changes: (RunReport.Changes & { readonly commits_total: number }) | null
}

/** `?limit=` as a whole number from 1 to `MAX_RUNS`, else a message saying so. */
export const parseLimit = (raw: string | null): number | string => {
  if (raw === null) return DEFAULT_RUNS
  const n = /^\d{1,6}$/.test(raw) ? Number(raw) : NaN
  if (!Number.isInteger(n) || n < 1 || n > MAX_RUNS) return `limit must be a whole number from 1 to ${MAX_RUNS}, not \`${raw}\``
  return n
}

const storeFailure = (e: { readonly _tag: string; readonly message: string }) => {
  switch (e._tag) {
    case "RecordNotFound":
      return Responses.error(404, e.message)
    case "InvalidArtifactName":
      return Responses.error(400, e.message)
    default:
      return Responses.error(500, e.message)
  }
}

/** The hosts as registered; none when they cannot be read (the runs still show, without "offline"). */
// display: hosts shown on the page; none when they cannot be read
const hostsNow = Effect.flatMap(Hosts, (h) => h.list).pipe(Effect.orElseSucceed((): ReadonlyArray<HostView> => []))

/** `GET /api/hosts`: every host sharing the store, online or when last seen. */
const hostList = Effect.map(hostsNow, Responses.json)

const list = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const params = new URL(request.url, "http://magi").searchParams
  const limit = parseLimit(params.get("limit"))
  if (typeof limit === "string") return Responses.error(400, limit)
  // `?before=ID`: the page after the one that ended at that run (older runs are on the month shelves).
  const before = params.get("before") ?? undefined
  if (before !== undefined && !/^[A-Za-z0-9._-]{1,128}$/.test(before)) return Responses.error(400, "before must be a run id")
  const runs = yield* (yield* RunFeed).recent(limit, before)
  const hosts = yield* hostsNow
  const questions = (yield* (yield* Snapshots).current).questions
  const open = new Map<string, { open: number; needsOwner: number }>()
  for (const q of questions) {
    if (!Q.isOpen(q) || q.run === "") continue
    const c = open.get(q.run) ?? { open: 0, needsOwner: 0 }
    open.set(q.run, { open: c.open + 1, needsOwner: c.needsOwner + (Q.waitingOnAgent(q) ? 0 : 1) })
  }
  return Responses.json(
    runs.map(
      (r): RunListEntry => ({
        // A competition's authors stay hidden until its tally, as `magi show` hides them.
        ...blind(r),
        reason: currentReason(r),
        questions_open: open.get(r.id)?.open ?? 0,
        questions_needs_owner: open.get(r.id)?.needsOwner ?? 0,
        host_offline: offlineWords(hosts, r.host) ?? null,
        queued: queuedWords(hosts, r.id) ?? null
      })
    )
  )
  // display: the request's failure becomes its HTTP response
}).pipe(Effect.catchAll(storeFailure))

/** A run by id or a unique prefix or suffix (the short id the CLI prints). */
const detail = Effect.gen(function* () {
  const id = (yield* HttpRouter.params)["id"] ?? ""
  const runs = yield* RunStore
  const run = yield* runs.get(id)
  const snapshots = yield* Snapshots
  const hot = (yield* snapshots.current).questions.filter((q) => q.run === run.id)
  // Its settled questions may be on the month shelves: found through the
  // months' indexes, which hold each question's run.
  const shelved = (yield* (yield* QuestionStore).historyPage({ limit: HISTORY_LIMIT_MAX, words: [run.id.toLowerCase()] })).questions
  const mine = [...hot, ...shelved.filter((q) => q.run === run.id && !hot.some((h) => h.id === q.id))].sort(
    (a, b) => b.asked_at.localeCompare(a.asked_at) || b.id.localeCompare(a.id)
  )
  const questions = yield* Effect.forEach(mine, snapshots.viewOf)
  const dir = runs.artifactsDir(run.id)
  const artifacts = yield* Artifacts.list(dir)
  const latest = Artifacts.latestOutput(artifacts)
  // A last output that cannot be read costs only that part of the page.
  const lastOutput = Option.isNone(latest)
    ? Option.none()
    // display: an artifact's tail on the page; none when it cannot be read
    : yield* Artifacts.tail(dir, latest.value).pipe(Effect.orElseSucceed(() => Option.none()))
  const task = yield* (yield* QueueFeed).taskOfRun(run.id)
  const hosts = yield* hostsNow
  const changes = run.removed_at === undefined ? yield* RunReport.changesOf(run) : undefined
  return Responses.json(
    {
      ...blind(run),
      reason: currentReason(run),
      host_offline: offlineWords(hosts, run.host) ?? null,
      queued: queuedWords(hosts, run.id) ?? null,
      task: Option.getOrNull(task),
      questions,
      artifacts,
      last_output: Option.getOrNull(lastOutput),
      changes: changes === undefined
        ? null
        : { commits: changes.commits.slice(0, RunReport.COMMITS_SHOWN), commits_total: changes.commits.length, diffstat: changes.diffstat }
    } satisfies RunDetail
  )
  // display: the request's failure becomes its HTTP response
}).pipe(Effect.catchAll(storeFailure))

/**
 * One artifact as plain text, under the panel's policy: an agent wrote it,
 * so a browser must neither sniff it into HTML nor run anything in it.
 */
const artifact = Effect.gen(function* () {
  const params = yield* HttpRouter.params
  const id = params["id"] ?? ""
  const name = params["name"] ?? ""
  // The name is checked before anything touches the disk, the run included.
  if (!Artifacts.validArtifactName(name))
    return yield* new Artifacts.InvalidArtifactName({ message: `\`${name}\` is not an artifact name: names match ${Artifacts.ARTIFACT_NAME_RULE}` })
  const runs = yield* RunStore
  const run = yield* runs.get(id)
  const text = yield* Artifacts.read(runs.artifactsDir(run.id), name)
  if (Option.isNone(text)) return Responses.error(404, `run \`${run.id}\` has no artifact \`${name}\``)
  return HttpServerResponse.text(text.value, {
    contentType: "text/plain; charset=utf-8",
    headers: { ...PANEL_HEADERS, "cache-control": "no-store" }
  })
  // display: the request's failure becomes its HTTP response
}).pipe(Effect.catchAll(storeFailure))

/** `POST /api/runs/:id/stop`: `magi run stop`, from the run's page; 409 with the reason when there is nothing to stop. */
const stop = Effect.gen(function* () {
  const id = (yield* HttpRouter.params)["id"] ?? ""
  const said = yield* stopRun(id)
  return Responses.json({ said, run: blind(yield* (yield* RunStore).get(id)) })
}).pipe(
  Effect.catchTag("RunNotStopped", (e) => Effect.succeed(Responses.error(409, e.message))),
  // display: the request's failure becomes its HTTP response
  Effect.catchAll(storeFailure)
)

export const router = HttpRouter.empty.pipe(
  HttpRouter.post("/api/runs/:id/stop", stop, { uninterruptible: true }),
  HttpRouter.get("/api/runs", list),
  HttpRouter.get("/api/hosts", hostList),
  HttpRouter.get("/api/runs/:id", detail),
  HttpRouter.get("/api/runs/:id/artifacts/:name", artifact),
  HttpRouter.head("/api/runs/:id/artifacts/:name", artifact)
)
