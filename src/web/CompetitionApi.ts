/**
 * The owner's pick from the run's page: `POST /api/runs/:id/pick`
 * `{"label": "B"}` is `magi pick`, through the same `CompetitionDriver.pick`
 * (a viable candidate only, not a folded loser), under every write guard
 * the other routes keep (JSON only, same origin, a paired device).
 *
 * The id must be the run's whole id: a prefix unique today may name another
 * run tomorrow, and a tap must pick in exactly the run the owner read.
 */
import * as HttpRouter from "@effect/platform/HttpRouter"
import { Effect, Schema } from "effect"
import { CompetitionDriver } from "../graph/CompetitionDriver.js"
import { blind } from "../graph/CompetitionView.js"
import * as Q from "../questions/Question.js"
import { RunStore } from "../runs/Runs.js"
import { bodyAs } from "./Api.js"
import * as Responses from "./Responses.js"

const PickBody = Schema.Struct({ label: Schema.String })

const pick = Effect.gen(function* () {
  const id = (yield* HttpRouter.params)["id"] ?? ""
  const body = yield* bodyAs(PickBody, '{"label": "B"}')
  const run = yield* (yield* RunStore).get(id)
  if (run.id !== id) return Responses.error(404, `no run has the whole id \`${id}\`: a pick names a run by its whole id`)
  if (run.competition === undefined) return Responses.error(409, `run ${Q.shortId(run.id)} is not a competition: it has one candidate`)
  if (run.competition.step !== "elected")
    return Responses.error(409, `run ${Q.shortId(run.id)} has not elected a winner yet (it is at ${run.competition.step}); pick once it has`)
  const after = yield* (yield* CompetitionDriver).pick(run.id, body.label)
  return Responses.json({ picked: after.competition?.winner ?? null, run: blind(after) })
}).pipe(
  Effect.catchTags({
    BadBody: (e) => Effect.succeed(Responses.error(400, e.message)),
    BodyTooLarge: (e) => Effect.succeed(Responses.error(413, e.message)),
    RecordNotFound: (e) => Effect.succeed(Responses.error(404, e.message)),
    PickRefused: (e) => Effect.succeed(Responses.error(409, e.message))
  }),
  // display: the request's failure becomes its HTTP response
  Effect.catchAll((e) => Effect.succeed(Responses.error(500, e.message)))
)

export const router = HttpRouter.empty.pipe(HttpRouter.post("/api/runs/:id/pick", pick, { uninterruptible: true }))
