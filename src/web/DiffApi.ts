/**
 * `GET /api/runs/:id/diff`: a run's diff against its base, or one
 * competition candidate's (`?candidate=A`), for the phone. The first page
 * carries the file list with its counts; every page carries up to `limit`
 * lines of the patch from `from`, and where the next starts.
 *
 * Everything in the URL is untrusted: the run is looked up in the store by
 * id, the candidate by its label in that run's record, and git is handed only
 * the record's own commit and branch (`runs/RunDiff.ts` checks them again).
 */
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Effect } from "effect"
import * as RunDiff from "../runs/RunDiff.js"
import { RunStore } from "../runs/Runs.js"
import * as Responses from "./Responses.js"

/** One page of a diff, as the API sends it. */
export interface DiffResponse {
  readonly run: string
  /** The candidate's label, or null for the run's own branch. */
  readonly candidate: string | null
  readonly base: string
  readonly base_commit: string
  readonly branch: string
  /** The files with their counts: on the first page (`from` 0) only, else null. */
  readonly files: ReadonlyArray<RunDiff.DiffFile> | null
  readonly lines: ReadonlyArray<string>
  readonly from: number
  readonly next: number | null
}

/** `?from=` and `?limit=` as whole numbers in range, else the words saying what is wanted. */
export const parsePaging = (from: string | null, limit: string | null): { from: number; limit: number } | string => {
  const whole = (raw: string | null, fallback: number) => (raw === null ? fallback : /^\d{1,9}$/.test(raw) ? Number(raw) : NaN)
  const f = whole(from, 0)
  const l = whole(limit, RunDiff.PAGE_LINES)
  if (!Number.isInteger(f)) return `from must be a whole number of lines, not \`${from}\``
  if (!Number.isInteger(l) || l < 1 || l > RunDiff.MAX_PAGE_LINES) return `limit must be a whole number from 1 to ${RunDiff.MAX_PAGE_LINES}, not \`${limit}\``
  return { from: f, limit: l }
}

const diff = Effect.gen(function* () {
  const id = (yield* HttpRouter.params)["id"] ?? ""
  const request = yield* HttpServerRequest.HttpServerRequest
  const params = new URL(request.url, "http://magi").searchParams
  const paging = parsePaging(params.get("from"), params.get("limit"))
  if (typeof paging === "string") return Responses.error(400, paging)
  const label = params.get("candidate")
  if (label !== null && !/^[A-Za-z]{1,3}$/.test(label)) return Responses.error(400, "candidate must be a candidate's label (A, B, …)")
  const run = yield* (yield* RunStore).get(id)
  if (run.removed_at !== undefined) return Responses.error(410, `run ${run.id} was removed (magi run rm): its branch is gone`)
  const candidate = label === null ? undefined : run.competition?.candidates.find((c) => c.label === label.toUpperCase())
  if (label !== null && candidate === undefined) return Responses.error(404, `run ${run.id} has no candidate ${label.toUpperCase()}`)
  const branch = candidate?.branch ?? run.branch
  const files = paging.from === 0 ? yield* RunDiff.files(run.repo, run.base_commit, branch) : null
  const page = yield* RunDiff.page(run.repo, run.base_commit, branch, paging.from, paging.limit)
  return Responses.json(
    {
      run: run.id,
      candidate: candidate?.label ?? null,
      base: run.base,
      base_commit: run.base_commit,
      branch,
      files,
      ...page
    } satisfies DiffResponse
  )
}).pipe(
  Effect.catchTags({
    RecordNotFound: (e) => Effect.succeed(Responses.error(404, e.message)),
    DiffUnreadable: (e) => Effect.succeed(Responses.error(409, e.message))
  }),
  // display: the request's failure becomes its HTTP response
  Effect.catchAll((e) => Effect.succeed(Responses.error(500, e.message)))
)

export const router = HttpRouter.empty.pipe(HttpRouter.get("/api/runs/:id/diff", diff))
