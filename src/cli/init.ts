/**
 * `magi init [--yes]`: a first setup in one command. Finds the agent CLIs
 * on PATH and their versions, offers ntfy with a random topic (and prints
 * the subscribe link's QR for the phone), asks where the phone reaches
 * `magi web`, writes a commented config (`platform/ConfigDraft.ts`), and
 * ends with `magi doctor`'s checks. `--yes` takes every default, for
 * scripts. An existing config is never rewritten: running it again changes
 * nothing it was not asked to.
 */
import { Command, Options } from "@effect/cli"
import { Command as Process, FileSystem } from "@effect/platform"
import { Duration, Effect, Option, Stream } from "effect"
import * as NodePath from "node:path"
import * as NodeReadline from "node:readline"
import { DISCOVERABLE, which } from "../agents/AgentRoster.js"
import { render as renderChecks } from "../doctor/Check.js"
import * as ConfigDraft from "../platform/ConfigDraft.js"
import { userConfigFile } from "../platform/MagiConfig.js"
import * as QrText from "../platform/QrText.js"
import { forTerminal } from "../platform/TerminalText.js"
import { CliFailure } from "./CliFailure.js"
import { checksFor } from "./doctor.js"
import { writeOut } from "./io.js"

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
    Effect.orElseSucceed(() => undefined)
  )

const findAgents = (path: string) =>
  Effect.forEach(DISCOVERABLE, (kind) =>
    Effect.flatMap(which(kind, path), (found) =>
      Option.match(found, {
        onNone: () => Effect.succeed(Option.none<ConfigDraft.FoundAgent>()),
        onSome: (at) => Effect.map(versionOf(at), (version) => Option.some({ kind, path: at, version }))
      })
    )
  ).pipe(Effect.map((all) => all.flatMap(Option.toArray)))

/** Git repositories in `dir`: itself, and its folders one level down. */
const reposIn = (dir: string) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const isRepo = (d: string) => fs.exists(NodePath.join(d, ".git")).pipe(Effect.orElseSucceed(() => false))
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
      })
    )
  return { ask, close: Effect.sync(() => reader?.close()) }
}

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
          ? "agents: none of claude, codex, opencode, agy is on PATH\n"
          : agents.map((a) => `agent ${a.kind}: ${forTerminal(a.version ?? "version unknown")} (${a.path})\n`).join("")
      )
      if (yield* fs.exists(file).pipe(Effect.orElseSucceed(() => false))) {
        yield* writeOut(`config: keeping ${file} as it is (move it away to start over)\n`)
      } else {
        const repos = yield* reposIn(process.cwd())
        const takeNtfy = yes(yield* ask(`Notify your phone through ntfy (${ConfigDraft.NTFY_SERVER}, a free push service with an app)? [Y/n] `, "y"), true)
        const ntfy = takeNtfy ? { server: ConfigDraft.NTFY_SERVER, topic: ConfigDraft.randomTopic() } : undefined
        if (ntfy !== undefined) {
          const link = ConfigDraft.subscribeLink(ntfy)
          yield* writeOut(`ntfy: subscribe to ${link} in the ntfy app (scan this with the phone):\n${QrText.render(link)}`)
        }
        let publicUrl: string | undefined
        for (;;) {
          const given = yield* ask("Where does your phone reach magi web (e.g. https://box.tailnet.ts.net)? Empty for nowhere yet: ", "")
          if (given === "") break
          if (/^https?:\/\/[^/\s]+/.test(given)) {
            publicUrl = given.replace(/\/+$/, "")
            break
          }
          yield* writeOut("That is not an http:// or https:// address.\n")
        }
        const text = ConfigDraft.render({ agents, repos, ntfy, publicUrl })
        yield* fs.makeDirectory(NodePath.dirname(file), { recursive: true })
        // Created, never replaced: a config written meanwhile by anything else is kept.
        yield* fs.writeFileString(file, text, { flag: "wx" })
        yield* writeOut(`config: wrote ${file}\n`)
      }
      yield* writeOut("\nmagi doctor:\n")
      yield* writeOut(renderChecks(yield* checksFor(process.cwd(), false)))
    }).pipe(
      Effect.scoped,
      Effect.mapError((e) => (e instanceof CliFailure ? e : CliFailure.refused(e.message)))
    )
).pipe(Command.withDescription("Set magi up: find the agent CLIs, offer ntfy, ask the page's address, write the config, run magi doctor"))
