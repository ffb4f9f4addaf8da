/**
 * The page's service worker (`/sw.js`): what runs on the phone when a push
 * arrives with the page closed. It shows the question as a notification
 * (its text as text: a notification has no markup), with a button per
 * choice when the push carries capability tokens (`questions/WebPush.ts`'s
 * `Payload`); a button POSTs its token to `/api/answer-by-token` on this
 * origin, the route ntfy's buttons reach, and the notification then says
 * what came of it; a tap elsewhere opens the question's card.
 *
 * Plain script, not a module: every browser that has push runs classic
 * service workers. `handleClick` is a top-level function so a test can call
 * it with a notification the browser really showed (headless Chromium has
 * no notification to click).
 */
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { ANSWER_BY_TOKEN_PATH } from "../questions/Ntfy.js"

export const SERVICE_WORKER_PATH = "/sw.js"

export const SCRIPT = `"use strict"
// magi's service worker: shows pushed questions, answers from their buttons.
const ANSWER_PATH = ${JSON.stringify(ANSWER_BY_TOKEN_PATH)}

self.addEventListener("install", () => self.skipWaiting())
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()))

const cardUrl = (question) => new URL("/#/questions/" + encodeURIComponent(question), self.location.origin).href

function showQuestion(data) {
  const actions = Array.isArray(data.actions) ? data.actions.slice(0, 2) : []
  return self.registration.showNotification(String(data.title || "magi"), {
    body: String(data.body || ""),
    tag: String(data.question || "magi"),
    renotify: true,
    requireInteraction: actions.length > 0,
    icon: "/icon-192.png",
    data: { question: String(data.question || ""), tokens: actions.map((a) => String(a.token)) },
    actions: actions.map((a, i) => ({ action: String(i), title: String(a.title) }))
  })
}

self.addEventListener("push", (event) => {
  let data
  try {
    data = event.data ? event.data.json() : {}
  } catch {
    data = { title: "magi", body: event.data ? event.data.text() : "" }
  }
  event.waitUntil(showQuestion(data))
})

/** The token's answer, then a notification saying how it went (the same tag: it replaces the question's). */
async function answer(question, token) {
  let text
  try {
    const response = await fetch(new URL(ANSWER_PATH, self.location.origin).href, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ token }),
      credentials: "omit",
      cache: "no-store"
    })
    const body = await response.json().catch(() => ({}))
    text = response.ok ? String(body.message || "answered") : String(body.error || "not answered: " + response.status)
  } catch (e) {
    text = "magi did not answer; open the page to answer (" + e + ")"
  }
  await self.registration.showNotification("magi", { body: text, tag: question || "magi", data: { question, tokens: [] } })
  return text
}

/** Open the question's card: in a window of the page already open (brought forward), else in a new one. */
async function openCard(question) {
  const url = question ? cardUrl(question) : new URL("/", self.location.origin).href
  const windows = await self.clients.matchAll({ type: "window", includeUncontrolled: true })
  for (const client of windows) {
    if (new URL(client.url).origin !== self.location.origin) continue
    const moved = "navigate" in client ? await client.navigate(url).catch(() => null) : null
    const front = moved || client
    if ("focus" in front) await front.focus().catch(() => undefined)
    if (moved) return url
  }
  await self.clients.openWindow(url)
  return url
}

/** A press: a choice's button answers by its token; anywhere else opens the card. */
async function handleClick(notification, action) {
  notification.close()
  const data = notification.data || {}
  const tokens = Array.isArray(data.tokens) ? data.tokens : []
  const index = action === "" || action === undefined ? -1 : Number(action)
  if (index >= 0 && typeof tokens[index] === "string") return answer(data.question, tokens[index])
  return openCard(data.question)
}

self.addEventListener("notificationclick", (event) => event.waitUntil(handleClick(event.notification, event.action)))
`

const HEADERS = {
  // The worker's own fetches are to this origin only.
  "content-security-policy": "default-src 'none'; connect-src 'self'",
  "x-content-type-options": "nosniff",
  // A new build's worker is picked up at the next visit.
  "cache-control": "no-cache"
}

export const router = HttpRouter.empty.pipe(
  HttpRouter.get(SERVICE_WORKER_PATH, HttpServerResponse.text(SCRIPT, { contentType: "text/javascript; charset=utf-8", headers: HEADERS }))
)
