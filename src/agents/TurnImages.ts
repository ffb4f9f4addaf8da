/**
 * The images of a turn, made ready for its CLI (`AgentAdapter.images`):
 * each attached file read and judged again before the agent starts, so an
 * image that went missing or changed since its upload fails the turn
 * plainly instead of the CLI going on without it (codex, given a missing
 * `-i` file, starts the turn all the same). A CLI that takes images by its
 * own file flag gets the path; one that takes them in its input (claude)
 * gets the bytes too.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import { Effect, Schema } from "effect"
import { IMAGE_MAX_BYTES, sniff, tooLarge } from "../platform/ImageType.js"
import type { AttachedImage } from "./adapters/Adapter.js"

/** An attached image that cannot be given to the agent: `why` says what is wrong with it. */
export class ImageUnusable extends Schema.TaggedError<ImageUnusable>()("ImageUnusable", { path: Schema.String, why: Schema.String }) {
  override get message() {
    return `the image ${this.path} attached to this turn cannot be given to the agent: ${this.why}`
  }
}

/** What a CLI's adapter asks for: a path, the bytes too, or nothing (it takes no images). */
export type ImageWay = "path" | "bytes" | undefined

/**
 * The most images one turn hands its CLI: a turn may take several words of
 * four images each, and each rides in the model request. The prompt still
 * names every image's path, so one past this is there to open.
 */
export const MAX_TURN_IMAGES = 8

const one = (fs: FileSystem.FileSystem, way: "path" | "bytes", path: string) =>
  Effect.gen(function* () {
    const unusable = (why: string) => new ImageUnusable({ path, why })
    const info = yield* fs.stat(path).pipe(Effect.mapError((e) => unusable(`it cannot be read (${e.message})`)))
    if (info.type !== "File") return yield* unusable("it is not a file")
    const big = tooLarge(Number(info.size))
    if (big !== undefined) return yield* unusable(big)
    const bytes = yield* fs.readFile(path).pipe(Effect.mapError((e) => unusable(`it cannot be read (${e.message})`)))
    // Read again: it may have grown since the stat.
    if (bytes.length > IMAGE_MAX_BYTES) return yield* unusable(tooLarge(bytes.length) ?? "it is too large")
    const kind = sniff(bytes.subarray(0, 16))
    if (kind._tag === "Refused") return yield* unusable(kind.why)
    return way === "path"
      ? ({ path } satisfies AttachedImage)
      : ({ path, inline: { mime: kind.kind.mime, base64: Buffer.from(bytes).toString("base64") } } satisfies AttachedImage)
  })

/** The turn's images as its CLI takes them; none for a CLI that takes none (its prompt names their paths). */
export const prepare = Effect.fn("TurnImages.prepare")(function* (way: ImageWay, paths: ReadonlyArray<string>) {
  if (way === undefined || paths.length === 0) return [] as ReadonlyArray<AttachedImage>
  const fs = yield* FileSystem.FileSystem
  const out: AttachedImage[] = []
  for (const path of paths.slice(0, MAX_TURN_IMAGES)) out.push(yield* one(fs, way, path))
  return out as ReadonlyArray<AttachedImage>
})
