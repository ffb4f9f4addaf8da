/**
 * The forge port: the few things the land loop asks of wherever pull
 * requests live. One `Context.Tag` so another forge (GitLab, Gitea) is one
 * more layer; `GitHubForge.ts` is the first. Data as `Schema` so an
 * observation can be written to the run record and read back on resume.
 */
import { Context, Schema } from "effect"
import type { Effect } from "effect"

/** owner/name of the repository on the forge, read from the remote's URL (`ForgeRemote.ts`). */
export const ForgeRepo = Schema.Struct({ owner: Schema.String, name: Schema.String })
export type ForgeRepo = typeof ForgeRepo.Type

export const PullRequestState = Schema.Literal("open", "merged", "closed")
export type PullRequestState = typeof PullRequestState.Type

/** `unknown`: the forge is still computing it (GitHub's `mergeable: null`). */
export const Mergeability = Schema.Literal("mergeable", "conflicting", "unknown")
export type Mergeability = typeof Mergeability.Type

export const PullRequest = Schema.Struct({
  number: Schema.Number,
  url: Schema.String,
  head: Schema.String,
  base: Schema.String,
  headSha: Schema.String,
  state: PullRequestState
})
export type PullRequest = typeof PullRequest.Type

/** One check run or commit status, reduced to what decides: still going, passed, or failed. */
export const CheckOutcome = Schema.Literal("pending", "success", "failure")
export type CheckOutcome = typeof CheckOutcome.Type

export const Check = Schema.Struct({
  name: Schema.String,
  source: Schema.Literal("check_run", "status"),
  outcome: CheckOutcome,
  /** The forge's own word (`timed_out`, `action_required`, `error`...), shown to the owner. */
  conclusion: Schema.String,
  /** The Actions job whose log can be fetched, when there is one. */
  jobId: Schema.NullOr(Schema.Number),
  url: Schema.String
})
export type Check = typeof Check.Type

/** Checks read, or the reason they could not be: never merged on. */
export const Checks = Schema.Union(
  Schema.TaggedStruct("Read", { checks: Schema.Array(Check) }),
  Schema.TaggedStruct("Unreadable", { reason: Schema.String })
)
export type Checks = typeof Checks.Type

/** A review, an inline review comment, or a conversation comment on the PR. */
export const Remark = Schema.Struct({
  id: Schema.Number,
  kind: Schema.Literal("review", "review_comment", "issue_comment"),
  author: Schema.String,
  authorKind: Schema.Literal("bot", "human"),
  /** Written by magi itself (the token's own login, or magi's marker in the body). */
  mine: Schema.Boolean,
  /** A review's verdict (`CHANGES_REQUESTED`, `APPROVED`, `COMMENTED`); empty for comments. */
  verdict: Schema.String,
  body: Schema.String,
  /** An inline comment whose thread is over (outdated by a later push); always false for other kinds. */
  resolved: Schema.Boolean,
  path: Schema.NullOr(Schema.String)
})
export type Remark = typeof Remark.Type

/** One look at a pull request: everything `LandDecide.decide` needs. */
export const Observation = Schema.Struct({
  pr: PullRequest,
  mergeable: Mergeability,
  checks: Checks,
  remarks: Schema.Array(Remark)
})
export type Observation = typeof Observation.Type

export const JobLog = Schema.Struct({ name: Schema.String, jobId: Schema.Number, tail: Schema.String })
export type JobLog = typeof JobLog.Type

export const MergeMethod = Schema.Literal("merge", "squash", "rebase")
export type MergeMethod = typeof MergeMethod.Type

export const Merged = Schema.Struct({
  sha: Schema.String,
  /** The forge said the merge failed, yet the PR shows merged: it counts as merged. */
  afterRefusal: Schema.Boolean
})
export type Merged = typeof Merged.Type

/** What the token is and may do, for `magi doctor`. The token itself is never here. */
export const TokenGrant = Schema.Struct({
  /** `GH_TOKEN`, `GITHUB_TOKEN` or `gh auth token`. */
  source: Schema.String,
  login: Schema.String,
  /** Classic tokens list scopes; fine-grained tokens and Actions tokens send none (null). */
  scopes: Schema.NullOr(Schema.Array(Schema.String))
})
export type TokenGrant = typeof TokenGrant.Type

// ---- errors ----------------------------------------------------------------

/** No token anywhere magi looks. */
export class ForgeTokenMissing extends Schema.TaggedError<ForgeTokenMissing>()("ForgeTokenMissing", { tried: Schema.Array(Schema.String) }) {
  override get message() {
    return `no forge token: tried ${this.tried.join(", ")} — set GH_TOKEN, or run \`gh auth login\``
  }
}

/** 401/403 that is not a rate limit: which token was used and what it lacks. */
export class ForgeAuthError extends Schema.TaggedError<ForgeAuthError>()("ForgeAuthError", {
  operation: Schema.String,
  status: Schema.Number,
  source: Schema.String,
  scopes: Schema.NullOr(Schema.Array(Schema.String)),
  needed: Schema.Array(Schema.String)
}) {
  override get message() {
    const has = this.scopes === null ? "" : ` (it has ${this.scopes.length === 0 ? "no scopes" : this.scopes.join(", ")})`
    const missing = this.needed.filter((s) => this.scopes === null || !this.scopes.includes(s))
    const want = missing.length > 0 ? `; it needs the scope ${missing.join(" or ")}` : ""
    const what = this.status === 401 ? "was refused (401: bad or expired)" : "may not do this (403)"
    return `${this.operation}: the token from ${this.source} ${what}${has}${want}`
  }
}

/** The forge kept failing (5xx, timeouts, malformed JSON, rate limits) after the retries. */
export class ForgeUnavailable extends Schema.TaggedError<ForgeUnavailable>()("ForgeUnavailable", {
  operation: Schema.String,
  reason: Schema.String
}) {
  override get message() {
    return `${this.operation}: the forge is unavailable (${this.reason}); magi retried with backoff and will try again next time`
  }
}

/** What was asked for does not exist (a repository, a PR number, a job). */
export class ForgeNotFound extends Schema.TaggedError<ForgeNotFound>()("ForgeNotFound", { operation: Schema.String, what: Schema.String }) {
  override get message() {
    return `${this.operation}: ${this.what} not found on the forge (or the token may not see it)`
  }
}

/** The forge refused the merge: branch protection, required reviews or checks, a method not allowed. */
export class MergeRefused extends Schema.TaggedError<MergeRefused>()("MergeRefused", {
  number: Schema.Number,
  status: Schema.Number,
  reason: Schema.String
}) {
  override get message() {
    return `pull request #${this.number} was not merged: the forge refused (${this.status}: ${this.reason}) — branch protection or the repository's merge settings`
  }
}

/** The head moved since magi pushed (someone force-pushed): nothing is merged over it. */
export class HeadMoved extends Schema.TaggedError<HeadMoved>()("HeadMoved", {
  number: Schema.Number,
  expected: Schema.String,
  actual: Schema.String
}) {
  override get message() {
    return `pull request #${this.number} has head ${this.actual.slice(0, 12)}, not ${this.expected.slice(0, 12)} which magi pushed: held for the owner`
  }
}

/** The remote's URL names no repository on the configured forge. */
export class ForgeRemoteUnrecognized extends Schema.TaggedError<ForgeRemoteUnrecognized>()("ForgeRemoteUnrecognized", {
  url: Schema.String,
  host: Schema.String
}) {
  override get message() {
    return `the remote's URL ${this.url} is not a repository on ${this.host} — set [forge] api, or the remote's URL`
  }
}

export type ForgeError = ForgeTokenMissing | ForgeAuthError | ForgeUnavailable | ForgeNotFound

// ---- the port --------------------------------------------------------------

export interface OpenRequest {
  readonly head: string
  readonly base: string
  readonly title: string
  readonly body: string
}

export interface MergeRequest {
  readonly number: number
  readonly method: MergeMethod
  /** The commit subject; explicit so a squash never takes the forge's guess. */
  readonly subject: string
  readonly body: string
  /** The head magi pushed: the forge refuses if the PR's head is another. */
  readonly expectedHead: string
}

export interface ForgeApi {
  /** The open pull request from this head branch, so a restart never opens a second. */
  readonly findOpen: (repo: ForgeRepo, head: string) => Effect.Effect<PullRequest | null, ForgeError>
  readonly open: (repo: ForgeRepo, request: OpenRequest) => Effect.Effect<PullRequest, ForgeError>
  readonly observe: (repo: ForgeRepo, number: number) => Effect.Effect<Observation, ForgeError>
  /** The last `bytes` (4 KB) of each failing check's job log, at most `max` of them; a log that cannot be read is left out. */
  readonly failingLogs: (repo: ForgeRepo, checks: ReadonlyArray<Check>, max: number, bytes: number) => Effect.Effect<ReadonlyArray<JobLog>, ForgeError>
  readonly comment: (repo: ForgeRepo, number: number, body: string) => Effect.Effect<void, ForgeError>
  readonly merge: (repo: ForgeRepo, request: MergeRequest) => Effect.Effect<Merged, ForgeError | MergeRefused | HeadMoved>
  /** Who the token is and its scopes, for `magi doctor`. */
  readonly grant: Effect.Effect<TokenGrant, ForgeError>
}

export class Forge extends Context.Tag("magi/land/Forge")<Forge, ForgeApi>() {}

/** Put in every comment magi writes, so its own notes are never read back as review to fix. */
export const MARKER = "<!-- magi -->"
