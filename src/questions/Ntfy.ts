/**
 * ntfy, built in: a question published to the owner's topic through ntfy's
 * JSON API, with buttons that answer it from the lock screen.
 *
 * The message is built here as data (`message`, pure, tested as a table) and
 * sent by `publish` over HTTP. Agent-written text (the summary, the choices)
 * only ever travels as JSON string values, never in a header or a URL, so
 * it cannot add a header, an action or a topic of its own.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { Effect } from "effect"
import type { NtfySettings } from "../platform/MagiConfig.js"
import * as Q from "./Question.js"

/** ntfy shows at most three action buttons. */
export const MAX_ACTIONS = 3

/** A button's label, cut so the phone shows it whole; the message lists each choice in full. */
export const LABEL_MAX_CHARS = 40

/** ntfy refuses a message over 4096 bytes; the summary and choices are cut well below it. */
const MESSAGE_MAX_CHARS = 3000

/** High: a question holds an agent up. ntfy's scale is 1 (min) to 5 (max), 3 the default. */
export const QUESTION_PRIORITY = 4

/** Where magi web takes an answer by capability link. */
export const ANSWER_BY_TOKEN_PATH = "/api/answer-by-token"

export interface HttpAction {
  readonly action: "http"
  readonly label: string
  readonly url: string
  readonly method: "POST"
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  readonly clear: true
}

export interface ViewAction {
  readonly action: "view"
  readonly label: string
  readonly url: string
  readonly clear: true
}

/** The JSON ntfy's publish endpoint takes. */
export interface Message {
  readonly topic: string
  readonly title: string
  readonly message: string
  readonly priority: number
  readonly click?: string
  readonly actions?: ReadonlyArray<HttpAction | ViewAction>
}

const cut = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max - 1)}…`)

/** The page's own view of one question: the card the notification opens. */
/**
 * An ntfy topic is its own password: anyone who knows it can read every
 * notification and press its buttons. What magi prints (doctor, `magi notify
 * --test`, the channel list) shows only its first characters and its length,
 * enough to tell which topic it is.
 */
export const maskedTopic = (topic: string): string => topic.length <= 4 ? `<${topic.length} characters>` : `${topic.slice(0, 3)}… (${topic.length} characters)`

export const cardUrl = (base: string, id: string) => `${base.replace(/\/+$/, "")}/#/questions/${encodeURIComponent(id)}`

export interface MessageInput {
  readonly question: Q.Question
  readonly topic: string
  /** The address the phone reaches `magi web` at; "" when unknown (then no link, no buttons). */
  readonly base: string
  /** `choices[i]`'s capability token, when buttons may answer; none for a notice. */
  readonly tokens: ReadonlyArray<string> | undefined
  /** A notice about a question rather than the question itself. */
  readonly notice: boolean
}

/**
 * The publication for a question: its summary, its choices in full, a
 * click to its card, and a button per choice when there are at most three
 * (each POSTing its own token to magi web), else one "Open" button.
 */
export const message = (input: MessageInput): Message => {
  const q = input.question
  const choices = q.choices.length === 0 ? "" : `\n\n${q.choices.map((c, i) => `${i + 1}. ${c}`).join("\n")}`
  const body = cut(`${q.summary}${input.notice ? "" : choices}`, MESSAGE_MAX_CHARS)
  const title = cut(input.notice ? `magi notice · ${q.run}` : `magi asks · ${q.run === "" ? Q.shortId(q.id) : q.run}`, 120)
  const base: Message = { topic: input.topic, title, message: body, priority: input.notice ? 3 : QUESTION_PRIORITY }
  if (input.base === "") return base
  const click = cardUrl(input.base, q.id)
  const tokens = input.tokens
  const answering = !input.notice && Q.isOpen(q) && tokens !== undefined && q.choices.length > 0 && q.choices.length <= MAX_ACTIONS
  const actions: ReadonlyArray<HttpAction | ViewAction> = answering
    ? q.choices.map((choice, i) => ({
      action: "http",
      label: cut(choice, LABEL_MAX_CHARS),
      url: `${input.base.replace(/\/+$/, "")}${ANSWER_BY_TOKEN_PATH}`,
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ token: tokens[i] }),
      clear: true
    }))
    : [{ action: "view", label: "Open", url: click, clear: true }]
  return { ...base, click, actions }
}

/**
 * Publish `msg` to `settings.server`, with `Authorization: Bearer` from the
 * variable `token_env` names when set. Fails with the server's reason.
 */
export const publish = Effect.fn("Ntfy.publish")(function* (settings: NtfySettings, msg: Message, token: string | undefined) {
  const client = yield* HttpClient.HttpClient
  let request = HttpClientRequest.post(settings.server.replace(/\/+$/, "") + "/").pipe(HttpClientRequest.bodyUnsafeJson(msg))
  if (token !== undefined && token !== "") request = HttpClientRequest.bearerToken(request, token)
  const response = yield* client.execute(request)
  if (response.status < 200 || response.status >= 300) {
    // display: the body of a failed response, quoted in its error
    const text = yield* response.text.pipe(Effect.orElseSucceed(() => ""))
    return yield* Effect.fail(`ntfy at ${settings.server} answered ${response.status}: ${cut(text.trim(), 200) || "no reason given"}`)
  }
})
