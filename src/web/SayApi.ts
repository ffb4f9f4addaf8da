/**
 * The run page's box (`magi say` from the phone): a word to a seat, and a
 * queued word edited or cancelled. Every route is a write, so it passes the
 * server's paired-device and cross-site guards like any other; the run id,
 * the seat and the word's number come from the client and are checked by
 * `runs/SayToSeat.ts` before anything is read or written.
 */
import * as HttpRouter from "@effect/platform/HttpRouter"
import { Effect, Option, Schema } from "effect"
import { blind } from "../graph/CompetitionView.js"
import { RunStore } from "../runs/Runs.js"
import * as SayToSeat from "../runs/SayToSeat.js"
import { bodyAs } from "./Api.js"
import * as Responses from "./Responses.js"

const SayBody = Schema.Struct({ text: Schema.String, seat: Schema.optional(Schema.String), images: Schema.optional(Schema.Array(Schema.String)) })
const EditBody = Schema.Struct({ text: Schema.String })

const answered = <E extends { readonly _tag: string; readonly message: string }, R>(outcome: Effect.Effect<SayToSeat.SayOutcome, E, R>) =>
  Effect.gen(function* () {
    const done = yield* outcome
    return Responses.json({ said: done.line, word: done.word, run: blind(yield* (yield* RunStore).get(done.run)) })
  }).pipe(
    // display: the route answers every failure in its own words
    Effect.catchAll((e: { readonly _tag: string; readonly message: string }) =>
      Effect.succeed(
        e._tag === "BadBody"
          ? Responses.error(400, e.message)
          : e._tag === "BodyTooLarge"
          ? Responses.error(413, e.message)
          : e._tag === "SayRefused"
          ? Responses.error(409, e.message)
          : e._tag === "RecordNotFound"
          ? Responses.error(404, e.message)
          : Responses.error(500, e.message)
      )
    )
  )

const params = HttpRouter.params
/** A word's number from the path: digits only, else nothing matches. */
const wordNumber = (raw: string | undefined) => (raw !== undefined && /^[1-9][0-9]{0,5}$/.test(raw) ? Number(raw) : -1)

const say = Effect.gen(function* () {
  const id = (yield* params)["id"] ?? ""
  const body = yield* bodyAs(SayBody, '{"text": "…", "seat": "impl"}')
  return yield* SayToSeat.say(id, Option.fromNullable(body.seat), body.text, body.images ?? [])
})

const edit = Effect.gen(function* () {
  const p = yield* params
  const body = yield* bodyAs(EditBody, '{"text": "…"}')
  return yield* SayToSeat.change(p["id"] ?? "", wordNumber(p["n"]), body.text)
})

const cancel = Effect.gen(function* () {
  const p = yield* params
  return yield* SayToSeat.change(p["id"] ?? "", wordNumber(p["n"]), undefined)
})

export const router = HttpRouter.empty.pipe(
  HttpRouter.post("/api/runs/:id/say", answered(say), { uninterruptible: true }),
  HttpRouter.post("/api/runs/:id/say/:n", answered(edit), { uninterruptible: true }),
  HttpRouter.post("/api/runs/:id/say/:n/cancel", answered(cancel), { uninterruptible: true })
)
