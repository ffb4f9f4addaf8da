/**
 * The competition's settings, read from the same TOML layers as the rest of
 * the config (`loadTable`): `[graph]`, `[verify]`, `[blind]` and the
 * `[roles]` lists of implementers and judges. Pure once read: `seatsFor`
 * says how many candidates a run gets and which agents sit where.
 */
import { Data, Effect } from "effect"
import { loadTable } from "../platform/MagiConfig.js"

export class GraphConfigError
  extends Data.TaggedError("GraphConfigError")<{ readonly key: string; readonly wanted: string; readonly files: ReadonlyArray<string> }>
{
  override get message() {
    return `\`${this.key}\` must be ${this.wanted} (in ${this.files.join(" or ") || "config"})`
  }
}

export interface GraphSettings {
  /** `[graph] candidates`; null: 3 when the roster has two or more implementers, else 1. */
  readonly candidates: number | null
  readonly judges: number
  readonly deliberateRounds: number
  readonly keepLosers: boolean
  /** `[verify] checks`: shell commands run in every candidate's worktree before judging. */
  readonly checks: ReadonlyArray<string>
  readonly checkTimeoutSecs: number
  /** `[roles] implementers` and `judges`; null: the roster. */
  readonly implementers: ReadonlyArray<string> | null
  readonly judgePool: ReadonlyArray<string> | null
  /** `[roles] implementer` (one agent for every task): a solo run. */
  readonly implementer: string | null
  readonly conductor: string | null
  readonly onLeak: "warn" | "redact" | "fail"
}

export const DEFAULT_CANDIDATES = 3
export const DEFAULT_JUDGES = 3
export const DEFAULT_CHECK_TIMEOUT_SECS = 600
export const DEFAULT_DELIBERATE_ROUNDS = 1

export const defaults: GraphSettings = {
  candidates: null,
  judges: DEFAULT_JUDGES,
  deliberateRounds: DEFAULT_DELIBERATE_ROUNDS,
  keepLosers: false,
  checks: [],
  checkTimeoutSecs: DEFAULT_CHECK_TIMEOUT_SECS,
  implementers: null,
  judgePool: null,
  implementer: null,
  conductor: null,
  onLeak: "warn"
}

type Table = { readonly [key: string]: unknown }
const isTable = (v: unknown): v is Table => typeof v === "object" && v !== null && !Array.isArray(v)
const strings = (v: unknown): v is ReadonlyArray<string> => Array.isArray(v) && v.every((s) => typeof s === "string" && s.trim() !== "")

/** The settings from merged tables, or the first key that is wrong. */
export const settingsOf = (merged: Table, files: ReadonlyArray<string>): Effect.Effect<GraphSettings, GraphConfigError> =>
  Effect.gen(function* () {
    const bad = (key: string, wanted: string) => new GraphConfigError({ key, wanted, files })
    const graph = isTable(merged.graph) ? merged.graph : {}
    const verify = isTable(merged.verify) ? merged.verify : {}
    const roles = isTable(merged.roles) ? merged.roles : {}
    const blind = isTable(merged.blind) ? merged.blind : {}
    const count = (v: unknown, key: string, min: number): Effect.Effect<number | null, GraphConfigError> =>
      v === undefined
        ? Effect.succeed(null)
        : typeof v === "number" && Number.isInteger(v) && v >= min && v <= 26
        ? Effect.succeed(v)
        : Effect.fail(bad(key, `a whole number from ${min} to 26`))
    const candidates = yield* count(graph.candidates, "graph.candidates", 1)
    const judges = yield* count(graph.judges, "graph.judges", 1)
    const rounds = yield* count(graph.deliberate_rounds, "graph.deliberate_rounds", 0)
    if (graph.keep_losers !== undefined && typeof graph.keep_losers !== "boolean") return yield* bad("graph.keep_losers", "true or false")
    if (verify.checks !== undefined && !strings(verify.checks)) return yield* bad("verify.checks", 'a list of shell commands, e.g. ["npm test"]')
    const timeout = verify.check_timeout
    if (timeout !== undefined && !(typeof timeout === "number" && Number.isInteger(timeout) && timeout > 0))
      return yield* bad("verify.check_timeout", "a whole number of seconds above 0")
    if (roles.implementers !== undefined && !strings(roles.implementers))
      return yield* bad("roles.implementers", "a list of roster ids")
    if (roles.judges !== undefined && !strings(roles.judges))
      return yield* bad("roles.judges", "a list of roster ids")
    const onLeak = blind.on_leak ?? "warn"
    if (onLeak !== "warn" && onLeak !== "redact" && onLeak !== "fail") return yield* bad("blind.on_leak", '"warn", "redact" or "fail"')
    return {
      candidates: candidates ?? null,
      judges: judges ?? DEFAULT_JUDGES,
      deliberateRounds: rounds ?? DEFAULT_DELIBERATE_ROUNDS,
      keepLosers: graph.keep_losers === true,
      checks: (verify.checks as ReadonlyArray<string> | undefined) ?? [],
      checkTimeoutSecs: (timeout as number | undefined) ?? DEFAULT_CHECK_TIMEOUT_SECS,
      implementers: (roles.implementers as ReadonlyArray<string> | undefined) ?? null,
      judgePool: (roles.judges as ReadonlyArray<string> | undefined) ?? null,
      implementer: typeof roles.implementer === "string" ? roles.implementer.trim() : null,
      conductor: typeof roles.conductor === "string" ? roles.conductor.trim() : null,
      onLeak
    } satisfies GraphSettings
  })

export const load = Effect.fn("GraphConfig.load")(function* (repo: string) {
  const { table, files } = yield* loadTable(repo)
  return yield* settingsOf(table, files)
})

export interface Seating {
  /** 1: today's single-seat run. */
  readonly candidates: number
  readonly implementers: ReadonlyArray<string>
  readonly judgePool: ReadonlyArray<string>
}

/**
 * How a run is seated. Solo (one candidate) when asked (`--solo`, `--agent`),
 * when `[roles] implementer` names one agent for everything, when
 * `[graph] candidates = 1`, or when fewer than two agents could implement (a
 * one-agent roster);
 * otherwise `[graph] candidates` (default 3) over `[roles] implementers`
 * (default the roster, less the conductor).
 */
export const seatsFor = (s: GraphSettings, roster: ReadonlyArray<string>, solo: boolean): Seating => {
  const implementers = (s.implementers ?? roster.filter((a) => a !== s.conductor)).filter((a) => roster.includes(a))
  const judgePool = (s.judgePool ?? roster.filter((a) => a !== s.conductor)).filter((a) => roster.includes(a))
  const wanted = s.candidates ?? (s.implementer !== null ? 1 : DEFAULT_CANDIDATES)
  const candidates = solo || implementers.length < 2 ? 1 : wanted
  return { candidates, implementers, judgePool }
}
