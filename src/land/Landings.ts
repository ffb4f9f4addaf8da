/**
 * The daemon's side of landing: on each beat, a `ready` run whose merge
 * approval the owner has answered is landed in the background (a local
 * merge, or the pull request's loop going on to the merge), so an answer
 * given on the phone needs no `magi land` at a desk. One landing per run at
 * a time in this process; the record's steps make a second process's try
 * a no-op (the question found again, a merge recorded, never repeated).
 * The page's Land button (`start`) goes through the same door: what would
 * refuse at once (not `ready`, `merge = "none"`) is refused before anything
 * is forked, so the owner reads the reason instead of a silent nothing.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import { Effect, FiberSet, Option, Ref } from "effect"
import * as GraphConfig from "../graph/GraphConfig.js"
import * as Q from "../questions/Question.js"
import { QuestionStore } from "../questions/QuestionStore.js"
import * as L from "../runs/Landing.js"
import type { RunDriver } from "../runs/RunDriver.js"
import { RunStore } from "../runs/Runs.js"
import { LandDriver, LandRefused } from "./LandDriver.js"

export class Landings extends Effect.Service<Landings>()("magi/Landings", {
  scoped: Effect.gen(function* () {
    const runs = yield* RunStore
    const questions = yield* QuestionStore
    const driver = yield* LandDriver
    const fs = yield* FileSystem.FileSystem
    // What a landing's steps stand on (a fix round's turn, the files), taken once here so neither the
    // daemon's beat nor the page's route has to carry them.
    const context = yield* Effect.context<RunDriver | FileSystem.FileSystem>()
    const going = yield* Ref.make<ReadonlySet<string>>(new Set())
    const fibers = yield* FiberSet.make<void, never>()

    const answered = (id: string) => Effect.map(Effect.option(questions.read(id)), (q) => Option.isSome(q) && !Q.isOpen(q.value))

    /** Drive `id`'s landing in the background, unless this process drives it already; whether it was started now. */
    const launch = (id: string) =>
      Effect.gen(function* () {
        const already = yield* Ref.modify(going, (s) => (s.has(id) ? [true, s] as const : [false, new Set([...s, id])] as const))
        if (already) return false
        yield* FiberSet.run(
          fibers,
          driver.drive(id).pipe(
            Effect.provide(context),
            Effect.tap((r) => Effect.logInfo(`land: run ${Q.shortId(r.id)} ${r.status === "merged" ? r.reason : r.landing?.stopped || r.status}`)),
            // display: a landing that stopped is logged; its record says where, for the next beat
            Effect.catchAllCause((c) => Effect.logWarning(`land: run ${Q.shortId(id)} did not land`, c)),
            Effect.ensuring(Ref.update(going, (s) => new Set([...s].filter((x) => x !== id)))),
            Effect.asVoid
          )
        )
        return true
      })

    /** Start the landing of every ready run whose approval has its answer; returns the ids started. */
    const tick = Effect.gen(function* () {
      // fallback: an unread list starts no landing this tick (no write); the next beat reads again
      const all = yield* runs.list.pipe(Effect.orElseSucceed(() => []))
      const started: Array<string> = []
      for (const run of all) {
        if (run.status !== "ready" || !L.waitsOnOwner(run.landing)) continue
        if ((yield* Ref.get(going)).has(run.id) || !(yield* answered(run.landing!.question!))) continue
        if (yield* launch(run.id)) started.push(run.id)
      }
      return started
    })

    /**
     * `magi land ID` from the page: refused at once with the reason when the
     * run cannot land now, else driven in the background; `started` is false
     * when this process already drives it.
     */
    const start = (wanted: string) =>
      Effect.gen(function* () {
        const run = yield* runs.get(wanted)
        if (run.status !== "ready") return yield* new LandRefused({ run: run.id, why: `it is ${run.status}; only a ready run lands` })
        // A landing that is over (held, given up) is never driven again: saying so beats a 202 that does nothing.
        if (run.landing?.step === "done")
          return yield* new LandRefused({ run: run.id, why: `its landing stopped: ${run.landing.stopped || "nothing left to do"}` })
        if (run.landing === undefined) {
          const settings = yield* GraphConfig.load(run.repo).pipe(
            Effect.provideService(FileSystem.FileSystem, fs),
            Effect.mapError((e) => new LandRefused({ run: run.id, why: e.message }))
          )
          if (settings.landing.merge === "none")
            return yield* new LandRefused({
              run: run.id,
              why: `[graph] merge is "none" in ${run.repo}; set it to "local" or "pr", or merge with git -C ${run.repo} merge ${run.branch}`
            })
        }
        return { run, started: yield* launch(run.id) }
      })
    return { tick, start }
  }),
  dependencies: []
}) {}
