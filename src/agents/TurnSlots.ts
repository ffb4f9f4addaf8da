/**
 * One host's capacity for agent turns (`[host] max_turns`): every agent
 * process this magi process starts — a queue task's turn, a resume carrying
 * an owner's answer, the conductor, a deputy — takes a slot first, so a
 * burst of answers never starts more agents than the machine holds (a real
 * CLI is several hundred megabytes).
 *
 * Waiting turns are served by priority, then in the order they came:
 * resumes of answered questions first (an owner is waiting on each), then
 * everything else. A waiting turn is never lost: it holds its place until a
 * slot is free, and one that is interrupted while waiting leaves the line.
 * What waits, and behind how many, is offered to the host's record
 * (`Hosts`), so the page and `magi show` say "queued behind 3 turns".
 */
import { Context, Deferred, Effect, Exit, FiberRef, Layer, Queue, Ref } from "effect"
import { MagiConfig } from "../platform/MagiConfig.js"

/** Resumes of answered questions go before every other turn. */
export type Priority = "resume" | "turn"

/** The priority of the turns started under it; the waiter sets `resume` around its deliveries. */
export const priority: FiberRef.FiberRef<Priority> = FiberRef.unsafeMake<Priority>("turn")

/**
 * The question whose answer the turns started under it carry (the waiter
 * sets it around a delivery): a resume waiting for room is then shown on
 * that question's card, not only on its run.
 */
export const question: FiberRef.FiberRef<string> = FiberRef.unsafeMake<string>("")

/** A turn waiting for a slot, as shown: its run (and question, for a resume), and how many turns are ahead of it (running and queued before it). */
export interface Waiting {
  readonly run: string
  readonly question?: string
  readonly ahead: number
}

export interface Load {
  readonly running: number
  readonly queued: number
  readonly waiting: ReadonlyArray<Waiting>
}

export interface TurnSlotsShape {
  readonly max: number
  /** Run `effect` (one agent process) holding a slot; waits in line for one, by the fiber's `priority`. */
  readonly withSlot: <A, E, R>(run: string, effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  readonly load: Effect.Effect<Load>
  /** Takes a value each time the load changed (one pending at most). */
  readonly changed: Queue.Dequeue<void>
}

interface Ticket {
  readonly id: number
  readonly run: string
  readonly question: string
  readonly priority: Priority
  readonly granted: Deferred.Deferred<void>
}

interface State {
  readonly running: number
  /** In service order: resumes first, each priority in arrival order. */
  readonly line: ReadonlyArray<Ticket>
  readonly next: number
}

const rank = (p: Priority) => (p === "resume" ? 0 : 1)

/** `ticket` placed after every ticket of its priority or better: a stable priority line. */
const enqueue = (line: ReadonlyArray<Ticket>, ticket: Ticket): ReadonlyArray<Ticket> => {
  const at = line.findIndex((t) => rank(t.priority) > rank(ticket.priority))
  return at === -1 ? [...line, ticket] : [...line.slice(0, at), ticket, ...line.slice(at)]
}

export const make = (max: number) =>
  Effect.gen(function* () {
    const state = yield* Ref.make<State>({ running: 0, line: [], next: 0 })
    const changed = yield* Queue.sliding<void>(1)
    const tell = Queue.offer(changed, undefined)

    /** Hand freed slots to the head of the line. */
    const grant = Effect.flatMap(
      Ref.modify(state, (s): [ReadonlyArray<Ticket>, State] => {
        const room = Math.max(0, max - s.running)
        const served = s.line.slice(0, room)
        return [served, { ...s, running: s.running + served.length, line: s.line.slice(served.length) }]
      }),
      (served) => Effect.forEach(served, (t) => Deferred.succeed(t.granted, undefined), { discard: true })
    )

    const release = Effect.zipRight(
      Ref.update(state, (s) => ({ ...s, running: s.running - 1 })),
      Effect.zipRight(grant, tell)
    )

    /**
     * Wait for a slot, interruptibly (a loop stopping ends its waiting turns
     * at once); on interruption, leave the line, or give back a slot granted
     * in that very instant.
     */
    const acquire = (run: string, restore: <A, E, R>(e: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>) =>
      Effect.gen(function* () {
        const granted = yield* Deferred.make<void>()
        const p = yield* FiberRef.get(priority)
        const carrying = yield* FiberRef.get(question)
        const ticket = yield* Ref.modify(state, (s): [Ticket, State] => {
          const t: Ticket = { id: s.next, run, question: carrying, priority: p, granted }
          return [t, { ...s, next: s.next + 1, line: enqueue(s.line, t) }]
        })
        yield* grant
        yield* tell
        const waited = yield* Effect.exit(restore(Deferred.await(granted)))
        if (Exit.isSuccess(waited)) return
        const stillWaiting = yield* Ref.modify(state, (s): [boolean, State] => {
          const there = s.line.some((t) => t.id === ticket.id)
          return [there, there ? { ...s, line: s.line.filter((t) => t.id !== ticket.id) } : s]
        })
        if (!stillWaiting) yield* release
        else yield* tell
        return yield* Effect.interrupt
      })

    const withSlot = <A, E, R>(run: string, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
      Effect.uninterruptibleMask((restore) => Effect.zipRight(acquire(run, restore), Effect.ensuring(restore(effect), release)))

    const load = Effect.map(Ref.get(state), (s): Load => ({
      running: s.running,
      queued: s.line.length,
      waiting: s.line.map((t, i) => ({ run: t.run, ...(t.question === "" ? {} : { question: t.question }), ahead: s.running + i }))
    }))

    return { max, withSlot, load, changed } satisfies TurnSlotsShape
  })

export class TurnSlots extends Context.Tag("magi/TurnSlots")<TurnSlots, TurnSlotsShape>() {
  /** This host's slots: `[host] max_turns`. */
  static layer = Layer.effect(TurnSlots, Effect.flatMap(MagiConfig, (c) => make(c.maxTurns)))
  static fixed = (max: number) => Layer.effect(TurnSlots, make(max))
}
