/**
 * `magi doctor`'s checks: everything a first day with real agent CLIs trips
 * over, each run for real and reported as one `Check`. The agents come from
 * the roster (configured, or found on PATH); each is asked its version, made
 * to parse magi's own argv without starting a session, checked for what it
 * refuses as root and for where its sessions live, and asked whether it
 * finds `magi` the way it runs it: an agent CLI's login shell, a `command`
 * agent's PATH. Then the notification command, the home, and the config
 * files.
 *
 * Every call is bounded (`CALL_TIMEOUT`), gets no stdin, and keeps only the
 * tail of what it prints; none of them needs the network.
 */
import * as Command from "@effect/platform/Command"
import * as CommandExecutor from "@effect/platform/CommandExecutor"
import * as FileSystem from "@effect/platform/FileSystem"
import { Duration, Effect, Either, Layer, Option, Stream } from "effect"
import * as NodeFsPromises from "node:fs/promises"
import * as NodePath from "node:path"
import { type AgentSpec, load as loadRoster, which } from "../agents/AgentRoster.js"
import { ownBinDir, plan } from "../agents/Agents.js"
import { load as loadConfig, type Settings, userConfigFile } from "../platform/MagiConfig.js"
import * as Notify from "../questions/Notifier.js"
import * as Ntfy from "../questions/Ntfy.js"
import * as Q from "../questions/Question.js"
import * as LastNotification from "../questions/LastNotification.js"
import * as WebPush from "../questions/WebPush.js"
import { Devices } from "../devices/Devices.js"
import * as ConfiguredStore from "../platform/ConfiguredStore.js"
import { approvalChecks } from "./ApprovalChecks.js"
import { forgeChecks } from "./ForgeChecks.js"
import * as VerifyConfig from "../verify/VerifyConfig.js"
import { type Check, fail, ok, warn } from "./Check.js"
import * as Postgres from "../store/postgres/Postgres.js"
import * as PgConnection from "../store/postgres/PgConnection.js"
import * as Hosts from "../platform/Hosts.js"
import { MagiConfig } from "../platform/MagiConfig.js"
import { MagiHome } from "../platform/MagiHome.js"
import { VERSION } from "../platform/Version.js"
import { type Env, factsFor } from "./AgentFacts.js"
import * as ServiceManager from "../platform/ServiceManager.js"

/** A `--version` or `--help` returns in well under a second; a minute covers a cold npm shim on a busy machine. */
export const CALL_TIMEOUT = Duration.seconds(60)

/** Below this, a question with its panel (8 MiB at most) may not fit. */
export const MIN_FREE_BYTES = 64 * 1024 * 1024
/** Below this, worth a warning: a few hundred panels' worth. */
export const LOW_FREE_BYTES = 1024 * 1024 * 1024

export interface DoctorInput {
  /** The repository whose config and roster are checked. */
  readonly repo: string
  /** magi's home. */
  readonly home: string
  /** The environment magi runs with. */
  readonly env: Env
  readonly uid: number
  /** Run the notification command for real (`magi notify --test`'s sample). */
  readonly notify: boolean
}

interface Ran {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** Run argv with `env`, no stdin, bounded; the reason it could not run otherwise. */
const call = (argv: ReadonlyArray<string>, env: Record<string, string>, cwd: string) =>
  Effect.gen(function* () {
    const [program, ...args] = argv
    const proc = yield* Command.make(program!, ...args).pipe(
      Command.env(env),
      Command.workingDirectory(cwd),
      Command.feed(""),
      Command.start
    )
    // fallback: best-effort kill of a probe process
    yield* Effect.addFinalizer((exit) => (exit._tag === "Failure" ? proc.kill("SIGKILL").pipe(Effect.ignore) : Effect.void))
    const [stdout, stderr, code] = yield* Effect.all(
      [Notify.keepTail(Stream.decodeText(proc.stdout)), Notify.keepTail(Stream.decodeText(proc.stderr)), proc.exitCode],
      { concurrency: "unbounded" }
    )
    return { code, stdout, stderr } satisfies Ran
  }).pipe(
    Effect.scoped,
    Effect.timeoutFail({ duration: CALL_TIMEOUT, onTimeout: () => `did not finish within ${Duration.format(CALL_TIMEOUT)}` }),
    Effect.mapError((e) => typeof e === "string" ? e : e._tag === "SystemError" && e.reason === "NotFound" ? "no such program" : e.message),
    Effect.either
  )

const firstLine = (text: string) => text.split("\n").map((l) => l.trim()).find((l) => l !== "") ?? ""
const why = (r: Ran) => `exit ${r.code}: ${Notify.lastStderrLine(r.stderr === "" ? r.stdout : r.stderr)}`

/** The process environment as a plain record (unset values dropped). */
const plain = (env: Env): Record<string, string> => Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined))

/**
 * magi's argv for `agent`, as a new writing seat's first turn, without the
 * prompt; with `[approvals] ask` (`approve`), the flags that route its
 * approvals (codex's `--approve-for-me` and hook), so the dry call checks them too.
 */
export const magiArgv = (agent: AgentSpec, cwd: string, approve = false, magi?: string): ReadonlyArray<string> => {
  const prompt = "magi doctor: a dry call, no prompt is sent"
  const p = plan(agent, {
    cwd,
    promptFile: NodePath.join(cwd, "magi-doctor.prompt.md"),
    prompt,
    label: "doctor",
    resume: null,
    newSession: "00000000-0000-4000-8000-000000000000",
    allowWrite: true,
    timeout: CALL_TIMEOUT,
    questionsDir: NodePath.join(cwd, "questions"),
    ...(magi === undefined ? {} : { magi }),
    ...(approve ? { approve } : {})
  })
  return p.argv.filter((a) => a !== prompt)
}

/**
 * Whether an agent CLI's shell finds `magi`. Its shell tool may start from
 * the login profile (codex runs every command as `bash -lc`), and a profile
 * that resets PATH loses the magi the agent was given.
 */
const magiInLoginShell = (label: string, env: Record<string, string>, repo: string, binDir: string | undefined) =>
  Effect.gen(function* () {
    const shell = yield* call(["bash", "-lc", "command -v magi"], env, repo)
    return Either.isRight(shell) && shell.right.code === 0 && shell.right.stdout.trim() !== ""
      ? ok(`${label}: magi in its login shell`, shell.right.stdout.trim())
      : fail(
        `${label}: magi in its login shell`,
        `\`bash -lc 'command -v magi'\` finds no magi${Either.isLeft(shell) ? ` (${shell.left})` : ""}`,
        binDir === undefined
          ? "install magi on PATH (npm link in the magi checkout), or add its dist/bin to PATH in ~/.profile"
          : `a login profile resets PATH: add export PATH="${binDir}:$PATH" to ~/.profile (or ~/.bash_profile), or install magi on PATH`
      )
  })

/**
 * Whether a `command` agent finds `magi`. magi starts its argv directly, no
 * shell and no login profile in between, with `PATH` (this build's bin
 * folder first) and `MAGI_BIN` set: what matters is that `magi` resolves on
 * exactly that PATH. A login shell's view would fail a program that works.
 */
const magiOnItsPath = (label: string, path: string, binDir: string | undefined) =>
  Effect.map(which("magi", path), (found) =>
    Option.isSome(found)
      ? ok(
        `${label}: magi on its PATH`,
        `${found.value} (it runs with no shell, so no login profile resets it${binDir === undefined ? "" : "; also given as MAGI_BIN"})`
      )
      : fail(
        `${label}: magi on its PATH`,
        "no magi on the PATH magi gives the program",
        "install magi on PATH (npm link in the magi checkout), or run magi from its build (dist/magi.js), which puts its bin folder first on the agent's PATH"
      ))

const agentChecks = (agent: AgentSpec, input: DoctorInput, binDir: string | undefined, approve: boolean) =>
  Effect.gen(function* () {
    const facts = factsFor(agent.kind)
    const label = `agent ${agent.id} (${agent.kind})`
    const checks: Check[] = []
    const merged: Env = { ...input.env, ...agent.env }
    const path = `${binDir === undefined ? "" : binDir + NodePath.delimiter}${merged.PATH ?? ""}`
    const env = { ...plain(merged), ...(facts?.quietEnv ?? {}), PATH: path }
    const program = agent.command[0]!
    const found = NodePath.isAbsolute(program)
      // display: a doctor check: a program that cannot be looked at is reported missing
      ? (yield* Effect.flatMap(FileSystem.FileSystem, (fs) => fs.exists(program)).pipe(Effect.orElseSucceed(() => false)))
        ? Option.some(program)
        : Option.none<string>()
      : yield* which(program, merged.PATH ?? "")
    if (Option.isNone(found)) {
      checks.push(
        fail(`${label}: program`, `\`${program}\` is not on PATH`, `install it, or set command = "/full/path/to/${program}" under [agents.${agent.id}]`)
      )
      return checks
    }
    checks.push(ok(`${label}: program`, found.value))
    if (facts === undefined) {
      // A `command` agent is the owner's own program: nothing to ask it.
      checks.push(ok(`${label}: argv`, "a command agent runs exactly the argv configured; nothing to check"))
    } else {
      const version = yield* call([program, ...agent.command.slice(1), ...facts.versionArgs], env, input.repo)
      checks.push(
        Either.isRight(version) && version.right.code === 0
          ? ok(`${label}: version`, firstLine(version.right.stdout) || "(printed nothing)")
          : fail(
            `${label}: version`,
            `\`${program} ${facts.versionArgs.join(" ")}\` failed (${Either.isLeft(version) ? version.left : why(version.right)})`,
            `check that ${program} is installed and runs from a terminal`
          )
      )
      const argv = magiArgv(agent, input.repo, approve, binDir === undefined ? undefined : NodePath.join(binDir, "magi"))
      const dry = facts.dryCall(argv)
      const parsed = yield* call(dry, env, input.repo)
      checks.push(
        Either.isRight(parsed) && parsed.right.code === 0
          ? ok(`${label}: magi's argv`, `accepted (${dry.slice(1).join(" ")})`)
          : fail(
            `${label}: magi's argv`,
            `\`${dry.join(" ")}\` was refused (${Either.isLeft(parsed) ? parsed.left : why(parsed.right)})`,
            `this ${agent.kind} version does not take the flags magi passes; install the version docs/agents/${agent.kind}.md names, or adjust args under [agents.${agent.id}]`
          )
      )
      const root = facts.rootProblem(agent, argv, merged, input.uid)
      checks.push(ok(`${label}: approvals`, facts.approvals))
      checks.push(
        root === undefined
          ? ok(`${label}: root`, input.uid === 0 ? "runs as root with magi's argv" : "not running as root")
          : fail(`${label}: root`, "refused as root", root)
      )
      const sessions = facts.sessionsDir(merged)
      if (sessions !== undefined) {
        const fs = yield* FileSystem.FileSystem
        // display: a doctor check: a folder that cannot be looked at is reported missing
        const there = yield* fs.exists(sessions).pipe(Effect.orElseSucceed(() => false))
        checks.push(
          ok(
            `${label}: sessions`,
            there ? `kept in ${sessions}` : `will be kept in ${sessions} (not created yet); a resume needs the same HOME and config variables`
          )
        )
      }
    }
    checks.push(agent.kind === "command" ? yield* magiOnItsPath(label, path, binDir) : yield* magiInLoginShell(label, env, input.repo, binDir))
    return checks
  })

/**
 * How many phones take Web Push, where the page offers it: none when it does
 * not (no https `public_url`), or when the store cannot be read (its own
 * check says why).
 */
const pushSubscriptions = (settings: Settings, input: DoctorInput) =>
  WebPush.offered(settings.publicUrl)
    ? Effect.flatMap(Devices, (d) => d.subscriptions).pipe(
      Effect.map((all) => Option.some(all.length)),
      Effect.provide(
        Devices.layer.pipe(
          Layer.provide(ConfiguredStore.layer),
          Layer.provideMerge(Layer.merge(MagiConfig.fixed(settings), MagiHome.at(input.home)))
        )
      ),
      // display: a doctor check: no figure read is none shown
      Effect.orElseSucceed(() => Option.none<number>())
    )
    : Effect.succeed(Option.none<number>())

const notifyChecks = (settings: Settings, input: DoctorInput, pushes: Option.Option<number>) =>
  Effect.gen(function* () {
    const name = "notifications"
    const command = settings.notifyCommand
    // Web Push is a channel like the others: a phone that turned it on is
    // notified even with no ntfy and no command, and an https page nobody
    // subscribed from is worth saying, since that is the step people skip.
    const pushLine: Check[] = Option.match(pushes, {
      onNone: () => [],
      onSome: (n) => [
        n > 0
          ? ok(`${name}: Web Push`, `${n} ${n === 1 ? "phone takes" : "phones take"} pushes`)
          : warn(
            `${name}: Web Push`,
            `${settings.publicUrl} offers it, but no phone has turned it on`,
            `open ${settings.publicUrl}/#/devices on the phone and press "Notify this phone"`
          )
      ]
    })
    // The file magi reads, which `XDG_CONFIG_HOME` moves: a hint naming
    // `~/.config` would send the owner to edit a file nothing reads.
    const ntfy = settings.ntfy
    // A channel configured is not a channel that works: the last attempt's
    // outcome (written by every publish from this home) says whether it did.
    // `--notify` with a command sends a sample now, whose own line reports the fresh outcome.
    const last = input.notify && command.length > 0 ? Either.right(Option.none()) : yield* Effect.either(LastNotification.read(input.home))
    const lastLine: Check[] = Either.isLeft(last)
      ? [warn(name, last.left, "magi notify --test tries again")]
      : Option.isSome(last.right) && !last.right.value.ok
      ? [warn(name, LastNotification.failedLine(last.right.value), "magi notify --test tries again; this warning stays until a notification goes out")]
      : []
    // A failed last notification is the channel's state: an "ok" line for
    // the same channel beside it would contradict it, so none is printed.
    const lastFailed = lastLine.length > 0
    const ntfyLine = ntfy === null || lastFailed
      ? []
      : [
        ok(
          `${name}: ntfy`,
          `topic ${Ntfy.maskedTopic(ntfy.topic)} at ${ntfy.server}${
            settings.publicUrl === null ? " (no [web] public_url: no answer buttons)" : ""
          }; magi notify --test sends a sample`
        )
      ]
    if (command.length === 0)
      return ntfy !== null || Option.getOrElse(pushes, () => 0) > 0
        ? [...lastLine, ...ntfyLine, ...pushLine]
        : [
          warn(
            name,
            "no notification is configured: the web UI is the only place questions show up",
            `set [notify] ntfy = { topic = "a-long-random-topic" } in ${yield* userConfigFile}, or a [notify] command (argv)`
          ),
          ...pushLine
        ]
    const program = command[0]!
    const found = NodePath.isAbsolute(program) ? Option.some(program) : yield* which(program, input.env.PATH ?? "")
    if (Option.isNone(found)) return [fail(name, `\`${program}\` is not on PATH`, "install it, or give its full path in [notify] command")]
    const checks: Check[] = [...lastLine, ...(lastFailed ? [] : [ok(`${name}: program`, found.value)]), ...ntfyLine, ...pushLine]
    const url = input.env[Notify.WEB_URL_ENV] ?? ""
    if (url === "" && command.some((a) => a.includes("{url}")))
      checks.push(
        warn(`${name}: link`, `the command uses {url} but ${Notify.WEB_URL_ENV} is unset`, `export ${Notify.WEB_URL_ENV} with the address magi web prints`)
      )
    if (!input.notify) {
      if (!lastFailed) checks.push(ok(`${name}: test`, "not sent (pass --notify to send a sample notification)"))
      return checks
    }
    // The sample is a publish like any other: its outcome replaces the last one.
    const notifier = Notify.recordingIn(input.home, yield* FileSystem.FileSystem, yield* Notify.make(command, Notify.questionUrl(url)))
    const now = new Date()
    const sample = Q.make({
      id: Q.makeId(now, 0xd0c7),
      run: "doctor",
      node: "doctor",
      seat: "operator",
      summary: "magi doctor: if you see this, notifications work",
      detail: "",
      choices: [],
      now
    })
    const sent = yield* Effect.either(notifier.notify(sample))
    checks.push(
      Either.isRight(sent)
        ? ok(`${name}: test`, "the sample notification was sent")
        : fail(`${name}: test`, sent.left.message, "run the command by hand to see why; magi passes it as argv, never through a shell")
    )
    return checks
  })

/** The home: there, writable, private, and with room. */
const homeChecks = (input: DoctorInput) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const name = `home ${input.home}`
    const info = yield* fs.stat(input.home).pipe(Effect.option)
    if (Option.isNone(info)) {
      const parent = NodePath.dirname(input.home)
      const probe = NodePath.join(parent, `.magi-doctor-${process.pid}`)
      const writable = yield* fs.writeFileString(probe, "").pipe(
        Effect.zipRight(fs.remove(probe)),
        Effect.as(true),
        // display: a doctor check: a failed probe is reported as "no"
        Effect.orElseSucceed(() => false)
      )
      return [
        writable
          ? ok(name, "not created yet; magi makes it on first use")
          : fail(name, `does not exist, and ${parent} is not writable`, `create it (mkdir -p ${input.home}) or set MAGI_HOME to a writable directory`)
      ]
    }
    if (info.value.type !== "Directory") return [fail(name, "is not a directory", "set MAGI_HOME to a directory")]
    const checks: Check[] = []
    const probe = NodePath.join(input.home, `.magi-doctor-${process.pid}.tmp`)
    const written = yield* fs.writeFileString(probe, "probe").pipe(Effect.zipRight(fs.remove(probe)), Effect.either)
    checks.push(
      Either.isRight(written)
        ? ok(`${name}: writable`, "yes")
        : fail(
          `${name}: writable`,
          written.left.message,
          `make it writable by this user (chown/chmod), or set MAGI_HOME elsewhere; an agent in a sandbox needs it writable too`
        )
    )
    const mode = info.value.mode & 0o777
    checks.push(
      (mode & 0o077) === 0
        ? ok(`${name}: permissions`, `mode ${mode.toString(8)}`)
        : warn(`${name}: permissions`, `mode ${mode.toString(8)}: other users can read the questions and answers`, `chmod 700 ${input.home}`)
    )
    const free = yield* Effect.tryPromise(() => NodeFsPromises.statfs(input.home)).pipe(
      Effect.map((s) => Number(s.bavail) * Number(s.bsize)),
      Effect.option
    )
    if (Option.isSome(free)) {
      const mib = Math.floor(free.value / (1024 * 1024))
      checks.push(
        free.value < MIN_FREE_BYTES
          ? fail(`${name}: free disk`, `${mib} MiB free`, "free some space: a question with its panel takes up to 8 MiB")
          : free.value < LOW_FREE_BYTES
          ? warn(`${name}: free disk`, `${mib} MiB free`, "free some space before it runs out")
          : ok(`${name}: free disk`, `${mib} MiB free`)
      )
    }
    return checks
  })

/** Every check, in the order they are printed. */
/** A round trip slower than this makes every listing and answer feel it: worth a warning. */
export const SLOW_STORE_MS = 50

/**
 * Where the records are: the home folder (nothing to check beyond the home),
 * or a database: reachable, its schema this build's, and how far away.
 */
const storeChecks = (input: DoctorInput, configured: string | null) =>
  Effect.gen(function* () {
    const raw = input.env.MAGI_STORE_URL?.trim() || configured
    if (raw === null || raw === undefined || raw === "") return [ok("store", `the home folder ${input.home}`)]
    const url = yield* Effect.either(Postgres.parseUrl(raw))
    if (Either.isLeft(url)) return [fail("store", url.left.message, "set [store] url (or MAGI_STORE_URL) to postgres://user:password@host:5432/database")]
    const where = Postgres.maskUrl(raw)
    const probed = yield* Effect.either(PgConnection.probe(url.right))
    if (Either.isLeft(probed))
      return [fail("store", probed.left.message, "start the database or fix [store] url / MAGI_STORE_URL; every magi command needs it")]
    const { applied, roundTripsMs } = probed.right
    const newest = Math.max(0, ...applied)
    const checks: Check[] = [ok("store", `PostgreSQL at ${where}`)]
    if (newest > Postgres.LATEST_MIGRATION)
      checks.push(
        fail("store: schema", `migrated by a newer magi (step ${newest}; this build knows up to ${Postgres.LATEST_MIGRATION})`, "upgrade magi on this machine")
      )
    else if (newest < Postgres.LATEST_MIGRATION)
      checks.push(
        warn(
          "store: schema",
          `${applied.length} of ${Postgres.LATEST_MIGRATION} migrations applied`,
          "the next magi command applies the rest; nothing to do by hand"
        )
      )
    else checks.push(ok("store: schema", `all ${Postgres.LATEST_MIGRATION} migrations applied`))
    const sorted = [...roundTripsMs].sort((a, b) => a - b)
    const median = sorted[sorted.length >> 1] ?? 0
    const words = `round trip ${median.toFixed(1)} ms (median of ${sorted.length})`
    checks.push(
      median > SLOW_STORE_MS
        ? warn("store: latency", words, "a database this far away slows every listing; run it nearer the hosts")
        : ok("store: latency", words)
    )
    return checks
  })

/**
 * This host's name and capacity, and every host the store knows: online or
 * when last seen, and any running another magi version than this one.
 */
const hostChecks = (input: DoctorInput, settings: Settings) =>
  Effect.gen(function* () {
    const checks: Check[] = [
      ok(
        "host",
        `this is ${settings.hostName}, running up to ${settings.maxTurns} agent turns at once${
          Object.keys(settings.repos).length === 0 ? "" : `; repos ${Object.keys(settings.repos).join(", ")}`
        }`
      )
    ]
    const hosts = yield* Effect.either(
      Effect.flatMap(Hosts.Hosts, (h) => h.list).pipe(
        Effect.provide(Hosts.Hosts.layer.pipe(Layer.provideMerge(Layer.merge(MagiConfig.fixed(settings), MagiHome.at(input.home)))))
      )
    )
    if (Either.isLeft(hosts)) return [...checks, warn("hosts", `cannot read the hosts: ${hosts.left.message}`, "see the store check above")]
    if (hosts.right.length === 0) return [...checks, ok("hosts", "none registered yet; each magi serve and magi web registers its host")]
    const words = hosts.right
      .map((h) => h.online ? `${h.name} online (magi ${h.version}${h.loop ? "" : ", its page only: no loop"})` : `${h.name} offline since ${h.last_seen}`)
      .join(", ")
    checks.push(ok("hosts", words))
    const behind = hosts.right.filter((h) => h.online && h.version !== VERSION)
    if (behind.length > 0)
      checks.push(warn(
        "hosts: versions",
        `${behind.map((h) => `${h.name} runs magi ${h.version}`).join(", ")}; this is ${VERSION}`,
        "run one magi version on every host sharing the store"
      ))
    return checks
  })

/**
 * Is the waiter running as a service? Without one, an answer given while no
 * `magi serve` or `magi web` runs waits until one is started by hand, and a
 * reboot stops it for good.
 */
const serviceChecks = (input: DoctorInput) =>
  Effect.gen(function* () {
    const name = "service"
    const manager = yield* Effect.either(ServiceManager.managerFor(process.platform))
    if (Either.isLeft(manager)) return [warn(name, manager.left.message, "start `magi serve` at boot with your system's service manager")]
    const serve = yield* ServiceManager.status(manager.right, "serve", input.env, input.uid)
    const web = yield* ServiceManager.status(manager.right, "web", input.env, input.uid)
    const running = [serve, web].find((s) => s.running)
    if (running !== undefined) return [ok(name, `${running.state}: ${running.path}`)]
    const installed = [serve, web].find((s) => s.installed)
    if (installed !== undefined)
      return [warn(name, `installed but ${installed.state}: ${installed.path}`, "`magi service status` says more; the service manager's log says why")]
    return [
      warn(
        name,
        "the waiter is not running as a service: answers reach an agent whose `magi ask` is gone only while a magi serve or magi web runs, and a reboot stops it",
        "`magi service install` (or `--web` for the page too)"
      )
    ]
  }).pipe(Effect.provide(ServiceManager.ServiceRunner.layer))

export const runDoctor = (input: DoctorInput) =>
  Effect.gen(function* () {
    const checks: Check[] = []
    const settings = yield* Effect.either(loadConfig(input.repo))
    if (Either.isLeft(settings))
      checks.push(fail("config", settings.left.message, "fix the file and line named; until then magi ask, run and serve refuse to start"))
    else
      checks.push(
        ok("config", settings.right.files.length > 0 ? `read ${settings.right.files.join(", ")}` : "no config files found; the defaults apply")
      )
    const roster = yield* Effect.either(loadRoster(input.repo))
    const binDir = yield* ownBinDir
    if (Either.isLeft(roster)) checks.push(fail("agents", roster.left.message, "fix the [agents.<id>] table named"))
    else if (roster.right.agents.length === 0) {
      const user = yield* userConfigFile
      const read = Either.isRight(settings) ? settings.right.files : []
      checks.push(
        fail(
          "agents",
          "none configured and none of claude, codex, opencode, agy on PATH",
          // The file the owner has (the one `magi init` wrote), else the user config it would write.
          `install an agent CLI, or configure [agents.<id>] in ${
            read.includes(user) ? user : (read.at(-1) ?? user)
          } (any script or CLI, as a command agent: docs/agents/command.md)`
        )
      )
    } else for (const agent of roster.right.agents)
        checks.push(...(yield* agentChecks(agent, input, binDir, Either.isRight(settings) && settings.right.approvals.ask)))
    // The store is checked before the notifications (which count the phones
    // it keeps for Web Push) but reported after them, in the order a first
    // day meets them.
    const store = yield* storeChecks(input, Either.isRight(settings) ? settings.right.storeUrl : null)
    const storeUsable = !store.some((c) => c.status === "fail")
    if (Either.isRight(settings)) {
      const pushes = storeUsable ? yield* pushSubscriptions(settings.right, input) : Option.none<number>()
      checks.push(...(yield* notifyChecks(settings.right, input, pushes)))
    }
    const verify = yield* Effect.either(VerifyConfig.load(input.repo))
    checks.push(
      Either.isRight(verify)
        ? ok("verify", VerifyConfig.describeSettings(verify.right))
        : verify.left._tag === "VerifyConfigError"
        ? fail("verify", verify.left.message, "fix the key named (docs/review.md)")
        : ok("verify", "not in a repository: a repository's magi.toml says what its runs verify")
    )
    checks.push(...(yield* forgeChecks(input.repo, input.env)))
    checks.push(...(yield* approvalChecks(input.repo).pipe(Effect.provideService(MagiHome, { dir: input.home }))))
    checks.push(...(yield* homeChecks(input)))
    checks.push(...store)
    if (Either.isRight(settings) && storeUsable) checks.push(...(yield* hostChecks(input, settings.right)))
    checks.push(...(yield* serviceChecks(input)))
    return checks as ReadonlyArray<Check>
  })

export type DoctorRequirements = FileSystem.FileSystem | CommandExecutor.CommandExecutor
