/**
 * The approvals audit log, `<home>/approvals.jsonl`: one line per decision
 * about an agent's tool call — when, which run and seat, the tool, a digest
 * of its input (never the input itself: a command may hold a secret), the
 * decision, and whether a rule or the owner made it.
 *
 * Append-only and safe against concurrent writers: each entry is one line
 * written with one `write` on a file opened for appending (`O_APPEND`), so
 * two agents deciding at once each land a whole line, never one inside the
 * other; a line is bounded (`LINE_MAX_BYTES`) so it is never split. A line a
 * crash cut short is skipped by the reader, and the lines after it still read.
 *
 * It stays in the home folder whichever backend keeps the records: it is the
 * record of what was decided on this machine, where the agents ran.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import { Data, Effect } from "effect"
import * as NodePath from "node:path"
import { MagiHome } from "../platform/MagiHome.js"

export interface AuditEntry {
  /** UTC RFC 3339, to the millisecond. */
  readonly at: string
  readonly run: string
  readonly seat: string
  readonly tool: string
  /** `Approval.inputDigest` of the call. */
  readonly digest: string
  readonly decision: "allow" | "deny"
  readonly by: "rule" | "owner"
  /** The rule that decided (`by: "rule"`), or the rule the owner's "Always allow" saved. */
  readonly rule?: string
  /** The approval question the owner answered (`by: "owner"`). */
  readonly question?: string
}

export class AuditLogError extends Data.TaggedError("AuditLogError")<{ readonly message: string }> {}

export const AUDIT_FILE = "approvals.jsonl"

/**
 * Longest line written: far above any entry (a rule is cut to `RULE_MAX`),
 * and under the 4 KiB a local file system appends in one piece.
 */
export const LINE_MAX_BYTES = 4096
const RULE_MAX = 1024

export const auditPath = (home: { readonly dir: string }) => NodePath.join(home.dir, AUDIT_FILE)

/** One entry as its line: bounded, ending in a newline. */
export const lineOf = (e: AuditEntry): string => {
  const bounded: AuditEntry = {
    ...e,
    tool: e.tool.slice(0, 256),
    run: e.run.slice(0, 256),
    seat: e.seat.slice(0, 256),
    ...(e.rule === undefined ? {} : { rule: e.rule.length > RULE_MAX ? `${e.rule.slice(0, RULE_MAX)}…` : e.rule })
  }
  return JSON.stringify(bounded) + "\n"
}

const isEntry = (v: unknown): v is AuditEntry =>
  typeof v === "object" &&
  v !== null &&
  typeof (v as AuditEntry).at === "string" &&
  typeof (v as AuditEntry).tool === "string" &&
  ((v as AuditEntry).decision === "allow" || (v as AuditEntry).decision === "deny") &&
  ((v as AuditEntry).by === "rule" || (v as AuditEntry).by === "owner")

/** Every readable entry of the log's text, oldest first; a torn or foreign line is skipped. */
export const parseLog = (text: string): ReadonlyArray<AuditEntry> =>
  text.split("\n").flatMap((line) => {
    if (line.trim() === "") return []
    try {
      const v: unknown = JSON.parse(line)
      return isEntry(v) ? [v] : []
    } catch {
      return []
    }
  })

export interface AuditLogShape {
  readonly where: string
  readonly append: (e: AuditEntry) => Effect.Effect<void, AuditLogError>
  /** Every readable entry, oldest first; none when nothing was decided yet. */
  readonly read: Effect.Effect<ReadonlyArray<AuditEntry>>
}

export class AuditLog extends Effect.Service<AuditLog>()("magi/approvals/AuditLog", {
  effect: Effect.suspend(() => make)
}) {
  static layer = AuditLog.Default
}

export const make: Effect.Effect<AuditLogShape, never, MagiHome | FileSystem.FileSystem> = Effect.gen(function* () {
  const fs = yield* FileSystem.FileSystem
  const home = yield* MagiHome
  const file = auditPath(home)
  const append = (e: AuditEntry) =>
    Effect.gen(function* () {
      yield* fs.makeDirectory(home.dir, { recursive: true })
      // `flag: "a"` is O_APPEND: the position is the file's end at each write, whoever else appends.
      yield* fs.writeFileString(file, lineOf(e), { flag: "a" })
    }).pipe(Effect.mapError((err) => new AuditLogError({ message: `could not append to ${file}: ${err.message}` })))
  const read = fs.readFileString(file).pipe(
    Effect.map(parseLog),
    // display: the audit log as shown; a log that cannot be read lists nothing
    Effect.orElseSucceed((): ReadonlyArray<AuditEntry> => [])
  )
  return { where: file, append, read }
})
