/**
 * `magi store migrate --to postgres://…|DIR`: copy every record of this
 * installation, from the store it is configured for (the home folder, or
 * `[store] url` / `MAGI_STORE_URL`), to a PostgreSQL database or to a home
 * folder. Progress on stderr; the result on stdout, one line per kind with
 * both sides' checksums, and exit 1 when any kind differs.
 *
 * Safe to run again, and to rerun after a kill: a record already on the
 * target is never touched (see `store/StoreMigration`). The database's
 * password is never printed: every message names it by its masked URL.
 */
import { Command, Options } from "@effect/cli"
import { Context, Effect, Layer } from "effect"
import { createHash } from "node:crypto"
import * as NodePath from "node:path"
import { MagiConfig } from "../platform/MagiConfig.js"
import { MagiHome } from "../platform/MagiHome.js"
import * as Postgres from "../store/postgres/Postgres.js"
import * as StoreBackend from "../store/StoreBackend.js"
import * as ConfiguredStore from "../platform/ConfiguredStore.js"
import * as StoreMigration from "../store/StoreMigration.js"
import { kinds } from "../app/Kinds.js"
import { CliFailure } from "./CliFailure.js"
import { writeErr, writeOut } from "./io.js"

/** A progress line at most this often per kind: enough to see it move, few enough to read. */
const PROGRESS_EVERY_MS = 1000

const options = {
  to: Options.text("to").pipe(
    Options.withPseudoName("URL|DIR"),
    Options.withDescription("where to copy the records: a PostgreSQL database (postgres://user:password@host:5432/db) or a home folder")
  )
}

const count = (n: number) => n.toLocaleString("en-US")

/** One side's checksum as shown: 16 hex digits of a sha256 over both of its sums, records' and files'. */
const shown = (c: StoreMigration.Checksum) => createHash("sha256").update(`${c.recordsSum}:${c.filesSum}`).digest("hex").slice(0, 16)

const sideWords = (c: StoreMigration.Checksum) =>
  `${count(c.records)} record${c.records === 1 ? "" : "s"}${c.files > 0 ? ` + ${count(c.files)} file${c.files === 1 ? "" : "s"}` : ""} sha256:${shown(c)}`

/** Where `--to` points: a `scheme://` is a database URL (checked to be PostgreSQL), anything else a folder. */
const targetOf = (to: string) =>
  /^[a-z][a-z0-9+.-]*:\/\//i.test(to.trim())
    ? Effect.map(Postgres.parseUrl(to.trim()), StoreBackend.StoreBackend.postgres)
    : Effect.succeed(StoreBackend.StoreBackend.filesAt(NodePath.resolve(to)))

const backendIn = <R>(layer: Layer.Layer<StoreBackend.StoreBackend, Postgres.StoreUnavailable | Postgres.StoreUrlInvalid, R>) =>
  Effect.map(Layer.build(layer), Context.get(StoreBackend.StoreBackend))

const migrate = Command.make("migrate", options, (o) =>
  Effect.scoped(
    Effect.gen(function* () {
      const wanted = yield* targetOf(o.to)
      const from = yield* backendIn(ConfiguredStore.layer)
      const to = yield* backendIn(wanted)
      // The same store on both sides: a copy onto itself would find everything there and say nothing useful.
      if (StoreBackend.samePlace(from, to))
        return yield* CliFailure.usage(`the records are already in ${StoreBackend.describe(to)}; --to names where to copy them`)
      yield* writeErr(`magi: copying the records from ${StoreBackend.describe(from)} to ${StoreBackend.describe(to)}\n`)

      const lastLine = new Map<string, number>()
      const progress = (p: StoreMigration.Progress) =>
        Effect.suspend(() => {
          // A kind with nothing in it is said once, in the result.
          if (p.read === 0) return Effect.void
          const now = Date.now()
          // The first batch is said at once: it shows the copy has started.
          const last = lastLine.get(p.kind)
          if (last !== undefined && now - last < PROGRESS_EVERY_MS) return Effect.void
          lastLine.set(p.kind, now)
          return writeErr(`magi: ${p.kind}: ${count(p.read)} read, ${count(p.copied)} copied\n`)
        })
      const started = Date.now()
      const reports = yield* StoreMigration.migrate({ kinds, from, to, progress })

      const lines: Array<string> = []
      for (const r of reports) {
        const verdict = r.same ? `= target` : `≠ target ${sideWords(r.target)}`
        lines.push(`${r.kind}: ${count(r.read)} read, ${count(r.copied)} copied, ${count(r.present)} already there; source ${sideWords(r.source)} ${verdict}`)
        if (r.skippedCount > 0) {
          yield* writeErr(
            `magi: warning: ${r.kind}: ${count(r.skippedCount)} file${r.skippedCount === 1 ? "" : "s"} not copied, since no store of it reads ${
              r.skippedCount === 1 ? "it" : "them"
            }:\n`
          )
          for (const s of r.skipped) yield* writeErr(`magi:   ${s.id}: ${s.reason}\n`)
          if (r.skippedCount > r.skipped.length) yield* writeErr(`magi:   and ${count(r.skippedCount - r.skipped.length)} more\n`)
        }
      }
      const differ = reports.filter((r) => !r.same)
      const total = differ.reduce((n, r) => n + r.differingCount, 0)
      lines.push(total === 0 ? "0 differences" : `${count(total)} record${total === 1 ? "" : "s"} differ: ${differ.map((r) => r.kind).join(", ")}`)
      yield* writeOut(lines.join("\n") + "\n")
      yield* writeErr(`magi: done in ${((Date.now() - started) / 1000).toFixed(1)} s\n`)
      if (differ.length > 0) {
        // Named, kind and id, so the owner can look at each (a few, then a count).
        const named = differ.flatMap((r) => r.differing.map((id) => `${r.kind} ${id}`)).slice(0, StoreMigration.DIFFERING_NAMED)
        return yield* CliFailure.refused(
          `the target holds ${count(total)} record${total === 1 ? "" : "s"} otherwise than the source, or lacks ${total === 1 ? "it" : "them"}:\n` +
            named.map((n) => `  ${n}\n`).join("") +
            (total > named.length ? `  and ${count(total - named.length)} more\n` : "") +
            "records already on the target are never overwritten; compare each side's copy and remove the one that is wrong before running this again"
        )
      }
    })
  ).pipe(
    Effect.catchTags({
      MigrationFailed: (e) => Effect.fail(CliFailure.refused(`${e.kind}: ${e.message}; nothing copied is lost, and running the same command again carries on`)),
      StoreUnavailable: (e) => Effect.fail(CliFailure.refused(e.message)),
      StoreUrlInvalid: (e) => Effect.fail(CliFailure.refused(e.message))
    }),
    // The config names the source (`[store] url`): a broken one stops the copy rather than picking the home folder by mistake.
    Effect.provide(Layer.mergeAll(MagiHome.fromEnv, MagiConfig.fromFiles()))
  )).pipe(Command.withDescription("Copy every record (questions with their panels, tasks, runs, chats, notices) to PostgreSQL or a home folder"))

export const store = Command.make("store").pipe(
  Command.withDescription("Look after where magi keeps its records"),
  Command.withSubcommands([migrate])
)
