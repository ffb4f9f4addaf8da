/**
 * An agent never outlives the magi process that started it.
 *
 * Node has no PDEATHSIG, and a magi killed with -9 runs no finalizer, so
 * two things stand in for it:
 *
 * - a **guardian**: a tiny node process started beside each agent, in its
 *   own session, holding a pipe from magi it never reads anything from. When
 *   magi dies, however it dies, the kernel closes the pipe; the guardian sees
 *   end-of-file and ends the agent's process group (SIGTERM, then SIGKILL
 *   after the same grace a turn's end gives), then exits. A turn that ends
 *   in order stops its guardian after ending the group itself;
 * - a **record** of the agent's process (pid, group, start time) beside the
 *   turn's seat lock, so whoever takes the seat over from a dead turn ends
 *   whatever of the agent is still alive before anything retries it, even if
 *   the guardian was killed too. The start time (`/proc/<pid>/stat` field
 *   22) makes sure a pid the system has since given to another process is
 *   never signalled. Linux only: elsewhere the guardian alone stands.
 */
import * as Command from "@effect/platform/Command"
import { Duration, Effect, Option, Schedule, Schema } from "effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"

/** The guardian, as a node script (`node -e`): argv is the group's id and the grace in ms. */
const GUARDIAN_SCRIPT = `
const pgid = Number(process.argv[1]), grace = Number(process.argv[2])
const alive = () => { try { process.kill(-pgid, 0); return true } catch (e) { return e.code === "EPERM" } }
let ending = false
const end = () => {
  if (ending) return
  ending = true
  try { process.kill(-pgid, "SIGTERM") } catch { process.exit(0) }
  const since = Date.now()
  setInterval(() => {
    if (!alive()) process.exit(0)
    if (Date.now() - since >= grace) { try { process.kill(-pgid, "SIGKILL") } catch {} process.exit(0) }
  }, 50)
}
process.stdin.on("end", end)
process.stdin.on("error", end)
process.stdin.resume()
process.on("SIGTERM", () => process.exit(0))
setInterval(() => { if (!ending && !alive()) process.exit(0) }, 1000)
`

/** The guardian of the group `pgid`, run by the node that runs magi. */
export const guardianCommand = (pgid: number, grace: Duration.Duration): Command.Command =>
  Command.make(process.execPath, "-e", GUARDIAN_SCRIPT, String(pgid), String(Duration.toMillis(grace)))

/** An agent process as recorded beside its seat's lock: enough to end it, and only it, later. */
export const AgentProcess = Schema.Struct({
  host: Schema.String,
  pid: Schema.Number,
  pgid: Schema.Number,
  /** `/proc/<pid>/stat` field 22, clock ticks after boot; null where there is no /proc. */
  start: Schema.NullOr(Schema.Number)
})
export type AgentProcess = typeof AgentProcess.Type

interface Stat {
  readonly pid: number
  readonly pgrp: number
  readonly start: number
}

/** `/proc/<pid>/stat` read: the fields after the command's name, which may itself hold spaces and ')'. */
export const parseStat = (pid: number, text: string): Option.Option<Stat> => {
  const rest = text.slice(text.lastIndexOf(")") + 2).split(" ")
  const pgrp = Number(rest[2])
  const start = Number(rest[19])
  // A zombie has ended; it only waits for its parent to read its exit.
  if (rest[0] === "Z" || rest[0] === "X") return Option.none()
  return Number.isFinite(pgrp) && Number.isFinite(start) && rest.length > 19 ? Option.some({ pid, pgrp, start }) : Option.none()
}

// /proc is the kernel's view of processes, not a file magi keeps: read
// with node's own calls, which read to the end (procfs says its files are
// 0 bytes long, and magi's platform reads a whole file by its size).
const statOf = (pid: number) =>
  Effect.sync(() => {
    try {
      return parseStat(pid, NodeFs.readFileSync(`/proc/${pid}/stat`, "utf8"))
    } catch {
      return Option.none<Stat>()
    }
  })

const procPids = Effect.sync(() => {
  try {
    return NodeFs.readdirSync("/proc").filter((n) => /^\d+$/.test(n)).map(Number)
  } catch {
    return []
  }
})

/** The start time of `pid` (null where there is no /proc, or it is gone). */
export const startOf = (pid: number): Effect.Effect<number | null> =>
  Effect.map(statOf(pid), (s) => Option.match(s, { onNone: () => null, onSome: (x) => x.start }))

/**
 * The processes still alive of the recorded group. Its leader alive under
 * another start time means the id went to someone else: none are ours. Its
 * leader gone, the group's other members are (an id in use as a group's is
 * never handed out again), if they started after it.
 */
export const survivors = (rec: AgentProcess): Effect.Effect<ReadonlyArray<number>> =>
  Effect.gen(function* () {
    if (rec.host !== NodeOs.hostname() || rec.start === null) return []
    const leader = yield* statOf(rec.pgid)
    if (Option.isSome(leader)) return leader.value.start === rec.start ? [rec.pgid] : []
    const pids = yield* procPids
    const out: number[] = []
    for (const pid of pids) {
      const s = yield* statOf(pid)
      if (Option.isSome(s) && s.value.pgrp === rec.pgid && s.value.start >= rec.start) out.push(pid)
    }
    return out
  })

const signal = (pgid: number, sig: NodeJS.Signals) =>
  Effect.sync(() => {
    try {
      process.kill(-pgid, sig)
    } catch {}
  })

/** Poll (on Effect's clock) until nothing of `rec` is alive, for at most `within`; true when it is all gone. */
const goneWithin = (rec: AgentProcess, within: Duration.Duration) =>
  survivors(rec).pipe(
    Effect.repeat({ schedule: Schedule.spaced(Duration.millis(100)), while: (left) => left.length > 0 }),
    Effect.timeout(within),
    Effect.as(true),
    // fallback: a process that cannot be probed counts as gone (the guardian then stops watching it)
    Effect.orElseSucceed(() => false)
  )

/**
 * End what is left of a recorded agent on this machine: SIGTERM to its
 * group, SIGKILL after `grace`, and back only once it is gone (or after a
 * second grace, for a process stuck in the kernel). True when something was
 * left to end.
 */
export const endLeftover = (rec: AgentProcess, grace: Duration.Duration): Effect.Effect<boolean> =>
  Effect.gen(function* () {
    if ((yield* survivors(rec)).length === 0) return false
    yield* Effect.logWarning(`ending agent process group ${rec.pgid}, left running by a magi process that is gone`)
    yield* signal(rec.pgid, "SIGTERM")
    if (!(yield* goneWithin(rec, grace))) {
      yield* signal(rec.pgid, "SIGKILL")
      yield* goneWithin(rec, grace)
    }
    return true
  })
