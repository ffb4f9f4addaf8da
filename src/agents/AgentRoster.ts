/**
 * Which agents the owner has: `[agents.<id>]` tables in the same TOML layers
 * as the rest of the config, or, with none configured, one entry per agent
 * CLI found on `PATH`, so `magi run` works on a machine set up for nothing
 * but the agent itself.
 *
 *   [agents.fast]
 *   kind = "claude"            # claude | codex | opencode | agy | command
 *   command = "claude"         # program, or [program, leading args…]
 *   model = "sonnet"
 *   args = ["--verbose"]       # appended to every call
 *   env = { FOO = "bar" }
 *   wait_slice = 90            # seconds one `magi ask` may block (default: per kind)
 *   mcp = true                 # give it magi's ask/reply/wait as MCP tools (default: where the CLI speaks MCP)
 *   wait = "end-turn"          # on `pending`: end the turn ("end-turn") or call --wait again ("poll"); default per kind
 *
 * For `kind = "command"`, `command` is the whole argv with `{prompt_file}`,
 * `{cwd}`, `{label}` and `{session}` filled in per call.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import { Config, Context, Data, Effect, Layer, Option, Schema } from "effect"
import * as NodePath from "node:path"
import { loadTable } from "../platform/MagiConfig.js"

export const AgentKind = Schema.Literal("claude", "codex", "opencode", "agy", "command")
export type AgentKind = typeof AgentKind.Type

/**
 * What a seat does when a wait slice hands back `pending`: `poll` calls
 * `magi ask --wait` (or the `wait` tool) again, a model request per slice;
 * `end-turn` ends its turn, and the waiter resumes the same session with the
 * owner's answer when it comes (docs/agents/README.md#the-cost-of-waiting).
 */
export const WaitMode = Schema.Literal("end-turn", "poll")
export type WaitMode = typeof WaitMode.Type

/** The kinds magi can find on `PATH` by their program name. */
export const DISCOVERABLE: ReadonlyArray<Exclude<AgentKind, "command">> = ["claude", "codex", "opencode", "agy"]

export interface AgentSpec {
  readonly id: string
  readonly kind: AgentKind
  /** Program and leading args; for `command`, the argv template. */
  readonly command: ReadonlyArray<string>
  readonly model: string | null
  readonly args: ReadonlyArray<string>
  readonly env: Readonly<Record<string, string>>
  /**
   * Seconds one `magi ask` under this agent may block before handing back
   * `pending` (`MAGI_WAIT_SLICE`); unset, the kind's own slice, which ends
   * before its shell tool gives up on the command.
   */
  readonly waitSliceSecs?: number
  /**
   * `[agents.<id>] mcp`: register `magi mcp` with this agent's CLI, so it
   * asks through tools rather than its shell. Unset: on where the kind
   * supports it (`mcpByDefault`).
   */
  readonly mcp?: boolean
  /** `[agents.<id>] wait`: what the seat does on `pending`; unset, its kind's default (`waitModeOf`). */
  readonly wait?: WaitMode
}

export class RosterError extends Data.TaggedError("RosterError")<{ readonly message: string }> {}

type Table = { readonly [key: string]: unknown }
const isTable = (v: unknown): v is Table => typeof v === "object" && v !== null && !Array.isArray(v)
const isKind = (v: unknown): v is AgentKind => Schema.is(AgentKind)(v)
const strings = (v: unknown): v is ReadonlyArray<string> => Array.isArray(v) && v.every((a) => typeof a === "string")

/** One `[agents.<id>]` table as a spec, or the reason it is not one. */
export const specOf = (id: string, t: Table, files: ReadonlyArray<string>): Either<AgentSpec> => {
  const where = `[agents.${id}] (in ${files.join(" or ") || "config"})`
  const kind = t.kind ?? (isKind(id) ? id : undefined)
  if (!isKind(kind))
    return { error: `${where} needs kind = one of claude, codex, opencode, agy, command; not ${JSON.stringify(kind)}` }
  const raw = t.command ?? (kind === "command" ? undefined : kind)
  const command = typeof raw === "string" ? [raw] : raw
  if (!strings(command) || command.length === 0 || command[0] === "")
    return {
      error: kind === "command"
        ? `${where} needs command = [program, args…], with {prompt_file}, {cwd}, {label} or {session} where the call fills them in`
        : `${where}: command must be a program name or [program, args…]`
    }
  if (t.model !== undefined && typeof t.model !== "string") return { error: `${where}: model must be a string` }
  const args = t.args ?? []
  if (!strings(args)) return { error: `${where}: args must be an array of strings` }
  const env = t.env ?? {}
  if (!isTable(env) || !Object.values(env).every((v) => typeof v === "string"))
    return { error: `${where}: env must be a table of strings` }
  const slice = t.wait_slice
  if (slice !== undefined && !(typeof slice === "number" && Number.isInteger(slice) && slice > 0))
    return { error: `${where}: wait_slice must be a whole number of seconds above 0, not ${JSON.stringify(slice)}` }
  if (t.mcp !== undefined && typeof t.mcp !== "boolean")
    return { error: `${where}: mcp must be true or false, not ${JSON.stringify(t.mcp)}` }
  if (t.wait !== undefined && !Schema.is(WaitMode)(t.wait))
    return { error: `${where}: wait must be "end-turn" or "poll", not ${JSON.stringify(t.wait)}` }
  return {
    spec: {
      id,
      kind,
      command,
      model: typeof t.model === "string" && t.model !== "" ? t.model : null,
      args,
      env: env as Record<string, string>,
      ...(slice === undefined ? {} : { waitSliceSecs: slice }),
      ...(t.mcp === undefined ? {} : { mcp: t.mcp }),
      ...(t.wait === undefined ? {} : { wait: t.wait as WaitMode })
    }
  }
}
type Either<A> = { readonly spec: A; readonly error?: undefined } | { readonly error: string; readonly spec?: undefined }

/** Every configured agent, in the order the config lists them. */
export const fromTable = (table: Table, files: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<AgentSpec>, RosterError> => {
  const agents = table.agents
  if (agents === undefined) return Effect.succeed([])
  if (!isTable(agents)) return Effect.fail(new RosterError({ message: "`agents` must be a table of [agents.<id>] tables" }))
  const out: AgentSpec[] = []
  for (const [id, t] of Object.entries(agents)) {
    if (!isTable(t)) return Effect.fail(new RosterError({ message: `agents.${id} must be a table` }))
    const r = specOf(id, t, files)
    if (r.error !== undefined) return Effect.fail(new RosterError({ message: r.error }))
    out.push(r.spec)
  }
  return Effect.succeed(out)
}

/** The plain spec for an agent CLI found on `PATH`. */
export const discovered = (kind: Exclude<AgentKind, "command">, program: string): AgentSpec => ({
  id: kind,
  kind,
  command: [program],
  model: null,
  args: [],
  env: {}
})

/** Absolute path of an executable `name` on `path`, if any. */
export const which = Effect.fn("which")(function* (name: string, path: string) {
  const fs = yield* FileSystem.FileSystem
  for (const dir of path.split(NodePath.delimiter)) {
    if (dir === "") continue
    const candidate = NodePath.join(dir, name)
    const info = yield* fs.stat(candidate).pipe(Effect.option)
    if (Option.isSome(info) && info.value.type === "File" && (info.value.mode & 0o111) !== 0) return Option.some(candidate)
  }
  return Option.none<string>()
})

export interface AgentRosterShape {
  readonly agents: ReadonlyArray<AgentSpec>
  /** The agent called `id`, if the roster still has it. */
  readonly get: (id: string) => Option.Option<AgentSpec>
  /** The first agent: what `magi run` uses without `--agent`. */
  readonly first: Option.Option<AgentSpec>
}

export const rosterOf = (agents: ReadonlyArray<AgentSpec>): AgentRosterShape => ({
  agents,
  get: (id) => Option.fromNullable(agents.find((a) => a.id === id)),
  first: Option.fromNullable(agents[0])
})

/** Build the roster: configured agents, else the CLIs on `PATH`. */
export const load = Effect.fn("AgentRoster.load")(function* (cwd: string) {
  const { table, files } = yield* loadTable(cwd).pipe(Effect.mapError((e) => new RosterError({ message: e.message })))
  const configured = yield* fromTable(table, files)
  if (configured.length > 0) return rosterOf(configured)
  const path = yield* Config.string("PATH").pipe(Config.withDefault(""), Effect.orDie)
  const found: AgentSpec[] = []
  for (const kind of DISCOVERABLE) {
    const program = yield* which(kind, path)
    if (Option.isSome(program)) found.push(discovered(kind, program.value))
  }
  return rosterOf(found)
})

export class AgentRoster extends Context.Tag("magi/AgentRoster")<AgentRoster, AgentRosterShape>() {
  static fixed = (agents: ReadonlyArray<AgentSpec>) => Layer.succeed(AgentRoster, rosterOf(agents))
  static fromFiles = (cwd: string = process.cwd()) => Layer.effect(AgentRoster, load(cwd))
}

export interface RostersShape {
  /** The roster as configured for a repository (its `magi.toml` layers). */
  readonly forRepo: (dir: string) => Effect.Effect<AgentRosterShape, RosterError>
}

/**
 * Rosters by repository. A run's agents are the ones its repository's config
 * names, whichever directory the process driving it (`magi serve`) started in.
 */
export class Rosters extends Context.Tag("magi/Rosters")<Rosters, RostersShape>() {
  static fixed = (agents: ReadonlyArray<AgentSpec>) => Layer.succeed(Rosters, { forRepo: () => Effect.succeed(rosterOf(agents)) })

  static fromFiles = Layer.effect(
    Rosters,
    Effect.gen(function* () {
      const fs = yield* FileSystem.FileSystem
      return { forRepo: (dir: string) => Effect.provideService(load(dir), FileSystem.FileSystem, fs) }
    })
  )
}
