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
  /** `[graph]` landing: how a `ready` run lands (`docs/landing.md`). */
  readonly landing: LandConfig
}

export interface LandConfig {
  /** `merge`: "none" (print the merge command), "local" (merge into the base), "pr" (push and open a pull request). */
  readonly merge: "none" | "local" | "pr"
  readonly style: "merge" | "squash" | "rebase"
  /** `land_approval`: ask the owner before any merge (default on). */
  readonly approval: boolean
  /** `one_tap_merge`: the notification may merge in one tap instead of opening the page. */
  readonly oneTap: boolean
  readonly remote: string
  /** `land`: run the land loop on the pull request (default on). */
  readonly loop: boolean
  /** `land_wait` in minutes, kept here as milliseconds. */
  readonly waitMs: number
  readonly rounds: number
}

/** A git remote's name as `[graph] remote` may give it: read by the landing (push) and the sync (fetch) alike. */
export const isRemoteName = (v: unknown): v is string => typeof v === "string" && /^[A-Za-z0-9._-]+$/.test(v)

export const landDefaults: LandConfig = {
  merge: "none",
  style: "merge",
  approval: true,
  oneTap: false,
  remote: "origin",
  loop: true,
  waitMs: 45 * 60_000,
  rounds: 4
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
  onLeak: "warn",
  landing: landDefaults
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
    const landing = yield* landOf(graph, bad)
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
      onLeak,
      landing
    } satisfies GraphSettings
  })

const landOf = (graph: Table, bad: (key: string, wanted: string) => GraphConfigError): Effect.Effect<LandConfig, GraphConfigError> =>
  Effect.gen(function* () {
    const oneOf = <A extends string>(key: string, allowed: ReadonlyArray<A>, dflt: A): Effect.Effect<A, GraphConfigError> => {
      const v = graph[key]
      if (v === undefined) return Effect.succeed(dflt)
      return typeof v === "string" && (allowed as ReadonlyArray<string>).includes(v)
        ? Effect.succeed(v as A)
        : Effect.fail(bad(`graph.${key}`, allowed.map((a) => `"${a}"`).join(", ")))
    }
    const flag = (key: string, dflt: boolean): Effect.Effect<boolean, GraphConfigError> => {
      const v = graph[key]
      return v === undefined ? Effect.succeed(dflt) : typeof v === "boolean" ? Effect.succeed(v) : Effect.fail(bad(`graph.${key}`, "true or false"))
    }
    const whole = (key: string, min: number, dflt: number): Effect.Effect<number, GraphConfigError> => {
      const v = graph[key]
      return v === undefined
        ? Effect.succeed(dflt)
        : typeof v === "number" && Number.isInteger(v) && v >= min
        ? Effect.succeed(v)
        : Effect.fail(bad(`graph.${key}`, `a whole number of at least ${min}`))
    }
    const remote = graph.remote
    if (remote !== undefined && !isRemoteName(remote))
      return yield* bad("graph.remote", 'a git remote\'s name, e.g. "origin"')
    return {
      merge: yield* oneOf("merge", ["none", "local", "pr"] as const, landDefaults.merge),
      style: yield* oneOf("merge_style", ["merge", "squash", "rebase"] as const, landDefaults.style),
      approval: yield* flag("land_approval", landDefaults.approval),
      oneTap: yield* flag("one_tap_merge", landDefaults.oneTap),
      remote: (remote as string | undefined) ?? landDefaults.remote,
      loop: yield* flag("land", landDefaults.loop),
      waitMs: (yield* whole("land_wait", 1, landDefaults.waitMs / 60_000)) * 60_000,
      rounds: yield* whole("land_rounds", 0, landDefaults.rounds)
    }
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
