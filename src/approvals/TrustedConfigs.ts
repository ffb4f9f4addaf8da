/**
 * Repository configs the owner trusted to carry approval allow rules, by
 * content: `magi approvals trust` records a file's sha256, and its allow
 * rules apply only while the file still has that content. A repository's
 * `magi.toml` is a file an agent can write (on its branch, or in a clone the
 * owner did not write), so an untrusted one may tighten the rules (its deny
 * rules always apply) but never loosen them.
 *
 * One record per file, `<home>/trusted-configs/<sha256 of its path>.json`,
 * written whole and atomically: trusting again replaces the record, and no
 * record is ever read, changed and written back.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import { Effect, Schema } from "effect"
import { createHash } from "node:crypto"
import * as NodePath from "node:path"
import { writeAtomically } from "../store/files/AtomicFile.js"
import { MagiHome } from "../platform/MagiHome.js"

export const TRUST_FOLDER = "trusted-configs"

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex")

/** A config file's content hash, as recorded and shown. */
export const contentHash = sha256

const TrustRecord = Schema.parseJson(Schema.Struct({ path: Schema.String, sha256: Schema.String, trusted_at: Schema.String }))

/** Whether the owner trusted `file` with exactly this content, trusted another content (it changed since), or never. */
export type Trust = "trusted" | "changed" | "untrusted"

const recordPath = (home: string, file: string) => NodePath.join(home, TRUST_FOLDER, `${sha256(NodePath.resolve(file)).slice(0, 32)}.json`)

/** Has the owner trusted `file` with content `text`? A record that cannot be read trusts nothing. */
export const trustOf = (file: string, text: string) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const home = yield* MagiHome
    const raw = yield* fs.readFileString(recordPath(home.dir, file)).pipe(Effect.option)
    if (raw._tag === "None") return "untrusted" satisfies Trust
    const record = yield* Schema.decodeUnknown(TrustRecord)(raw.value).pipe(Effect.option)
    if (record._tag === "None" || record.value.path !== NodePath.resolve(file)) return "untrusted" satisfies Trust
    return (record.value.sha256 === sha256(text) ? "trusted" : "changed") satisfies Trust
  })

/** Record that the owner trusts `file` as it reads now (`text`); returns the hash recorded. */
export const trust = (file: string, text: string, at: Date) =>
  Effect.gen(function* () {
    const home = yield* MagiHome
    const hash = sha256(text)
    yield* writeAtomically(
      recordPath(home.dir, file),
      JSON.stringify({ path: NodePath.resolve(file), sha256: hash, trusted_at: at.toISOString() }, null, 2) + "\n",
      { durable: true }
    )
    return hash
  })
