/**
 * The conductor's decisions log, `<home>/conduct/decisions.jsonl`: one line
 * per decision, applied or refused with why, so the owner can see what the
 * conductor did to a task and what it was not allowed to do. Only the loop
 * that runs the conductor appends; `magi task show` and `GET /api/conduct`
 * read it.
 */
import { FileSystem } from "@effect/platform"
import { Effect } from "effect"
import * as NodePath from "node:path"
import type { Decision } from "./ConductorVerdict.js"

export interface DecisionRecord {
  readonly at: string
  /** The conductor turn it came from. */
  readonly turn: number
  /** The task's full id when it resolved, else what the conductor wrote. */
  readonly task: string
  readonly decision: Decision
  readonly outcome: "applied" | "refused"
  /** What was done, or why nothing was. */
  readonly why: string
  /** The conductor question the task waits on, when it asked. */
  readonly question?: string
}

export const decisionsPath = (conductDir: string) => NodePath.join(conductDir, "decisions.jsonl")

/** Append one record (one line, one write). */
export const appendDecision = (conductDir: string, r: DecisionRecord) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    yield* fs.makeDirectory(conductDir, { recursive: true })
    yield* fs.writeFileString(decisionsPath(conductDir), JSON.stringify(r) + "\n", { flag: "a" })
  })

/** Parse the log's text: every readable record, newest first; a torn or foreign line is skipped. */
export const parseDecisions = (text: string): ReadonlyArray<DecisionRecord> => {
  const out: DecisionRecord[] = []
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue
    try {
      const r = JSON.parse(line) as DecisionRecord
      if (typeof r === "object" && r !== null && typeof r.task === "string" && (r.outcome === "applied" || r.outcome === "refused")) out.push(r)
    } catch {
      // A line cut short by a crash mid-append: the rest still read.
    }
  }
  return out.reverse()
}

/** Every recorded decision, newest first; none when the conductor never ran. */
export const readDecisions = (conductDir: string) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) =>
    fs.readFileString(decisionsPath(conductDir)).pipe(
      Effect.map(parseDecisions),
      Effect.orElseSucceed((): ReadonlyArray<DecisionRecord> => [])
    )
  )

/** The latest decision about `task`, if any. */
export const latestFor = (records: ReadonlyArray<DecisionRecord>, task: string): DecisionRecord | undefined =>
  records.find((r) => r.task === task)
