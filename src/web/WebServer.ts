/**
 * `magi web`'s server: bind, listen (waiting out a port still held by the
 * previous run), and serve the API and the page behind the security checks.
 */
import * as HttpRouter from "@effect/platform/HttpRouter"
import type { CommandExecutor } from "@effect/platform/CommandExecutor"
import type { FileSystem } from "@effect/platform/FileSystem"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Cause, Context, Data, Duration, Effect, Layer, Option, Schedule, type Scope } from "effect"
import * as NodeHttp from "node:http"
import * as NodeNet from "node:net"
import * as LeaseIndex from "../questions/LeaseIndex.js"
import type { MagiHome } from "../platform/MagiHome.js"
import { QuestionStore } from "../questions/QuestionStore.js"
import { type BadBind, publicHostOf, reachableBeyondLoopback, resolveBind } from "./Bind.js"
import { Devices } from "../devices/Devices.js"
import * as ConfiguredStore from "../platform/ConfiguredStore.js"
import * as PairingApi from "./PairingApi.js"
import * as Api from "./Api.js"
import * as Page from "./Page.js"
import * as Responses from "./Responses.js"
import { guard } from "./Security.js"
import { Snapshots } from "./Snapshot.js"
import { Live } from "./Live.js"
import { defaultLimits, type Limits, limitConnections, serverOptions } from "./Connections.js"
import { NotifySetting } from "./NotifySetting.js"
import { NoticeFeed } from "./NoticeFeed.js"
import { Hosts } from "../platform/Hosts.js"
import { RunStore } from "../runs/Runs.js"
import { RunFeed } from "./RunFeed.js"
import * as RunsApi from "./RunsApi.js"
import * as LiveApi from "./LiveApi.js"
import * as SayApi from "./SayApi.js"
import * as LandApi from "./LandApi.js"
import { Landings } from "../land/Landings.js"
import { LandDriver } from "../land/LandDriver.js"
import * as GitHubForge from "../land/GitHubForge.js"
import * as ImagesApi from "./ImagesApi.js"
import * as DiffApi from "./DiffApi.js"
import * as CompetitionApi from "./CompetitionApi.js"
import { TaskStore } from "../queue/TaskStore.js"
import { QueueFeed } from "./QueueFeed.js"
import { DefaultRepo } from "./DefaultRepo.js"
import * as QueueApi from "./QueueApi.js"
import { Chats } from "../chat/Chats.js"
import * as ChatsApi from "./ChatsApi.js"
import * as AnswerLinkApi from "./AnswerLinkApi.js"
import * as ApprovalsApi from "./ApprovalsApi.js"
import { SavedRules } from "../approvals/SavedRules.js"
import * as PushApi from "./PushApi.js"
import * as ServiceWorker from "./ServiceWorker.js"
import { Agents } from "../agents/Agents.js"
import { Rosters } from "../agents/AgentRoster.js"
import { ConductorLog } from "../daemon/ConductorLog.js"
import { CompetitionDriver } from "../graph/CompetitionDriver.js"
import { RunDriver } from "../runs/RunDriver.js"
import { Workspaces } from "../runs/NewRun.js"
import { Leases } from "../questions/Leases.js"
import { Notifier } from "../questions/Notifier.js"
import { MagiConfig } from "../platform/MagiConfig.js"
import { TurnSlots } from "../agents/TurnSlots.js"
import type { StoreUnavailable, StoreUrlInvalid } from "../store/postgres/Postgres.js"

/**
 * A restarted `magi web` often finds its port still held by the process it
 * replaces, for the second that one takes to exit: retried this long, this
 * often, before saying so.
 */
export const PORT_RETRY_FOR = Duration.seconds(10)
export const PORT_RETRY_EVERY = Duration.millis(250)

/** How long a request still in flight at shutdown may take to finish. */
export const SHUTDOWN_GRACE = Duration.seconds(1)

export class CannotListen extends Data.TaggedError("CannotListen")<{ readonly message: string }> {}

export interface WebOptions {
  /** `auto`, or an IP address. */
  readonly bind: string
  /** 0 asks the system for a free port (tests, benchmarks). */
  readonly port: number
  /** Deadlines and the connection cap; tests shrink them. */
  readonly limits?: Limits
  /** `[web] public_url`: where the owner's devices reach the page, when that is not the address it listens on. */
  readonly publicUrl?: string | null
}

export interface Running {
  /** The base URL to open, and to export as `MAGI_WEB_URL`. */
  readonly url: string
  readonly address: string
  readonly port: number
  readonly warning: Option.Option<string>
  /** Whether a device must pair first: the page is reachable beyond this machine. */
  readonly pairing: boolean
}

const codeOf = (e: { readonly cause: unknown }) => typeof e.cause === "object" && e.cause !== null && "code" in e.cause ? String(e.cause.code) : ""

const urlHost = (address: string) => (NodeNet.isIPv6(address) ? `[${address}]` : address)

/**
 * The port opens before the routes are built and attached, and Node drops
 * a request no listener takes: it would hang until the idle deadline and
 * get an empty reply. So requests that arrive first are held here, and
 * handed to the routes by the returned function once they are attached.
 */
const holdEarlyRequests = (node: NodeHttp.Server): () => void => {
  const early: Array<[NodeHttp.IncomingMessage, NodeHttp.ServerResponse]> = []
  const hold = (req: NodeHttp.IncomingMessage, res: NodeHttp.ServerResponse) => {
    // Once the routes listen too, they take it themselves.
    if (node.listenerCount("request") === holding) early.push([req, res])
  }
  node.on("request", hold)
  const holding = node.listenerCount("request")
  return () => {
    node.off("request", hold)
    for (const [req, res] of early.splice(0)) node.emit("request", req, res)
  }
}

/** Listen on `address:port`, retrying a port in use for `PORT_RETRY_FOR`; requests are held until `release`. */
const listen = (address: string, port: number, limits: Limits) =>
  Effect.gen(function* () {
    let node: NodeHttp.Server | undefined
    let release = () => {}
    const server = yield* NodeHttpServer.make(
      () => {
        node = NodeHttp.createServer(serverOptions(limits))
        limitConnections(node, limits)
        release = holdEarlyRequests(node)
        return node
      },
      { host: address, port }
    ).pipe(
      Effect.retry({
        while: (e) => codeOf(e) === "EADDRINUSE",
        schedule: Schedule.spaced(PORT_RETRY_EVERY).pipe(Schedule.upTo(PORT_RETRY_FOR))
      }),
      Effect.mapError((e) => {
        const code = codeOf(e)
        const where = `${urlHost(address)}:${port}`
        if (code === "EADDRINUSE")
          return new CannotListen({
            message: `port ${port} on ${address} is still in use after ${
              Duration.format(PORT_RETRY_FOR)
            }: another magi web (or something else) holds ${where}; stop it or pass --port`
          })
        if (code === "EADDRNOTAVAIL")
          return new CannotListen({ message: `cannot listen on ${where}: ${address} is not an address of this machine` })
        if (code === "EACCES")
          return new CannotListen({ message: `cannot listen on ${where}: permission denied (ports below 1024 need privileges)` })
        return new CannotListen({ message: `cannot listen on ${where}: ${String(e.cause)}` })
      })
    )
    return { server, node: node!, release }
  })

/**
 * What the routes read: the list cache, the live hub, the notices, the runs
 * and the queue, and the leases beside the store's own questions (wherever
 * its root is).
 */
const services = Live.layer.pipe(
  // The owner's pick (`POST /api/runs/:id/pick`): the driver `magi pick` uses; it starts no turn, so it
  // notifies nobody. The Land button (`POST /api/runs/:id/land`): the driver `magi land` uses, in the
  // background; a pull request's fix round is the one turn it may start, in its one slot.
  Layer.provideMerge(
    Layer.merge(
      CompetitionDriver.Default,
      Landings.Default.pipe(Layer.provide(LandDriver.Default), Layer.provide(GitHubForge.layerConfiguredOrUnavailable()))
    ).pipe(
      Layer.provide(RunDriver.layer),
      Layer.provide(Layer.mergeAll(Leases.layer, Workspaces.git, Notifier.off, TurnSlots.fixed(1)))
    )
  ),
  Layer.provideMerge(DefaultRepo.Default),
  Layer.provideMerge(QueueFeed.layer),
  // The conductor's decisions, for the queue's view and `GET /api/conduct`.
  Layer.provideMerge(ConductorLog.layer),
  Layer.provideMerge(Layer.mergeAll(Snapshots.layer, NoticeFeed.layer, RunFeed.layer, NotifySetting.layer)),
  // The planning chats, with what their turns and filing use; each chat's
  // agent roster is read from its own repository's config.
  Layer.provideMerge(Chats.layer.pipe(Layer.provideMerge(Layer.mergeAll(Agents.layer, Rosters.fromFiles)))),
  Layer.provideMerge(
    Layer.mergeAll(RunStore.layer, TaskStore.layer, Hosts.layer, Devices.layer.pipe(Layer.provide(ConfiguredStore.layer)), SavedRules.layer)
  ),
  // The leases from an index kept in memory (one read per change of the
  // leases folder), never one read per question per request.
  Layer.provideMerge(Layer.unwrapEffect(Effect.map(QuestionStore, (store) => LeaseIndex.layer(store.root))))
)

/** Every route, and a JSON 404 for anything else; Web Push's depend on the page's public address. */
const app = (publicUrl: string | null) =>
  HttpRouter.toHttpApp(
    HttpRouter.concatAll(
      Api.router,
      AnswerLinkApi.router,
      RunsApi.router,
      LiveApi.router,
      DiffApi.router,
      CompetitionApi.router,
      SayApi.router,
      LandApi.router,
      ImagesApi.router,
      QueueApi.router,
      ChatsApi.router,
      ApprovalsApi.router,
      PairingApi.router,
      PushApi.router(publicUrl),
      ServiceWorker.router,
      Page.router
    )
  ).pipe(Effect.map(Effect.catchTag("RouteNotFound", () => Responses.error(404, "no such page or API route"))))

/**
 * Start serving the store the environment provides. Runs until the scope
 * closes; then event streams end first, so open phones do not hold the
 * shutdown up, and the listener closes.
 */
export const serve = (
  options: WebOptions
): Effect.Effect<
  Running,
  CannotListen | BadBind | StoreUnavailable | StoreUrlInvalid,
  QuestionStore | MagiHome | MagiConfig | FileSystem | CommandExecutor | Scope.Scope
> =>
  Effect.gen(function* () {
    const binding = yield* resolveBind(options.bind)
    const { node, release, server } = yield* listen(binding.address, options.port, options.limits ?? defaultLimits)
    const port = server.address._tag === "TcpAddress" ? server.address.port : options.port
    // Finalizers run in reverse: this one runs after `Live` has ended the
    // event streams and before the listener closes. It lets go of the
    // keep-alive sockets those streams leave idle, and gives any request
    // still in flight `SHUTDOWN_GRACE` before its socket is cut, so a phone
    // holding a connection open cannot hold the shutdown up.
    yield* Effect.addFinalizer(() =>
      Effect.sleep(Duration.millis(50)).pipe(
        Effect.zipRight(
          Effect.sync(() => {
            node.closeIdleConnections()
            setTimeout(() => node.closeAllConnections(), Duration.toMillis(SHUTDOWN_GRACE)).unref()
          })
        )
      )
    )
    const built = yield* Layer.build(services)
    const handler = yield* app(options.publicUrl ?? null)
    const pairing = reachableBeyondLoopback(binding.address, options.publicUrl)
    // A proxy in front (Tailscale's `serve`) forwards the public name in `Host`.
    const publicHost = publicHostOf(options.publicUrl)
    const hostNames = publicHost === undefined ? binding.hostNames : [...binding.hostNames, publicHost]
    yield* server.serve(
      handler.pipe(
        Effect.provide(built),
        // Failures the routes did not map (a defect) still answer as JSON,
        // and are logged; a client hanging up mid-request is not a failure.
        // display: the request's failure becomes its HTTP response
        Effect.catchAllCause((cause) =>
          Effect.as(
            Cause.isInterruptedOnly(cause) ? Effect.void : Effect.logError("a request failed", cause),
            Responses.error(500, "magi web failed on this request; see its stderr")
          )
        )
      ),
      guard(hostNames, pairing ? Context.get(built, Devices) : undefined)
    )
    release()
    return {
      url: `http://${urlHost(binding.urlAddress)}:${port}`,
      address: binding.address,
      port,
      warning: binding.warning,
      pairing
    } satisfies Running
  })
