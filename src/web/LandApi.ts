/**
 * `POST /api/runs/:id/land`: the run page's Land button, `magi land ID`
 * from the phone. It answers 202 as soon as the landing is started in the
 * background (the same `LandDriver` the command drives, through
 * `Landings`, which drives one landing per run at a time); the page follows
 * the run's record for each step. A run that cannot land now is refused
 * with 409 and the reason, before anything is started. A write, so the
 * server's paired-device and cross-site guards stand in front of it as in
 * front of every other.
 */
import * as HttpRouter from "@effect/platform/HttpRouter"
import { Effect } from "effect"
import { blind } from "../graph/CompetitionView.js"
import { Landings } from "../land/Landings.js"
import * as Q from "../questions/Question.js"
import * as Responses from "./Responses.js"

const land = Effect.gen(function* () {
  const id = (yield* HttpRouter.params)["id"] ?? ""
  const { run, started } = yield* (yield* Landings).start(id)
  const said = started
    ? `Landing run ${Q.shortId(run.id)} in the background; each step shows here as it is recorded.`
    : `Run ${Q.shortId(run.id)} is landing already; each step shows here as it is recorded.`
  return Responses.json({ said, started, run: blind(run) }, 202)
}).pipe(
  Effect.catchTags({
    LandRefused: (e) => Effect.succeed(Responses.error(409, e.message)),
    RecordNotFound: (e) => Effect.succeed(Responses.error(404, e.message))
  }),
  // display: the request's failure becomes its HTTP response
  Effect.catchAll((e) => Effect.succeed(Responses.error(500, e.message)))
)

export const router = HttpRouter.empty.pipe(HttpRouter.post("/api/runs/:id/land", land, { uninterruptible: true }))
