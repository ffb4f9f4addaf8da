/**
 * The shapes every response of the API takes, so a refusal reads the same
 * whichever layer refused: JSON `{"error": "…"}` carrying the message the store
 * or the transition gave, because the owner reads it on the phone.
 */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"

/**
 * API answers describe the store at this instant; a phone that caches one
 * shows a question as open after it was answered.
 */
const NO_STORE = { "cache-control": "no-store" }

export const json = (body: unknown, status = 200) =>
  HttpServerResponse.text(JSON.stringify(body), {
    status,
    contentType: "application/json; charset=utf-8",
    headers: NO_STORE
  })

/** A JSON body already serialised (the cached question list). */
export const jsonText = (body: string, status = 200) =>
  HttpServerResponse.text(body, { status, contentType: "application/json; charset=utf-8", headers: NO_STORE })

export const error = (status: number, message: string) => json({ error: message }, status)
