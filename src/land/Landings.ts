/**
 * The daemon's side of landing: on each beat, a `ready` run whose merge
 * approval the owner has answered is landed in the background (a local
 * merge, or the pull request's loop going on to the merge), so an answer
 * given on the phone needs no `magi land` at a desk. One landing per run at
 * a time in this process; the record's steps make a second process's try
 * a no-op (the question found again, a merge recorded, never repeated).
 */
import { Effect, FiberSet, Option, Ref } from "effect"
import * as Q from "../questions/Question.js"
import { QuestionStore } from "../questions/QuestionStore.js"
import * as L from "../runs/Landing.js"
import { RunStore } from "../runs/Runs.js"
import { LandDriver } from "./LandDriver.js"

export class Landings extends Effect.Service<Landings>()("magi/Landings", {
  scoped: Effect.gen(function* () {
    const runs = yield* RunStore
    const questions = yield* QuestionStore
    const driver = yield* LandDriver
    const going = yield* Ref.make<ReadonlySet<string>>(new Set())
    const fibers = yield* FiberSet.make<void, never>()

    const answered = (id: string) => Effect.map(Effect.option(questions.read(id)), (q) => Option.isSome(q) && !Q.isOpen(q.value))

    /** Start the landing of every ready run whose approval has its answer; returns the ids started. */
    const tick = Effect.gen(function* () {
      // fallback: an unread list starts no landing this tick (no write); the next beat reads again
      const all = yield* runs.list.pipe(Effect.orElseSucceed(() => []))
      const started: Array<string> = []
      for (const run of all) {
        if (run.status !== "ready" || !L.waitsOnOwner(run.landing)) continue
        if ((yield* Ref.get(going)).has(run.id) || !(yield* answered(run.landing!.question!))) continue
        yield* Ref.update(going, (s) => new Set([...s, run.id]))
        started.push(run.id)
        yield* FiberSet.run(
          fibers,
          driver.drive(run.id).pipe(
            Effect.tap((r) => Effect.logInfo(`land: run ${Q.shortId(r.id)} ${r.status === "merged" ? r.reason : r.landing?.stopped || r.status}`)),
            // display: a landing that stopped is logged; its record says where, for the next beat
            Effect.catchAllCause((c) => Effect.logWarning(`land: run ${Q.shortId(run.id)} did not land`, c)),
            Effect.ensuring(Ref.update(going, (s) => new Set([...s].filter((x) => x !== run.id)))),
            Effect.asVoid
          )
        )
      }
      return started
    })
    return { tick }
  }),
  dependencies: []
}) {}
