/** The page's side of magi's HTTP API. */
import type { Notice as WaiterNotice } from "../../daemon/Notices.js"
import type { QuestionList, QuestionView } from "../Snapshot.js"
import type { RunDetail, RunListEntry } from "../RunsApi.js"
import type { DiffResponse } from "../DiffApi.js"
import type { DiffFile } from "../../runs/RunDiff.js"
import type { Blocker, TaskView } from "../QueueFeed.js"
import type { DecisionRecord } from "../../daemon/ConductorLog.js"
import type { HostView } from "../../platform/Hosts.js"

/** A page of `GET /api/questions/history`. */
export interface HistoryPage {
  readonly history: ReadonlyArray<QuestionView>
  readonly next: string | null
}

export type { HostView }
export type { DiffFile, DiffResponse }
export type { Blocker, DecisionRecord, QuestionList, QuestionView, RunDetail, RunListEntry, TaskView, WaiterNotice }

/** A refusal from the server, with its status and the message it gave. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string
  ) {
    super(message)
  }
  /** Someone else (the terminal, another tab) settled the question first. */
  get settled(): boolean {
    return this.status === 409
  }
}

const path = (id: string, rest: string) => `/api/questions/${encodeURIComponent(id)}/${rest}`

const errorOf = async (response: Response): Promise<ApiError> => {
  let message = `${response.status} ${response.statusText}`
  try {
    const body = (await response.json()) as { error?: unknown }
    if (typeof body.error === "string") message = body.error
  } catch {
    // Not JSON (a proxy's error page): the status line is all there is.
  }
  return new ApiError(response.status, message)
}

/**
 * Every open question, the first page of settled history, and the cursor for
 * the page after it, with the list's tag; `unchanged` when `tag` (the last
 * list's) still names it: the server then sends nothing.
 */
export const listQuestions = async (tag?: string): Promise<{ readonly list: QuestionList; readonly tag: string | undefined } | "unchanged"> => {
  const response = await fetch("/api/questions", { cache: "no-store", headers: tag === undefined ? {} : { "if-none-match": tag } })
  if (response.status === 304) return "unchanged"
  if (!response.ok) throw await errorOf(response)
  return { list: (await response.json()) as QuestionList, tag: response.headers.get("etag") ?? undefined }
}

/** One page of settled history older than `before` (a cursor from the last page), newest first; `q`: every word must match. */
export const listHistory = async (
  options: { readonly before?: string | null | undefined; readonly q?: string | undefined; readonly limit?: number | undefined }
): Promise<HistoryPage> => {
  const params = new URLSearchParams()
  if (options.before !== undefined && options.before !== null) params.set("before", options.before)
  if (options.q !== undefined && options.q.trim() !== "") params.set("q", options.q)
  if (options.limit !== undefined) params.set("limit", String(options.limit))
  const response = await fetch(`/api/questions/history?${params}`, { cache: "no-store" })
  if (!response.ok) throw await errorOf(response)
  return (await response.json()) as HistoryPage
}

/** One question by its whole id, open or settled, however old: what a link to it opens. */
export const getQuestion = async (id: string): Promise<QuestionView> => {
  const response = await fetch(`/api/questions/${encodeURIComponent(id)}`, { cache: "no-store" })
  if (!response.ok) throw await errorOf(response)
  return (await response.json()) as QuestionView
}

/** What the waiter could not deliver, newest first. */
export const listNotices = async (): Promise<ReadonlyArray<WaiterNotice>> => {
  const response = await fetch("/api/notices", { cache: "no-store" })
  if (!response.ok) throw await errorOf(response)
  return (await response.json()) as ReadonlyArray<WaiterNotice>
}

const getJson = async <A>(url: string): Promise<A> => {
  const response = await fetch(url, { cache: "no-store" })
  if (!response.ok) throw await errorOf(response)
  return (await response.json()) as A
}

/** From `/api/health`, what the empty state says: whether a notification command is configured, and in which file to set one. */
export const health = () =>
  getJson<{ readonly notifications?: boolean; readonly notify_via?: ReadonlyArray<string>; readonly notify_config?: string }>("/api/health")

/** The newest runs, newest first; with `before`, the page of older ones after that run. */
export const listRuns = (limit = 50, before?: string) =>
  getJson<ReadonlyArray<RunListEntry>>(`/api/runs?limit=${limit}${before === undefined ? "" : `&before=${encodeURIComponent(before)}`}`)

/** The hosts sharing the store, online or when last seen. */
export const listHosts = () => getJson<ReadonlyArray<HostView>>("/api/hosts")

/** One run with its seats, task, questions, artifacts and last output. */
export const getRun = (id: string) => getJson<RunDetail>(`/api/runs/${encodeURIComponent(id)}`)

/** One page of a run's diff (or candidate `candidate`'s) from line `from`; the first page carries the file list. */
export const getDiff = (run: string, candidate: string | null, from: number) =>
  getJson<DiffResponse>(
    `/api/runs/${encodeURIComponent(run)}/diff?from=${from}${candidate === null ? "" : `&candidate=${encodeURIComponent(candidate)}`}`
  )

export const artifactUrl = (run: string, name: string) => `/api/runs/${encodeURIComponent(run)}/artifacts/${encodeURIComponent(name)}`

/**
 * Browsers refuse a keepalive request whose body is over 64 KiB; a longer
 * answer (up to the 64 KiB a turn may be, as JSON) goes as a normal request.
 */
const KEEPALIVE_MAX_BYTES = 60 * 1024

const send = async <A>(url: string, body: unknown, method = "POST", keepalive = false): Promise<A> => {
  const json = JSON.stringify(body)
  const response = await fetch(url, {
    method,
    // Outlives the page: a decision sent as the tab closes still arrives.
    keepalive: keepalive && new Blob([json]).size <= KEEPALIVE_MAX_BYTES,
    // JSON is also what lets the server tell this page from a forged form.
    headers: { "content-type": "application/json" },
    body: json
  })
  if (!response.ok) throw await errorOf(response)
  return (await response.json()) as A
}

const post = (url: string, body: unknown) => send<QuestionView>(url, body)

/** The conductor's recorded decisions, newest first. */
export const listDecisions = () => getJson<{ readonly decisions: ReadonlyArray<DecisionRecord> }>("/api/conduct").then((r) => r.decisions)

/** Every task: open first (priority, then newest), then history. */
export const listQueue = () => getJson<ReadonlyArray<TaskView>>("/api/queue")

/** Done tasks moved to the month shelves, a page at a time, newest first; `next` is the `before` of the page after. */
export const queueHistory = (before?: string, limit?: number) => {
  const query = new URLSearchParams()
  if (before !== undefined) query.set("before", before)
  if (limit !== undefined) query.set("limit", String(limit))
  const q = query.toString()
  return getJson<{ readonly tasks: ReadonlyArray<TaskView>; readonly next: string | null }>(`/api/queue/history${q === "" ? "" : `?${q}`}`)
}

/** File a task; the repository defaults to the one magi web runs in. */
export const fileTask = (body: { instruction: string; title?: string; priority?: number; repo?: string }) => send<TaskView>("/api/queue", body)

export type TaskMove = "hold" | "release" | "priority" | "edit" | "done"

export const moveTask = (id: string, move: TaskMove, body: unknown = {}, keepalive = false) =>
  send<TaskView>(`/api/queue/${encodeURIComponent(id)}/${move}`, body, "POST", keepalive)

export const removeTask = (id: string) => send<TaskView>(`/api/queue/${encodeURIComponent(id)}`, {}, "DELETE")

/**
 * Where a task can go: the repositories by name (`[repos]` of this host and
 * every registered one), the repository magi web runs in, and every one this
 * home has used.
 */
export const listRepos = () =>
  getJson<{
    /** The default repository's folder, or null: the owner picks (`hint` says how to name one). */
    current: string | null
    current_name?: string
    hint?: string
    repos: ReadonlyArray<string>
    names?: ReadonlyArray<{ readonly name: string; readonly here: boolean; readonly hosts: ReadonlyArray<string> }>
  }>("/api/repos")

export const answer = (id: string, given: { readonly choice: string } | { readonly text: string }, options: { readonly keepalive?: boolean } = {}) =>
  send<QuestionView>(path(id, "answer"), given, "POST", options.keepalive ?? false)

export const say = (id: string, body: string) => post(path(id, "say"), { body })

/** Withdraw the question: nobody will answer it; the asker is told so, with `reason` when given. */
export const withdraw = (id: string, reason: string) => post(path(id, "withdraw"), reason.trim() === "" ? {} : { reason })

/** A word to a run's seat (`magi say`): when it reaches the agent, in a line, and the run as it is now. */
export const sayToSeat = (id: string, text: string, seat?: string, images: ReadonlyArray<string> = []) =>
  send<{ readonly said: string; readonly run: RunDetail }>(`/api/runs/${encodeURIComponent(id)}/say`, {
    text,
    ...(seat === undefined ? {} : { seat }),
    ...(images.length === 0 ? {} : { images })
  })
/** Upload an image as an asset of the run: its bytes as they are; the server sniffs its type. */
export const uploadRunImage = async (id: string, file: Blob): Promise<{ readonly name: string; readonly url: string }> => {
  const response = await fetch(`/api/runs/${encodeURIComponent(id)}/images`, {
    method: "POST",
    headers: { "content-type": "application/octet-stream" },
    body: file
  })
  if (!response.ok) throw await errorOf(response)
  return (await response.json()) as { readonly name: string; readonly url: string }
}
/** Where a run's image is served. */
export const runImageUrl = (id: string, name: string) => `/api/runs/${encodeURIComponent(id)}/images/${encodeURIComponent(name)}`
/** Change a word still queued. */
export const editSaid = (id: string, n: number, text: string) =>
  send<{ readonly said: string; readonly run: RunDetail }>(`/api/runs/${encodeURIComponent(id)}/say/${n}`, { text })
/** Take back a word still queued. */
export const cancelSaid = (id: string, n: number) =>
  send<{ readonly said: string; readonly run: RunDetail }>(`/api/runs/${encodeURIComponent(id)}/say/${n}/cancel`, {})

/** Stop the run's turn (`magi run stop`): what happened, in a line, and the run as it is now. */
export const stopRun = (id: string) => send<{ readonly said: string; readonly run: RunDetail }>(`/api/runs/${encodeURIComponent(id)}/stop`, {})

/** `magi land ID` from the page: 202 once the landing runs in the background; a run that cannot land is refused with the reason. */
export const landRun = (id: string) =>
  send<{ readonly said: string; readonly started: boolean; readonly run: RunDetail }>(`/api/runs/${encodeURIComponent(id)}/land`, {})

/** The owner's pick of a competition's candidate (`magi pick`): the run as it is now. */
export const pickCandidate = (run: string, label: string) =>
  send<{ readonly picked: string | null; readonly run: RunDetail }>(`/api/runs/${encodeURIComponent(run)}/pick`, { label })

/** The panel's folder: its HTML at `…/panel/`, its files beside it, so `<img src="chart.png">` resolves. */
export const panelUrl = (id: string) => path(id, "panel/")

/** Whether the panel can be shown, checked before the frame is drawn. */
export const panelStatus = async (id: string): Promise<number> => {
  try {
    return (await fetch(panelUrl(id), { method: "HEAD", cache: "no-store" })).status
  } catch {
    return 0
  }
}

/** A device paired with this magi, as `GET /api/devices` lists it. */
export interface PairedDevice {
  readonly id: string
  readonly name: string
  readonly paired_at: string
  readonly last_used_at: string
  /** The device this page is open on. */
  readonly this_device: boolean
}

export const listDevices = () => getJson<{ readonly devices: ReadonlyArray<PairedDevice> }>("/api/devices").then((r) => r.devices)

export const revokeDevice = (id: string) => send<{ readonly revoked: string }>(`/api/devices/${encodeURIComponent(id)}`, {}, "DELETE")

/** A rule "Always allow" saved, as `GET /api/approvals/rules` lists it (oldest first, as `magi approvals list` numbers them). */
export interface SavedApprovalRule {
  readonly id: string
  /** e.g. `Bash(git push:*)`. */
  readonly rule: string
  /** The repository it applies in. */
  readonly repo: string
  readonly added_at: string
  /** The approval question whose "Always allow" saved it. */
  readonly question: string
}

export const listApprovalRules = () => getJson<{ readonly rules: ReadonlyArray<SavedApprovalRule> }>("/api/approvals/rules").then((r) => r.rules)

export const removeApprovalRule = (id: string) => send<{ readonly removed: SavedApprovalRule }>(`/api/approvals/rules/${encodeURIComponent(id)}`, {}, "DELETE")

/** A phone's Web Push subscription, as `GET /api/push` lists it. */
export interface PushSubscriptionView {
  readonly id: string
  /** The paired device's name; null on a page that needs no pairing. */
  readonly device: string | null
  readonly this_device: boolean
  /** The push service's host (the endpoint itself is never shown). */
  readonly service: string
  readonly created_at: string
}

export type PushStatus =
  | { readonly offered: true; readonly public_key: string; readonly subscriptions: ReadonlyArray<PushSubscriptionView> }
  | { readonly offered: false; readonly reason: string; readonly subscriptions: ReadonlyArray<PushSubscriptionView> }

export const pushStatus = () => getJson<PushStatus>("/api/push")

export const keepPushSubscription = (subscription: { readonly endpoint: string; readonly keys: { readonly p256dh: string; readonly auth: string } }) =>
  send<{ readonly id: string }>("/api/push/subscriptions", subscription)

export const stopPushSubscription = (id: string) => send<{ readonly stopped: string }>(`/api/push/subscriptions/${encodeURIComponent(id)}`, {}, "DELETE")
