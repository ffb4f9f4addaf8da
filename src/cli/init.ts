/**
 * `magi init [--yes]`: a first setup in one command. Finds the agent CLIs
 * on PATH and their versions, offers ntfy with a random topic (and prints
 * the subscribe link's QR for the phone), asks where the phone reaches
 * `magi web`, writes a commented config (`platform/ConfigDraft.ts`); when
 * the page is reachable beyond this machine, offers to pair the phone (the
 * code and its QR, as `magi web pair`); sends a test question with a button
 * and waits for the owner's press (saying how long it waited when none
 * came); and ends with `magi doctor`'s checks. `--yes` takes every default
 * and asks nothing, for scripts: it pairs nothing and sends nothing. An
 * existing config is never rewritten: running it again changes nothing it
 * was not asked to.
 */
import { Command, Options } from "@effect/cli"
import * as Process from "@effect/platform/Command"
import * as FileSystem from "@effect/platform/FileSystem"
import { Clock, Config, Duration, Effect, Option, Schedule, Stream } from "effect"
import * as NodePath from "node:path"
import * as NodeReadline from "node:readline"
import { DISCOVERABLE, which } from "../agents/AgentRoster.js"
import { render as renderChecks } from "../doctor/Check.js"
import * as ConfigDraft from "../platform/ConfigDraft.js"
import { MagiConfig, userConfigFile } from "../platform/MagiConfig.js"
import { Notifier } from "../questions/Notifier.js"
import * as Q from "../questions/Question.js"
import { QuestionStore } from "../questions/QuestionStore.js"
import { isLoopback, publicHostOf, reachableBeyondLoopback } from "../web/Bind.js"
import { questionsLayer } from "../app/Layers.js"
import { devicesOfConfig, printPairingCode } from "./web.js"
import { forTerminal } from "../platform/TerminalText.js"
import { CliFailure } from "./CliFailure.js"
import { checksFor } from "./doctor.js"
import { writeErr, writeOut } from "./io.js"

/** A `--version` answers at once; a cold npm shim on a busy machine in a few seconds. */
const VERSION_TIMEOUT = Duration.seconds(20)

/** The first line of `program --version`, if it gives one in time. */
const versionOf = (program: string) =>
  Process.make(program, "--version").pipe(
    Process.feed(""),
    Process.start,
    Effect.flatMap((proc) => Stream.mkString(Stream.decodeText(proc.stdout))),
    Effect.scoped,
    Effect.timeout(VERSION_TIMEOUT),
    Effect.map((out) => out.split("\n").map((l) => l.trim()).find((l) => l !== "")),
    // fallback: no answer read from the terminal is "none given"
    Effect.orElseSucceed(() => undefined)
  )

const findAgents = (path: string) =>
  Effect.forEach(DISCOVERABLE, (kind) =>
    Effect.flatMap(which(kind, path), (found) =>
      Option.match(found, {
        onNone: () => Effect.succeed(Option.none<ConfigDraft.FoundAgent>()),
        onSome: (at) => Effect.map(versionOf(at), (version) => Option.some({ kind, path: at, version }))
      }))).pipe(Effect.map((all) => all.flatMap(Option.toArray)))

/** Git repositories in `dir`: itself, and its folders one level down. */
const reposIn = (dir: string) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    // fallback: a folder that cannot be looked at is not a repository (only offered as a choice)
    const isRepo = (d: string) => fs.exists(NodePath.join(d, ".git")).pipe(Effect.orElseSucceed(() => false))
    // display: the folders offered as choices; none when the folder cannot be listed
    const names = yield* fs.readDirectory(dir).pipe(Effect.orElseSucceed(() => [] as Array<string>))
    const candidates = [dir, ...names.filter((n) => !n.startsWith(".")).sort().map((n) => NodePath.join(dir, n))]
    return yield* Effect.filter(candidates, isRepo)
  })

/**
 * Questions at the terminal: `ask` gives the answer's line, or `fallback`
 * when stdin has ended; `close` lets go of stdin, which would otherwise keep
 * the process alive once it is done.
 */
const asker = () => {
  let reader: NodeReadline.Interface | undefined
  let lines: AsyncIterator<string> | undefined
  const ask = (question: string, fallback: string) =>
    Effect.flatMap(writeOut(question), () =>
      Effect.promise(async () => {
        reader ??= NodeReadline.createInterface({ input: process.stdin, terminal: false })
        lines ??= reader[Symbol.asyncIterator]()
        const next = await lines.next()
        return next.done === true ? fallback : next.value.trim()
      }))
  return { ask, close: Effect.sync(() => reader?.close()) }
}

/**
 * How long the test question waits for the owner's press: time to take the
 * phone out, unlock it and find the notification, not so long that a
 * button that cannot reach magi web leaves the setup hanging.
 */
export const PRESS_WAIT = Duration.minutes(3)

/** Names a shorter wait, in seconds, for a script (or a test) that presses at once or never. */
export const PRESS_WAIT_ENV = "MAGI_INIT_PRESS_WAIT_SECS"

/** How often the test question is looked at while waiting: a press shows within a second. */
const PRESS_POLL = Duration.seconds(1)

/** The test question's run: what its notification's title says, and what is abandoned when nobody pressed. */
export const TEST_RUN = "magi-init"

export const TEST_CHOICE = "It works"

/**
 * A test question on every configured channel, with one button, and the
 * wait for its press: the press goes through ntfy's (or the push's) button
 * to `magi web` at the page's address, so it proves the whole way back.
 * Nobody pressing in `PRESS_WAIT`: the question is abandoned, and the
 * owner is told how long it waited and what to check.
 */
const testNotification = (publicUrl: string | null) =>
  Effect.gen(function* () {
    const notifier = yield* Notifier
    const store = yield* QuestionStore
    for (const channel of notifier.channels) yield* writeOut(`notifying: ${forTerminal(channel)}\n`)
    const now = yield* Clock.currentTimeMillis
    const q = Q.make({
      id: Q.makeId(new Date(now), 0x1417),
      run: TEST_RUN,
      node: "init",
      seat: "operator",
      summary: `magi init's test: press "${TEST_CHOICE}" to finish the setup`,
      detail: "",
      choices: [TEST_CHOICE],
      now: new Date(now)
    })
    yield* store.create(q)
    // A notification that failed leaves no test question open for good: nobody could press its button.
    yield* notifier.notify(q).pipe(
      // fallback: best-effort cleanup of the test question; the send's own failure is what is reported
      Effect.tapError(() => store.abandonForRun(TEST_RUN, "magi init's test notification could not be sent").pipe(Effect.ignore))
    )
    if (publicUrl === null) {
      yield* store.abandonForRun(TEST_RUN, "magi init's test needs no answer without a page address")
      return yield* writeOut("the test notification went out; with no page address it has no button to press\n")
    }
    // fallback: a wait override that cannot be read is the default wait
    const wait = Option.match(yield* Config.option(Config.integer(PRESS_WAIT_ENV)).pipe(Effect.orElseSucceed(() => Option.none<number>())), {
      onNone: () => PRESS_WAIT,
      onSome: (secs) => Duration.seconds(Math.max(1, secs))
    })
    yield* writeOut(
      `the test notification went out; press "${TEST_CHOICE}" on it (magi web must be running at ${publicUrl}). Waiting up to ${Duration.format(wait)}…\n`
    )
    const settled: Effect.Effect<boolean, unknown> = Effect.map(store.get(q.id), (found) => found.status !== "open")
    const pressed = yield* Effect.repeat(settled, { schedule: Schedule.spaced(PRESS_POLL), until: (done: boolean) => done }).pipe(
      Effect.timeoutOption(wait)
    )
    const waited = Math.round(((yield* Clock.currentTimeMillis) - now) / 1000)
    if (Option.isSome(pressed)) {
      const settled = yield* store.get(q.id)
      return yield* writeOut(
        settled.status === "answered"
          ? `pressed after ${waited}s: the button reached magi web, and an answer from your phone reaches your agents\n`
          : `the test question was closed after ${waited}s without a press\n`
      )
    }
    yield* store.abandonForRun(TEST_RUN, "nobody pressed magi init's test button")
    yield* writeOut(
      `no press reached magi web in ${waited}s. Check that the notification arrived, that magi web runs at ${publicUrl} ` +
        "(`magi web`, or `magi service install --web`), and that the phone reaches that address; `magi notify --test` sends another\n"
    )
  }).pipe(
    Effect.provide(questionsLayer()),
    Effect.mapError((e: unknown) =>
      CliFailure.refused(`the test notification failed: ${typeof e === "object" && e !== null && "message" in e ? String(e.message) : String(e)}`)
    )
  )

const yes = (answer: string, fallback: boolean) => (answer === "" ? fallback : /^y(es)?$/i.test(answer))

export const init = Command.make(
  "init",
  { yes: Options.boolean("yes").pipe(Options.withDescription("take every default without asking (agents found, ntfy with a new topic, no page address)")) },
  (o) =>
    Effect.gen(function* () {
      const fs = yield* FileSystem.FileSystem
      const prompt = asker()
      yield* Effect.addFinalizer(() => prompt.close)
      const ask = (question: string, fallback: string) => (o.yes ? Effect.succeed(fallback) : prompt.ask(question, fallback))
      const file = yield* userConfigFile
      const agents = yield* findAgents(process.env.PATH ?? "")
      yield* writeOut(
        agents.length === 0
          ? "agents: none of claude, codex, opencode, agy is on PATH. Any script or other CLI can be the agent instead: a `command` agent, " +
            'e.g. [agents.mine] kind = "command", command = ["./my-agent.sh"] in the config (docs/agents/command.md says what it is given and prints)\n'
          : agents.map((a) => `agent ${a.kind}: ${forTerminal(a.version ?? "version unknown")} (${a.path})\n`).join("")
      )
      // A config that cannot be looked at is not "none yet": init would write over it.
      if (yield* fs.exists(file)) {
        yield* writeOut(`config: keeping ${file} as it is (move it away to start over)\n`)
      } else {
        const repos = yield* reposIn(process.cwd())
        const takeNtfy = yes(yield* ask(`Notify your phone through ntfy (${ConfigDraft.NTFY_SERVER}, a free push service with an app)? [Y/n] `, "y"), true)
        const ntfy = takeNtfy ? { server: ConfigDraft.NTFY_SERVER, topic: ConfigDraft.randomTopic() } : undefined
        if (ntfy !== undefined) {
          const link = ConfigDraft.subscribeLink(ntfy)
          // The QR encoder is evaluated only when a code is drawn, not at every start.
          const QrText = yield* Effect.promise(() => import("../platform/QrText.js"))
          yield* writeOut(`ntfy: subscribe to ${link} in the ntfy app (scan this with the phone):\n${QrText.render(link)}`)
        }
        let publicUrl: string | undefined
        for (;;) {
          const given = yield* ask("Where does your phone reach magi web (e.g. https://box.tailnet.ts.net)? Empty for nowhere yet: ", "")
          if (given === "") break
          if (/^https?:\/\/[^/\s]+/.test(given)) {
            publicUrl = given.replace(/\/+$/, "")
            const host = publicHostOf(publicUrl)
            if (host !== undefined && isLoopback(host))
              yield* writeOut(
                `warning: ${publicUrl} is on this machine only, so a phone cannot reach it (nor a notification's button); ` +
                  "give the address the phone reaches magi web at (its Tailscale name, say), or change [web] public_url later\n"
              )
            break
          }
          yield* writeOut("That is not an http:// or https:// address.\n")
        }
        // With two or more agents a run can be a competition: asked, with what it costs against one agent.
        let candidates: number | undefined
        while (agents.length >= 2 && candidates === undefined) {
          yield* writeOut(`competition: ${ConfigDraft.competitionCost(3)}\n`)
          candidates = ConfigDraft.candidatesOf(yield* ask("How many agents implement each task blind (1 for one agent alone)? [3] ", "3"), 3)
          if (candidates === undefined) yield* writeOut("That is not a whole number from 1 to 9.\n")
        }
        const text = ConfigDraft.render({ agents, repos, ntfy, publicUrl, candidates })
        yield* fs.makeDirectory(NodePath.dirname(file), { recursive: true })
        // Created, never replaced: a config written meanwhile by anything else is kept.
        // 0600: it holds the ntfy topic, which is all anyone needs to read the notifications.
        yield* fs.writeFileString(file, text, { flag: "wx", mode: 0o600 })
        yield* writeOut(`config: wrote ${file}\n`)
      }
      if (!o.yes) {
        const config = yield* Effect.provide(MagiConfig, MagiConfig.fromFiles(process.cwd()))
        // A page reached beyond this machine answers only paired devices: pair the phone while it is in hand.
        if (config.publicUrl !== null && reachableBeyondLoopback("127.0.0.1", config.publicUrl)) {
          if (yes(yield* prompt.ask(`Pair your phone with magi web at ${config.publicUrl} now? [Y/n] `, "n"), true))
            yield* printPairingCode(Option.some(config.publicUrl.replace(/\/+$/, ""))).pipe(Effect.provide(devicesOfConfig))
        }
        if (config.ntfy !== null || config.notifyCommand.length > 0 || config.publicUrl !== null) {
          if (yes(yield* prompt.ask("Send a test notification with a button to press, and wait for the press? [Y/n] ", "n"), true))
            // A failed test is told, and the doctor still runs: it may say why.
            yield* testNotification(config.publicUrl === null ? null : config.publicUrl.replace(/\/+$/, "")).pipe(
              // display: the failure is printed on stderr
              Effect.catchAll((e) => writeErr(`magi: ${e.message}\n`))
            )
        }
      }
      yield* writeOut("\nmagi doctor:\n")
      yield* writeOut(renderChecks(yield* checksFor(process.cwd(), false)))
    }).pipe(
      Effect.scoped,
      Effect.mapError((e) => (e instanceof CliFailure ? e : CliFailure.refused(e.message)))
    )
).pipe(Command.withDescription("Set magi up: find the agent CLIs, offer ntfy, ask the page's address, write the config, run magi doctor"))
