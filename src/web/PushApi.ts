/**
 * "Notify this phone": `GET /api/push` says whether Web Push is offered
 * here (only when `[web] public_url` is https: browsers give push only to a
 * secure page) with the VAPID public key a page subscribes with, and lists
 * the subscriptions by device; `POST /api/push/subscriptions` keeps this
 * browser's, tied to the paired device whose cookie came with it;
 * `DELETE /api/push/subscriptions/:id` stops one. Behind the same guards
 * as every page route (`Security.ts`): only a paired device subscribes.
 */
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as FileSystem from "@effect/platform/FileSystem"
import { Effect, Either, Option, Schema } from "effect"
import * as Device from "../devices/Device.js"
import { Devices } from "../devices/Devices.js"
import * as PushSubscription from "../devices/PushSubscription.js"
import { MagiHome } from "../platform/MagiHome.js"
import * as ConfiguredStore from "../platform/ConfiguredStore.js"
import * as WebPush from "../questions/WebPush.js"
import { answeringStore, bodyAs, failure as bodyFailure } from "./Api.js"
import * as Responses from "./Responses.js"

export const PUSH_PATH = "/api/push"

const SubscribeBody = Schema.Struct({
  endpoint: Schema.String,
  keys: Schema.Struct({ p256dh: Schema.String, auth: Schema.String })
})

const notOffered = (publicUrl: string | null) =>
  publicUrl === null
    ? "Web Push needs magi web reached over HTTPS: set `[web] public_url` to its https address (`tailscale serve`, or a reverse proxy)"
    : `Web Push needs magi web reached over HTTPS, and \`[web] public_url\` is ${publicUrl}`

/** The routes, for the page reached at `publicUrl` (`[web] public_url`). */
export const router = (publicUrl: string | null) => {
  const offered = WebPush.offered(publicUrl)

  const status = Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const devices = yield* Devices
    const current = yield* devices.authenticate(Device.cookieFrom(request.headers["cookie"]))
    const names = new Map((yield* devices.list).map((d) => [d.id, d.name]))
    const subscriptions = (yield* devices.subscriptions).map((s) => ({
      id: s.id,
      device: s.device === null ? null : (names.get(s.device) ?? null),
      this_device: Option.isSome(current) && current.value.id === s.device,
      service: PushSubscription.serviceOf(s.endpoint),
      created_at: new Date(s.created_at).toISOString()
    }))
    if (!offered) return Responses.json({ offered: false, reason: notOffered(publicUrl), subscriptions })
    const home = yield* MagiHome
    const keys = yield* WebPush.vapidKeysShared(home.dir, yield* ConfiguredStore.configuredUrl).pipe(
      Effect.provideService(FileSystem.FileSystem, yield* FileSystem.FileSystem),
      Effect.either
    )
    if (Either.isLeft(keys)) return Responses.error(500, keys.left.message)
    return Responses.json({ offered: true, public_key: keys.right.publicKey, subscriptions })
  }).pipe(answeringStore)

  const subscribe = Effect.gen(function* () {
    if (!offered) return Responses.error(409, notOffered(publicUrl))
    const request = yield* HttpServerRequest.HttpServerRequest
    const body = yield* bodyAs(SubscribeBody, '{"endpoint": "https://…", "keys": {"p256dh": "…", "auth": "…"}}')
    const checked = PushSubscription.check({ endpoint: body.endpoint, p256dh: body.keys.p256dh, auth: body.keys.auth })
    if (Either.isLeft(checked)) return Responses.error(400, checked.left)
    const devices = yield* Devices
    const device = yield* devices.authenticate(Device.cookieFrom(request.headers["cookie"]))
    const kept = yield* devices.subscribe(device, checked.right)
    return Responses.json({ id: kept.id, device: Option.match(device, { onNone: () => null, onSome: (d) => d.name }) })
  }).pipe(
    Effect.catchTags({
      BadBody: (e) => Effect.succeed(bodyFailure(e)),
      BodyTooLarge: (e) => Effect.succeed(bodyFailure(e))
    }),
    answeringStore
  )

  const unsubscribe = Effect.gen(function* () {
    const id = (yield* HttpRouter.params)["id"] ?? ""
    const devices = yield* Devices
    const known = (yield* devices.subscriptions).some((s) => s.id === id)
    if (!known) return Responses.error(404, "no such push subscription (stopped already?)")
    yield* devices.unsubscribe(id)
    return Responses.json({ stopped: id })
  }).pipe(answeringStore)

  return HttpRouter.empty.pipe(
    HttpRouter.get(PUSH_PATH, status),
    HttpRouter.post(`${PUSH_PATH}/subscriptions`, subscribe),
    HttpRouter.del(`${PUSH_PATH}/subscriptions/:id`, unsubscribe)
  )
}
