/**
 * Storing an uploaded image as an asset of a question or a run: streamed to
 * a temp file beside its place (never held whole in memory), refused past
 * `IMAGE_MAX_BYTES` as soon as the bytes pass it, typed from its own first
 * bytes (`ImageType.sniff`), then renamed into place under a name made of
 * its digest and sniffed extension. A refused or broken upload leaves
 * nothing behind: the temp file goes with it, and no half-written asset is
 * ever visible under an asset's name.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import { Effect, Random, Ref, Schema, Stream } from "effect"
import { createHash } from "node:crypto"
import * as NodePath from "node:path"
import { IMAGE_MAX_BYTES, SNIFF_BYTES, sniff, tooLarge, type ImageKind } from "./ImageType.js"

/** The upload was refused: `why` says what to send instead; `tooLarge` for the 413. */
export class ImageRefused extends Schema.TaggedError<ImageRefused>()("ImageRefused", { why: Schema.String, tooLarge: Schema.Boolean }) {
  override get message() {
    return `the image was refused: ${this.why}`
  }
}

export interface StoredImage {
  readonly name: string
  readonly path: string
  readonly bytes: number
  readonly kind: ImageKind
}

/** Store the bytes of `body` as an image in `dir`; fails with the reason, leaving nothing, when they are not one. */
export const save = Effect.fn("ImageAssets.save")(function* <E>(dir: string, body: Stream.Stream<Uint8Array, E>) {
  const fs = yield* FileSystem.FileSystem
  yield* fs.makeDirectory(dir, { recursive: true })
  const temp = NodePath.join(dir, `.upload-${(yield* Random.nextInt).toString(16)}-${process.pid}.tmp`)
  const hash = createHash("sha256")
  const size = yield* Ref.make(0)
  const head: Array<number> = []
  const written = Effect.scoped(
    Effect.gen(function* () {
      const file = yield* fs.open(temp, { flag: "wx" })
      yield* Stream.runForEach(body, (chunk) =>
        Effect.gen(function* () {
          const total = (yield* Ref.get(size)) + chunk.length
          const over = tooLarge(total)
          if (over !== undefined) return yield* new ImageRefused({ why: over, tooLarge: true })
          yield* Ref.set(size, total)
          for (let i = 0; head.length < SNIFF_BYTES && i < chunk.length; i++) head.push(chunk[i]!)
          hash.update(chunk)
          yield* file.writeAll(chunk)
        }))
      yield* file.sync
    })
  )
  return yield* Effect.gen(function* () {
    yield* written
    const kind = sniff(Uint8Array.from(head))
    if (kind._tag === "Refused") return yield* new ImageRefused({ why: kind.why, tooLarge: false })
    const name = `${hash.digest("hex").slice(0, 32)}.${kind.kind.ext}`
    const path = NodePath.join(dir, name)
    yield* fs.rename(temp, path)
    return { name, path, bytes: yield* Ref.get(size), kind: kind.kind } satisfies StoredImage
    // fallback: a temp file not removed is only litter; the failure itself is returned
  }).pipe(Effect.onError(() => fs.remove(temp).pipe(Effect.ignore)))
})

/** The cap, for messages and a request's declared length. */
export const MAX_BYTES = IMAGE_MAX_BYTES
