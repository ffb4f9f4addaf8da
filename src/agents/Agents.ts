/**
 * Agent CLIs, driven headless: one call is one turn of one seat's
 * conversation.
 *
 * A seat (`impl`, …) keeps a single CLI session for its whole life, because
 * the whole point of resuming it (after the owner answers, after a restart) is
 * that the agent still holds the context its question was asked in. So every
 * adapter knows two shapes of call, a new session and a resumed one, plus a
 * read-only variant for seats that must not change files, and how to read the
 * reply and the session id out of what its CLI prints.
 *
 * Adapters are pure (`plan`, `parse`); `Agents.call` is the one place a
 * process starts. It writes the prompt and both output streams under the
 * caller's artifacts directory, so the owner can read exactly what an agent
 * was told and said, and it kills the whole process tree when the turn ends
 * (timed out, exited, or interrupted): an agent's tools start children of
 * their own, and a hung `npm test` must not outlive the turn that started it.
 */
import * as Command from "@effect/platform/Command"
import * as CommandExecutor from "@effect/platform/CommandExecutor"
import * as FileSystem from "@effect/platform/FileSystem"
import { Context, Data, Duration, Effect, Fiber, Layer, Option, Random, Ref, Schedule, Stream } from "effect"
import * as NodePath from "node:path"
import type { TurnUsage } from "./Usage.js"
import type { AgentKind, AgentSpec, WaitMode } from "./AgentRoster.js"
import type { MagiName } from "./Prompts.js"
import { errorLine } from "./ErrorLine.js"
import { MagiHome } from "../platform/MagiHome.js"
import { load as loadConfig } from "../platform/MagiConfig.js"
import { type AgentAdapter, type McpServerSpec, plainMessage, type Plan, type PlanInput } from "./adapters/Adapter.js"
import { sliceUnder } from "./Slices.js"
import { agy } from "./adapters/agy.js"
import { claude } from "./adapters/claude.js"
import { codex } from "./adapters/codex.js"
import { command } from "./adapters/command.js"
import { opencode } from "./adapters/opencode.js"
import { TurnSlots } from "./TurnSlots.js"
import * as LiveLog from "./LiveLog.js"
import * as TurnImages from "./TurnImages.js"
import { DEPUTY_NODE } from "../questions/Leases.js"
import { type AgentProcess, guardianCommand, startOf } from "./Guardian.js"
import * as NodeOs from "node:os"

export { expandTemplate, plainMessage, usageLimit, type Plan, type PlanInput } from "./adapters/Adapter.js"

// ---------------------------------------------------------------------------
// Seats

/** One seat's conversation: which agent holds it, and how to get back in. */
export interface SeatState {
  /** The seat's name in its run, e.g. `impl`. */
  readonly key: string
  /** Roster id of the agent sitting in it. */
  readonly agent: string
  /** Turns that have run (started a process), whatever came of them. */
  readonly turns: number
  /**
   * The CLI's conversation id: for claude minted by magi before the first
   * turn (claude accepts the id it is told), for the others captured from
   * the first turn's output. Null until known.
   */
  readonly session: string | null
  /**
   * The environment the seat's CLI needs to find its session again (`HOME`,
   * `CLAUDE_CONFIG_DIR`, `CODEX_HOME`, `XDG_*`: the adapter's `sessionEnv`),
   * as it was when the seat started. Every later turn runs with it, whoever
   * drives it: a daemon started with another `HOME` still finds the session.
   */
  readonly env?: Readonly<Record<string, string>> | undefined
}

export const newSeat = (key: string, agent: string): SeatState => ({ key, agent, turns: 0, session: null })

/**
 * Can this seat's conversation be picked up again? `command` agents carry
 * their own state (they get `{session}` and the prompt file), so always; the
 * rest only once a turn ran and left an id to resume by.
 */
export const hasSession = (kind: AgentKind, seat: SeatState): boolean =>
  kind === "command" ? true : seat.turns > 0 && seat.session !== null && seat.session !== ""

// ---------------------------------------------------------------------------
// Building the call

/** The adapter for each kind of agent CLI. */
const ADAPTERS: Record<AgentKind, AgentAdapter> = { claude, codex, opencode, agy, command }

/** The headless argv for one call of `agent`, exactly as its CLI wants it. */
export const plan = (agent: AgentSpec, input: PlanInput): Plan => ADAPTERS[agent.kind].plan(agent, input)

/**
 * Seconds one `magi ask` may block under `agent` (given to it as
 * `MAGI_WAIT_SLICE`): `[agents.<id>] wait_slice`, else its kind's slice,
 * which ends before that CLI's shell tool stops waiting on the command (as
 * the agent's environment sets that limit, for a CLI that lets it).
 */
/** Does `agent`'s CLI take an attached image into its model request (else the prompt names its path)? */
export const takesImages = (agent: AgentSpec): boolean => ADAPTERS[agent.kind].images !== undefined

/** Does this seat ask through `magi mcp`? `[agents.<id>] mcp`, else wherever its CLI speaks MCP. */
export const usesMcp = (agent: AgentSpec): boolean => ADAPTERS[agent.kind].mcp !== undefined && agent.mcp !== false

/**
 * What the environment an MCP server needs from the agent's: magi's own
 * variables, and where magi finds its config and store. Passed explicitly,
 * because a CLI may start its MCP servers with a cleaned environment.
 */
const MCP_ENV = /^(MAGI_[A-Z_]+|PATH|HOME|XDG_CONFIG_HOME|XDG_DATA_HOME)$/

/** `magi mcp` as this seat's CLI should start it, or undefined when the seat asks by shell. */
export const mcpServer = (
  agent: AgentSpec,
  magi: string,
  env: Readonly<Record<string, string>>,
  cwd: string
): McpServerSpec | undefined => {
  const support = ADAPTERS[agent.kind].mcp
  if (support === undefined || agent.mcp === false) return undefined
  const passed: Record<string, string> = {}
  for (const [k, v] of Object.entries({ ...process.env, ...env })) if (v !== undefined && MCP_ENV.test(k)) passed[k] = v
  // The question records where the agent works, whatever folder its CLI starts the server in.
  passed.MAGI_CWD = cwd
  return {
    command: magi,
    args: ["mcp", "--client", support.client, "--slice", String(mcpSliceSecs(agent))],
    env: passed
  }
}

/**
 * Seconds one `ask`/`wait` tool call of `agent` may wait: the slice under
 * the tool-call timeout magi registers, or `[agents.<id>] wait_slice` when
 * that is shorter (an owner, or a measurement, may want short slices).
 */
export const mcpSliceSecs = (agent: AgentSpec): number => {
  const support = ADAPTERS[agent.kind].mcp
  const under = support === undefined ? Number.POSITIVE_INFINITY : Duration.toSeconds(sliceUnder(support.timeout))
  return Math.min(under, agent.waitSliceSecs ?? under)
}

/**
 * What a seat of `agent` does when a slice hands back `pending`:
 * `[agents.<id>] wait`, else its CLI's default (`end-turn` for claude,
 * codex and opencode, `poll` for the rest).
 */
export const waitModeOf = (agent: AgentSpec): WaitMode => agent.wait ?? ADAPTERS[agent.kind].wait

export const waitSliceSecs = (agent: AgentSpec, processEnv: Readonly<Record<string, string | undefined>> = process.env): number =>
  agent.waitSliceSecs ??
    Math.floor(
      Duration.toSeconds(ADAPTERS[agent.kind].waitSliceIn?.({ ...processEnv, ...agent.env }) ?? ADAPTERS[agent.kind].waitSlice)
    )

/**
 * What `agent`'s CLI needs to find its sessions again, as it is now: the
 * agent's own `env` over this process's. Recorded when a seat starts.
 */
export const sessionEnvOf = (agent: AgentSpec, processEnv: Readonly<Record<string, string | undefined>>): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const name of ADAPTERS[agent.kind].sessionEnv) {
    const v = agent.env[name] ?? processEnv[name]
    if (v !== undefined && v !== "") out[name] = v
  }
  return out
}

// ---------------------------------------------------------------------------
// Reading the reply

/** What one call came to. */
export interface Reply {
  /** The agent's answer text, or whatever it printed instead. */
  readonly text: string
  /** The session id the CLI reported, if it did. */
  readonly session: string | null
  /** Ran to the end, exited 0 and said something. */
  readonly usable: boolean
  /** Set when the agent hit its usage limit: the reset time if it said one, else "". */
  readonly quota: string | null
  /**
   * Why a turn that is not usable failed, as the owner should read it (the
   * CLI's message without JSON or ANSI, or the adapter's diagnosis with what
   * to do). Absent when the turn is usable.
   */
  readonly problem?: string
  /** What the turn cost, as the CLI reported it; absent when it reported nothing. */
  readonly usage?: TurnUsage | undefined
}

/** Read one call's output the way its CLI prints it. */
export const parse = (kind: AgentKind, stdout: string, stderr: string, exitCode: number | null, timedOut: boolean): Reply => {
  const p = ADAPTERS[kind].parse(stdout, stderr)
  // An empty answer still says something: whatever the CLI printed is what
  // the owner gets to read about why.
  const text = p.text.trim() !== "" ? p.text.trim() : stdout.trim() !== "" ? stdout.trim() : stderr.trim()
  const usable = !timedOut && exitCode === 0 && !p.error && p.text.trim() !== ""
  if (usable) return { text, session: p.session, usable, quota: p.quota, usage: p.usage }
  const said = plainMessage(p.error && p.text.trim() !== "" ? p.text : stderr.trim() !== "" ? stderr : text)
  const problem = p.problem ??
    (timedOut
      ? "the agent's turn timed out"
      : exitCode === 0 && !p.error
      ? "the agent ended its turn without an answer"
      // One line of what it said, not all of it: the reason becomes the
      // run's, the task's last error and its hold, each shown in a row or
      // a card; the whole output stays in the turn's `.err`.
      : `the agent's turn failed (${exitCode === null ? "killed by a signal" : `exit ${exitCode}`})${said === "" ? "" : `: ${errorLine(said)}`}`)
  return { text: p.error ? plainMessage(text) : text, session: p.session, usable, quota: p.quota, problem, usage: p.usage }
}

// ---------------------------------------------------------------------------
// Running a call

/** Everything one call needs besides the agent. */
export interface CallInput {
  readonly agent: AgentSpec
  readonly seat: SeatState
  readonly prompt: string
  readonly cwd: string
  readonly allowWrite: boolean
  readonly timeout: Duration.Duration
  /** Where `<stem>.prompt.md`, `.out` and `.err` go. */
  readonly artifactsDir: string
  readonly stem: string
  /** `MAGI_RUN` and `MAGI_NODE` for the agent's own `magi ask`. */
  readonly run: string
  readonly node: string
  /** The planning chat the call is a turn of: `MAGI_CHAT`, and a `command` agent's `{session}`. */
  readonly chat?: string
  /**
   * The repository the call works for, when `cwd` is a run's worktree of
   * it: its config's `[approvals]` applies, and its approval rules are kept
   * for it (`MAGI_REPO`), not for one run's worktree.
   */
  readonly repo?: string
  /**
   * Told the agent's process as soon as it started, to record it where
   * whoever takes the turn over finds it (`Guardian.endLeftover`).
   */
  readonly onStart?: (agent: AgentProcess) => Effect.Effect<void>
  /** Absolute paths of the images the owner attached to this turn's words, given to a CLI that takes images its own way. */
  readonly images?: ReadonlyArray<string>
}

/** A call that ran: the reply, how it ended, and the seat after it. */
export interface CallResult extends Reply {
  readonly exitCode: number | null
  readonly timedOut: boolean
  readonly seat: SeatState
  readonly stdoutFile: string
  readonly stderrFile: string
}

/** The agent could not be started at all (missing program, bad cwd). */
export class AgentStartFailed extends Data.TaggedError("AgentStartFailed")<{ readonly message: string }> {}

/**
 * How long a killed agent gets to exit after SIGTERM before SIGKILL: enough
 * for a CLI to flush its session file, which is what makes a later resume
 * possible.
 */
export const KILL_GRACE = Duration.seconds(5)

/**
 * How long output may keep flowing after the agent's own process exited. A
 * child it backgrounded can hold the pipe open forever; two seconds takes
 * whatever was already written, then the group is killed.
 */
export const DRAIN_AFTER_EXIT = Duration.seconds(2)

/**
 * How long what an agent left behind (a dev server, a `sleep &`) gets to end
 * on SIGTERM once the agent itself is done, before SIGKILL. Short: nothing
 * of the turn's is waiting on them any more.
 */
export const LEFTOVER_GRACE = Duration.seconds(1)

/**
 * How long the output pipes may stay open after the whole group was killed:
 * only a process that left the group (setsid) can still hold them, and the
 * turn does not wait on it.
 */
export const PIPES_AFTER_KILL = Duration.millis(500)

export interface AgentsShape {
  readonly call: (input: CallInput) => Effect.Effect<CallResult, AgentStartFailed>
}

export class Agents extends Context.Tag("magi/Agents")<Agents, AgentsShape>() {
  static layer = Layer.effect(Agents, Effect.flatMap(MagiHome, (home) => make(home.dir)))
}

/** A v4 uuid from Effect's `Random`, so tests can pin it. */
export const mintUuid = Effect.gen(function* () {
  const hex: string[] = []
  for (let i = 0; i < 16; i++) hex.push((yield* Random.nextIntBetween(0, 256)).toString(16).padStart(2, "0"))
  hex[6] = ((parseInt(hex[6]!, 16) & 0x0f) | 0x40).toString(16).padStart(2, "0")
  hex[8] = ((parseInt(hex[8]!, 16) & 0x3f) | 0x80).toString(16).padStart(2, "0")
  const h = hex.join("")
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
})

/**
 * The folder holding this build's `magi` command (`dist/bin/magi`, made by
 * the build), found from the script this process runs; none when magi runs
 * from source, as under the test runner.
 */
export const ownBinDir = Effect.gen(function* () {
  const fs = yield* FileSystem.FileSystem
  const entry = process.argv[1]
  if (entry === undefined) return undefined
  // fallback: an unresolvable path is used as given (only to find magi's own folder)
  const real = yield* fs.realPath(entry).pipe(Effect.orElseSucceed(() => entry))
  const dir = NodePath.join(NodePath.dirname(real), "bin")
  // fallback: a folder that cannot be looked at is not magi's (the PATH entry is skipped)
  return (yield* fs.exists(NodePath.join(dir, "magi")).pipe(Effect.orElseSucceed(() => false))) ? dir : undefined
})

/**
 * How an agent should call this magi: the absolute path of its `magi`
 * command when this is a build (named in the prompt, so an agent whose login
 * shell resets PATH still finds it), else plain `magi`.
 */
export const magiCommand: Effect.Effect<string, never, FileSystem.FileSystem> = Effect.map(
  ownBinDir,
  (dir) => dir === undefined ? "magi" : NodePath.join(dir, "magi")
)

/**
 * How the prompts given to `agent` name magi: plain `magi` in the commands
 * (with a note of the path), or, for a CLI whose shell loses PATH, the
 * absolute path in every command, so its first `magi ask` already works.
 */
export const magiNameFor = (agent: AgentSpec): Effect.Effect<MagiName, never, FileSystem.FileSystem> =>
  Effect.map(ownBinDir, (dir) => {
    const path = dir === undefined ? "magi" : NodePath.join(dir, "magi")
    // The tools are there only when magi can name the command that serves them.
    const tools = dir !== undefined && usesMcp(agent)
    return {
      path,
      run: ADAPTERS[agent.kind].shellLosesPath === true ? path : "magi",
      ...(tools ? { tools: true } : {}),
      ...(waitModeOf(agent) === "end-turn" ? { endTurn: true } : {})
    }
  })

export const make = Effect.fn("Agents.make")(function* (home: string) {
  const fs = yield* FileSystem.FileSystem
  const executor = yield* CommandExecutor.CommandExecutor
  // The host's capacity, when this process runs turns for the host (`magi
  // serve`, `magi run`): every agent process takes one of its slots first.
  const slots = yield* Effect.serviceOption(TurnSlots)

  /** Append what `s` prints to `into` as it arrives, so a turn cut short keeps what was said; `live` reads it as it comes. */
  const collect = (s: Stream.Stream<Uint8Array, unknown>, into: Ref.Ref<string>, live?: LiveLog.LiveWriter) =>
    Stream.decodeText(live === undefined ? s : Stream.tap(s, live.feed)).pipe(
      Stream.runForEach((text) => Ref.update(into, (sofar) => sofar + text)),
      // fallback: best-effort signal to a process that may have exited already
      Effect.ignore
    )

  /** Does a session file exist at `lookup` (in its root or one folder down)? */
  const sessionExists = (lookup: { readonly root: string; readonly name: string }) =>
    Effect.gen(function* () {
      if (yield* fs.exists(NodePath.join(lookup.root, lookup.name))) return true
      const dirs = yield* fs.readDirectory(lookup.root)
      for (const d of dirs) if (yield* fs.exists(NodePath.join(lookup.root, d, lookup.name))) return true
      return false
      // fallback: a process that cannot be probed counts as not running (only decides whether to wait for it)
    }).pipe(Effect.orElseSucceed(() => false))

  /** Signal every process in the group `pid` leads; false when none is left. */
  const signalGroup = (pid: number, signal: NodeJS.Signals | 0) =>
    Effect.sync(() => {
      try {
        process.kill(-pid, signal)
        return true
      } catch {
        return false
      }
    })

  /**
   * A file a call needs (`Plan.files`), named by its content: kept when it
   * is there, else written beside and renamed into place, so a call never
   * loads half of one another call is writing.
   */
  const placeFile = (file: { readonly path: string; readonly content: string }) =>
    Effect.gen(function* () {
      if (yield* fs.exists(file.path)) return
      yield* fs.makeDirectory(NodePath.dirname(file.path), { recursive: true })
      const scratch = `${file.path}.${process.pid}-${yield* Random.nextIntBetween(0, 0x7fffffff)}.tmp`
      yield* fs.writeFileString(scratch, file.content)
      yield* fs.rename(scratch, file.path)
    })

  const call = (input: CallInput): Effect.Effect<CallResult, AgentStartFailed> =>
    Effect.gen(function* () {
      const { agent, seat } = input
      const adapter = ADAPTERS[agent.kind]
      // The seat's recorded session environment over the daemon's: the CLI
      // looks for its session where it was when the seat started.
      const recorded = seat.env ?? {}
      const lookup = adapter.sessionFiles
      // A CLI whose session magi names (claude) resumes it if it exists and
      // creates it if not, whatever the turn count says: a first turn cut
      // short may have created it, or not.
      const resuming = lookup !== undefined && seat.session !== null && seat.session !== ""
        ? yield* sessionExists(lookup(seat.session, { ...process.env, ...agent.env, ...recorded }))
        : hasSession(agent.kind, seat) && seat.turns > 0
      const newSession = lookup !== undefined && !resuming ? (seat.session ?? (yield* mintUuid)) : null
      const turn = seat.turns + 1
      const base = NodePath.join(input.artifactsDir, input.stem)
      const promptFile = `${base}.prompt.md`
      const stdoutFile = `${base}.out`
      const stderrFile = `${base}.err`
      const failed = (what: string) => (e: { readonly message: string }) => new AgentStartFailed({ message: `${what}: ${e.message}` })
      yield* fs.makeDirectory(input.artifactsDir, { recursive: true }).pipe(Effect.mapError(failed(`create ${input.artifactsDir}`)))
      yield* fs.writeFileString(promptFile, input.prompt).pipe(Effect.mapError(failed(`write ${promptFile}`)))
      // A sandboxed agent is given this folder to write its questions in; a
      // sandbox can only open up a folder that exists.
      const questionsDir = NodePath.join(home, "questions")
      yield* fs.makeDirectory(questionsDir, { recursive: true }).pipe(Effect.mapError(failed(`create ${questionsDir}`)))

      const binDir = yield* ownBinDir.pipe(Effect.provideService(FileSystem.FileSystem, fs))
      const seatEnv: Record<string, string> = {
        ...agent.env,
        ...recorded,
        // The agent's `magi ask` must reach this same magi, installed on
        // PATH or not (a fresh clone after `npm ci` has it only in dist/).
        ...(binDir === undefined ? {} : { PATH: `${binDir}${NodePath.delimiter}${agent.env.PATH ?? process.env.PATH ?? ""}` }),
        // What its `magi ask` prints to run next (`--wait`, `--thread`) names
        // magi by this path: codex's `bash -lc` resets PATH.
        ...(binDir === undefined ? {} : { MAGI_BIN: NodePath.join(binDir, "magi") }),
        // The node that runs this magi, for `dist/bin/magi` to run it with:
        // a login shell that resets PATH loses node too when it comes from
        // nvm (set up in .bashrc, which a login shell does not read).
        MAGI_NODEJS: process.execPath,
        MAGI_RUN: input.run,
        MAGI_NODE: input.node,
        ...(input.chat === undefined ? {} : { MAGI_CHAT: input.chat }),
        MAGI_SEAT: seat.key,
        // The roster id, for `[approvals.agents.<id>]` rules.
        MAGI_AGENT: agent.id,
        MAGI_REPO: input.repo ?? input.cwd,
        MAGI_TURN: String(turn),
        MAGI_PROMPT_FILE: promptFile,
        MAGI_ALLOW_WRITE: input.allowWrite ? "1" : "0",
        // Each `magi ask` hands back before this CLI's shell tool gives up
        // on the command (claude and opencode stop waiting at 120 s).
        MAGI_WAIT_SLICE: String(waitSliceSecs(agent)),
        // What its `magi ask` (or magi's `wait` tool) tells it on `pending`.
        // Only a run's seat can end its turn on it: the waiter resumes a
        // seat of a run, and nothing resumes a conductor, a deputy or a chat.
        MAGI_WAIT: input.run !== "" && input.node !== DEPUTY_NODE ? waitModeOf(agent) : "poll",
        // An agent's `git push` must fail rather than wait for a password
        // nobody is there to type.
        GIT_TERMINAL_PROMPT: "0",
        MAGI_HOME: home
      }
      const mcp = binDir === undefined ? undefined : mcpServer(agent, NodePath.join(binDir, "magi"), seatEnv, input.cwd)
      // `[approvals] ask`, as the repository's own config says: its tool calls
      // that need permission go to the owner, by a route that runs this magi
      // (claude's through `magi mcp`, codex's hook and opencode's plugin by its path).
      const approve = binDir !== undefined &&
        input.allowWrite &&
        (yield* loadConfig(input.repo ?? input.cwd).pipe(
          Effect.provideService(FileSystem.FileSystem, fs),
          Effect.map((c) => c.approvals.ask),
          // fallback: a probe that failed is "no"; it only chooses how the agent is started
          Effect.orElseSucceed(() => false)
        ))
      const images = yield* TurnImages.prepare(adapter.images, input.images ?? []).pipe(
        Effect.provideService(FileSystem.FileSystem, fs),
        Effect.mapError((e) => new AgentStartFailed({ message: `agent ${agent.id}: ${e.message}` }))
      )
      const p = plan(agent, {
        cwd: input.cwd,
        promptFile,
        prompt: input.prompt,
        label: seat.key,
        resume: resuming ? seat.session : null,
        ...(input.chat === undefined ? {} : { chat: input.chat }),
        newSession,
        allowWrite: input.allowWrite,
        timeout: input.timeout,
        questionsDir,
        ...(binDir === undefined ? {} : { magi: NodePath.join(binDir, "magi") }),
        ...(mcp === undefined ? {} : { mcp }),
        ...(approve ? { approve } : {}),
        home,
        inherited: process.env,
        ...(images.length === 0 ? {} : { images })
      })
      for (const file of p.files ?? []) yield* placeFile(file).pipe(Effect.mapError(failed(`write ${file.path}`)))
      const env: Record<string, string> = { ...seatEnv, ...p.env }
      const [program, ...args] = p.argv
      const command = Command.make(program!, ...args).pipe(
        Command.workingDirectory(input.cwd),
        Command.env(env),
        Command.feed(p.stdin)
      )

      // The seat's live events, appended while the turn runs (docs/web.md#live-output).
      const live = yield* LiveLog.open(LiveLog.liveFile(input.artifactsDir, seat.key), turn).pipe(Effect.provideService(FileSystem.FileSystem, fs))
      const stdout = yield* Ref.make("")
      const stderr = yield* Ref.make("")
      // What the agent said is kept however the turn ends, cut short
      // included: written once the group is gone, so nothing comes after.
      const save = Effect.zipRight(
        // fallback: the output files are a copy for the owner; the turn's result is already in hand
        Effect.flatMap(Ref.get(stdout), (text) => fs.writeFileString(stdoutFile, text)).pipe(Effect.ignore),
        // fallback: the output files are a copy for the owner; the turn's result is already in hand
        Effect.flatMap(Ref.get(stderr), (text) => fs.writeFileString(stderrFile, text)).pipe(Effect.ignore)
      )
      const ran = yield* Effect.scoped(
        Effect.gen(function* () {
          const proc = yield* Command.start(command).pipe(
            // Node's spawn throws some refusals (E2BIG: argv over the
            // kernel's limit) instead of reporting them: still a start that
            // failed, said plainly, never a crash that leaves the run running.
            Effect.catchAllDefect((d) => {
              const why = d instanceof Error ? d.message : String(d)
              return Effect.fail(
                new AgentStartFailed({
                  message: `agent ${agent.id}: \`${program}\` could not be started: ${why}${
                    /E2BIG/.test(why) ? " (its command line is longer than the system allows; pass long text by file or stdin)" : ""
                  }`
                })
              )
            }),
            Effect.mapError((e) =>
              e._tag === "AgentStartFailed"
                ? e
                : new AgentStartFailed({
                  message: e._tag === "SystemError" && e.reason === "NotFound"
                    ? `agent ${agent.id}: \`${program}\` could not be started (no such program, or ${input.cwd} is gone)`
                    : `agent ${agent.id}: \`${program}\` could not be started: ${e.message}`
                })
            )
          )
          // End the agent's whole process group: SIGTERM, then SIGKILL after
          // a grace. The agent itself, still running, gets `KILL_GRACE` to
          // flush its session; what it left behind, `LEFTOVER_GRACE`. Never
          // waits unboundedly, whatever ignores SIGTERM or keeps running.
          const endGroup = Effect.gen(function* () {
            if (!(yield* signalGroup(proc.pid, "SIGTERM"))) return
            // fallback: waiting for the exit only; an exit code that cannot be read changes nothing
            const leaderExit = proc.exitCode.pipe(Effect.interruptible, Effect.ignore)
            // fallback: a process that cannot be probed counts as not running (only decides whether to wait for it)
            const leaderRunning = yield* proc.isRunning.pipe(Effect.orElseSucceed(() => false))
            // fallback: a bounded wait for the exit; the kill comes next either way
            if (leaderRunning) yield* Effect.timeout(leaderExit, KILL_GRACE).pipe(Effect.ignore)
            else
              yield* signalGroup(proc.pid, 0).pipe(
                Effect.repeat({ schedule: Schedule.spaced(Duration.millis(50)), while: (left) => left }),
                Effect.timeout(LEFTOVER_GRACE),
                // fallback: best-effort kill of a process group that may be gone
                Effect.ignore
              )
            yield* signalGroup(proc.pid, "SIGKILL")
            // fallback: a bounded wait for the exit; the kill already went out
            yield* Effect.timeout(leaderExit, KILL_GRACE).pipe(Effect.ignore)
          })
          const collectors = Fiber.zip(yield* Effect.fork(collect(proc.stdout, stdout, live)), yield* Effect.fork(collect(proc.stderr, stderr)))
          // Should this magi die without a finalizer (kill -9), its guardian
          // ends the group; the record lets whoever takes the turn over do
          // the same if the guardian died too.
          const start = yield* startOf(proc.pid)
          yield* Command.start(guardianCommand(proc.pid, KILL_GRACE)).pipe(
            // display: the guardian is a safety net; its failure is logged and the turn goes on
            Effect.catchAllCause((c) => Effect.logWarning(`agent ${agent.id}: its guardian could not be started: ${c}`))
          )
          if (input.onStart !== undefined) yield* input.onStart({ host: NodeOs.hostname(), pid: proc.pid, pgid: proc.pid, start })
          // However the turn ends, interrupted included, the group goes with
          // it. Added after the start (and the guardian's), so it runs before
          // the platform's own finalizers: this one sends SIGTERM and then
          // waits on the agent for as long as it takes; the guardian's stops
          // the guardian, which has nothing left to guard.
          yield* Effect.addFinalizer(() => endGroup)
          const exited = yield* proc.exitCode.pipe(
            Effect.map((c): number | null => c),
            // fallback: no exit code read is "none"; the turn is then reported as not finished
            Effect.orElseSucceed(() => null),
            Effect.timeout(input.timeout),
            Effect.option
          )
          if (Option.isNone(exited)) yield* endGroup
          // Output still flowing after exit comes from children the agent
          // left behind; take what is there, then end them, and stop
          // listening to anything still holding the pipes.
          // fallback: a bounded wait for the output pipes; what was read so far is kept
          yield* Fiber.join(collectors).pipe(Effect.timeout(DRAIN_AFTER_EXIT), Effect.ignore)
          yield* endGroup
          // fallback: a bounded wait for the output pipes; what was read so far is kept
          yield* Fiber.join(collectors).pipe(Effect.timeout(PIPES_AFTER_KILL), Effect.ignore)
          yield* Fiber.interruptFork(collectors)
          return {
            stdout: yield* Ref.get(stdout),
            stderr: yield* Ref.get(stderr),
            exitCode: Option.getOrNull(exited),
            timedOut: Option.isNone(exited)
          }
        })
      ).pipe(
        Effect.provideService(CommandExecutor.CommandExecutor, executor),
        Effect.ensuring(save),
        Effect.onExit((exit) => (exit._tag === "Success" ? Effect.void : live.end("the turn was cut short", true)))
      )
      const reply = parse(agent.kind, ran.stdout, ran.stderr, ran.exitCode, ran.timedOut)
      yield* live.end(reply.usable ? "" : (reply.problem ?? ""), !reply.usable)
      return {
        ...reply,
        exitCode: ran.exitCode,
        timedOut: ran.timedOut,
        stdoutFile,
        stderrFile,
        seat: {
          ...seat,
          turns: turn,
          // The id the CLI reported wins; claude keeps the one it was given.
          session: reply.session ?? newSession ?? seat.session,
          env: seat.env ?? sessionEnvOf(agent, process.env)
        }
      } satisfies CallResult
    }).pipe(Effect.withSpan("Agents.call", { attributes: { agent: input.agent.id, seat: input.seat.key } }))

  const slotted = (input: CallInput) => (Option.isSome(slots) ? slots.value.withSlot(input.run, call(input)) : call(input))
  return { call: slotted } satisfies AgentsShape
})
