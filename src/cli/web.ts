/**
 * `magi web`: the page the owner answers from, usually on a phone.
 *
 * Prints the URL on stdout (the one line a script would capture into
 * `MAGI_WEB_URL`) and runs until SIGINT or SIGTERM. Unless told `--no-loop`
 * it also runs the waiter in-process, so one command is enough for an answer
 * to reach an agent whose `magi ask` is gone.
 */
import { Args, Command, Options } from "@effect/cli"
import { Effect, Layer, Option, Ref } from "effect"
import { MagiConfig } from "../platform/MagiConfig.js"
import { QuestionStore } from "../questions/QuestionStore.js"
import { CliFailure } from "./CliFailure.js"
import { writeErr, writeOut } from "./io.js"
import { inProcessWaiter } from "../app/WaiterLoop.js"
import { devicesLayer as devicesOn, homeLayer, webStoreLayer } from "../app/Layers.js"
import { shelveLoop } from "../app/Shelving.js"
import { RunStore } from "../runs/Runs.js"
import { TaskStore } from "../queue/TaskStore.js"
import { Hosts } from "../platform/Hosts.js"
import { receivedSignal } from "./Signals.js"
import { Devices } from "../devices/Devices.js"
import * as Device from "../devices/Device.js"
import * as PushSubscription from "../devices/PushSubscription.js"
import { forTerminal } from "../platform/TerminalText.js"
import { localTime } from "./io.js"
import { isLoopback, publicHostOf, reachableBeyondLoopback } from "../web/Bind.js"

export const DEFAULT_PORT = 7878

export interface WebRun {
  readonly bind: string
  readonly port: number
  readonly home: Option.Option<string>
  /** Run the waiter in this process too (`magi web` without `--no-loop`). */
  readonly loop: boolean
}

/** Serve until interrupted. */
export const runWeb = (options: WebRun) => {
  const home = homeLayer(options.home)
  // The address once the page is up, for the line said on the way out.
  const served = Ref.unsafeMake(Option.none<string>())
  return Effect.scoped(
    Effect.gen(function* () {
      const config = yield* MagiConfig
      // The server's modules (the HTTP platform, which brings a WebSocket
      // library and an HTTP client with it) are evaluated only by a command
      // that serves: every other command's start is spared them.
      const { serve } = yield* Effect.promise(() => import("../web/WebServer.js"))
      const running = yield* serve({ bind: options.bind, port: options.port, publicUrl: config.publicUrl }).pipe(
        Effect.mapError((e) => CliFailure.refused(e.message))
      )
      yield* Ref.set(served, Option.some(running.url))
      // A public_url beyond this machine is how the phone reaches the page
      // (a proxy such as Tailscale's serve in front of 127.0.0.1): "your
      // phone cannot reach it" would be untrue, and notifications link there already.
      const publicHost = publicHostOf(config.publicUrl)
      const publicBeyond = publicHost !== undefined && !isLoopback(publicHost)
      if (Option.isSome(running.warning) && !(publicBeyond && running.warning.value.startsWith("no Tailscale address found")))
        yield* Effect.logWarning(running.warning.value)
      const store = yield* QuestionStore
      yield* writeErr(
        `magi web: serving the questions in ${store.where} at ${running.url}\n` +
          (publicBeyond
            ? `magi web: notifications link to ${config.publicUrl} ([web] public_url)\n`
            : `magi web: export MAGI_WEB_URL=${running.url} so notifications link here\n`) +
          (running.pairing
            ? "magi web: reachable beyond this machine, so each device pairs first: run `magi web pair` and enter its code on the device\n"
            : "")
      )
      yield* writeOut(`${running.url}\n`)
      // Started once the page is up, so nothing the waiter does can delay it;
      // interrupted with the scope, which lets go of the home on the way out.
      if (options.loop)
        yield* Effect.forkScoped(
          inProcessWaiter(home, (dir) => writeErr(`magi web: delivering answers for the questions in ${dir} too (pid ${process.pid})\n`))
        )
      // The host is listed (`magi hosts`, `/api/health`) while this page is
      // up, even when it runs no loop: as a page only, whenever no loop
      // holds the host's name (this one's, or a `magi serve`'s).
      yield* Effect.forkScoped(Effect.scoped(Effect.zipRight(Effect.flatMap(Hosts, (h) => h.registerPage), Effect.never)).pipe(Effect.provide(Hosts.layer)))
      // Settled questions, finished runs and done tasks to their month's shelf: now (the migration of an
      // older home) and every few minutes; the page is up already.
      yield* Effect.forkScoped(shelveLoop.pipe(Effect.provide(Layer.merge(RunStore.layer, TaskStore.layer))))
      return yield* Effect.never
    })
  ).pipe(
    // Said once everything is closed: a terminal that went quiet would
    // otherwise leave the owner wondering whether the page still answers.
    Effect.onInterrupt(() =>
      Effect.flatMap(Ref.get(served), (url) =>
        Option.match(url, {
          onNone: () => Effect.void,
          // display: a line on stderr that cannot be written changes nothing
          onSome: (at) => writeErr(`magi web: stopped${signalWords()}; ${at} no longer answers\n`).pipe(Effect.ignore)
        }))
    ),
    Effect.provide(webStoreLayer(home))
  )
}

const signalWords = () => {
  const signal = receivedSignal()
  return signal === undefined ? "" : ` by ${signal}`
}

export const options = {
  bind: Options.text("bind").pipe(
    Options.withPseudoName("ADDRESS"),
    Options.withDescription(
      "`auto` (this machine's Tailscale address, else 127.0.0.1 with a warning) or an IP address; never 0.0.0.0 unless you say so (default: auto)"
    ),
    Options.withDefault("auto")
  ),
  port: Options.integer("port").pipe(
    Options.withPseudoName("PORT"),
    Options.withDescription(`port to listen on; 0 picks a free one (default: ${DEFAULT_PORT})`),
    Options.withDefault(DEFAULT_PORT)
  ),
  home: Options.directory("home").pipe(
    Options.withPseudoName("DIR"),
    Options.withDescription("magi's state directory (default: MAGI_HOME, else the platform's data dir)"),
    Options.optional
  ),
  noLoop: Options.boolean("no-loop").pipe(
    Options.withDescription("serve the page only; leave delivering answers to a `magi serve` running elsewhere")
  )
}

// -- paired devices ------------------------------------------------------------

/** The devices on the store the config names, for `magi web pair|devices|revoke`. */
const devicesLayer = (home: Option.Option<string>) => devicesOn(home).pipe(Layer.mapError((e) => CliFailure.refused(e.message)))

const homeOption = options.home

/** Where a device opens the pairing page: `--url`, else `[web] public_url`, else `MAGI_WEB_URL`. */
const pairingBase = (given: Option.Option<string>) =>
  Effect.map(
    MagiConfig,
    (config) =>
      Option.orElse(given, () => Option.orElse(Option.fromNullable(config.publicUrl), () => Option.fromNullable(process.env.MAGI_WEB_URL))).pipe(
        Option.map((url) => url.trim().replace(/\/+$/, "")),
        Option.filter((url) => url !== "")
      )
  )

/** A new one-time code, printed with the link (the code in its fragment) and its QR: `magi web pair`'s, and `magi init`'s. */
export const printPairingCode = (base: Option.Option<string>) =>
  Effect.gen(function* () {
    const config = yield* MagiConfig
    const issued = yield* (yield* Devices).issueCode
    const minutes = Math.round(Device.CODE_LIFETIME_MS / 60_000)
    // With no address named, the page `magi web` and `npm start` serve by default.
    const page = Option.getOrElse(base, () => `http://127.0.0.1:${DEFAULT_PORT}`)
    const link = `${page}/pair#code=${issued.code}`
    const host = publicHostOf(page)
    // A page at loopback lets this machine in unpaired; only a device that
    // reaches magi web another way (a public_url beyond this machine) pairs.
    const unneeded = host !== undefined && isLoopback(host) && !reachableBeyondLoopback(host, config.publicUrl)
    // The QR is terminal drawing: into a pipe or a file it is only noise.
    const drawn = process.stdout.isTTY === true
    // The QR encoder is evaluated only when a code is drawn, not at every start.
    const qr = drawn ? (yield* Effect.promise(() => import("../platform/QrText.js"))).render(link) : ""
    yield* writeOut(
      (unneeded
        ? `${page} is on this machine, and lets this machine in without pairing; ` +
          "a code is needed only by a device that reaches magi web another way (set [web] public_url to that address, or pass --url)\n"
        : "") +
        `pairing code: ${issued.code}\n` +
        `good once, for ${minutes} minutes (until ${localTime(new Date(issued.expiresAt))})\n` +
        (drawn ? `on the device, scan this or open ${link}\n` : `on the device, open ${link}\n`) +
        qr
    )
  })

/** The devices on the store the config names, with the home `MAGI_HOME` names: for `magi init`. */
export const devicesOfConfig = devicesLayer(Option.none())

const pair = Command.make(
  "pair",
  {
    home: homeOption,
    url: Options.text("url").pipe(
      Options.withDescription("the address the device opens magi web at (default: [web] public_url, else MAGI_WEB_URL)"),
      Options.optional
    )
  },
  (o) => Effect.flatMap(pairingBase(o.url), printPairingCode).pipe(Effect.provide(devicesLayer(o.home)))
).pipe(Command.withDescription("Print a one-time code (and its QR) that pairs one device with magi web"))

const devices = Command.make("devices", { home: homeOption }, (o) =>
  Effect.gen(function* () {
    const store = yield* Devices
    const all = yield* store.list.pipe(Effect.mapError((e) => CliFailure.refused(e.message)))
    const pushes = yield* store.subscriptions.pipe(Effect.mapError((e) => CliFailure.refused(e.message)))
    // Which push service a subscription is with; its endpoint is a bearer address, never printed.
    const notified = (device: string | null) =>
      pushes
        .filter((p) => p.device === device)
        .map((p) => `  notified via ${PushSubscription.serviceOf(p.endpoint)}`)
        .join("")
    const unpaired = pushes.filter((p) => p.device === null || !all.some((d) => d.id === p.device))
    if (all.length === 0 && unpaired.length === 0) return yield* writeOut("no device is paired (`magi web pair` pairs one)\n")
    const width = Math.max(0, ...all.map((d) => d.name.length))
    yield* writeOut(
      all
        .map(
          (d) =>
            `${forTerminal(d.name).padEnd(width)}  last used ${localTime(new Date(d.last_used_at))}  paired ${localTime(new Date(d.paired_at))}${
              notified(d.id)
            }\n`
        )
        .join("") +
        unpaired.map((p) => `a browser (not paired)  notified via ${PushSubscription.serviceOf(p.endpoint)}  since ${localTime(new Date(p.created_at))}\n`)
          .join("")
    )
  }).pipe(Effect.provide(devicesLayer(o.home)))).pipe(
    Command.withDescription("List the devices paired with magi web, most recently used first, and which are notified by Web Push")
  )

const revoke = Command.make(
  "revoke",
  { home: homeOption, name: Args.text({ name: "name" }).pipe(Args.withDescription("the device's name, as `magi web devices` lists it")) },
  (o) =>
    Effect.gen(function* () {
      const gone = yield* (yield* Devices).revoke(o.name).pipe(Effect.mapError((e) => CliFailure.refused(e.message)))
      yield* writeOut(`revoked ${forTerminal(gone.name)}: magi web refuses it from its next request\n`)
    }).pipe(Effect.provide(devicesLayer(o.home)))
).pipe(Command.withDescription("Unpair a device: its cookie is refused from its next request on"))

export const web = Command.make("web", options, (o) => {
  if (o.port < 0 || o.port > 65535) return Effect.fail(CliFailure.usage(`--port must be 0-65535, not ${o.port}`))
  return runWeb({ bind: o.bind, port: o.port, home: o.home, loop: !o.noLoop })
}).pipe(
  Command.withDescription("Serve the phone page and HTTP API for answering questions, and run the waiter unless --no-loop"),
  Command.withSubcommands([pair, devices, revoke])
)
