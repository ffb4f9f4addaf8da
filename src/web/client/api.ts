/** The page's side of magi's HTTP API. */
import type { Notice as WaiterNotice } from "../../daemon/Notices.js"
import type { QuestionView } from "../Snapshot.js"
import type { RunDetail, RunListEntry } from "../RunsApi.js"

export type { QuestionView, RunDetail, RunListEntry, WaiterNotice }

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

export const listQuestions = async (): Promise<ReadonlyArray<QuestionView>> => {
  const response = await fetch("/api/questions", { cache: "no-store" })
  if (!response.ok) throw await errorOf(response)
  return (await response.json()) as ReadonlyArray<QuestionView>
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

/** The newest runs, newest first. */
export const listRuns = (limit = 50) => getJson<ReadonlyArray<RunListEntry>>(`/api/runs?limit=${limit}`)

/** One run with its seats, task, questions, artifacts and last output. */
export const getRun = (id: string) => getJson<RunDetail>(`/api/runs/${encodeURIComponent(id)}`)

export const artifactUrl = (run: string, name: string) =>
  `/api/runs/${encodeURIComponent(run)}/artifacts/${encodeURIComponent(name)}`

const post = async (url: string, body: unknown): Promise<QuestionView> => {
  const response = await fetch(url, {
    method: "POST",
    // JSON is also what lets the server tell this page from a forged form.
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  if (!response.ok) throw await errorOf(response)
  return (await response.json()) as QuestionView
}

export const answer = (id: string, given: { choice: string } | { text: string }) => post(path(id, "answer"), given)

export const say = (id: string, body: string) => post(path(id, "say"), { body })

export const panelUrl = (id: string) => path(id, "panel")

/** Whether the panel can be shown, checked before the frame is drawn. */
export const panelStatus = async (id: string): Promise<number> => {
  try {
    return (await fetch(panelUrl(id), { method: "HEAD", cache: "no-store" })).status
  } catch {
    return 0
  }
}
