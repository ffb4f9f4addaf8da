/**
 * Who is waiting on a question right now.
 *
 * `magi ask` runs inside an agent's shell tool, which can kill it at any
 * moment, so "is the asker still there?" cannot be answered by asking it. The
 * waiter instead reads a lease the waiting process keeps beating: a fresh one
 * means someone is on the other end and nothing else may start; a stale one
 * means the asker is gone and the daemon may resume the seat.
 *
 * The lease lives in `leases/<id>.lease` under the questions directory: not a
 * `*.json` file, so a listing never mistakes it for a question, and in a
 * folder of its own, because a waiting asker beats it every few seconds and a
 * rename in the questions folder itself would look to every reader (the
 * listing cache, the phone's live view) like a change to the questions.
 *
 * A lease names its process and machine: one whose process is dead on this
 * machine is gone at once (an asker killed with its turn, a Ctrl-C'd `magi
 * run`), not 90 s later. A live pid proves less (the system may have given
 * it to another process), so a lease whose pid lives is judged by its beat.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import { Clock, Duration, Effect, Layer, Option, Schema } from "effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { pidAlive } from "../store/Claims.js"
import { MagiHome, questionsDir } from "../platform/MagiHome.js"
import { Timestamp, timestamp } from "./Question.js"
import { writeAtomically } from "../store/files/AtomicFile.js"

/**
 * How long a beat keeps a lease fresh. `magi ask` beats after every 3 s poll
 * and the daemon every 20 s, so 90 s survives a stalled disk or a suspended
 * laptop lid without mistaking a live waiter for a dead one, while a killed
 * asker is taken over within a minute and a half.
 */
export const LEASE_TTL = Duration.seconds(90)
export const LEASE_TTL_MS = Duration.toMillis(LEASE_TTL)

/**
 * Which kind of process holds the wait: the agent's own `magi ask`, the
 * daemon delivering to it, or a deputy keeping the owner company on a
 * conductor question (so no second deputy starts for it, and the page can
 * say someone is there).
 */
export const LeaseKind = Schema.Literal("asker", "daemon", "deputy")
export type LeaseKind = typeof LeaseKind.Type

/** `MAGI_NODE` of a deputy seat (see `daemon/Deputies`). */
export const DEPUTY_NODE = "deputy"

/** The kind a waiting `magi ask` beats, from the node it runs in: a deputy's wait is the deputy's. */
export const kindForNode = (node: string): LeaseKind => (node === DEPUTY_NODE ? "deputy" : "asker")

export const Lease = Schema.Struct({
  kind: LeaseKind,
  /** The beating process: dead on `host`, the lease is gone. */
  pid: Schema.Number,
  /** Its machine; absent in a lease an older magi wrote, which is judged by its beat alone. */
  host: Schema.optional(Schema.String),
  /** Its pid namespace (Linux): a sandboxed asker's pid means nothing outside its own. */
  pidns: Schema.optional(Schema.String),
  beat_at: Timestamp
})
export type Lease = typeof Lease.Type

/** Fresh while no more than `LEASE_TTL` has passed since the last beat. */
export const isFresh = (lease: Lease, now: Date): boolean => now.getTime() - Date.parse(lease.beat_at) <= LEASE_TTL_MS

/** `Option`-friendly form of `isFresh`: no lease is never fresh. */
export const heldAt = (lease: Option.Option<Lease>, now: Date): Option.Option<LeaseKind> =>
  Option.isSome(lease) && isFresh(lease.value, now) ? Option.some(lease.value.kind) : Option.none()

/** Who holds a question's wait, as the owner sees it: the web's `holder`. */
export const holder = (lease: Option.Option<Lease>, now: Date): LeaseKind | "nobody" => Option.getOrElse(heldAt(lease, now), () => "nobody" as const)

/** `<root>/leases/<id>.lease`, `root` being the questions directory. */
export const leasePath = (root: string, id: string): string => NodePath.join(root, LEASES_DIR, `${id}.lease`)

/** The folder under the questions directory that holds the leases. */
export const LEASES_DIR = "leases"

const decodeLease = Schema.decodeUnknownOption(Schema.parseJson(Lease))

let ownPidns: string | undefined | null = null
/** This process's pid namespace, where the system has one (`/proc/self/ns/pid`, the kernel's, read once). */
export const pidNamespace = (): string | undefined => {
  if (ownPidns === null) {
    try {
      ownPidns = NodeFs.readlinkSync("/proc/self/ns/pid")
    } catch {
      ownPidns = undefined
    }
  }
  return ownPidns
}

/**
 * Could the lease's process still be beating it? No once its pid is dead
 * here: on this machine, and in this pid namespace (an asker inside a
 * sandbox that has its own numbers its pids there).
 */
export const mayLive = (lease: Lease): boolean => lease.host !== NodeOs.hostname() || lease.pidns !== pidNamespace() || pidAlive(lease.pid)

/**
 * Record that `kind` is waiting on `id` now. Written to a temp file and
 * renamed, so a reader sees the old beat or the new one, never half a file.
 * Best effort: a failed beat only lets the lease age, which costs a possible
 * takeover later, never the wait itself.
 */
export const beat = Effect.fn("Lease.beat")(function* (root: string, id: string, kind: LeaseKind) {
  const now = new Date(yield* Clock.currentTimeMillis)
  const ns = pidNamespace()
  const lease: Lease = { kind, pid: process.pid, host: NodeOs.hostname(), ...(ns === undefined ? {} : { pidns: ns }), beat_at: timestamp(now) }
  yield* writeAtomically(leasePath(root, id), JSON.stringify(lease) + "\n").pipe(
    // fallback: a lease beat missed is retried at the next beat
    Effect.catchAll((e) => Effect.logDebug(`could not beat the lease on ${id}: ${e.message}`))
  )
})

/** The lease on `id`, if there is a readable one. */
export const read = Effect.fn("Lease.read")(function* (root: string, id: string) {
  const fs = yield* FileSystem.FileSystem
  const body = yield* fs.readFileString(leasePath(root, id)).pipe(Effect.option)
  // A torn or hand-edited file reads as no lease: the worst that costs is a
  // takeover, and the question record, not the lease, holds what matters.
  return Option.filter(Option.flatMap(body, decodeLease), mayLive)
})

/**
 * Let go of `kind`'s lease on `id` if it is still this process's own: a
 * `magi ask` that exits stops waiting, and the daemon must not wait out the
 * lease's ttl to know it. A lease another process has beaten since (a
 * `--wait` that took the question up, the daemon delivering) is left alone.
 * Two live processes never share a pid, so within a lease's lifetime the
 * pid says whose it is.
 */
export const release = Effect.fn("Lease.release")(function* (root: string, id: string, kind: LeaseKind) {
  const held = yield* read(root, id)
  if (Option.isNone(held) || held.value.kind !== kind || held.value.pid !== process.pid) return
  yield* clear(root, id)
})

/** Every readable lease under `root`, by question id. */
export const readAll = Effect.fn("Lease.readAll")(function* (root: string) {
  const fs = yield* FileSystem.FileSystem
  const dir = NodePath.join(root, LEASES_DIR)
  // display: the leases listed for the web; none when the folder cannot be read
  const names = yield* fs.readDirectory(dir).pipe(Effect.orElseSucceed(() => [] as string[]))
  const leases = new Map<string, Lease>()
  for (const name of names) {
    if (!name.endsWith(".lease")) continue
    const lease = yield* read(root, name.slice(0, -".lease".length))
    if (Option.isSome(lease)) leases.set(name.slice(0, -".lease".length), lease.value)
  }
  return leases as ReadonlyMap<string, Lease>
})

/** Drop the lease on `id`; fine when there is none. */
export const clear = Effect.fn("Lease.clear")(function* (root: string, id: string) {
  const fs = yield* FileSystem.FileSystem
  // fallback: best-effort removal of a lease that may be gone
  yield* fs.remove(leasePath(root, id)).pipe(Effect.ignore)
})

export interface LeasesShape {
  readonly root: string
  readonly beat: (id: string, kind: LeaseKind) => Effect.Effect<void>
  readonly read: (id: string) => Effect.Effect<Option.Option<Lease>>
  /** Every readable lease, by question id: one look for many questions. */
  readonly all: Effect.Effect<ReadonlyMap<string, Lease>>
  readonly clear: (id: string) => Effect.Effect<void>
}

/** The leases of one questions directory, with the filesystem already bound. */
/** Beside the owner's questions, `<home>/questions`. */
export class Leases extends Effect.Service<Leases>()("magi/Leases", {
  effect: Effect.suspend(() => Effect.flatMap(MagiHome, (home) => make(questionsDir(home))))
}) {
  static at = (root: string) => Layer.effect(Leases, Effect.map(make(root), Leases.make))
  static layer = Leases.Default
}

export const make = Effect.fn("Leases.make")(function* (root: string) {
  const fs = yield* FileSystem.FileSystem
  const bound = <A, E>(e: Effect.Effect<A, E, FileSystem.FileSystem>) => Effect.provideService(e, FileSystem.FileSystem, fs)
  return {
    root,
    beat: (id, kind) => bound(beat(root, id, kind)),
    read: (id) => bound(read(root, id)),
    all: bound(readAll(root)),
    clear: (id) => bound(clear(root, id))
  } satisfies LeasesShape
})
