import { describe, expect, it } from "vitest"
import { IMAGE_MAX_BYTES, mimeOfAsset, sniff, tooLarge, validAssetName } from "../../src/platform/ImageType.js"

const bytes = (...b: ReadonlyArray<number>) => new Uint8Array(b)
const text = (s: string) => new TextEncoder().encode(s)

describe("an image's type, from its bytes", () => {
  it.each([
    ["a PNG", bytes(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13), "image/png"],
    ["a JPEG", bytes(0xff, 0xd8, 0xff, 0xe0, 0, 0x10), "image/jpeg"],
    ["a GIF89a", text("GIF89a\x01\x00"), "image/gif"],
    ["a GIF87a", text("GIF87a\x01\x00"), "image/gif"],
    ["a WebP", text("RIFF\x10\x00\x00\x00WEBPVP8 "), "image/webp"]
  ])("takes %s", (_name, head, mime) => {
    expect(sniff(head)).toEqual({ _tag: "Image", kind: expect.objectContaining({ mime }) })
  })

  it.each([
    ["an HTML file renamed .png", text("<!DOCTYPE html><script>alert(1)</script>"), "it is an HTML or other markup file, not an image"],
    ["HTML after a BOM and spaces", text("\uFEFF  \n<html>"), "it is an HTML or other markup file"],
    ["an SVG with script", text('<svg xmlns="http://www.w3.org/2000/svg"><script>'), "it is an SVG or XML file, which can carry script"],
    ["an SVG behind an XML prolog", text('<?xml version="1.0"?><svg>'), "it is an SVG or XML file"],
    ["a RIFF that is not WebP (a WAV)", text("RIFF\x10\x00\x00\x00WAVEfmt "), "its bytes are not a PNG, JPEG, GIF or WebP"],
    ["a PDF", text("%PDF-1.7"), "its bytes are not a PNG, JPEG, GIF or WebP"],
    ["nothing", bytes(), "the file is empty"]
  ])("refuses %s, saying why", (_name, head, why) => {
    const got = sniff(head)
    expect(got._tag).toBe("Refused")
    expect(got._tag === "Refused" ? got.why : "").toContain(why)
  })

  it("caps the size at 8 MiB", () => {
    expect(tooLarge(IMAGE_MAX_BYTES)).toBeUndefined()
    expect(tooLarge(200 * 1024 * 1024)).toContain("over 8 MiB")
  })

  it.each([
    ["0123456789abcdef0123.png", "image/png"],
    ["0123456789abcdef.jpg", "image/jpeg"],
    ["../0123456789abcdef.png", undefined],
    ["0123456789abcdef.svg", undefined],
    ["0123456789abcdef.png.html", undefined],
    ["short.png", undefined]
  ])("serves asset %s only as its sniffed type", (name, mime) => {
    expect(mimeOfAsset(name)).toBe(mime)
    expect(validAssetName(name)).toBe(mime !== undefined)
  })
})
