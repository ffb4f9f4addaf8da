/**
 * The deputies: a short-lived seat (`deputy-<short>`, node `deputy`) per
 * open conductor question nobody waits on, at most `[daemon] max_deputies`
 * at once, each started at most `MAX_STARTS` times and never within
 * `RESTART_AFTER_MS` of its last start. Which question gets one is
 * `Deputy.deputiesToStart`; this is the I/O around it. The deputy applies
 * nothing: an answer it carries is picked up by the loop's blocker
 * resolution like any other.
 */
import { FileSystem } from "@effect/platform"
import { Clock, Context, Duration, Effect, FiberSet, Layer, Option, Ref } from "effect"
import * as NodePath from "node:path"
import { Rosters } from "../agents/AgentRoster.js"
import { Agents, newSeat } from "../agents/Agents.js"
import { MagiConfig } from "../platform/MagiConfig.js"
import { MagiHome } from "../platform/MagiHome.js"
import * as Lease from "../questions/Lease.js"
import * as Q from "../questions/Question.js"
import { QuestionStore } from "../questions/QuestionStore.js"
import { TaskStore } from "../queue/TaskStore.js"
import { conductDir } from "./Conductor.js"
import { NODE as CONDUCT } from "./ConductorDecide.js"
import * as Deputy from "./Deputy.js"
import { Notices } from "./Notices.js"

/** A deputy's one turn: it waits on the owner in `magi ask --wait` slices, so it may last a while; half an hour bounds a stuck one. */
export const DEPUTY_TURN_TIMEOUT = Duration.minutes(30)

export interface DeputiesShape {
  /** Start the deputies now due; they run in the background. Never fails. */
  readonly tick: Effect.Effect<void>
  readonly settle: Effect.Effect<void>
}

export class Deputies extends Context.Tag("magi/Deputies")<Deputies, DeputiesShape>() {
  static layer = Layer.scoped(Deputies, Effect.suspend(() => make))
}

export const make = Effect.gen(function* () {
  const questions = yield* QuestionStore
  const tasks = yield* TaskStore
  const agents = yield* Agents
  const rosters = yield* Rosters
  const config = yield* MagiConfig
  const home = yield* MagiHome
  const notices = yield* Notices
  const fs = yield* FileSystem.FileSystem
  const memory = yield* Ref.make(new Map<string, Deputy.DeputyMemory>())
  const running = yield* Ref.make(new Set<string>())
  const fibers = yield* FiberSet.make<void, never>()

  const run = (q: Q.Question, starts: number) =>
    Effect.gen(function* () {
      const task = yield* tasks.get(q.run).pipe(Effect.option)
      const repo = Option.match(task, { onNone: () => home.dir, onSome: (t) => t.repo })
      const roster = yield* rosters.forRepo(repo)
      const spec = roster.get(config.conductor ?? "")
      if (Option.isNone(spec)) return yield* Effect.logWarning(`deputy for ${Q.shortId(q.id)}: [roles] conductor names no agent of the roster for ${repo}`)
      yield* agents.call({
        agent: spec.value,
        seat: newSeat(Deputy.deputySeat(q.id), spec.value.id),
        prompt: Deputy.deputyPrompt(q, Option.getOrUndefined(task)),
        cwd: repo,
        allowWrite: false,
        timeout: DEPUTY_TURN_TIMEOUT,
        artifactsDir: NodePath.join(conductDir(home), "deputies", q.id),
        stem: `start-${starts}`,
        run: "",
        node: "deputy"
      })
    }).pipe(
      Effect.catchAllCause((c) => Effect.logWarning(`deputy for ${Q.shortId(q.id)} ended badly: ${c}`)),
      Effect.ensuring(Ref.update(running, (s) => { const n = new Set(s); n.delete(q.id); return n }))
    )

  const tick = Effect.gen(function* () {
    if (config.conductor === null) return
    const now = yield* Clock.currentTimeMillis
    const open = (yield* questions.list.pipe(Effect.orElseSucceed(() => []))).filter((q) => q.node === CONDUCT && Q.isOpen(q))
    const candidates: Deputy.Candidate[] = []
    for (const q of open)
      candidates.push({ q, leased: Option.isSome(Lease.heldAt(yield* Effect.provideService(Lease.read(questions.root, q.id), FileSystem.FileSystem, fs), new Date(now))) })
    const due = Deputy.deputiesToStart(candidates, yield* Ref.get(memory), yield* Ref.get(running), config.maxDeputies, config.answerTimeoutSecs, now)
    for (const q of due.notice) {
      yield* notices.raise(q, "deputies", `no deputy could settle "${q.summary}"; answer it with one of its choices`, `its deputy was started ${Deputy.MAX_STARTS} times`)
      yield* Ref.update(memory, (m) => new Map(m).set(q.id, { ...m.get(q.id)!, noticed: true }))
    }
    for (const q of due.start) {
      const starts = ((yield* Ref.get(memory)).get(q.id)?.starts ?? 0) + 1
      yield* Ref.update(memory, (m) => new Map(m).set(q.id, { starts, lastStartMs: now, noticed: false }))
      yield* Ref.update(running, (s) => new Set(s).add(q.id))
      yield* FiberSet.run(fibers, run(q, starts))
    }
  }).pipe(Effect.catchAllCause((c) => Effect.logWarning(`deputies: tick failed: ${c}`)))

  return { tick, settle: FiberSet.awaitEmpty(fibers) } satisfies DeputiesShape
})
