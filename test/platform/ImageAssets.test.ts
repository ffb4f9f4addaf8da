import { describe, expect, it } from "vitest"
import { NodeContext } from "@effect/platform-node"
import type * as FileSystem from "@effect/platform/FileSystem"
import type { PlatformError } from "@effect/platform/Error"
import { Chunk, Effect, Either, Stream } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as ImageAssets from "../../src/platform/ImageAssets.js"
import { tempDirSync } from "../support.js"

const PNG = Buffer.from("89504e470d0a1a0a0000000d4948445200000001000000010806000000", "hex")
const run = <A, E>(e: Effect.Effect<A, E, FileSystem.FileSystem>) =>
  Effect.runPromise(e.pipe(Effect.mapError((x) => x as unknown as ImageAssets.ImageRefused | PlatformError), Effect.either, Effect.provide(NodeContext.layer)))
const once = (bytes: Uint8Array) => Stream.make(bytes)

describe("storing an uploaded image", () => {
  it("stores a PNG under its digest and sniffed extension, with no temp file left", async () => {
    const dir = NodePath.join(tempDirSync(), "images")
    const got = await run(ImageAssets.save(dir, once(PNG)))
    expect(Either.isRight(got)).toBe(true)
    const stored = Either.getOrThrow(got)
    expect(stored.name).toMatch(/^[0-9a-f]{32}\.png$/)
    expect(stored.kind.mime).toBe("image/png")
    expect(NodeFs.readFileSync(stored.path)).toEqual(PNG)
    expect(NodeFs.readdirSync(dir)).toEqual([stored.name])
  })

  it.each([
    ["an HTML file renamed", Buffer.from("<!doctype html><script>alert(1)</script>"), "it is an HTML or other markup file"],
    ["an SVG with script", Buffer.from("<svg onload=alert(1)><script>x</script></svg>"), "it is an SVG or XML file"]
  ])("refuses %s and leaves nothing", async (_name, body, why) => {
    const dir = NodePath.join(tempDirSync(), "images")
    const got = await run(ImageAssets.save(dir, once(body)))
    expect(Either.isLeft(got) && got.left._tag === "ImageRefused" ? got.left.why : "").toContain(why)
    expect(NodeFs.readdirSync(dir)).toEqual([])
  })

  it("refuses a 200 MB upload as soon as it passes 8 MiB, reading no further and leaving nothing", async () => {
    const dir = NodePath.join(tempDirSync(), "images")
    let sent = 0
    const chunk = new Uint8Array(1024 * 1024)
    chunk.set(PNG)
    const huge = Stream.repeatEffectChunkOption(Effect.sync(() => (sent += chunk.length, Chunk.of(chunk)))).pipe(Stream.take(200))
    const got = await run(ImageAssets.save(dir, huge))
    expect(Either.isLeft(got) && got.left._tag === "ImageRefused" && got.left.tooLarge).toBe(true)
    expect(sent).toBeLessThanOrEqual(10 * 1024 * 1024)
    expect(NodeFs.readdirSync(dir)).toEqual([])
  })
})
