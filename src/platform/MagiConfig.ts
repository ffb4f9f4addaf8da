/**
 * The owner's settings, from up to three TOML files, later overriding earlier:
 *
 *   <config_dir>/magi/config.toml  <  <repo>/.magi/config.toml  <  <repo>/magi.toml
 *
 * `<repo>` is the git root of the working directory (or the directory itself
 * outside git). Tables merge key by key; an array must be set in exactly one
 * file, because "which notification command wins" is not something a merge
 * should guess at (approval rule lists add up instead). `MAGI_WAIT_SLICE` overrides `[ask] wait_slice` last, for
 * an agent CLI whose tool timeout is shorter than the default slice.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import { Config, Context, Data, Effect, Layer, Option } from "effect"
import * as NodePath from "node:path"
import * as NodeOs from "node:os"
import { parse, TomlError } from "smol-toml"
// The same "did you mean" as a mistyped flag: one slip, never another word.
import { closest } from "./Spelling.js"

/** A day: an owner asleep through the night still answers in time. */
export const DEFAULT_ANSWER_TIMEOUT_SECS = 86_400

/**
 * Four minutes: the longest one `magi ask` blocks before handing the wait back
 * to its caller. An agent's shell tool kills a long command, and the command it
 * kills is the one that would have read the answer; four minutes leaves a
 * ten-minute tool budget room for start-up and the notification round trip.
 */
export const DEFAULT_WAIT_SLICE_SECS = 240

/** One task at a time unless told otherwise: two agents in one repo is a choice, not a default. */
export const DEFAULT_MAX_CONCURRENT_RUNS = 1

/**
 * Two tries, then the owner decides: one retry catches a flaky failure, a
 * second failure says the task needs a person.
 */
export const DEFAULT_MAX_ATTEMPTS = 2

/**
 * A host's name: what the other hosts and the page call this machine, and a
 * key in the shared store (a claim's row, a file name), so a safe path part.
 */
export const HOST_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/

/** The machine's own name, made a valid host name (a dotted FQDN keeps its first label). */
export const defaultHostName = (): string => {
  const raw = NodeOs.hostname().split(".")[0] ?? ""
  const cleaned = raw.replace(/[^A-Za-z0-9._-]/g, "-").replace(/^[^A-Za-z0-9]+/, "").slice(0, 63)
  return cleaned === "" ? "localhost" : cleaned
}

/**
 * Agent turns one host runs at once, when `[host] max_turns` is not set:
 * one per core, and no more than one per 1.5 GiB of memory, since a real
 * agent CLI (node and its tools) holds several hundred megabytes while it
 * runs; never fewer than one. A 2-core 4 GiB laptop gets 2, a 16-core 64 GiB
 * build box 16.
 */
export const defaultMaxTurns = (cores: number = NodeOs.availableParallelism(), memoryBytes: number = NodeOs.totalmem()): number =>
  Math.max(1, Math.min(cores, Math.floor(memoryBytes / (1.5 * 1024 ** 3))))

/**
 * `[host] claim_ttl` when not set: two minutes survives a stalled disk or a
 * busy database without two hosts running one task, while a host that went
 * away hands its task on within minutes.
 */
export const DEFAULT_CLAIM_TTL_SECS = 120

/**
 * The shortest `[host] claim_ttl`: a holder renews at least every 20 s
 * (`Claims.acrossHosts`), so thirty seconds still leaves a late renewal ten
 * seconds before another host may take the claim over.
 */
export const MIN_CLAIM_TTL_SECS = 30

export class ConfigError extends Data.TaggedError("ConfigError")<{ readonly message: string }> {}

export interface Settings {
  /** The question's whole deadline, in seconds, when `--timeout` is not given. */
  readonly answerTimeoutSecs: number
  /** The most one `magi ask` call blocks, in seconds. */
  readonly waitSliceSecs: number
  /** The notification argv; empty means no notification. */
  readonly notifyCommand: ReadonlyArray<string>
  /** `[notify] ntfy`: publish to an ntfy topic over its JSON API; null means not configured. */
  readonly ntfy: NtfySettings | null
  /** `[daemon] max_concurrent_runs`: how many queue tasks may have a turn running at once. */
  readonly maxConcurrentRuns: number
  /** `[daemon] max_attempts`: failed runs before the loop holds a task for the owner. */
  readonly maxAttempts: number
  /** `[daemon] max_deputies`: conductor-question deputies running at once. */
  readonly maxDeputies: number
  /** `[roles] implementer`: the roster id the loop runs tasks with; null means the roster's first. */
  readonly implementer: string | null
  /** `[roles] conductor`: the roster id of the agent that arranges the queue; null means no conductor. */
  readonly conductor: string | null
  /**
   * `[store] url`: the PostgreSQL database (`postgres://…`) to keep the
   * records in; null means the home folder. `MAGI_STORE_URL` overrides it.
   */
  readonly storeUrl: string | null
  /**
   * `[web] public_url`: the address the owner's devices reach `magi web` at
   * (a Tailscale `serve` name, a reverse proxy), e.g.
   * `https://box.tailnet.ts.net`; null when the page is reached at the
   * address it listens on. Notification links and buttons point there, and
   * a public address that is not loopback makes the page ask devices to pair.
   */
  readonly publicUrl: string | null
  /** `[host] name`: this machine's name among the hosts sharing one store (default: its hostname). */
  readonly hostName: string
  /** `[host] max_turns`: agent turns this host runs at once, of every kind (tasks, resumes, the conductor, deputies). */
  readonly maxTurns: number
  /**
   * `[host] claim_ttl`: seconds a claim that lasts across machines (a
   * task's turn, the conductor's) stays its holder's without a renewal;
   * what a host killed mid-run holds its task for. See `Claims.acrossHosts`.
   */
  readonly claimTtlSecs: number
  /** `[repos]`: the repositories this host can run, by the name every host knows them by, to this host's clone. */
  readonly repos: Readonly<Record<string, string>>
  /** `[approvals]`: which agent tool calls need the owner's permission, and the rules that decide without asking. */
  readonly approvals: ApprovalSettings
  /** The files that were read, lowest precedence first. */
  readonly files: ReadonlyArray<string>
}

/** Where and how to publish to ntfy (`[notify] ntfy = { server, topic, token_env }`). */
export interface NtfySettings {
  /** The ntfy server's base URL, `https://ntfy.sh` unless given. */
  readonly server: string
  readonly topic: string
  /** The environment variable holding an access token, if the topic needs one; the token itself is never in a file. */
  readonly tokenEnv: string | null
}

/** The public ntfy server, when `[notify] ntfy` names no other. */
export const DEFAULT_NTFY_SERVER = "https://ntfy.sh"

/**
 * An ntfy topic name as the server accepts it: letters, digits, `-` and
 * `_`, at most 64. Checked here so a typo is a config error, not a
 * notification that silently goes nowhere.
 */
const NTFY_TOPIC = /^[A-Za-z0-9_-]{1,64}$/
/** Allow and deny rules as written (`Bash(git status:*)`); `approvals/Rules.ts` reads them. */
export interface ApprovalRuleLists {
  readonly allow: ReadonlyArray<string>
  readonly deny: ReadonlyArray<string>
}

export interface ApprovalSettings extends ApprovalRuleLists {
  /**
   * `[approvals] ask`: a writing seat's tool calls that need permission go to
   * the owner as questions (claude, through `magi mcp`'s `approve` tool)
   * instead of being allowed unchecked. Off by default: an unattended loop
   * must not start waiting on the owner for every command after an upgrade.
   */
  readonly ask: boolean
  /** `[approvals.agents.<id>]`: rules for one agent of the roster. */
  readonly agents: Readonly<Record<string, ApprovalRuleLists>>
  /** `[approvals.repos."<path>"]`: rules for one repository (its absolute path, or `~/…`). */
  readonly repos: Readonly<Record<string, ApprovalRuleLists>>
}

export const noApprovals: ApprovalSettings = { ask: false, allow: [], deny: [], agents: {}, repos: {} }

export const defaults: Settings = {
  answerTimeoutSecs: DEFAULT_ANSWER_TIMEOUT_SECS,
  waitSliceSecs: DEFAULT_WAIT_SLICE_SECS,
  notifyCommand: [],
  ntfy: null,
  maxConcurrentRuns: DEFAULT_MAX_CONCURRENT_RUNS,
  maxAttempts: DEFAULT_MAX_ATTEMPTS,
  maxDeputies: 2,
  implementer: null,
  conductor: null,
  storeUrl: null,
  publicUrl: null,
  hostName: defaultHostName(),
  maxTurns: defaultMaxTurns(),
  claimTtlSecs: DEFAULT_CLAIM_TTL_SECS,
  repos: {},
  approvals: noApprovals,
  files: []
}

export class MagiConfig extends Context.Tag("magi/MagiConfig")<MagiConfig, Settings>() {
  /** Fixed settings, for tests and embedding. */
  static fixed = (settings: Partial<Settings>) => Layer.succeed(MagiConfig, { ...defaults, ...settings })

  /** Read the layers for the process's working directory. */
  static fromFiles = (cwd: string = process.cwd()) => Layer.effect(MagiConfig, load(cwd))

  /**
   * The files' settings, or the defaults with one warning saying why: for
   * commands that need none of the settings to do their job (answering a
   * question), which a typo in a config file must not block.
   */
  static fromFilesOrDefaults = (cwd: string = process.cwd(), doing = "this command") =>
    Layer.effect(
      MagiConfig,
      load(cwd).pipe(
        // fallback: a command that does not need the config runs with the defaults, saying so
        Effect.catchAll((e) => Effect.as(Effect.logWarning(`ignoring the config, which ${doing} does not need: ${e.message}`), defaults))
      )
    )
}

type Table = { [key: string]: unknown }
const isTable = (v: unknown): v is Table => typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Date)

/** The git root above `cwd`, or `cwd` itself. */
export const repoRoot = Effect.fn("repoRoot")(function* (cwd: string) {
  const fs = yield* FileSystem.FileSystem
  let dir = NodePath.resolve(cwd)
  for (;;) {
    // fallback: a folder that cannot be looked at is not a repository root
    if (yield* fs.exists(NodePath.join(dir, ".git")).pipe(Effect.orElseSucceed(() => false))) return dir
    const up = NodePath.dirname(dir)
    if (up === dir) return NodePath.resolve(cwd)
    dir = up
  }
})

const configDir = Effect.gen(function* () {
  const xdg = yield* Config.option(Config.nonEmptyString("XDG_CONFIG_HOME"))
  if (Option.isSome(xdg)) return xdg.value
  const home = yield* Config.string("HOME").pipe(Config.withDefault(NodeOs.homedir()))
  return NodePath.join(home, ".config")
}).pipe(Effect.orDie)

/** The owner's own config file, `<config_dir>/magi/config.toml`, whether or not it exists. */
export const userConfigFile = Effect.map(configDir, (dir) => NodePath.join(dir, "magi", "config.toml"))

/**
 * Every table and key magi reads, for telling a typo from a setting: a
 * `[deamon]` table parses fine and does nothing, so without this warning
 * the owner never learns why their setting has no effect. `true` is a key;
 * a table lists its own. `agents` holds one table per roster id, each with
 * the keys `AgentRoster` reads (`env` is the agent's own, any names).
 * `[store] url` is read by the store that keeps questions elsewhere.
 */
type Known = { readonly [key: string]: true | Known | "any" }
const AGENT: Known = { kind: true, command: true, model: true, args: true, env: "any", wait_slice: true, mcp: true, wait: true }
const KNOWN: Known = {
  // The Rust magi kept `answer_timeout` at the top level; `settingsOf` still reads it there.
  answer_timeout: true,
  ask: { answer_timeout: true, wait_slice: true },
  notify: { command: true, ntfy: { server: true, topic: true, token_env: true } },
  daemon: { max_concurrent_runs: true, max_attempts: true, max_deputies: true },
  roles: { implementer: true, conductor: true, chatter: true, planner: true, implementers: true, judges: true },
  // Read by `graph/GraphConfig.ts`, the competition's own settings.
  graph: {
    candidates: true,
    judges: true,
    deliberate_rounds: true,
    keep_losers: true,
    merge: true,
    merge_style: true,
    land_approval: true,
    one_tap_merge: true,
    remote: true,
    land: true,
    land_wait: true,
    land_rounds: true
  },
  verify: { checks: true, check_timeout: true },
  blind: { on_leak: true },
  agents: "any",
  store: { url: true },
  web: { public_url: true },
  host: { name: true, max_turns: true, claim_ttl: true },
  repos: "any",
  approvals: { ask: true, allow: true, deny: true, agents: "any", repos: "any" },
  // Read by `land/ForgeConfig.ts`.
  forge: { api: true }
}

/** What one unknown name in a config file is: its dotted path, and whether it names a table. */
interface Unknown {
  readonly path: ReadonlyArray<string>
  readonly table: boolean
  /** The names magi reads beside it. */
  readonly known: Known
}

/** The tables and keys of `table` that magi does not read, with the names it does read at that level. */
export const unknownKeys = (table: Table, known: Known = KNOWN, prefix: ReadonlyArray<string> = []): ReadonlyArray<Unknown> =>
  Object.entries(table).flatMap(([key, value]): ReadonlyArray<Unknown> => {
    const path = [...prefix, key]
    const expected = known[key]
    if (expected === undefined) return [{ path, table: isTable(value), known }]
    if (expected === true || expected === "any" || !isTable(value)) {
      // Each roster entry's own keys are checked under its id.
      if (prefix.length === 0 && key === "agents" && isTable(value))
        return Object.entries(value).flatMap(([id, agent]) => (isTable(agent) ? unknownKeys(agent, AGENT, [...path, id]) : []))
      return []
    }
    return unknownKeys(value, expected, path)
  })

/**
 * The 1-based line of `text` where the name `u` is written: its table
 * header, or its key in its table; else the line of the nearest table or key
 * around it (a key inside an inline table is on its table's line).
 */
const lineOf = (text: string, u: Unknown): number | undefined => {
  for (let n = u.path.length; n > 0; n--) {
    const at = lineOfPath(text, u.path.slice(0, n))
    if (at !== undefined) return at
  }
  return undefined
}

const lineOfPath = (text: string, path: ReadonlyArray<string>): number | undefined => {
  const lines = text.split(/\r?\n/)
  const name = (raw: string) =>
    raw
      .split(".")
      .map((p) => p.trim().replace(/^["']|["']$/g, ""))
      .join(".")
  const whole = path.join(".")
  let current = ""
  for (const [i, line] of lines.entries()) {
    const header = /^\s*\[\[?([^\]]+)\]\]?/.exec(line)
    if (header !== null) {
      current = name(header[1]!)
      if (current === whole || current.startsWith(`${whole}.`)) return i + 1
      continue
    }
    const key = /^\s*([A-Za-z0-9_\-."' ]+?)\s*=/.exec(line)
    if (key === null) continue
    const full = current === "" ? name(key[1]!) : `${current}.${name(key[1]!)}`
    if (full === whole || full.startsWith(`${whole}.`)) return i + 1
  }
  return undefined
}

/**
 * Mistakes already warned about in this process: a long-running loop reads
 * the config again and again (the roster once a tick), and one warning per
 * mistake is enough to be read.
 */
const warned = new Set<string>()

/** One warning per unknown table or key of `file`, naming its line and the nearest name magi knows. */
const warnUnknown = (file: string, text: string, table: Table) =>
  Effect.forEach(
    unknownKeys(table),
    (u) => {
      const line = lineOf(text, u)
      const last = u.path.at(-1)!
      const parent = u.path.slice(0, -1)
      const spell = (k: string, table: boolean) => (table ? `[${[...parent, k].join(".")}]` : `\`${[...parent, k].join(".")}\``)
      const known = (k: string) => spell(k, u.known[k] !== true)
      const names = Object.keys(u.known)
      const near = closest(last, names)
      const what = `unknown ${u.table ? "table" : "key"} ${spell(last, u.table)}`
      const message = `${file}${line === undefined ? "" : `:${line}`}: ${what}, ignored; ` +
        (near !== undefined ? `did you mean ${known(near)}?` : `magi reads ${names.map(known).join(", ")} here`)
      if (warned.has(message)) return Effect.void
      warned.add(message)
      return Effect.logWarning(message)
    },
    { discard: true }
  )

const readLayer = Effect.fn("readConfigLayer")(function* (file: string) {
  const fs = yield* FileSystem.FileSystem
  const text = yield* fs.readFileString(file).pipe(
    Effect.map(Option.some),
    Effect.catchIf(
      (e) => e._tag === "SystemError" && e.reason === "NotFound",
      () => Effect.succeedNone
    ),
    Effect.mapError((e) => new ConfigError({ message: `cannot read ${file}: ${e.message}` }))
  )
  if (Option.isNone(text)) return Option.none<Table>()
  const table = yield* Effect.try({
    try: () => parse(text.value) as Table,
    catch: (e) =>
      new ConfigError({
        message: e instanceof TomlError
          ? `${file}:${e.line}: ${e.message.split("\n")[0]}`
          : `${file}: ${(e as Error).message}`
      })
  })
  yield* warnUnknown(file, text.value, table)
  return Option.some(table)
})

/** Every key path holding an array, e.g. `notify.command`. */
const arrayPaths = (table: Table, prefix = ""): string[] =>
  Object.entries(table).flatMap(([k, v]) => Array.isArray(v) ? [prefix + k] : isTable(v) ? arrayPaths(v, `${prefix}${k}.`) : [])

const merge = (low: Table, high: Table): Table => {
  const out: Table = { ...low }
  for (const [k, v] of Object.entries(high)) {
    const prev = out[k]
    out[k] = isTable(prev) && isTable(v) ? merge(prev, v) : v
  }
  return out
}

/**
 * Approval rule lists are the one kind of array every layer adds to: a
 * repository's deny rules tighten the machine's, and `RuleSources` reads
 * them file by file to say where each came from. In the merged table they
 * are the union, so a deny rule in both files is not a conflict.
 */
const accumulates = (path: string): boolean => path.startsWith("approvals.")

/** Set `path` (dotted) in `table` to the union of what two layers hold there. */
const unionAt = (table: Table, path: string, low: ReadonlyArray<unknown>): Table => {
  const [head, ...rest] = path.split(".")
  const here = table[head!]
  if (rest.length === 0) return { ...table, [head!]: [...low, ...(Array.isArray(here) ? here : [])] }
  return { ...table, [head!]: unionAt(isTable(here) ? here : {}, rest.join("."), low) }
}

const valueAt = (table: Table, path: string): unknown => path.split(".").reduce<unknown>((t, k) => (isTable(t) ? t[k] : undefined), table)

/** Merge layers lowest first, refusing an array set in two of them (approval rule lists add up instead). */
export const mergeLayers = (layers: ReadonlyArray<{ file: string; table: Table }>): Effect.Effect<Table, ConfigError> => {
  const arrayOwner = new Map<string, string>()
  let merged: Table = {}
  for (const { file, table } of layers) {
    let layer = table
    for (const path of arrayPaths(table)) {
      if (accumulates(path)) {
        const low = valueAt(merged, path)
        if (Array.isArray(low)) layer = unionAt(layer, path, low)
        continue
      }
      const first = arrayOwner.get(path)
      if (first !== undefined)
        return Effect.fail(
          new ConfigError({
            message: `\`${path}\` is set in both ${first} and ${file}; an array must be set in exactly one config file`
          })
        )
      arrayOwner.set(path, file)
    }
    merged = merge(merged, layer)
  }
  return Effect.succeed(merged)
}

const positiveCount = (value: unknown, key: string, files: ReadonlyArray<string>) =>
  typeof value === "number" && Number.isInteger(value) && value > 0
    ? Effect.succeed(value)
    : Effect.fail(new ConfigError({ message: `\`${key}\` must be a whole number above 0, not ${JSON.stringify(value)} (in ${files.join(" or ")})` }))

const positiveSeconds = (value: unknown, key: string, files: ReadonlyArray<string>) =>
  typeof value === "number" && Number.isInteger(value) && value > 0
    ? Effect.succeed(value)
    : Effect.fail(
      new ConfigError({
        message: `\`${key}\` must be a whole number of seconds above 0, not ${JSON.stringify(value)} (in ${files.join(" or ")})`
      })
    )

/** An `http(s)://` URL with no trailing slash, or the error naming `key`. */
const httpUrl = (value: unknown, key: string, files: ReadonlyArray<string>) => {
  const text = typeof value === "string" ? value.trim() : ""
  let url: URL | undefined
  try {
    url = new URL(text)
  } catch {
    url = undefined
  }
  return url !== undefined && (url.protocol === "http:" || url.protocol === "https:") && url.username === "" && url.password === ""
    ? Effect.succeed(text.replace(/\/+$/, ""))
    : Effect.fail(
      new ConfigError({
        message: `\`${key}\` must be an http:// or https:// address with no password in it, not ${JSON.stringify(value)} (in ${files.join(" or ")})`
      })
    )
}

/** `[notify] ntfy`, checked: a topic is required, the server defaults to ntfy.sh. */
const ntfyOf = Effect.fn("ntfyOf")(function* (value: unknown, files: ReadonlyArray<string>) {
  const where = `(in ${files.join(" or ")})`
  if (!isTable(value))
    return yield* new ConfigError({
      message: `\`notify.ntfy\` must be a table such as { server = "https://ntfy.sh", topic = "…", token_env = "NTFY_TOKEN" } ${where}`
    })
  // Every key read first, so a mistake in one never hides which others are read.
  const { server: rawServer, topic, token_env: tokenEnv } = value
  const server = rawServer === undefined ? DEFAULT_NTFY_SERVER : yield* httpUrl(rawServer, "notify.ntfy.server", files)
  if (typeof topic !== "string" || !NTFY_TOPIC.test(topic))
    return yield* new ConfigError({
      message: `\`notify.ntfy.topic\` must be an ntfy topic name (letters, digits, - and _, at most 64), not ${JSON.stringify(topic)} ${where}`
    })
  if (tokenEnv !== undefined && (typeof tokenEnv !== "string" || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(tokenEnv)))
    return yield* new ConfigError({
      message: `\`notify.ntfy.token_env\` must name an environment variable (the token itself stays out of the file), not ${JSON.stringify(tokenEnv)} ${where}`
    })
  return { server, topic, tokenEnv: typeof tokenEnv === "string" ? tokenEnv : null } satisfies NtfySettings
})

const ruleList = (value: unknown, key: string, files: ReadonlyArray<string>) =>
  value === undefined
    ? Effect.succeed([] as ReadonlyArray<string>)
    : Array.isArray(value) && value.every((r) => typeof r === "string" && r.trim() !== "")
    ? Effect.succeed(value as ReadonlyArray<string>)
    : Effect.fail(
      new ConfigError({
        message: `\`${key}\` must be an array of rules such as ["Bash(git status:*)", "Read"], not ${JSON.stringify(value)} (in ${files.join(" or ")})`
      })
    )

/** One table's `allow` and `deny`. */
const ruleListsOf = Effect.fn("ruleListsOf")(function* (table: Table, key: string, files: ReadonlyArray<string>) {
  return { allow: yield* ruleList(table.allow, `${key}.allow`, files), deny: yield* ruleList(table.deny, `${key}.deny`, files) }
})

/** Rule tables keyed by an agent id or a repository path. */
const scopedRules = Effect.fn("scopedRules")(function* (value: unknown, key: string, files: ReadonlyArray<string>) {
  const out: Record<string, ApprovalRuleLists> = {}
  if (value === undefined) return out
  if (!isTable(value)) return yield* new ConfigError({ message: `\`${key}\` must be a table of tables, one per name (in ${files.join(" or ")})` })
  for (const [name, rules] of Object.entries(value)) {
    if (!isTable(rules))
      return yield* new ConfigError({ message: `\`${key}.${name}\` must be a table with \`allow\` and \`deny\` (in ${files.join(" or ")})` })
    out[name] = yield* ruleListsOf(rules, `${key}.${name}`, files)
  }
  return out
})

/** `[approvals]`, its values' types checked; the rules' own syntax is checked where they are read (`approvals/Rules.ts`). */
export const approvalsOf = Effect.fn("approvalsOf")(function* (raw: unknown, files: ReadonlyArray<string>) {
  if (raw === undefined) return noApprovals
  if (!isTable(raw)) return yield* new ConfigError({ message: `\`approvals\` must be a table (in ${files.join(" or ")})` })
  if (raw.ask !== undefined && typeof raw.ask !== "boolean")
    return yield* new ConfigError({ message: `\`approvals.ask\` must be true or false, not ${JSON.stringify(raw.ask)} (in ${files.join(" or ")})` })
  const { allow, deny } = yield* ruleListsOf(raw, "approvals", files)
  return {
    ask: raw.ask === true,
    allow,
    deny,
    agents: yield* scopedRules(raw.agents, "approvals.agents", files),
    repos: yield* scopedRules(raw.repos, "approvals.repos", files)
  } satisfies ApprovalSettings
})

/** Turn the merged tables into settings, checking each value's type. */
export const settingsOf = Effect.fn("settingsOf")(function* (merged: Table, files: ReadonlyArray<string>) {
  const ask = isTable(merged.ask) ? merged.ask : {}
  const notify = isTable(merged.notify) ? merged.notify : {}
  // The Rust magi kept `answer_timeout` at the top level; both spellings work.
  const rawTimeout = ask.answer_timeout ?? merged.answer_timeout
  const answerTimeoutSecs = rawTimeout === undefined ? DEFAULT_ANSWER_TIMEOUT_SECS : yield* positiveSeconds(rawTimeout, "ask.answer_timeout", files)
  let waitSliceSecs = ask.wait_slice === undefined ? DEFAULT_WAIT_SLICE_SECS : yield* positiveSeconds(ask.wait_slice, "ask.wait_slice", files)
  const fromEnv = yield* Config.option(Config.nonEmptyString("MAGI_WAIT_SLICE")).pipe(Effect.orDie)
  if (Option.isSome(fromEnv)) {
    const n = Number(fromEnv.value)
    if (!Number.isInteger(n) || n <= 0)
      return yield* new ConfigError({
        message: `MAGI_WAIT_SLICE must be a whole number of seconds above 0, not ${JSON.stringify(fromEnv.value)}`
      })
    waitSliceSecs = n
  }
  const command = notify.command ?? []
  if (!Array.isArray(command) || !command.every((a) => typeof a === "string"))
    return yield* new ConfigError({
      message: `\`notify.command\` must be an array of strings (argv, never a shell line), in ${files.join(" or ")}`
    })
  const daemon = isTable(merged.daemon) ? merged.daemon : {}
  const roles = isTable(merged.roles) ? merged.roles : {}
  const maxConcurrentRuns = daemon.max_concurrent_runs === undefined
    ? DEFAULT_MAX_CONCURRENT_RUNS
    : yield* positiveCount(daemon.max_concurrent_runs, "daemon.max_concurrent_runs", files)
  const maxAttempts = daemon.max_attempts === undefined ? DEFAULT_MAX_ATTEMPTS : yield* positiveCount(daemon.max_attempts, "daemon.max_attempts", files)
  if (roles.implementer !== undefined && (typeof roles.implementer !== "string" || roles.implementer.trim() === ""))
    return yield* new ConfigError({
      message: `\`roles.implementer\` must name an agent of the roster ([agents.<id>]), not ${JSON.stringify(roles.implementer)} (in ${files.join(" or ")})`
    })
  const implementer = typeof roles.implementer === "string" ? roles.implementer.trim() : null
  // Two deputies: enough for two questions in flight, few enough not to crowd the implementer.
  const maxDeputies = daemon.max_deputies === undefined ? 2 : yield* positiveCount(daemon.max_deputies, "daemon.max_deputies", files)
  if (roles.conductor !== undefined && (typeof roles.conductor !== "string" || roles.conductor.trim() === ""))
    return yield* new ConfigError({
      message: `\`roles.conductor\` must name an agent of the roster ([agents.<id>]), not ${JSON.stringify(roles.conductor)} (in ${files.join(" or ")})`
    })
  const conductor = typeof roles.conductor === "string" ? roles.conductor.trim() : null
  const store = isTable(merged.store) ? merged.store : {}
  if (store.url !== undefined && (typeof store.url !== "string" || store.url.trim() === ""))
    return yield* new ConfigError({
      message: `\`store.url\` must be a postgres://… URL, or left out to keep the records in the home folder (in ${files.join(" or ")})`
    })
  const storeUrl = typeof store.url === "string" ? store.url.trim() : null
  const web = isTable(merged.web) ? merged.web : {}
  const publicUrl = web.public_url === undefined ? null : yield* httpUrl(web.public_url, "web.public_url", files)
  const host = isTable(merged.host) ? merged.host : {}
  if (host.name !== undefined && (typeof host.name !== "string" || !HOST_NAME.test(host.name.trim())))
    return yield* new ConfigError({
      message: `\`host.name\` must be 1 to 63 letters, digits, dots, dashes or underscores, starting with a letter or digit, not ${
        JSON.stringify(host.name)
      } (in ${files.join(" or ")})`
    })
  const hostName = typeof host.name === "string" ? host.name.trim() : defaultHostName()
  const maxTurns = host.max_turns === undefined ? defaultMaxTurns() : yield* positiveCount(host.max_turns, "host.max_turns", files)
  const claimTtlSecs = host.claim_ttl === undefined ? DEFAULT_CLAIM_TTL_SECS : yield* positiveSeconds(host.claim_ttl, "host.claim_ttl", files)
  if (claimTtlSecs < MIN_CLAIM_TTL_SECS)
    return yield* new ConfigError({
      message:
        `\`host.claim_ttl\` must be at least ${MIN_CLAIM_TTL_SECS} seconds, not ${claimTtlSecs}: a shorter one would hand a task to a second host while its first still runs it through a busy database's pause (in ${
          files.join(" or ")
        })`
    })
  const repos: Record<string, string> = {}
  if (merged.repos !== undefined && !isTable(merged.repos))
    return yield* new ConfigError({ message: `\`repos\` must be a table of names to folders, e.g. [repos] app = "/srv/src/app" (in ${files.join(" or ")})` })
  for (const [name, path] of Object.entries(isTable(merged.repos) ? merged.repos : {})) {
    if (!HOST_NAME.test(name) || typeof path !== "string" || !NodePath.isAbsolute(path))
      return yield* new ConfigError({
        message: `\`repos.${name}\` must map a plain name (letters, digits, dots, dashes, underscores) to an absolute folder, not ${JSON.stringify(path)} (in ${
          files.join(" or ")
        })`
      })
    repos[name] = NodePath.resolve(path)
  }
  const approvals = yield* approvalsOf(merged.approvals, files)
  // Last: a table with a mistake in it stops here, after every other key was read.
  const ntfy = notify.ntfy === undefined ? null : yield* ntfyOf(notify.ntfy, files)
  return {
    answerTimeoutSecs,
    waitSliceSecs,
    notifyCommand: command as string[],
    ntfy,
    maxConcurrentRuns,
    maxAttempts,
    maxDeputies,
    implementer,
    conductor,
    storeUrl,
    publicUrl,
    hostName,
    maxTurns,
    claimTtlSecs,
    repos,
    approvals,
    files
  } satisfies Settings
})

/**
 * The merged TOML tables for `cwd` and the files they came from, for modules
 * that own a section of their own (e.g. `[agents.<id>]`) rather than a field
 * of `Settings`. Same layers and the same array rule as `load`.
 */
export const loadTable = Effect.fn("loadConfigTable")(function* (cwd: string) {
  const repo = yield* repoRoot(cwd)
  const candidates = [
    NodePath.join(yield* configDir, "magi", "config.toml"),
    NodePath.join(repo, ".magi", "config.toml"),
    NodePath.join(repo, "magi.toml")
  ]
  const layers: Array<{ file: string; table: Table }> = []
  for (const file of candidates) {
    const table = yield* readLayer(file)
    if (Option.isSome(table)) layers.push({ file, table: table.value })
  }
  const table: { readonly [key: string]: unknown } = yield* mergeLayers(layers)
  return { table, files: layers.map((l) => l.file), layers }
})

/** Read and merge the three layers for `cwd` into settings. */
export const load = Effect.fn("loadConfig")(function* (cwd: string) {
  const { table, files, layers } = yield* loadTable(cwd)
  const settings = yield* settingsOf(table as Table, files)
  // A repository's config is a file an agent can write: it may turn approvals on, never off.
  const machine = layers[0]?.file === (yield* userConfigFile) ? layers[0].table.approvals : undefined
  const machineAsks = isTable(machine) && machine.ask === true
  return machineAsks && !settings.approvals.ask ? { ...settings, approvals: { ...settings.approvals, ask: true } } : settings
})
