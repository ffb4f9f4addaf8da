/**
 * The review-and-gate settings, read from the same TOML layers as the
 * competition's (`loadTable`): `[graph] reviewers`, `review_focus`,
 * `review_rounds`, `incomplete_review`, `rebase_fix_rounds`, `remote`,
 * `merge` (the landing's, only read here to know whether anything follows);
 * `[verify] e2e`, `e2e_timeout`, `gate`, `gate_timeout`, `gate_fix_rounds`;
 * `[roles] fixer`. Pure once read.
 */
import { Effect, Schema } from "effect"
import { isRemoteName } from "../graph/GraphConfig.js"
import { loadTable } from "../platform/MagiConfig.js"

export class VerifyConfigError extends Schema.TaggedError<VerifyConfigError>()("VerifyConfigError", {
  key: Schema.String,
  wanted: Schema.String,
  files: Schema.Array(Schema.String)
}) {
  override get message() {
    return `\`${this.key}\` must be ${this.wanted} (in ${this.files.join(" or ") || "config"})`
  }
}

export interface VerifySettings {
  /** null: 2 after a competition, 0 after a solo run. */
  readonly reviewers: number | null
  readonly focus: ReadonlyArray<string>
  readonly reviewRounds: number
  readonly incompleteReview: "block" | "allow"
  readonly rebaseFixRounds: number
  readonly remote: string | null
  readonly merge: string | null
  readonly e2e: ReadonlyArray<string>
  readonly e2eTimeoutSecs: number
  readonly gate: ReadonlyArray<string>
  readonly gateTimeoutSecs: number
  readonly gateFixRounds: number
  readonly fixer: string | null
}

export const defaults: VerifySettings = {
  reviewers: null,
  focus: [],
  reviewRounds: 4,
  incompleteReview: "block",
  rebaseFixRounds: 3,
  remote: null,
  merge: null,
  e2e: [],
  e2eTimeoutSecs: 600,
  gate: [],
  gateTimeoutSecs: 600,
  gateFixRounds: 2,
  fixer: null
}

/** How many reviewers a run gets: `[graph] reviewers`, else 2 after a competition and none after a solo run. */
export const reviewersFor = (s: VerifySettings, competition: boolean): number => s.reviewers ?? (competition ? 2 : 0)

/** Is there anything to verify? With nothing configured a solo run ends `done` as before. */
export const configured = (s: VerifySettings, competition: boolean): boolean =>
  reviewersFor(s, competition) > 0 || s.e2e.length > 0 || s.gate.length > 0 || (s.merge !== null && s.merge !== "none")

type Table = { readonly [key: string]: unknown }
const isTable = (v: unknown): v is Table => typeof v === "object" && v !== null && !Array.isArray(v)
const strings = (v: unknown): v is ReadonlyArray<string> => Array.isArray(v) && v.every((s) => typeof s === "string" && s.trim() !== "")

export const settingsOf = (merged: Table, files: ReadonlyArray<string>): Effect.Effect<VerifySettings, VerifyConfigError> =>
  Effect.gen(function* () {
    const bad = (key: string, wanted: string) => new VerifyConfigError({ key, wanted, files })
    const graph = isTable(merged.graph) ? merged.graph : {}
    const verify = isTable(merged.verify) ? merged.verify : {}
    const roles = isTable(merged.roles) ? merged.roles : {}
    const whole = (v: unknown, key: string, min: number, max: number, dflt: number) =>
      v === undefined
        ? Effect.succeed(dflt)
        : typeof v === "number" && Number.isInteger(v) && v >= min && v <= max
        ? Effect.succeed(v)
        : Effect.fail(bad(key, `a whole number from ${min} to ${max}`))
    const list = (v: unknown, key: string) =>
      v === undefined ? Effect.succeed([]) : strings(v) ? Effect.succeed(v) : Effect.fail(bad(key, 'a list of shell commands, e.g. ["npm test"]'))
    const reviewers = graph.reviewers === undefined ? null : yield* whole(graph.reviewers, "graph.reviewers", 0, 9, 0)
    if (graph.review_focus !== undefined && !strings(graph.review_focus))
      return yield* bad("graph.review_focus", 'a list of words, e.g. ["correctness", "tests"]')
    const incomplete = graph.incomplete_review ?? "block"
    if (incomplete !== "block" && incomplete !== "allow")
      return yield* bad("graph.incomplete_review", '"block" or "allow"')
    if (graph.remote !== undefined && !isRemoteName(graph.remote)) return yield* bad("graph.remote", 'a git remote\'s name, e.g. "origin"')
    if (roles.fixer !== undefined && (typeof roles.fixer !== "string" || roles.fixer.trim() === "")) return yield* bad("roles.fixer", "a roster id")
    return {
      reviewers,
      focus: (graph.review_focus as ReadonlyArray<string> | undefined) ?? [],
      reviewRounds: yield* whole(graph.review_rounds, "graph.review_rounds", 1, 20, defaults.reviewRounds),
      incompleteReview: incomplete,
      rebaseFixRounds: yield* whole(graph.rebase_fix_rounds, "graph.rebase_fix_rounds", 0, 20, defaults.rebaseFixRounds),
      remote: isRemoteName(graph.remote) ? graph.remote : null,
      merge: typeof graph.merge === "string" ? graph.merge : null,
      e2e: yield* list(verify.e2e, "verify.e2e"),
      e2eTimeoutSecs: yield* whole(verify.e2e_timeout, "verify.e2e_timeout", 1, 86400, defaults.e2eTimeoutSecs),
      gate: yield* list(verify.gate, "verify.gate"),
      gateTimeoutSecs: yield* whole(verify.gate_timeout, "verify.gate_timeout", 1, 86400, defaults.gateTimeoutSecs),
      gateFixRounds: yield* whole(verify.gate_fix_rounds, "verify.gate_fix_rounds", 0, 20, defaults.gateFixRounds),
      fixer: typeof roles.fixer === "string" ? roles.fixer.trim() : null
    } satisfies VerifySettings
  })

export const load = Effect.fn("VerifyConfig.load")(function* (repo: string) {
  const { table, files } = yield* loadTable(repo)
  return yield* settingsOf(table, files)
})

/** What a repository's runs will verify, in one line (`magi doctor`). */
export const describeSettings = (s: VerifySettings): string => {
  const steps = (competition: boolean) => {
    const r = reviewersFor(s, competition)
    if (!configured(s, competition)) return "nothing (ends done)"
    return [
      "sync to the base",
      r > 0 ? `${r} reviewer(s), up to ${s.reviewRounds} round(s)` : "no review",
      s.e2e.length > 0 ? `${s.e2e.length} e2e command(s)` : "",
      s.gate.length > 0 ? `gate ${s.gate.map((g) => `\`${g}\``).join(", ")}` : "no gate"
    ].filter((x) => x !== "").join(", ")
  }
  return `after a competition: ${steps(true)}; after a solo run: ${steps(false)}`
}
