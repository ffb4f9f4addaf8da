/**
 * Images of a run (issue 32, item 4): an upload from the phone's camera or
 * a screenshot, stored as an asset of the run (`platform/ImageAssets.ts`:
 * streamed to a temp file, capped, typed from its bytes, renamed into
 * place), and served back only as the type its bytes showed, as an
 * attachment-safe image that no browser may sniff into a page.
 */
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import * as FileSystem from "@effect/platform/FileSystem"
import { Effect } from "effect"
import * as NodePath from "node:path"
import * as ImageAssets from "../platform/ImageAssets.js"
import { mimeOfAsset, validAssetName } from "../platform/ImageType.js"
import { RunStore } from "../runs/Runs.js"
import * as Said from "../runs/Said.js"
import * as Responses from "./Responses.js"

/** Where a run's images are: beside its artifacts, on the machine serving the page. */
export const imagesDir = (runs: { readonly dir: (id: string) => string }, id: string) => NodePath.join(runs.dir(id), Said.IMAGES_DIR)

/**
 * Refused for its size: the rest of the body is drained unread (never
 * stored), so the client reads the 413 instead of a reset connection.
 */
const tooLargeReply = (request: HttpServerRequest.HttpServerRequest, message: string) =>
  Effect.sync(() => {
    NodeHttpServerRequest.toIncomingMessage(request).resume()
    return Responses.error(413, message)
  })

const upload = Effect.gen(function* () {
  const id = (yield* HttpRouter.params)["id"] ?? ""
  if (!Said.safePart(id)) return Responses.error(400, `${JSON.stringify(id.slice(0, 80))} is not a run id`)
  const request = yield* HttpServerRequest.HttpServerRequest
  // Refused on the declared length before a byte is read.
  const declared = Number(request.headers["content-length"] ?? "0")
  if (declared > ImageAssets.MAX_BYTES)
    return yield* tooLargeReply(request, `the image is over ${ImageAssets.MAX_BYTES / 1024 / 1024} MiB; send a smaller screenshot or a cropped photo`)
  const runs = yield* RunStore
  const run = yield* runs.get(id)
  const stored = yield* ImageAssets.save(imagesDir(runs, run.id), request.stream).pipe(
    Effect.map((s) => Responses.json({ name: s.name, type: s.kind.mime, bytes: s.bytes, url: `/api/runs/${run.id}/images/${s.name}` })),
    Effect.catchTag("ImageRefused", (e) => e.tooLarge ? tooLargeReply(request, e.message) : Effect.succeed(Responses.error(415, e.message)))
  )
  return stored
}).pipe(
  // display: the route answers every failure in its own words
  Effect.catchAll((e: { readonly _tag: string; readonly message: string }) =>
    Effect.succeed(e._tag === "RecordNotFound" ? Responses.error(404, e.message) : Responses.error(500, e.message))
  )
)

const serve = Effect.gen(function* () {
  const params = yield* HttpRouter.params
  const id = params["id"] ?? ""
  const name = params["name"] ?? ""
  const mime = mimeOfAsset(name)
  if (!Said.safePart(id) || !validAssetName(name) || mime === undefined) return Responses.error(400, `\`${name.slice(0, 80)}\` is not an image of a run`)
  const runs = yield* RunStore
  const run = yield* runs.get(id)
  const bytes = yield* (yield* FileSystem.FileSystem).readFile(NodePath.join(imagesDir(runs, run.id), name)).pipe(Effect.option)
  if (bytes._tag === "None") return Responses.error(404, `run ${run.id} has no image ${name}`)
  return HttpServerResponse.uint8Array(bytes.value, {
    contentType: mime,
    headers: {
      "x-content-type-options": "nosniff",
      "content-disposition": `inline; filename="${name}"`,
      "content-security-policy": "default-src 'none'; sandbox",
      "cache-control": "private, max-age=86400, immutable"
    }
  })
}).pipe(
  // display: the route answers every failure in its own words
  Effect.catchAll((e: { readonly _tag: string; readonly message: string }) =>
    Effect.succeed(Responses.error(e._tag === "RecordNotFound" ? 404 : 500, e.message))
  )
)

export const router = HttpRouter.empty.pipe(
  HttpRouter.post("/api/runs/:id/images", upload, { uninterruptible: true }),
  HttpRouter.get("/api/runs/:id/images/:name", serve)
)
